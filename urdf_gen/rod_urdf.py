"""The rod chain's segments in a limb URDF (dynamic worlds only; see :mod:`pccbullet.urdf_gen.rod`).

:func:`rod_segment` writes one segment: per section a node of three revolute joints (``bend_x``,
``bend_y``, ``twist``) with two nearly massless links inside it and a third after it, a prismatic
``chord`` joint and the slice body; then the segment's tip node, whose last link is the segment's end
link. Link and joint names: :mod:`pccbullet.urdf_gen.naming`. The mass split is
:func:`pccbullet.urdf_gen.urdf_parts.section_links`'s; the tip node's three links each carry
``INTERMEDIATE_FRACTION`` of the segment's last slice. Joint limits bound position motors only (a
compliant limb is loaded without them): each bending joint the most one node turns (``bend_max / N``,
half at the first and the tip node), the twist a quarter turn, the chord the RRP chain's range.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import sinc
from pccbullet.urdf_gen.specs import LimbSpec, SegmentSpec
from pccbullet.urdf_gen.urdf_parts import (
    INTERMEDIATE_FRACTION,
    Meshes,
    add_joint,
    add_link,
    section_links,
)

TWIST_LIMIT = 0.5 * math.pi  # rad, a node's twist joint (position motors only)
_AXES = ((1, 0, 0), (0, 1, 0), (0, 0, 1))  # bend_x, bend_y, twist


def _node(robot: ET.Element, prefix: str, parent: str, links: tuple[str, str, str], turn_max: float) -> None:
    """The three revolute joints of a node, ``parent -> links[0] -> links[1] -> links[2]``."""
    limits = ((-turn_max, turn_max), (-turn_max, turn_max), (-TWIST_LIMIT, TWIST_LIMIT))
    chain = (parent, *links)
    for i, joint in enumerate(naming.ROD_NODE_JOINTS):
        add_joint(
            robot, f"{prefix}_{joint}", "revolute", chain[i], chain[i + 1], axis=_AXES[i], limits=limits[i]
        )


def rod_segment(
    robot: ET.Element, meshes: Meshes, limb: LimbSpec, s: int, seg: SegmentSpec, parent: str
) -> str:
    """Write segment ``s`` (1-based) of ``limb`` as rod sections below link ``parent``; returns the
    segment's end link. ``meshes`` collects the slice meshes (file name -> (r0, r1, h), m)."""
    n = seg.sections
    turn = seg.bend_max / n
    chord = (seg.length_min / n * sinc(0.5 * turn), seg.length_max / n)
    for k in range(1, n + 1):
        p = naming.section_prefix(limb.name, s, k)
        last = section_links(robot, meshes, limb, s, seg, k, inner=3, after_last=3)
        _node(robot, p, parent, (f"{p}_a", f"{p}_b", f"{p}_c"), 0.5 * turn if k == 1 else turn)
        add_joint(robot, f"{p}_chord", "prismatic", f"{p}_c", p, axis=(0, 0, 1), limits=chord)
        parent = p
    tip = naming.rod_tip_prefix(limb.name, s)
    end = naming.segment_end_link(limb.name, s)
    share = last.scaled(INTERMEDIATE_FRACTION)  # at the last slice's centre, below the tip
    for name in (f"{tip}_a", f"{tip}_b", end):
        add_link(robot, name, share)
    _node(robot, tip, parent, (f"{tip}_a", f"{tip}_b", end), 0.5 * turn)
    return end
