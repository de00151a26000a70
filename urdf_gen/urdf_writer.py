"""RobotSpec -> URDFs (one for the head, one per limb, each limb an RRP chain) plus STL meshes.

Why one URDF per limb: PyBullet reads back the state of at most 128 links per body (bullet3 issue
#4621, ``MAX_DEGREE_OF_FREEDOM``); URSULA at N = 10 has 186 movable joints, one limb at most 62. A limb
URDF's root link is its flange (``{limb}_base``); the simulator places it at the head's mount pose.
:data:`MAX_LINKS` is checked before writing. Per section three joints (``plane`` revolute z,
``bend`` revolute y, ``chord`` prismatic z, see
:mod:`pccbullet.urdf_gen.naming`) and per segment one ``tip_bend`` joint that aligns the last chord with the
arc's tip tangent (:mod:`pccbullet.urdf_gen.pcc`).

Mass: each section is the frustum slice of rest length ``L / N``. Its mass is split between the slice
body (visual mesh, collision cylinder) and the two intermediate links of the RRP section, which carry
``INTERMEDIATE_FRACTION`` of it each with the slice's inertia scaled down, so both PyBullet and MuJoCo
see sane, positive-definite inertias at 1 ms steps; the last slice also feeds its segment's end link.
The links of a limb therefore sum to the frustum's mass exactly. Frame-marker links (flange, tip)
weigh ``MARKER_MASS``; payload links carry the payload mass.

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

import numpy as np

from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.atomic import atomic_path
from pccbullet.urdf_gen.errors import ConfigurationError
from pccbullet.urdf_gen.geometry import MassProperties, frustum_mass_properties, frustum_mesh
from pccbullet.urdf_gen.pcc import sinc
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec, SegmentSpec

INTERMEDIATE_FRACTION = 0.01  # share of a slice's mass on each of its two intermediate links (-)
MARKER_MASS = 1e-4  # kg, flange and tip-frame marker links
MESH_DIR = "meshes"
JOINT_EFFORT = (
    1e6  # N·m or N: passive elastic joints, no actuator limit; large so nothing clips material torques
)
JOINT_VELOCITY = 100.0  # rad/s or m/s
PLANE_LIMIT_INNER = 0.5 * math.pi  # rad, plane joints of sections k > 1 (0 in pure PCC, torsion in dynamics)
MAX_LINKS = 127  # PyBullet state readback limit per body (links besides the root)
LIMB_RGBA = "0.95 0.55 0.35 1"
HEAD_RGBA = "0.3 0.35 0.45 1"


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


def _marker(mass: float, radius: float) -> MassProperties:
    i = 0.4 * mass * radius * radius  # solid sphere
    return MassProperties(mass, np.zeros(3), np.diag([i, i, i]))


def _link(robot: ET.Element, name: str, mp: MassProperties) -> ET.Element:
    link = ux.link(robot, name)
    ux.inertial(link, mp.mass, mp.inertia, mp.com)
    return link


def _joint(
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
    limit = None if limits is None else (limits[0], limits[1], f"{JOINT_EFFORT:g}", f"{JOINT_VELOCITY:g}")
    ux.joint(robot, name, kind, parent, child, xyz=xyz, rpy=rpy, axis=axis, limit=limit)


def _geometry(parent: ET.Element, tag: str, shape: ET.Element, xyz: ux.Vec, rgba: str | None = None) -> None:
    name = None if rgba is None else ("limb" if rgba == LIMB_RGBA else "head")
    ux.shape(parent, tag, shape, xyz, material_name=name, rgba=rgba)


def section_limits(seg: SegmentSpec) -> dict[str, tuple[float, float]]:
    """Joint limits of one segment by role: ``plane_first``, ``plane``, ``bend_half``, ``bend``, ``chord``."""
    n = seg.sections
    half = seg.bend_max / (2 * n)
    return {
        "plane_first": (-seg.plane_max, seg.plane_max),
        "plane": (-PLANE_LIMIT_INNER, PLANE_LIMIT_INNER),
        "bend_half": (-half, half),
        "bend": (-2 * half, 2 * half),
        "chord": (seg.length_min / n * sinc(half), seg.length_max / n),
    }


class _Builder:
    """Accumulates the URDF tree and the distinct slice meshes."""

    def __init__(self, spec: RobotSpec, name: str, *, fusestatic: bool = True) -> None:
        self.spec = spec
        self.meshes: dict[str, tuple[float, float, float]] = {}
        self.robot = ux.robot(name)
        ux.mujoco_hint(self.robot, MESH_DIR, fusestatic=fusestatic)

    def head(self) -> None:
        h = self.spec.head
        r, length = 0.5 * h.diameter, h.length
        # Solid cylinder along x.
        ix = 0.5 * h.mass * r * r
        iyz = h.mass * (3 * r * r + length * length) / 12.0
        link = _link(
            self.robot, naming.HEAD_LINK, MassProperties(h.mass, np.zeros(3), np.diag([ix, iyz, iyz]))
        )
        for tag in ("visual", "collision"):
            rgba = HEAD_RGBA if tag == "visual" else None
            name = "head" if tag == "visual" else None
            ux.shape(
                link, tag, ux.cylinder(r, length), rpy=(0, math.pi / 2, 0), material_name=name, rgba=rgba
            )

    def limb(self, limb: LimbSpec) -> None:
        name = limb.name
        r_base = limb.segments[0].radius_base
        base = _link(self.robot, naming.base_link(name), _marker(MARKER_MASS, r_base))
        _geometry(
            base,
            "visual",
            ux.cylinder(r_base, "0.01"),
            (0, 0, -0.005),
            HEAD_RGBA,
        )
        parent = naming.base_link(name)
        for s, seg in enumerate(limb.segments, start=1):
            parent = self.segment(limb, s, seg, parent)
        r_tip = limb.segments[-1].radius_tip
        _link(self.robot, naming.tip_link(name), _marker(MARKER_MASS, r_tip))
        _joint(self.robot, f"{name}_tip_fixed", "fixed", parent, naming.tip_link(name))
        if limb.payload is not None:
            p = limb.payload
            payload = _link(self.robot, p.frame, _marker(p.mass, r_tip))
            if p.kind == "force_sensor":  # the sensor touches the world: a sphere the size of the tip
                _geometry(payload, "collision", ux.sphere(r_tip), (0, 0, 0))
                _geometry(payload, "visual", ux.sphere(r_tip), (0, 0, 0), HEAD_RGBA)
            _joint(self.robot, f"{p.frame}_fixed", "fixed", naming.tip_link(name), p.frame, xyz=p.offset)

    def segment(self, limb: LimbSpec, s: int, seg: SegmentSpec, parent: str) -> str:
        n = seg.sections
        h = seg.length / n
        lim = section_limits(seg)
        rho = limb.material.density
        for k in range(1, n + 1):
            r0, r1 = seg.radius_at((k - 1) / n), seg.radius_at(k / n)
            slice_mp = frustum_mass_properties(r0, r1, h, rho).shifted(-h)  # body frame at the slice's top
            body_share = 1.0 - 2 * INTERMEDIATE_FRACTION - (INTERMEDIATE_FRACTION if k == n else 0.0)
            mid = slice_mp.scaled(INTERMEDIATE_FRACTION).shifted(h)  # centre ahead of the section base
            p = naming.section_prefix(limb.name, s, k)
            _link(self.robot, f"{p}_a", mid)
            _link(self.robot, f"{p}_b", mid)
            body = _link(self.robot, p, slice_mp.scaled(body_share))
            mesh_name = f"slice_{r0 * 1e3:.3f}_{r1 * 1e3:.3f}_{h * 1e3:.3f}mm.stl"
            self.meshes[mesh_name] = (r0, r1, h)
            _geometry(body, "visual", ux.mesh(f"{MESH_DIR}/{mesh_name}"), (0, 0, 0), LIMB_RGBA)
            _geometry(body, "collision", ux.cylinder(0.5 * (r0 + r1), h), (0, 0, -0.5 * h))
            plane_lim = lim["plane_first"] if k == 1 else lim["plane"]
            bend_lim = lim["bend_half"] if k == 1 else lim["bend"]
            _joint(self.robot, f"{p}_plane", "revolute", parent, f"{p}_a", axis=(0, 0, 1), limits=plane_lim)
            _joint(self.robot, f"{p}_bend", "revolute", f"{p}_a", f"{p}_b", axis=(0, 1, 0), limits=bend_lim)
            _joint(self.robot, f"{p}_chord", "prismatic", f"{p}_b", p, axis=(0, 0, 1), limits=lim["chord"])
            parent = p
            last_slice = slice_mp
        end = naming.segment_end_link(limb.name, s)
        _link(self.robot, end, last_slice.scaled(INTERMEDIATE_FRACTION))
        _joint(
            self.robot,
            f"{limb.name}_s{s}_tip_bend",
            "revolute",
            parent,
            end,
            axis=(0, 1, 0),
            limits=lim["bend_half"],
        )
        return end


def limb_link_count(limb: LimbSpec) -> int:
    """Links of a limb URDF besides its root: 3 per section, 1 end link per segment, tip, payload."""
    return sum(3 * seg.sections + 1 for seg in limb.segments) + 1 + (limb.payload is not None)


def build_head_urdf(spec: RobotSpec) -> ET.ElementTree:
    """The URDF tree of the head alone (root link ``head``)."""
    b = _Builder(spec, f"{spec.name}_head")
    b.head()
    return ET.ElementTree(b.robot)


def build_limb_urdf(
    spec: RobotSpec, limb: LimbSpec
) -> tuple[ET.ElementTree, dict[str, tuple[float, float, float]]]:
    """The URDF tree of one limb (root link ``{limb}_base``) and its meshes: file name -> (r0, r1, h) (m).

    Raises:
        ConfigurationError: the limb would exceed PyBullet's :data:`MAX_LINKS` links per body.
    """
    count = limb_link_count(limb)
    if count > MAX_LINKS:
        per_seg = (MAX_LINKS - 2 - len(limb.segments)) // (3 * len(limb.segments))
        raise ConfigurationError(
            f"limb '{limb.name}' needs {count} links; PyBullet handles at most {MAX_LINKS} per body; "
            f"allowed: at most {per_seg} sections per segment for this limb"
        )
    b = _Builder(spec, f"{spec.name}_{limb.name}")
    b.limb(limb)
    return ET.ElementTree(b.robot), b.meshes


def build_combined_urdf(spec: RobotSpec) -> tuple[ET.ElementTree, dict[str, tuple[float, float, float]]]:
    """The whole robot as one URDF tree and its meshes: file name -> (r0, r1, h) (m).

    Root link ``head``; each limb's flange ``{limb}_base`` is attached by the fixed joint
    ``{limb}_mount`` at :meth:`~pccbullet.urdf_gen.specs.LimbSpec.T_head_base`. Link and joint names are those
    of the per-limb files. No link limit applies (this file is not for PyBullet).
    """
    b = _Builder(spec, spec.name, fusestatic=False)
    b.head()
    for limb in spec.limbs:
        b.limb(limb)
        _joint(
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
    spec: RobotSpec, out_dir: str | Path, *, mesh_sections: int = 32, combined: bool = False
) -> UrdfOutput:
    """Write ``{name}_head.urdf``, ``{name}_{limb}.urdf`` per limb and the meshes under ``meshes/``.

    Args:
        spec: the robot.
        out_dir: target folder, created if missing. Required: nothing is written to the cwd implicitly.
        mesh_sections: polygon sides of the slice meshes.
        combined: also write ``{name}.urdf``, the whole robot in one file (:func:`build_combined_urdf`).

    Returns:
        The absolute paths written.
    """
    out = Path(out_dir).expanduser().resolve()
    trees = [build_limb_urdf(spec, limb) for limb in spec.limbs]  # refuse (too many links) before writing
    (out / MESH_DIR).mkdir(parents=True, exist_ok=True)
    meshes: dict[str, tuple[float, float, float]] = {}
    limbs: dict[str, Path] = {}
    for limb, (tree, limb_meshes) in zip(spec.limbs, trees, strict=True):
        meshes.update(limb_meshes)
        limbs[limb.name] = out / f"{spec.name}_{limb.name}.urdf"
        ux.write_tree(tree, limbs[limb.name])
    head = out / f"{spec.name}_head.urdf"
    ux.write_tree(build_head_urdf(spec), head)
    whole = None
    if combined:
        whole = out / f"{spec.name}.urdf"
        ux.write_tree(build_combined_urdf(spec)[0], whole)
    written = []
    for name, (r0, r1, h) in meshes.items():
        path = out / MESH_DIR / name
        with atomic_path(path) as tmp:
            frustum_mesh(r0, r1, h, z0=-h, sections=mesh_sections).export(tmp)
        written.append(path)
    return UrdfOutput(head=head, limbs=limbs, meshes=tuple(written), combined=whole)
