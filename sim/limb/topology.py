"""What the simulator does differently per chain topology, one row per
:class:`~pccbullet.urdf_gen.topology.Topology`.

A topology's joints, names, URDF and PCC joint vector are the topology's own
(:mod:`pccbullet.urdf_gen.topology`). What only the simulator knows of it is a :class:`LimbTopology`, the
row of :data:`LIMB_TOPOLOGIES` that :func:`limb_topology` returns: the joints' material stiffness, whether
its chords take shear compliance (:mod:`pccbullet.sim.limb.chain.springs`), whether tendons can drive it
(:mod:`pccbullet.sim.limb.tendons`), the per-tick joint vector of PCC arcs, and how a limb's PCC shape and
its segments' bends are read off the loaded chain. Why a table here and not methods on the topology:
``urdf_gen`` sits below ``sim`` and cannot import it, and registering these into the topology at import
time would make a topology's behaviour depend on which modules were imported first. A new topology adds
its member and layout in :mod:`pccbullet.urdf_gen.topology` and its row here; a test checks that every
member has one.

Stiffness per joint (section arc length ``h = L / N``, radius ``r(s)`` of the frustum; a joint represents
the length ``l`` of rod around it, its radius taken at the middle of that length):

* rrp: bend joints (revolute y): ``E I / h`` with ``I = pi r^4 / 4``; the first and the tip joint of a
  segment represent half a section: ``E I / (h / 2)`` (midpoint rule of the curvature integral);
  plane joints (revolute z): torsion ``G J / h`` with ``J = pi r^4 / 2`` (the first: ``h / 2``; the tip
  joint has none);
* rod: every node ``E I / l``, ``E I / l``, ``G J / l`` with ``l = h``, or ``h / 2`` at a segment's first
  and tip node;
* chord joints (prismatic z), both: axial ``E A / h`` with the slice's mean area.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.limb.chain.positions import rod_joint_vector
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig, pcc_from_joints
from pccbullet.urdf_gen.pcc_fit import pcc_from_points
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.topology import Topology


class ShapeSource(Protocol):
    """What reading a limb's shape off its chain uses of a loaded robot
    (:class:`pccbullet.sim.robot.Robot` has all of it)."""

    def limb(self, name: str) -> LimbSpec:
        """The spec of limb ``name``."""
        ...

    def joints(self, limb: str) -> FloatArray:
        """The limb's current joint vector."""
        ...

    def link_pose(self, link: str) -> Transform:
        """World pose ``(4, 4)`` of a URDF link frame."""
        ...

    def T_world_limbbase(self, limb: str) -> Transform:
        """World pose ``(4, 4)`` of the limb's base frame."""
        ...

    def measured_pcc(self, limb: str) -> list[PccConfig]:
        """One PCC arc per segment of the limb's current shape."""
        ...


@dataclass(frozen=True, slots=True)
class LimbTopology:
    """The simulator's side of one chain topology (see the module docstring)."""

    stiffness: Callable[[LimbSpec], FloatArray]
    """The material stiffness of every joint of a limb in joint-vector order, ``(n_dof,) float`` (N·m/rad
    or N/m)."""
    shears: bool
    """Whether the chords take their shear compliance (``CompliantLimb(shear=True)``)."""
    tendons: bool
    """Whether a limb's tendons can drive it (:class:`pccbullet.sim.limb.tendons.TendonDrive`)."""
    joint_vector: Callable[[LimbSpec, Sequence[PccConfig]], FloatArray]
    """The limb's joint vector at per-segment PCC arcs (unchecked: one arc a segment); the spring
    targets' per-tick path."""
    measure: Callable[[ShapeSource, str], list[PccConfig]]
    """A limb's shape as one PCC arc per segment (:meth:`pccbullet.sim.robot.Robot.measured_pcc`)."""
    bends: Callable[[ShapeSource, str], list[float]]
    """Each segment's bend (rad, >= 0) as the turn of the backbone tangent over it
    (:class:`pccbullet.sim.models.twin.ModelTwin`)."""


def _rrp_stiffness(limb: LimbSpec) -> FloatArray:
    E = limb.material.youngs_modulus
    G = limb.material.shear_modulus
    out: list[float] = []
    for seg in limb.segments:
        n, L = seg.sections, seg.length
        h = L / n
        for k in range(n):
            s_joint = h / 4 if k == 0 else k * h  # the first joint covers [0, h/2]
            arm = h / 2 if k == 0 else h
            r = seg.radius_at(s_joint / L)
            i_area = math.pi * r**4 / 4.0
            r_mid = seg.radius_at((k + 0.5) * h / L)
            out += [G * 2 * i_area / arm, E * i_area / arm, E * math.pi * r_mid**2 / h]
        r_tip = seg.radius_at((L - h / 4) / L)
        out.append(E * math.pi * r_tip**4 / 4.0 / (h / 2))
    return np.array(out)


