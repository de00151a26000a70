"""A limb's material and medium as MuJoCo parameters: joint stiffness, spring reference, damping, shear,
buoyancy, added mass and drag, the same numbers a dynamic :class:`~pccbullet.sim.world.World` uses.

**Nodes: three hinges, not a ball joint, not MuJoCo's own elasticity.** A rod node bends about two axes
and twists, with ``E I / l`` and ``G J / l = E I / ((1 + nu) l)`` (:func:`pccbullet.sim.limb.topology.
joint_stiffness`). Three ``hinge`` joints per node, x then y then z in one body, turn the node by
``Rx(a) Ry(b) Rz(c)`` (MuJoCo composes a body's joints in order): exactly our joint vector's x-y-z Euler
angles (:mod:`pccbullet.urdf_gen.rod`), each hinge with its own stiffness. So a limb's MuJoCo ``qpos``
holds our joint vector, entry for entry (plus the shear slides): spring targets are
``model.qpos_spring`` at the addresses :func:`pccbullet.sim.mjcf.writer.joint_vector_names` names. A
``ball`` joint has one isotropic stiffness (it twists a third too little); MuJoCo 4.0 has neither the
``mujoco.elasticity.cable`` plugin nor ``<composite>``, and a 1D ``flex`` bends isotropically about a
straight reference only (no twist, no taper, point masses). The hinges' stiffness acts on Euler angles,
ours on the rotation vector halfway through the node's rest turn: for a bent spring reference the two
differ to first order in the rest turn, not at all for the straight rest shape. The measurements behind
these choices (``examples/64_mujoco_export.py``): ``docs/measurements/validation.md``, MuJoCo export.

**Damping: ``C + dt K``, no armature.** MuJoCo's joint stiffness is explicit; its ``Euler`` integrator
takes joint damping ``D`` implicitly: ``(M + dt D) qdd = -K (q - q*) - D qd``. With ``D = C + dt K``
(``C = (2 zeta / omega_1) K``, Rayleigh, :func:`pccbullet.sim.limb.material.rayleigh_damping`) that is
``(M + dt C + dt^2 K) qdd = -K (q + dt qd - q*) - C qd``: our implicit spring-damper step
(:mod:`pccbullet.sim.limb.dynamics`) exactly. Armature would be inertia the rod does not have; without
material damping, damping ``C`` alone and armature ``dt^2 K`` both diverge under gravity, ``C + dt K``
runs. The ``dt K`` part belongs to the step size written in the file's ``<option timestep>``.

**Shear.** Our rod chain tilts its chords quasi-statically by ``F / (kappa G A)``
(:mod:`pccbullet.sim.limb.chain.springs`). MuJoCo gets the same compliance as two slides across each chord,
``kappa G A / h`` (N/m) with the same Rayleigh ratio: a Timoshenko section with its shear as degrees of
freedom (without them, ``shear=False``, the sag is several times further from ours). They have the slices'
inertia where ours is quasi-static, so the first frequency comes out slightly lower.

**The medium.** MuJoCo's fluid models have no buoyancy and no added mass proportional to acceleration.
Buoyancy (``rho_w / rho`` of every link's weight but the payload's) is the bodies' ``gravcomp``; a slice's
added mass ``C_a rho_w V`` and rotary inertia ``C_a rho_w V l^2 / 12`` are put into its body (mass and
transverse inertia, with ``gravcomp`` taking their weight back out): MuJoCo's body mass is a scalar, so
the slice carries the added mass along its axis too, where ours has none (the chords hardly move along).
Drag: ``<option density viscosity>`` (dynamic viscosity ``rho nu``) with MuJoCo's ellipsoid model on the
slices' collision cylinders, its blunt-drag coefficient ``C_d d l / (pi r l_c)`` so that the drag across
a slice is ours, ``1/2 rho C_d d l |v| v``, and the other four coefficients zero; along a slice the
blunt drag acts on ``pi r^2`` (ours is skin friction). Bodies without a slice get a fluid-inert point
(MuJoCo would give them its inertia-box drag).
"""

