"""Write a PCC robot as one MJCF file for MuJoCo, with its material: ``pccbullet mjcf ROBOT --out DIR``.

The file holds the same chain a dynamic :class:`~pccbullet.sim.world.World` loads (the rod chain by
default, ``chain="rrp"`` for the paper's sections): every URDF link of :func:`~pccbullet.urdf_gen.
urdf_writer.build_limb_urdf` is a MuJoCo body with the same frame, mass and inertia; a rod node's
spherical joint is three hinges (x, y, z, :mod:`pccbullet.sim.mjcf.material` says why), a chord a slide
whose ``ref`` is its rest length (so ``qpos`` is the chord length and the model's reference pose is the
PCC rest shape), and each joint carries the material's stiffness, spring reference and damping. The head
is welded to the world (a robot file's free body, ``[head] base = "free"``: a free joint, its shape and mass
from the head's URDF); each limb hangs on it at its mount. ``<option>``: the step (1 ms), gravity, the
``Euler`` integrator (implicit in damping: the damping includes the implicit step's ``dt K``), the
``PGS`` constraint solver (a soft limb has few contacts, and the Hessian of MuJoCo's default Newton solver
over the limbs' long chains costs more than they do: ``pccbullet bench --peer mujoco``,
``docs/measurements/performance.md``), the medium's density and viscosity.
Contacts: every limb's collision cylinders touch the world, the head and the other limbs, not each other
(one contype bit a limb, as a PyBullet body does not collide with itself); the first slice not its own
mount. Tendons where the robot file declares them, with pull-only motors, and chambers as pushing
actuators along their fibres (:mod:`pccbullet.sim.mjcf.tendons`).

MuJoCo joint names: a node's hinges are ``{node}_x``, ``{node}_y``, ``{node}_z``; a chord's shear slides
``{slice}_shear_x``, ``{slice}_shear_y``; other joints keep their URDF names. :func:`joint_vector_names`
lists them in our joint-vector order, so ``model.qpos_spring[qpos_addresses(model, names)] =
robot.pcc_joints(limb, configs)`` moves the spring targets as ``set_pcc(..., mode="target")`` does.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pccbullet.core.atomic import atomic_path
from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.medium import Medium
from pccbullet.sim.medium import medium as medium_by_name
from pccbullet.sim.mjcf.material import LimbMaterial, limb_material, limb_trees
from pccbullet.sim.mjcf.tendons import write_chambers, write_tendons
from pccbullet.sim.world import PHYSICS_DT, STANDARD_GRAVITY
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.pcc import rpy_matrix
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_parts import MESH_DIR, Meshes, write_slice_meshes
from pccbullet.urdf_gen.urdf_writer import build_head_urdf

AXES = ("x", "y", "z")
ALL_GROUPS = (1 << 31) - 1  # contype/conaffinity bits 0..30
MAX_LIMBS = 30  # one contype bit a limb (bit 0: everything else)
INERT_SIZE = 1e-4  # m, the fluid-inert point of bodies that are not slices
EXACT = 17  # significant digits of the material's numbers and the chords' rest lengths: a float64 read back
VISUAL_GROUP, COLLISION_GROUP, INERT_GROUP = "1", "3", "5"


@dataclass(frozen=True)
class MjcfOutput:
    """Files :func:`write_mjcf` wrote (absolute paths): the model and its meshes."""

    path: Path
    meshes: tuple[Path, ...]


def joint_vector_names(limb: LimbSpec, chain: Topology | str = Topology.ROD) -> list[str]:
    """The MuJoCo joints of ``limb``'s export in our joint-vector order (:mod:`pccbullet.urdf_gen.rod`): a
    node's three hinges, a chord's slide; one name per joint-vector entry."""
    topology = Topology.of(chain)
    out: list[str] = []
    for name, kind in zip(topology.joint_names(limb), topology.joint_kinds(limb), strict=True):
        out += [f"{name}_{a}" for a in AXES] if kind == "spherical" else [name]
    return out


def qpos_addresses(model: Any, names: Sequence[str]) -> np.ndarray:
    """``qpos`` (and ``qpos_spring``) addresses ``(len(names),) int`` of the named 1-dof joints of a
    compiled ``mujoco.MjModel``."""
    import mujoco

    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in names]
    missing = [n for n, i in zip(names, ids, strict=True) if i < 0]
    if missing:
        raise ConfigurationError(f"the MuJoCo model has no joint {missing[0]!r}")
    return np.asarray(model.jnt_qposadr[ids], dtype=np.int64)


def _floats(text: str | None, n: int = 3) -> np.ndarray:
    return np.array([float(v) for v in (text or " ".join(["0"] * n)).split()])


def _origin(el: ET.Element | None) -> tuple[np.ndarray, np.ndarray]:
    """``(xyz, rpy)`` of an element's ``<origin>`` (zeros without one)."""
    origin = el.find("origin") if el is not None else None
    if origin is None:
        return np.zeros(3), np.zeros(3)
    return _floats(origin.get("xyz")), _floats(origin.get("rpy"))