def _rod_stiffness(limb: LimbSpec) -> FloatArray:
    E = limb.material.youngs_modulus
    G = limb.material.shear_modulus
    out: list[float] = []
    for seg in limb.segments:
        n, L = seg.sections, seg.length
        h = L / n
        for k in range(n + 1):  # node k at k h; node n is the tip node
            s_mid, arm = (h / 4, h / 2) if k == 0 else ((L - h / 4, h / 2) if k == n else (k * h, h))
            i_area = math.pi * seg.radius_at(s_mid / L) ** 4 / 4.0
            out += [E * i_area / arm, E * i_area / arm, G * 2 * i_area / arm]
            if k < n:
                out.append(E * math.pi * seg.radius_at((k + 0.5) * h / L) ** 2 / h)
    return np.array(out)


def _rrp_vector(limb: LimbSpec, configs: Sequence[PccConfig]) -> FloatArray:
    return Topology.RRP.joint_vector(configs, [seg.sections for seg in limb.segments])


def _rrp_measure(robot: ShapeSource, limb: str) -> list[PccConfig]:
    """The fit of the joints (:func:`pccbullet.urdf_gen.pcc.pcc_from_joints`)."""
    spec = robot.limb(limb)
    q = robot.joints(limb)
    configs, i = [], 0
    for seg in spec.segments:
        n = Topology.RRP.joints_per_segment(seg.sections)
        configs.append(pcc_from_joints(q[i : i + n]))
        i += n
    return configs


def _rod_measure(robot: ShapeSource, limb: str) -> list[PccConfig]:
    """The arcs through the segments' end points (:func:`pccbullet.urdf_gen.pcc_fit.pcc_from_points`;
    exact for a PCC shape): the rod's joints turn its material frames, not the PCC frames."""
    spec = robot.limb(limb)
    T_base = robot.T_world_limbbase(limb)
    ends = [
        robot.link_pose(naming.segment_end_link(spec.name, s))[:3, 3]
        for s in range(1, len(spec.segments) + 1)
    ]
    return pcc_from_points((np.asarray(ends) - T_base[:3, 3]) @ T_base[:3, :3])


def _rrp_bends(robot: ShapeSource, limb: str) -> list[float]:
    """The PCC fit of the joints (the sum of a segment's bend joints)."""
    return [abs(c.bend) for c in robot.measured_pcc(limb)]


def _rod_bends(robot: ShapeSource, limb: str) -> list[float]:
    """The angle between the tangents at the segment's ends."""
    segments = len(robot.limb(limb).segments)
    ends = [naming.segment_end_link(limb, s) for s in range(1, segments + 1)]
    tangents = [robot.T_world_limbbase(limb)[:3, 2]] + [robot.link_pose(e)[:3, 2] for e in ends]
    pairs = zip(tangents, tangents[1:], strict=False)
    return [float(np.arccos(np.clip(a @ b, -1.0, 1.0))) for a, b in pairs]


LIMB_TOPOLOGIES: dict[Topology, LimbTopology] = {
    Topology.RRP: LimbTopology(_rrp_stiffness, False, False, _rrp_vector, _rrp_measure, _rrp_bends),
    Topology.ROD: LimbTopology(_rod_stiffness, True, True, rod_joint_vector, _rod_measure, _rod_bends),
}
"""The simulator's side of every topology."""


def limb_topology(chain: Topology | str) -> LimbTopology:
    """The simulator's side of topology ``chain`` (a :class:`~pccbullet.urdf_gen.topology.Topology` or its
    name)."""
    topology = Topology.of(chain)
    if topology not in LIMB_TOPOLOGIES:
        allowed = ", ".join(repr(t.value) for t in LIMB_TOPOLOGIES)
        raise ConfigurationError(f"chain = {topology.value!r} has no simulator side; allowed: {allowed}")
    return LIMB_TOPOLOGIES[topology]


def joint_stiffness(limb: LimbSpec, chain: Topology | str = Topology.RRP) -> FloatArray:
    """Stiffness of every joint of ``limb``'s ``chain`` (``"rrp"`` or ``"rod"``, see the module docstring)
    in joint-vector order, ``(n,) float`` (N·m/rad or N/m)."""
    return limb_topology(chain).stiffness(limb)
