"""The rod chain's segments in a limb URDF (dynamic worlds; see :mod:`pccbullet.urdf_gen.rod`).

:func:`rod_segment` writes one segment: per section a spherical node joint (``node``) into a nearly
massless link, a prismatic ``chord`` joint and the slice body; then the segment's tip node, whose child is
the segment's end link. ``type="spherical"`` is PyBullet's URDF extension (not in the URDF standard:
ROS tools and the other consumers read the RRP files of ``pccbullet urdf``). Link and joint names:
:mod:`pccbullet.urdf_gen.naming`. The mass split is :func:`pccbullet.urdf_gen.urdf_parts.section_links`'s;
the end link carries ``INTERMEDIATE_FRACTION`` of the segment's last slice. A spherical joint has no
limits; the chord's bound position motors only (a compliant limb is loaded without them): the RRP
chain's range.
"""

from __future__ import annotations

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


def rod_segment(
    robot: ET.Element, meshes: Meshes, limb: LimbSpec, s: int, seg: SegmentSpec, parent: str
) -> str:
    """Write segment ``s`` (1-based) of ``limb`` as rod sections below link ``parent``; returns the
    segment's end link. ``meshes`` collects the slice meshes (file name -> (r0, r1, h), m)."""
    n = seg.sections
    chord = (seg.length_min / n * sinc(0.5 * seg.bend_max / n), seg.length_max / n)
    for k in range(1, n + 1):
        p = naming.section_prefix(limb.name, s, k)
        last = section_links(robot, meshes, limb, s, seg, k, inner=1, after_last=1)
        add_joint(robot, f"{p}_{naming.ROD_NODE}", "spherical", parent, f"{p}_a", axis=(0, 0, 1))
        add_joint(robot, f"{p}_chord", "prismatic", f"{p}_a", p, axis=(0, 0, 1), limits=chord)
        parent = p
    end = naming.segment_end_link(limb.name, s)
    add_link(robot, end, last.scaled(INTERMEDIATE_FRACTION))  # at the last slice's centre, below the tip
    add_joint(
        robot,
        f"{naming.rod_tip_prefix(limb.name, s)}_{naming.ROD_NODE}",
        "spherical",
        parent,
        end,
        axis=(0, 0, 1),
    )
    return end