def _quat(rpy: Sequence[float] | np.ndarray) -> str:
    """MuJoCo's ``w x y z`` of URDF roll-pitch-yaw ``Rz(y) Ry(p) Rx(r)``."""
    r, p, y = (0.5 * float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return ux.fmt(
        [
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        ]
    )


class _Builder:
    """Accumulates the MJCF tree: bodies from URDF links, their joints, geoms and the tendons."""

    def __init__(self, spec: RobotSpec, medium_: Medium, dt: float, gravity: Sequence[float]) -> None:
        self.root = ET.Element("mujoco", model=spec.name)
        ET.SubElement(
            self.root,
            "compiler",
            angle="radian",
            meshdir=MESH_DIR,
            inertiafromgeom="false",
            autolimits="true",
        )
        option = {"timestep": ux.num(dt), "gravity": ux.fmt(gravity), "integrator": "Euler", "solver": "PGS"}
        if medium_.density > 0.0:
            option["density"] = ux.num(medium_.density)
            option["viscosity"] = ux.num(medium_.density * medium_.kinematic_viscosity)
        ET.SubElement(self.root, "option", option)
        self.asset = ET.SubElement(self.root, "asset")
        self.world = ET.SubElement(self.root, "worldbody")
        self.contact = ET.SubElement(self.root, "contact")
        self.tendon = ET.SubElement(self.root, "tendon")
        self.actuator = ET.SubElement(self.root, "actuator")
        self.fluid = medium_.density > 0.0
        self.meshes: Meshes = {}
        self.bodies: dict[str, ET.Element] = {}

    def link_content(
        self, body: ET.Element, link: ET.Element, added: tuple[float, float] = (0.0, 0.0)
    ) -> None:
        """Inertial (plus the added mass ``(m_a, j_a)`` across the link's z axis) and geoms of a URDF link;
        no inertial for a link without mass and inertia (MuJoCo refuses a zero inertia; with
        ``inertiafromgeom="false"`` a body without one has none, welded to its parent)."""
        inertial = link.find("inertial")
        if inertial is not None:
            xyz, rpy = _origin(inertial)
            attrs = inertial.find("inertia").attrib  # type: ignore[union-attr]
            xx, yy, zz, xy, xz, yz = (
                float(attrs.get(k, "0")) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
            )
            R = rpy_matrix(*rpy)
            inertia = R @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ R.T
            inertia += added[1] * np.diag([1.0, 1.0, 0.0])
            mass = float(inertial.find("mass").get("value", "0")) + added[0]  # type: ignore[union-attr]
            full = [inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2]]
            if mass > 0.0 or any(full):  # a frame without matter (a limb's flange or tip) gets none
                ET.SubElement(body, "inertial", pos=ux.fmt(xyz), mass=ux.num(mass), fullinertia=ux.fmt(full))
        for tag in ("visual", "collision"):
            for shape in link.findall(tag):
                self.geom(body, shape, tag)

    def geom(self, body: ET.Element, shape: ET.Element, tag: str, **extra: str) -> ET.Element:
        """A MuJoCo geom of a URDF ``<visual>`` or ``<collision>``."""
        xyz, rpy = _origin(shape)
        geometry = shape.find("geometry")
        g = next(iter(geometry)) if geometry is not None else None
        attrs = {"pos": ux.fmt(xyz), "quat": _quat(rpy)}
        if g is None:
            raise ConfigurationError(f"link {body.get('name')!r}: a {tag} without a geometry")
        if g.tag == "mesh":
            file = Path(g.get("filename", "")).name
            name = Path(file).stem
            if name not in {m.get("name") for m in self.asset}:
                asset = ET.SubElement(self.asset, "mesh", name=name, file=file)
                if g.get("scale"):  # a body's mesh file in its own units
                    asset.set("scale", g.get("scale", "1 1 1"))
            attrs.update(type="mesh", mesh=name)
        elif g.tag == "cylinder":
            attrs.update(
                type="cylinder", size=ux.fmt([float(g.get("radius", 0)), 0.5 * float(g.get("length", 0))])
            )
        elif g.tag == "sphere":
            attrs.update(type="sphere", size=ux.num(float(g.get("radius", 0))))
        elif g.tag == "box":
            attrs.update(type="box", size=ux.fmt(0.5 * _floats(g.get("size"))))
        else:
            raise ConfigurationError(f"link {body.get('name')!r}: geometry <{g.tag}> is not supported")
        if tag == "visual":
            color = shape.find("material/color")
            attrs.update(group=VISUAL_GROUP, contype="0", conaffinity="0")
            if color is not None:
                attrs["rgba"] = color.get("rgba", "1 1 1 1")
        else:
            attrs.update(group=COLLISION_GROUP)
        attrs.update(extra)
        return ET.SubElement(body, "geom", attrs)


