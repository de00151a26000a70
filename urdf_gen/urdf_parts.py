"""Pieces every PCC limb URDF is built from: the mass split of a slice, marker links, joints, colours.

Both chains of :mod:`pccbullet.urdf_gen.urdf_writer` (the paper's RRP sections and the dynamic worlds' rod
chain, :mod:`pccbullet.urdf_gen.rod_urdf`) build their sections from :func:`section_links`: a slice of the
frustum, rest length ``L / N``, whose mass is split between the slice body (visual mesh, collision
cylinder) and the nearly massless links inside its joint group, which carry ``INTERMEDIATE_FRACTION`` of
it each with the slice's inertia scaled down, so both PyBullet and MuJoCo see sane, positive-definite
inertias at 1 ms steps. The last slice of a segment also feeds the links after it (the segment's end), so
a limb's links sum to the frustum's mass exactly.

Mesh references are relative (``meshes/NAME.stl`` beside the URDF) unless :func:`apply_mesh_uri` points
them at a ROS package (``package://NAME/meshes``, what RViz and robot_state_publisher resolve) or at
absolute ``file://`` paths.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from pccbullet.core.atomic import atomic_path
from pccbullet.core.errors import ConfigurationError, cap
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.geometry import MassProperties, frustum_mass_properties, frustum_mesh
from pccbullet.urdf_gen.specs import LimbSpec, SegmentSpec

INTERMEDIATE_FRACTION = 0.01  # share of a slice's mass on each of its intermediate links (-)
FRAME_MASS = 0.0  # kg, flange and tip-frame links: frames, no matter (a payload is the robot file's)
MESH_DIR = "meshes"
JOINT_EFFORT = (
    1e6  # N·m or N: passive elastic joints, no actuator limit; large so nothing clips material torques
)
JOINT_VELOCITY = 100.0  # rad/s or m/s
LIMB_RGBA = "0.95 0.55 0.35 1"
HEAD_RGBA = "0.3 0.35 0.45 1"

Meshes = dict[str, tuple[float, float, float]]  # mesh file name -> (r0, r1, h) (m)


def marker(mass: float, radius: float) -> MassProperties:
    """Mass properties of a solid sphere of ``mass`` (kg) and ``radius`` (m), centred on its frame; a frame
    without matter for ``mass = 0`` (zero inertia, written explicitly: PyBullet gives a link without an
    ``<inertial>`` 1 kg)."""
    i = 0.4 * mass * radius * radius
    return MassProperties(mass, np.zeros(3), np.diag([i, i, i]))


def add_link(robot: ET.Element, name: str, mp: MassProperties) -> ET.Element:
    """A ``<link>`` with the inertial of ``mp``."""
    link = ux.link(robot, name)
    ux.inertial(link, mp.mass, mp.inertia, mp.com)
    return link


def add_joint(
    robot: ET.Element,
    name: str,
    kind: str,
    parent: str,
    child: str,
    *,
    axis: tuple[int, int, int] | None = None,
    limits: tuple[float, float] | None = None,
    xyz: ux.Vec = (0, 0, 0),
    rpy: ux.Vec = (0, 0, 0),
) -> None:
    """A ``<joint>``; ``limits`` (lower, upper) come with :data:`JOINT_EFFORT` and :data:`JOINT_VELOCITY`."""
    limit = None if limits is None else (limits[0], limits[1], f"{JOINT_EFFORT:g}", f"{JOINT_VELOCITY:g}")
    ux.joint(robot, name, kind, parent, child, xyz=xyz, rpy=rpy, axis=axis, limit=limit)


def add_geometry(
    parent: ET.Element, tag: str, shape: ET.Element, xyz: ux.Vec, rgba: str | None = None
) -> None:
    """A ``<visual>`` or ``<collision>`` (``tag``) of ``shape`` at ``xyz``; visuals get the limb or head
    material by ``rgba``."""
    name = None if rgba is None else ("limb" if rgba == LIMB_RGBA else "head")
    ux.shape(parent, tag, shape, xyz, material_name=name, rgba=rgba)


def section_links(
    robot: ET.Element,
    meshes: Meshes,
    limb: LimbSpec,
    s: int,
    seg: SegmentSpec,
    k: int,
    *,
    inner: int,
    after_last: int,
) -> MassProperties:
    """Links of section ``k`` (1-based) of segment ``s``: ``inner`` nearly massless links named
    ``{prefix}_a``, ``_b``, ... (frames at the section base) and the slice body ``{prefix}`` (frame at
    the slice's top, the slice below it); the slice's mesh is added to ``meshes``.

    Each inner link carries :data:`INTERMEDIATE_FRACTION` of the slice (centre at the straight slice's
    centre); the body the rest, less ``after_last`` such shares on the last section of a segment, which
    the caller gives to the links after it. Returns the whole slice's mass properties (frame at its top).
    """
    n = seg.sections
    h = seg.length / n
    r0, r1 = seg.radius_at((k - 1) / n), seg.radius_at(k / n)
    slice_mp = frustum_mass_properties(r0, r1, h, limb.material.density).shifted(-h)
    body_share = 1.0 - INTERMEDIATE_FRACTION * (inner + (after_last if k == n else 0))
    mid = slice_mp.scaled(INTERMEDIATE_FRACTION).shifted(h)  # centre ahead of the section base
    p = naming.section_prefix(limb.name, s, k)
    for i in range(inner):
        add_link(robot, f"{p}_{'abcdef'[i]}", mid)
    body = add_link(robot, p, slice_mp.scaled(body_share))
    mesh_name = f"slice_{r0 * 1e3:.3f}_{r1 * 1e3:.3f}_{h * 1e3:.3f}mm.stl"
    meshes[mesh_name] = (r0, r1, h)
    add_geometry(body, "visual", ux.mesh(f"{MESH_DIR}/{mesh_name}"), (0, 0, 0), LIMB_RGBA)
    add_geometry(body, "collision", ux.cylinder(0.5 * (r0 + r1), h), (0, 0, -0.5 * h))
    return slice_mp


def write_slice_meshes(meshes: Meshes, out_dir: Path, sections: int) -> tuple[Path, ...]:
    """Write every slice of ``meshes`` as an STL (a :func:`~pccbullet.urdf_gen.geometry.frustum_mesh` of
    ``sections`` polygon sides, from ``z = -h`` to 0) under ``out_dir / MESH_DIR``, atomically; returns the
    paths written, in the order of ``meshes``."""
    written = []
    for name, (r0, r1, h) in meshes.items():
        path = out_dir / MESH_DIR / name
        with atomic_path(path) as tmp:
            frustum_mesh(r0, r1, h, z0=-h, sections=sections).export(tmp)
        written.append(path)
    return tuple(written)


MESH_URI_FORMS = (
    "package://PACKAGE[/PATH] (a ROS package name: lower case, digits, '_'), file:// (the written meshes' "
    "absolute paths) or file:///ABSOLUTE/FOLDER"
)
_PACKAGE_URI = re.compile(r"^package://[a-z][a-z0-9_]*(/[A-Za-z0-9_.\-]+)*/?$")
_FILE_URI = re.compile(r"^file://(/[A-Za-z0-9_.\-]+)*/?$")


def check_mesh_uri(uri: str) -> str:
    """``uri`` without a trailing ``/`` if it is one of :data:`MESH_URI_FORMS`, else
    :class:`~pccbullet.core.errors.ConfigurationError` naming the value and the forms."""
    if not isinstance(uri, str) or not (_PACKAGE_URI.match(uri) or _FILE_URI.match(uri)):
        raise ConfigurationError(f"mesh_uri = {cap(uri)} is invalid; allowed: {MESH_URI_FORMS}")
    return uri if uri == "file://" else uri.rstrip("/")


def apply_mesh_uri(tree: ET.ElementTree, uri: str | None, mesh_dir: Path) -> None:
    """Point every ``<mesh filename="meshes/NAME">`` of ``tree`` at ``{uri}/NAME`` (``None``: leave them);
    ``file://`` alone means the absolute path of ``mesh_dir``, where the meshes are written."""
    if uri is None:
        return
    prefix = check_mesh_uri(uri)
    if prefix == "file://":
        prefix = "file://" + Path(mesh_dir).resolve().as_posix()
    for element in tree.iter("mesh"):
        name = element.get("filename", "")
        if name.startswith(f"{MESH_DIR}/"):
            element.set("filename", f"{prefix}/{name[len(MESH_DIR) + 1 :]}")
