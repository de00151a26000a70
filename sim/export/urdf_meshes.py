"""Meshes of any URDF robot at rest, from PyBullet's visual shapes: the export path for robots that are
not PCC limbs on a head (seed 003's rolling snakes, seed 002's PneuNets, seed 004's arm).

Those URDFs use primitives only (box, cylinder, sphere); each visual becomes a trimesh primitive placed
at its link's world pose (the URDF link frame; PyBullet gives the root's about its centre of mass, which
is undone) times its local visual frame. Mesh visuals are loaded with trimesh. Every joint stays at 0.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import cast

import numpy as np
import trimesh

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import Transform
from pccbullet.sim.bullet import pb
from pccbullet.urdf_gen.catalog import write_robot_urdf


def _pose(position: object, quaternion: object) -> Transform:
    T = np.eye(4)
    T[:3, :3] = np.asarray(pb.getMatrixFromQuaternion(quaternion)).reshape(3, 3)
    T[:3, 3] = np.asarray(position, dtype=float)
    return T


def _primitive(kind: int, dims: tuple[float, ...], filename: str, sections: int) -> trimesh.Trimesh:
    if kind == pb.GEOM_BOX:
        return trimesh.creation.box(extents=dims[:3])
    if kind == pb.GEOM_SPHERE:
        return trimesh.creation.icosphere(subdivisions=2, radius=dims[0])
    if kind == pb.GEOM_CYLINDER:
        return trimesh.creation.cylinder(radius=dims[1], height=dims[0], sections=sections)
    if kind == pb.GEOM_CAPSULE:
        return trimesh.creation.capsule(height=dims[0], radius=dims[1], count=(sections, sections))
    if kind == pb.GEOM_MESH:
        mesh = trimesh.load_mesh(filename, force="mesh")
        mesh.apply_scale(dims[:3])
        return mesh
    raise ConfigurationError(f"visual geometry type {kind} is not supported; allowed: box, sphere, cylinder")


def urdf_rest_mesh(urdf: str | Path, *, sections: int = 32) -> trimesh.Trimesh:
    """All visuals of ``urdf`` with every joint at 0, root link at the world origin, as one mesh (m)."""
    cid = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(str(urdf), useFixedBase=True, physicsClientId=cid)
        meshes = []
        for shape in pb.getVisualShapeData(body, physicsClientId=cid):
            link, kind, dims, filename, pos, orn = shape[1], shape[2], shape[3], shape[4], shape[5], shape[6]
            if link == -1:  # the root: its centre-of-mass pose times the inverse inertial frame
                T_com = _pose(*pb.getBasePositionAndOrientation(body, physicsClientId=cid))
                info = pb.getDynamicsInfo(body, -1, physicsClientId=cid)
                T_link = T_com @ np.linalg.inv(_pose(info[3], info[4]))
            else:
                state = pb.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=cid)
                T_link = _pose(state[4], state[5])
            mesh = _primitive(kind, tuple(dims), filename.decode(), sections)
            mesh.apply_transform(T_link @ _pose(pos, orn))
            meshes.append(mesh)
    finally:
        pb.disconnect(cid)
    if not meshes:
        raise ConfigurationError(f"URDF {str(urdf)!r} has no visual shapes; allowed: a robot with visuals")
    return cast(trimesh.Trimesh, trimesh.util.concatenate(meshes))


def robot_rest_mesh(robot: str | Path, *, sections: int = 32) -> trimesh.Trimesh:
    """The rest mesh of a bundled robot (any kind) or robot TOML, via its URDF in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="pccbullet_export_") as tmp:
        urdfs = write_robot_urdf(robot, tmp)
        return urdf_rest_mesh(urdfs[0], sections=sections)