def _limb(
    b: _Builder, head: ET.Element, limb: LimbSpec, tree: ET.ElementTree, mat: LimbMaterial, bit: int
) -> None:
    """Write one limb under ``head`` from its URDF ``tree`` and material ``mat``; contype bit ``bit``."""
    root = tree.getroot()
    if root is None:
        raise ConfigurationError(f"limb '{limb.name}': an empty URDF tree")
    links = {link.get("name", ""): link for link in root.findall("link")}
    joint_of = {j.find("child").get("link", ""): j for j in root.findall("joint")}  # type: ignore[union-attr]
    children: dict[str, list[str]] = {}
    for child, joint in joint_of.items():
        children.setdefault(joint.find("parent").get("link", ""), []).append(child)  # type: ignore[union-attr]
    slices = set(naming.section_body_links(limb))
    collide = {"contype": str(bit), "conaffinity": str(ALL_GROUPS & ~bit)}
    base = naming.base_link(limb.name)
    mount = ET.SubElement(head, "body", name=base, pos=ux.fmt(limb.mount_xyz), quat=_quat(limb.mount_rpy))
    b.bodies[base] = mount
    b.link_content(mount, links[base])
    stack = [(mount, child) for child in reversed(children.get(base, []))]
    while stack:
        parent, name = stack.pop()
        joint = joint_of[name]
        xyz, rpy = _origin(joint)
        kind, jname = joint.get("type", "fixed"), joint.get("name", "")
        springs = mat.joints.get(jname)
        axis = _floats(joint.find("axis").get("xyz") if joint.find("axis") is not None else "1 0 0")  # type: ignore[union-attr]
        if kind == "prismatic" and springs is not None:  # the body sits at the joint's reference
            xyz = xyz + rpy_matrix(*rpy) @ axis * springs.reference[0]
        body = ET.SubElement(parent, "body", name=name, pos=ux.fmt(xyz, EXACT), quat=_quat(rpy))
        b.bodies[name] = body
        if name in mat.gravcomp:
            body.set("gravcomp", ux.num(mat.gravcomp[name]))
        if springs is not None:
            _joints(body, name, kind, jname, axis, springs, mat)
        link = links[name]
        b.link_content(body, link, mat.added_mass.get(name, (0.0, 0.0)))
        for geom in body.findall("geom"):
            if geom.get("group") != COLLISION_GROUP:
                continue
            geom.attrib.update(collide)
            if b.fluid and name in slices:
                geom.attrib.update(fluidshape="ellipsoid", fluidcoef=ux.fmt([mat.drag[name], 0, 0, 0, 0]))
        if b.fluid and name not in slices:  # MuJoCo would give it its inertia-box drag: ours has none
            ET.SubElement(
                body, "geom", type="sphere", size=ux.num(INERT_SIZE), group=INERT_GROUP, contype="0",
                conaffinity="0", fluidshape="ellipsoid", fluidcoef="0 0 0 0 0",
            )  # fmt: skip
        stack += [(body, child) for child in reversed(children.get(name, []))]
    first = naming.section_prefix(limb.name, 1, 1)
    ET.SubElement(b.contact, "exclude", body1=naming.HEAD_LINK, body2=first)


def _joints(
    body: ET.Element, name: str, kind: str, jname: str, axis: np.ndarray, springs: Any, mat: LimbMaterial
) -> None:
    """The MuJoCo joints of one URDF joint, with their springs; a sheared chord's slides first."""

    def add(joint_name: str, joint_type: str, ax: np.ndarray, i: int) -> ET.Element:
        return ET.SubElement(
            body, "joint", name=joint_name, type=joint_type, axis=ux.fmt(ax),
            stiffness=ux.num(springs.stiffness[i], EXACT), damping=ux.num(springs.damping[i], EXACT),
            springref=ux.num(springs.reference[i], EXACT),
        )  # fmt: skip

    if kind == "spherical":
        for i, a in enumerate(AXES):
            add(f"{jname}_{a}", "hinge", np.eye(3)[i], i)
    elif kind in ("revolute", "continuous"):
        add(jname, "hinge", axis, 0)
    elif kind == "prismatic":
        if name in mat.shear:
            k, c = mat.shear[name]
            for a, ax in zip(AXES[:2], np.eye(3)[:2], strict=True):
                ET.SubElement(
                    body, "joint", name=f"{name}_shear_{a}", type="slide", axis=ux.fmt(ax),
                    stiffness=ux.num(k, EXACT), damping=ux.num(c, EXACT),
                )  # fmt: skip
        add(jname, "slide", axis, 0).set("ref", ux.num(springs.reference[0], EXACT))
    else:
        raise ConfigurationError(f"joint {jname!r}: type {kind!r} is not supported")