from __future__ import annotations

import math
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain.kernels import ADDED_INERTIA, ADDED_MASS
from pccbullet.sim.limb.chain.rigid import ChainModel
from pccbullet.sim.limb.material import (
    chord_shear_compliance,
    fluid_chain,
    rayleigh_damping,
    slice_volumes,
)
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.medium import Medium
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.pcc import rest_configs
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_parts import Meshes
from pccbullet.urdf_gen.urdf_writer import build_limb_urdf


@dataclass(frozen=True)
class JointMaterial:
    """One URDF joint's springs in MuJoCo: per MuJoCo joint (three hinges for a spherical node, x y z;
    one for a revolute or prismatic joint) its stiffness (N m/rad, N/m), damping ``C + dt K`` and spring
    reference (rad, m; the joint vector at the PCC rest shape)."""

    stiffness: tuple[float, ...]
    damping: tuple[float, ...]
    reference: tuple[float, ...]


@dataclass(frozen=True)
class LimbMaterial:
    """What the writer needs of one limb (:func:`limb_material`).

    Attributes:
        joints: URDF movable joint name -> its springs.
        shear: slice link -> lateral stiffness ``kappa G A / h`` (N/m) of the chord before it (rod chains
            with shear), and its damping.
        gravcomp: link -> the share of its MuJoCo weight that buoyancy and the added mass's own weight take
            back (-).
        added_mass: slice link -> added mass (kg) and transverse rotary inertia (kg m^2).
        drag: slice link -> MuJoCo blunt-drag coefficient of its collision cylinder (-).
        omega_1: the first natural frequency (rad/s) of the Rayleigh damping.
    """

    joints: dict[str, JointMaterial]
    shear: dict[str, tuple[float, float]]
    gravcomp: dict[str, float]
    added_mass: dict[str, tuple[float, float]]
    drag: dict[str, float]
    omega_1: float


def rest_vector(limb: LimbSpec, chain: Topology) -> FloatArray:
    """The limb's joint vector at its PCC rest shape (straight, rest length) on ``chain``."""
    sections = [seg.sections for seg in limb.segments]
    return chain.joint_vector(rest_configs(limb.segments), sections)


def _chain_model(limb: LimbSpec, urdf: ET.ElementTree, chain: Topology, medium_: Medium) -> ChainModel:
    """The limb's URDF as a compiled chain with the medium's loads (as :class:`CompliantLimb` has it)."""
    with tempfile.TemporaryDirectory(prefix="pccbullet_mjcf_") as tmp:
        path = Path(tmp) / "limb.urdf"
        path.write_text(ux.to_text(urdf), encoding="utf-8")
        model = ChainModel.from_urdf(path, chain.joint_names(limb))
    return fluid_chain(model, limb, medium_)


