"""Rigid-section meshes: the frustum slices of the URDF, placed at their section-body poses.

Slice k of a segment with N sections is the frustum of rest height ``h = L / N`` between the radii at
``(k - 1) / N`` and ``k / N`` of the segment's taper, meshed like the URDF's visual
(:func:`pccbullet.urdf_gen.geometry.frustum_mesh` from ``z = -h`` to 0: the body frame sits at the slice's
top). Poses come either from PyBullet (:func:`robot_rigid_meshes`) or from the PCC geometry without PyBullet
(:func:`section_poses`), which agree to float32 round-off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import trimesh

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.urdf_gen.geometry import frustum_mesh
from pccbullet.urdf_gen.pcc import PccConfig, chain_frames, segment_joints
from pccbullet.urdf_gen.specs import HeadSpec, LimbSpec, RobotSpec

if TYPE_CHECKING:
    from pccbullet.sim.robot import Robot


def slice_dimensions(limb: LimbSpec) -> list[tuple[float, float, float]]:
    """``(r0, r1, h)`` (m) of every slice body of ``limb``, base to tip, as in the URDF writer."""
    dims = []
    for seg in limb.segments:
        n = seg.sections
        dr = seg.radius_tip - seg.radius_base
        for k in range(1, n + 1):
            dims.append((seg.radius_base + dr * (k - 1) / n, seg.radius_base + dr * k / n, seg.length / n))
    return dims


def section_poses(
    limb: LimbSpec, configs: Sequence[PccConfig], T_world_base: Transform | None = None
) -> FloatArray:
    """Slice-body poses of ``limb`` for ``configs`` from the PCC chain, ``(N_total, 4, 4) float``."""
    if len(configs) != len(limb.segments):
        raise ConfigurationError(
            f"limb '{limb.name}' has {len(limb.segments)} segments; got {len(configs)} configs"
        )
    T = np.eye(4) if T_world_base is None else np.asarray(T_world_base, dtype=float)
    out: list[Transform] = []
    for seg, c in zip(limb.segments, configs, strict=True):
        frames = chain_frames(segment_joints(c.bend, c.plane, c.length, seg.sections))
        out.extend(T @ frames[:-1])
        T = T @ frames[-1]
    return np.stack(out)


def rigid_mesh(limb: LimbSpec, poses: FloatArray, *, ring: int = 32) -> trimesh.Trimesh:
    """All slices of ``limb`` placed at ``poses`` ``(N_total, 4, 4)`` as one mesh (no shared vertices)."""
    dims = slice_dimensions(limb)
    if len(poses) != len(dims):
        raise ConfigurationError(f"limb '{limb.name}' has {len(dims)} slices; got {len(poses)} poses")
    parts = []
    for (r0, r1, h), T in zip(dims, poses, strict=True):
        m = frustum_mesh(r0, r1, h, z0=-h, sections=ring)
        m.apply_transform(T)
        parts.append(m)
    return cast(trimesh.Trimesh, trimesh.util.concatenate(parts))


def body_mesh(
    head: HeadSpec, T_world_head: Transform | None = None, *, ring: int = 32
) -> trimesh.Trimesh | None:
    """The robot's body (head) as a mesh at ``T_world_head`` (default: the world origin): its cylinder
    (along x), box, sphere or mesh file; ``None`` for a body without a shape."""
    if head.shape == "cylinder":
        mesh = trimesh.creation.cylinder(0.5 * head.diameter, head.length, sections=ring)
        mesh.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 1, 0]))
    elif head.shape == "box":
        mesh = trimesh.creation.box(head.size)
    elif head.shape == "sphere":
        mesh = trimesh.creation.icosphere(subdivisions=3, radius=0.5 * head.diameter)
    elif head.shape == "mesh" and head.mesh is not None:
        mesh = trimesh.load(str(head.mesh), force="mesh")
        mesh.apply_scale(head.mesh_scale)
    else:
        return None
    if T_world_head is not None:
        mesh.apply_transform(np.asarray(T_world_head, dtype=float))
    return mesh


def limb_base_pose(spec: RobotSpec, limb: str, T_world_head: Transform | None = None) -> Transform:
    """World pose of a limb's base for a head at ``T_world_head`` (default: the world origin), ``(4, 4)``."""
    T = np.eye(4) if T_world_head is None else np.asarray(T_world_head, dtype=float)
    return T @ spec.limb(limb).T_head_base()


def robot_rigid_meshes(robot: Robot, *, ring: int = 32) -> dict[str, trimesh.Trimesh]:
    """Rigid-section meshes of every limb of a loaded robot at PyBullet's current link poses."""
    return {
        limb.name: rigid_mesh(limb, robot.section_poses(limb.name), ring=ring) for limb in robot.spec.limbs
    }
