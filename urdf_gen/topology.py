"""The chain topology of a limb: which joints make a section, as one typed value.

Two topologies. :attr:`Topology.RRP`, the paper's sections ``Rz(plane) Ry(bend) Tz(chord)`` and a
``tip_bend`` joint per segment (:mod:`pccbullet.urdf_gen.pcc`, written by
:mod:`pccbullet.urdf_gen.rrp_urdf`): exact for PCC kinematics, what ``pccbullet urdf`` writes and kinematic
worlds load. :attr:`Topology.ROD`, spherical nodes and prismatic chords (:mod:`pccbullet.urdf_gen.rod`,
written by :mod:`pccbullet.urdf_gen.rod_urdf`): sections that bend about both axes, twist and stretch, the
dynamic worlds' default.

Why a type and not a string. What differs between the chains (the joints a segment has, their names and
kinds, the links a section takes, the joint vector of a PCC arc, how a segment is written into a URDF)
is answered here, by the topology itself, so that no caller branches on a chain's name and a third
topology is one member and one row of :data:`_LAYOUTS`. Users still write ``"rod"`` or ``"rrp"`` (the
``chain=`` arguments, TOML, CLI flags): :meth:`Topology.of` parses a name once, at that edge. A
``Topology`` is a :class:`~pccbullet.core.types.Choice`, a ``str``: it prints, formats and serializes (JSON,
metadata) as its name.

What only the simulator knows of a topology (the joints' material stiffness, whether its chords shear,
whether tendons can drive it, how its PCC shape is measured) lives in
:mod:`pccbullet.sim.limb.topology`, a table keyed by :class:`Topology`: ``urdf_gen`` sits below ``sim``
and cannot import it, and a hook that ``sim`` would register here at import time would make a topology's
behaviour depend on what was imported before. A test checks that the table covers every member.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pccbullet.core.types import Choice, FloatArray
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig, limb_joints
from pccbullet.urdf_gen.rod import rod_joint_kinds, rod_limb_joints
from pccbullet.urdf_gen.rod_urdf import rod_segment
from pccbullet.urdf_gen.rrp_urdf import rrp_segment
from pccbullet.urdf_gen.specs import LimbSpec, SegmentSpec
from pccbullet.urdf_gen.urdf_parts import Meshes


class Topology(Choice):
    """A limb chain's topology; see the module docstring. Parse a user's name with :meth:`of`."""

    RRP = "rrp"
    """The paper's sections: plane and bend revolutes and a chord per section, a tip bend per segment."""
    ROD = "rod"
    """Spherical nodes at the section boundaries and a prismatic chord per section."""

    @classmethod
    def field(cls) -> str:
        """``chain``: the name users write it under."""
        return "chain"

    def joints_per_segment(self, sections: int) -> int:
        """Length of one segment's joint vector: ``3 N + 1`` (RRP) or ``4 N + 3`` (rod)."""
        return _LAYOUTS[self].vector_per_section * sections + _LAYOUTS[self].vector_per_segment

    def joint_kinds(self, limb: LimbSpec) -> list[str]:
        """The URDF joint types of ``limb``'s movable joints in chain order (``"revolute"``,
        ``"prismatic"``, ``"spherical"``)."""
        kinds: list[str] = []
        for seg in limb.segments:
            kinds += _LAYOUTS[self].segment_kinds(seg.sections)
        return kinds

    def joint_names(self, limb: LimbSpec) -> list[str]:
        """Names of ``limb``'s movable joints in chain order (on the RRP chain one per joint-vector entry; a
        rod node's spherical joint stands for three)."""
        names: list[str] = []
        for s, seg in enumerate(limb.segments, start=1):
            names += _LAYOUTS[self].segment_names(limb.name, s, seg.sections)
        return names

    @property
    def links_per_section(self) -> int:
        """URDF links a section takes (its slice and the nearly massless links inside its joints); a
        segment adds its end link."""
        return _LAYOUTS[self].links_per_section

    def joint_vector(self, configs: Sequence[PccConfig], sections: Sequence[int]) -> FloatArray:
        """The joint vector of a limb at the per-segment PCC ``configs`` (``sections``: N per segment),
        ``(sum(joints_per_segment(N_s)),) float``: :func:`pccbullet.urdf_gen.pcc.limb_joints` or
        :func:`pccbullet.urdf_gen.rod.rod_limb_joints`."""
        return _LAYOUTS[self].joint_vector(configs, sections)

    def write_segment(
        self, robot: ET.Element, meshes: Meshes, limb: LimbSpec, s: int, seg: SegmentSpec, parent: str
    ) -> str:
        """Write segment ``s`` (1-based) of ``limb`` into the URDF tree ``robot`` below link ``parent``,
        collecting its slice meshes in ``meshes``; returns the segment's end link."""
        return _LAYOUTS[self].write_segment(robot, meshes, limb, s, seg, parent)


@dataclass(frozen=True, slots=True)
class _Layout:
    """What one topology is made of (the row of :data:`_LAYOUTS`)."""

    segment_kinds: Callable[[int], list[str]]
    """A segment of N sections: its movable joints' URDF types, chain order."""
    segment_names: Callable[[str, int, int], list[str]]
    """Limb name, segment (1-based), N: the segment's movable joints' names, chain order."""
    vector_per_section: int
    vector_per_segment: int
    links_per_section: int
    joint_vector: Callable[[Sequence[PccConfig], Sequence[int]], FloatArray]
    write_segment: Callable[[ET.Element, Meshes, LimbSpec, int, SegmentSpec, str], str]


def _rrp_kinds(sections: int) -> list[str]:
    return ["revolute", "revolute", "prismatic"] * sections + ["revolute"]


def _rod_kinds(sections: int) -> list[str]:
    return rod_joint_kinds([sections])


_LAYOUTS: dict[Topology, _Layout] = {
    Topology.RRP: _Layout(_rrp_kinds, naming.segment_joint_names, 3, 1, 3, limb_joints, rrp_segment),
    Topology.ROD: _Layout(_rod_kinds, naming.rod_segment_joint_names, 4, 3, 2, rod_limb_joints, rod_segment),
}
"""Every topology's layout; a new topology adds its row (and its row of
:data:`pccbullet.sim.limb.topology.LIMB_TOPOLOGIES`)."""
