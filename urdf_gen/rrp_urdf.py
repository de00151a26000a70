"""The RRP chain's segments in a limb URDF (the paper's sections; see :mod:`pccbullet.urdf_gen.pcc`).

:func:`rrp_segment` writes one segment: per section three joints (``plane`` revolute z, ``bend`` revolute
y, ``chord`` prismatic z, names in :mod:`pccbullet.urdf_gen.naming`) into two nearly massless links and
the slice body, then the segment's ``tip_bend`` joint, which aligns the last chord with the arc's tip
tangent, into the segment's end link. The mass split is
:func:`pccbullet.urdf_gen.urdf_parts.section_links`'s; the end link carries ``INTERMEDIATE_FRACTION`` of the
segment's last slice. Limits: :func:`section_limits`.
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

PLANE_LIMIT_INNER = 0.5 * math.pi  # rad, plane joints of sections k > 1 (0 in pure PCC, torsion in dynamics)


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


def rrp_segment(
    robot: ET.Element, meshes: Meshes, limb: LimbSpec, s: int, seg: SegmentSpec, parent: str
) -> str:
    """Write segment ``s`` (1-based) of ``limb`` as RRP sections below link ``parent``; returns the
    segment's end link. ``meshes`` collects the slice meshes (file name -> (r0, r1, h), m)."""
    n = seg.sections
    lim = section_limits(seg)
    for k in range(1, n + 1):
        last_slice = section_links(robot, meshes, limb, s, seg, k, inner=2, after_last=1)
        p = naming.section_prefix(limb.name, s, k)
        plane_lim = lim["plane_first"] if k == 1 else lim["plane"]
        bend_lim = lim["bend_half"] if k == 1 else lim["bend"]
        add_joint(robot, f"{p}_plane", "revolute", parent, f"{p}_a", axis=(0, 0, 1), limits=plane_lim)
        add_joint(robot, f"{p}_bend", "revolute", f"{p}_a", f"{p}_b", axis=(0, 1, 0), limits=bend_lim)
        add_joint(robot, f"{p}_chord", "prismatic", f"{p}_b", p, axis=(0, 0, 1), limits=lim["chord"])
        parent = p
    end = naming.segment_end_link(limb.name, s)
    add_link(robot, end, last_slice.scaled(INTERMEDIATE_FRACTION))
    add_joint(
        robot,
        f"{limb.name}_s{s}_tip_bend",
        "revolute",
        parent,
        end,
        axis=(0, 1, 0),
        limits=lim["bend_half"],
    )
    return end
