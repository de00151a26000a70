"""RobotSpec -> URDFs (one for the head, one per limb, each limb an RRP or a rod chain) plus STL meshes.

Why one URDF per limb: PyBullet's state holds 128 entries per body (bullet3 issue #4621,
``MAX_DEGREE_OF_FREEDOM``); URSULA at N = 10 has 186 movable joints, one limb at most 62. A limb URDF's
root link is its flange (``{limb}_base``); the simulator places it at the head's mount pose, as one body
or, where the limb is larger than a body holds, in parts (:mod:`pccbullet.sim.limb.parts`).

Chains (``chain=``, a :class:`~pccbullet.urdf_gen.topology.Topology` or its name, which writes the
segments): ``"rrp"`` (default, the paper's, what ``pccbullet urdf`` writes and kinematic worlds load): per
section three joints (``plane`` revolute z, ``bend`` revolute y, ``chord`` prismatic z, see
:mod:`pccbullet.urdf_gen.naming`) and per segment one ``tip_bend`` joint that aligns the last chord with
the arc's tip tangent (:mod:`pccbullet.urdf_gen.pcc`, written by :mod:`pccbullet.urdf_gen.rrp_urdf`).
``"rod"`` (dynamic worlds): sections that bend about both axes, twist and stretch
(:mod:`pccbullet.urdf_gen.rod`, written by :mod:`pccbullet.urdf_gen.rod_urdf`).

Mass: each section is the frustum slice of rest length ``L / N``, split between the slice body and the
nearly massless links of its joints (:func:`pccbullet.urdf_gen.urdf_parts.section_links`); the links of a
limb sum to the frustum's mass exactly. Frame links (flange, tip) have no mass (``FRAME_MASS`` = 0: a
fixed-joint frame adds nothing to its parent's inertia in PyBullet's multibody or MuJoCo, and the limb
weighs what its robot file says); a payload link carries the payload mass the robot file sets.

Meshes: one STL per distinct slice, in ``meshes/`` beside the URDF; a ``<mujoco>`` compiler hint tells
MuJoCo's URDF importer where they are (PyBullet and yourdfpy ignore it).

Combined file (``write_urdf(..., combined=True)``): ``{name}.urdf``, the whole robot in one tree for
ROS (robot_state_publisher, RViz, MoveIt), Pinocchio and MuJoCo: the head link is the root and every
limb hangs on a fixed ``{limb}_mount`` joint at its mount pose, with the same link and joint names as
the per-limb files. Its MuJoCo hint also keeps fixed links as bodies (``fusestatic="false"``), so the
tip, camera and sensor frames exist by name there too. PyBullet cannot read back its state (128 links).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.body_shape import body_inertia
from pccbullet.urdf_gen.geometry import MassProperties
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_parts import (
    FRAME_MASS,
    HEAD_RGBA,
    MESH_DIR,
    Meshes,
    add_geometry,
    add_joint,
    add_link,
    apply_mesh_uri,
    check_mesh_uri,
    marker,
    write_slice_meshes,
)


@dataclass(frozen=True, slots=True)
class UrdfOutput:
    """Files written by :func:`write_urdf` (absolute paths): head URDF, limb URDFs by name, meshes,
    and the whole-robot URDF if one was asked for (else ``None``)."""

    head: Path
    limbs: dict[str, Path]
    meshes: tuple[Path, ...]
    combined: Path | None = None

    @property
    def urdfs(self) -> list[Path]:
        """All URDF files, head first, the combined file (if any) last."""
        return [self.head, *self.limbs.values(), *([self.combined] if self.combined else [])]


class _Builder:
    """Accumulates the URDF tree and the distinct slice meshes; limbs as ``chain`` sections."""

    def __init__(
        self, spec: RobotSpec, name: str, *, fusestatic: bool = True, chain: Topology = Topology.RRP
    ) -> None:
        self.spec = spec
        self.chain = chain
        self.meshes: Meshes = {}
        self.robot = ux.robot(name)
        ux.mujoco_hint(self.robot, MESH_DIR, fusestatic=fusestatic)

    def head(self) -> None:
        h = self.spec.head
        com, inertia = body_inertia(h)
        link = add_link(self.robot, naming.HEAD_LINK, MassProperties(h.mass, com, inertia))
        rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
        if h.shape == "cylinder":  # along x
            geometry, rpy = ux.cylinder(0.5 * h.diameter, h.length), (0.0, math.pi / 2, 0.0)
        elif h.shape == "box":
            geometry = ux.box(h.size)
        elif h.shape == "sphere":
            geometry = ux.sphere(0.5 * h.diameter)
        elif h.shape == "mesh" and h.mesh is not None:
            geometry = ux.mesh(str(h.mesh))
            geometry.set("scale", ux.fmt((h.mesh_scale,) * 3))
        else:
            return  # no shape: a mass the limbs hang on
        for tag in ("visual", "collision"):
            rgba = HEAD_RGBA if tag == "visual" else None
            name = "head" if tag == "visual" else None
            ux.shape(link, tag, geometry, rpy=rpy, material_name=name, rgba=rgba)

    def limb(self, limb: LimbSpec) -> None:
        name = limb.name
        r_base = limb.segments[0].radius_base
        base = add_link(self.robot, naming.base_link(name), marker(FRAME_MASS, r_base))
        add_geometry(
            base,
            "visual",
            ux.cylinder(r_base, "0.01"),
            (0, 0, -0.005),
            HEAD_RGBA,
        )
        parent = naming.base_link(name)
        for s, seg in enumerate(limb.segments, start=1):
            parent = self.chain.write_segment(self.robot, self.meshes, limb, s, seg, parent)
        r_tip = limb.segments[-1].radius_tip
        add_link(self.robot, naming.tip_link(name), marker(FRAME_MASS, r_tip))
        add_joint(self.robot, f"{name}_tip_fixed", "fixed", parent, naming.tip_link(name))
        if limb.payload is not None:
            p = limb.payload
            payload = add_link(self.robot, p.frame, marker(p.mass, r_tip))
            if p.kind == "force_sensor":  # the sensor touches the world: a sphere the size of the tip
                add_geometry(payload, "collision", ux.sphere(r_tip), (0, 0, 0))
                add_geometry(payload, "visual", ux.sphere(r_tip), (0, 0, 0), HEAD_RGBA)
            add_joint(self.robot, f"{p.frame}_fixed", "fixed", naming.tip_link(name), p.frame, xyz=p.offset)


def limb_link_count(limb: LimbSpec, chain: Topology | str = Topology.RRP) -> int:
    """Links of a limb URDF besides its root: per segment ``3 N + 1`` (RRP: 3 per section, the end link)
    or ``2 N + 1`` (rod: 2 per section, the end link); then the tip frame and the payload."""
    per_section = Topology.of(chain).links_per_section
    frames = 1 + (limb.payload is not None)
    return sum(per_section * seg.sections + 1 for seg in limb.segments) + frames


def build_head_urdf(spec: RobotSpec) -> ET.ElementTree:
    """The URDF tree of the head alone (root link ``head``)."""
    b = _Builder(spec, f"{spec.name}_head")
    b.head()
    return ET.ElementTree(b.robot)


def build_limb_urdf(
    spec: RobotSpec, limb: LimbSpec, chain: Topology | str = Topology.RRP
) -> tuple[ET.ElementTree, Meshes]:
    """The URDF tree of one limb (root link ``{limb}_base``) and its meshes: file name -> (r0, r1, h) (m).

    Args:
        chain: ``"rrp"`` (the paper's sections) or ``"rod"`` (:mod:`pccbullet.urdf_gen.rod`), a
            :class:`~pccbullet.urdf_gen.topology.Topology` or its name.

    Raises:
        ConfigurationError: ``chain`` is unknown. (A limb larger than a PyBullet body holds is loaded in
        parts: :mod:`pccbullet.sim.limb.parts`.)
    """
    b = _Builder(spec, f"{spec.name}_{limb.name}", chain=Topology.of(chain))
    b.limb(limb)
    return ET.ElementTree(b.robot), b.meshes


def build_combined_urdf(spec: RobotSpec) -> tuple[ET.ElementTree, Meshes]:
    """The whole robot as one URDF tree and its meshes: file name -> (r0, r1, h) (m).

    Root link ``head``; each limb's flange ``{limb}_base`` is attached by the fixed joint
    ``{limb}_mount`` at :meth:`~pccbullet.urdf_gen.specs.LimbSpec.T_head_base`. Link and joint names are those
    of the per-limb files. No link limit applies (this file is not for PyBullet).
    """
    b = _Builder(spec, spec.name, fusestatic=False)
    b.head()
    for limb in spec.limbs:
        b.limb(limb)
        add_joint(
            b.robot,
            f"{limb.name}_mount",
            "fixed",
            naming.HEAD_LINK,
            naming.base_link(limb.name),
            xyz=limb.mount_xyz,
            rpy=limb.mount_rpy,
        )
    return ET.ElementTree(b.robot), b.meshes


def write_urdf(
    spec: RobotSpec,
    out_dir: str | Path,
    *,
    mesh_sections: int = 32,
    combined: bool = False,
    chain: Topology | str = Topology.RRP,
    mesh_uri: str | None = None,
) -> UrdfOutput:
    """Write ``{name}_head.urdf``, ``{name}_{limb}.urdf`` per limb and the meshes under ``meshes/``.

    Args:
        spec: the robot.
        out_dir: target folder, created if missing. Required: nothing is written to the cwd implicitly.
        mesh_sections: polygon sides of the slice meshes.
        combined: also write ``{name}.urdf``, the whole robot in one file (:func:`build_combined_urdf`,
            always RRP sections).
        chain: the limb files' sections, a :class:`~pccbullet.urdf_gen.topology.Topology` or its name:
            ``"rrp"`` (the paper's, for users and kinematic worlds) or ``"rod"`` (dynamic worlds,
            :mod:`pccbullet.urdf_gen.rod`).
        mesh_uri: the files' mesh references: ``None`` (``meshes/NAME.stl``, relative), ``package://PKG/meshes``
            or ``file://`` (see :func:`pccbullet.urdf_gen.urdf_parts.apply_mesh_uri`).

    Returns:
        The absolute paths written.
    """
    out = Path(out_dir).expanduser().resolve()
    # refuse (unknown chain, too many links) before writing
    trees = [build_limb_urdf(spec, limb, chain) for limb in spec.limbs]
    if mesh_uri is not None:
        check_mesh_uri(mesh_uri)
    (out / MESH_DIR).mkdir(parents=True, exist_ok=True)
    meshes: Meshes = {}
    limbs: dict[str, Path] = {}
    for limb, (tree, limb_meshes) in zip(spec.limbs, trees, strict=True):
        meshes.update(limb_meshes)
        limbs[limb.name] = out / f"{spec.name}_{limb.name}.urdf"
        apply_mesh_uri(tree, mesh_uri, out / MESH_DIR)
        ux.write_tree(tree, limbs[limb.name])
    head = out / f"{spec.name}_head.urdf"
    ux.write_tree(build_head_urdf(spec), head)
    whole = None
    if combined:
        whole = out / f"{spec.name}.urdf"
        tree = build_combined_urdf(spec)[0]
        apply_mesh_uri(tree, mesh_uri, out / MESH_DIR)
        ux.write_tree(tree, whole)
    written = write_slice_meshes(meshes, out, mesh_sections)
    return UrdfOutput(head=head, limbs=limbs, meshes=written, combined=whole)