def limb_material(
    spec_urdf: tuple[LimbSpec, ET.ElementTree],
    chain: Topology,
    medium_: Medium,
    dt: float,
    *,
    shear: bool = True,
) -> LimbMaterial:
    """The MuJoCo parameters of a limb (its spec and its URDF tree, :func:`~pccbullet.urdf_gen.urdf_writer.
    build_limb_urdf`) on ``chain`` in ``medium_`` at the step ``dt`` (s); see the module docstring."""
    limb, urdf = spec_urdf
    model = _chain_model(limb, urdf, chain, medium_)
    K = limb_topology(chain).stiffness(limb)
    rest = rest_vector(limb, chain)
    omega_1, C = rayleigh_damping(limb, model, K, rest)
    D = C + dt * K
    joints, i = {}, 0
    for name, kind in zip(chain.joint_names(limb), chain.joint_kinds(limb), strict=True):
        w = 3 if kind == "spherical" else 1
        cut = slice(i, i + w)
        joints[name] = JointMaterial(tuple(K[cut]), tuple(D[cut]), tuple(rest[cut]))
        i += w
    ratio = C[0] / K[0] + dt  # damping per stiffness, the same for every joint (Rayleigh)
    slices = naming.section_body_links(limb)
    shears = {}
    if shear and limb_topology(chain).shears:
        chords = {name: float(rest[i + 3]) for name, i in _chord_entries(limb)}
        for link, compliance in chord_shear_compliance(limb).items():
            k = 1.0 / (compliance * chords[link])
            shears[link] = (k, ratio * k)
    buoyancy = medium_.density / limb.material.density
    masses = dict(zip(model.links, model.params[:, 15].tolist(), strict=True))
    added: dict[str, tuple[float, float]] = {}
    gravcomp: dict[str, float] = {}
    for index, link in enumerate(model.links):
        m_a, j_a = float(model.params[index, ADDED_MASS]), float(model.params[index, ADDED_INERTIA])
        floats = 0.0 if limb.payload is not None and link == limb.payload.frame else buoyancy * masses[link]
        if m_a > 0.0 or j_a > 0.0:
            added[link] = (m_a, j_a)
        if masses[link] > 0.0 and floats + m_a > 0.0:
            gravcomp[link] = (floats + m_a) / (masses[link] + m_a)
    return LimbMaterial(joints, shears, gravcomp, added, _blunt_drag(limb, slices, medium_), omega_1)


def _chord_entries(limb: LimbSpec) -> list[tuple[str, int]]:
    """Rod chain (the one whose chords shear): (slice link, index of its section's first joint-vector
    entry) per section."""
    out, i = [], 0
    for s, seg in enumerate(limb.segments, start=1):
        for k in range(1, seg.sections + 1):
            out.append((naming.section_prefix(limb.name, s, k), i))
            i += 4
        i += 3
    return out


def _blunt_drag(limb: LimbSpec, slices: list[str], medium_: Medium) -> dict[str, float]:
    """MuJoCo blunt-drag coefficients of the slices' collision cylinders (radius at the slice's middle,
    length ``h``): ``C_d d h / (pi r h)`` with ``d`` the slice's equivalent diameter, so that MuJoCo's
    blunt drag across the slice is ``1/2 rho C_d d h |v| v``."""
    volumes = slice_volumes(limb)
    out, i = {}, 0
    for seg in limb.segments:
        h = seg.length / seg.sections
        for k in range(seg.sections):
            d = 2.0 * math.sqrt(volumes[i] / (math.pi * h))
            r = float(seg.radius_at((k + 0.5) / seg.sections))
            # MuJoCo's projected area across an ellipsoid of semi-axes r, r, h/2 is pi r h / 2 and its blunt
            # drag C rho A |v| v: C = (1/2 C_d d h) / (pi r h / 2)
            out[slices[i]] = medium_.drag_normal * d / (math.pi * r)
            i += 1
    return out


def limb_trees(spec: RobotSpec, chain: Topology) -> dict[str, tuple[LimbSpec, ET.ElementTree, Meshes]]:
    """Per limb of ``spec``: its spec, its URDF tree on ``chain`` and its meshes."""
    out = {}
    for limb in spec.limbs:
        tree, meshes = build_limb_urdf(spec, limb, chain)
        out[limb.name] = (limb, tree, meshes)
    return out


def tendon_tension_bound(limb: LimbSpec, segment: int) -> float:
    """An upper bound (N) for a tendon of segment ``segment`` (1-based) where the robot file declares none:
    the tension whose moment ``T r`` bends the segment's base to ``bend_max / L`` against ``E I``."""
    seg = limb.segments[segment - 1]
    act = limb.actuators
    offset = act.offset if act is not None and act.offset > 0.0 else seg.radius_base
    i_area = math.pi * seg.radius_base**4 / 4.0
    return float(limb.material.youngs_modulus * i_area * seg.bend_max / (seg.length * offset))