def build_mjcf(
    spec: RobotSpec,
    *,
    chain: Topology | str = Topology.ROD,
    medium: str | Medium = "air",
    dt: float = PHYSICS_DT,
    gravity: Sequence[float] = (0.0, 0.0, -STANDARD_GRAVITY),
    position: Sequence[float] = (0.0, 0.0, 0.0),
    shear: bool = True,
    tendons: bool = True,
) -> tuple[ET.Element, Meshes]:
    """The MJCF tree of ``spec`` and its meshes (file name -> (r0, r1, h)); arguments: :func:`write_mjcf`."""
    chain = Topology.of(chain)
    medium_ = medium if isinstance(medium, Medium) else medium_by_name(medium)
    if not (math.isfinite(dt) and dt > 0.0):
        raise ConfigurationError(f"dt = {dt!r} is invalid; allowed: a time step > 0 s")
    if len(spec.limbs) > MAX_LIMBS:
        raise ConfigurationError(
            f"{len(spec.limbs)} limbs are too many for one MJCF file; allowed: at most {MAX_LIMBS}"
        )
    b = _Builder(spec, medium_, dt, gravity)
    head_link = build_head_urdf(spec).find("link")
    if head_link is None:
        raise ConfigurationError(f"robot '{spec.name}': a head URDF without a link")
    head = ET.SubElement(b.world, "body", name=naming.HEAD_LINK, pos=ux.fmt(position))
    if spec.head.base == "free":  # the robot file's free body: MuJoCo's free joint
        ET.SubElement(head, "freejoint", name=f"{naming.HEAD_LINK}_free")
    b.link_content(head, head_link)
    for index, (limb, tree, meshes) in enumerate(limb_trees(spec, chain).values()):
        mat = limb_material((limb, tree), chain, medium_, dt, shear=shear)
        _limb(b, head, limb, tree, mat, 1 << (index + 1))
        if tendons:
            write_tendons(b.tendon, b.actuator, b.bodies, limb)
        write_chambers(b.tendon, b.actuator, b.bodies, limb, spec)
        b.meshes.update(meshes)
    for section in (b.contact, b.tendon, b.actuator):
        if len(section) == 0:
            b.root.remove(section)
    return b.root, b.meshes


def write_mjcf(
    spec: RobotSpec,
    out_dir: str | Path,
    *,
    chain: Topology | str = Topology.ROD,
    medium: str | Medium = "air",
    dt: float = PHYSICS_DT,
    gravity: Sequence[float] = (0.0, 0.0, -STANDARD_GRAVITY),
    position: Sequence[float] = (0.0, 0.0, 0.0),
    shear: bool = True,
    tendons: bool = True,
    mesh_sections: int = 32,
) -> MjcfOutput:
    """Write ``{name}.xml`` (MJCF) and its meshes under ``meshes/`` into ``out_dir``.

    Args:
        spec: the robot (a PCC robot).
        out_dir: target folder, created if missing.
        chain: ``"rod"`` (the dynamic worlds' default) or ``"rrp"``, a
            :class:`~pccbullet.urdf_gen.topology.Topology` or its name.
        medium: ``"air"``, ``"water"``, ``"seawater"`` or a :class:`~pccbullet.sim.medium.Medium`.
        dt: the step (s) written into ``<option>``; the damping includes ``dt K``.
        gravity: ``(3,)`` m/s^2 in the world frame.
        position: where the head is welded to the world (m).
        shear: rod chains: the chords' shear as two slides each (:mod:`pccbullet.sim.mjcf.material`).
        tendons: write the robot file's tendons and their motors.
        mesh_sections: polygon sides of the slice meshes.

    Returns:
        The absolute paths written.
    """
    out = Path(out_dir).expanduser().resolve()
    root, meshes = build_mjcf(
        spec,
        chain=chain,
        medium=medium,
        dt=dt,
        gravity=gravity,
        position=position,
        shear=shear,
        tendons=tendons,
    )
    written = write_slice_meshes(meshes, out, mesh_sections)
    if spec.head.shape == "mesh" and spec.head.mesh is not None:  # the body's own mesh, beside the slices'
        body_mesh = out / MESH_DIR / spec.head.mesh.name
        with atomic_path(body_mesh) as tmp:
            tmp.write_bytes(spec.head.mesh.read_bytes())
        written = (*written, body_mesh)
    path = ux.write_tree(root, out / f"{spec.name}.xml")
    return MjcfOutput(path=path, meshes=written)
