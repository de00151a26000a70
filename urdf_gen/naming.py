"""Names of the URDF links and joints of a PCC limb; one place so writer and simulator agree.

Segments and sections count from 1. For limb ``grasper``, segment 2, section 3::

    joints  grasper_s2_k3_plane (revolute z), grasper_s2_k3_bend (revolute y),
            grasper_s2_k3_chord (prismatic z)
    links   grasper_s2_k3_a, grasper_s2_k3_b (nearly massless), grasper_s2_k3 (the slice body)
    segment end: joint grasper_s2_tip_bend (revolute y) -> link grasper_s2_end
    limb:   grasper_mount (fixed, head -> grasper_base), grasper_tip_fixed (fixed, last end -> grasper_tip)

The rod chain of dynamic worlds (:mod:`pccbullet.urdf_gen.rod`) keeps the slice, segment-end, tip and flange
links; its joints for the same section and the segment's tip node::

    joints  grasper_s2_k3_node (spherical), grasper_s2_k3_chord (prismatic z)
    links   grasper_s2_k3_a (nearly massless), grasper_s2_k3 (the slice)
    tip node: grasper_s2_tip_node (spherical) -> grasper_s2_end
"""

from __future__ import annotations

from pccbullet.urdf_gen.specs import LimbSpec

HEAD_LINK = "head"


def base_link(limb: str) -> str:
    """The limb's flange link, fixed to the head."""
    return f"{limb}_base"


def tip_link(limb: str) -> str:
    """The limb's tip frame (z along the backbone tangent at the tip)."""
    return f"{limb}_tip"


def section_prefix(limb: str, segment: int, section: int) -> str:
    """``{limb}_s{segment}_k{section}`` (1-based)."""
    return f"{limb}_s{segment}_k{section}"


def segment_end_link(limb: str, segment: int) -> str:
    """The frame at a segment's tip, after its tip joint."""
    return f"{limb}_s{segment}_end"


def segment_joint_names(limb: str, segment: int, sections: int) -> list[str]:
    """Joint names of one segment in joint-vector order, ``3 N + 1`` names (see
    :mod:`~pccbullet.urdf_gen.pcc`)."""
    names = []
    for k in range(1, sections + 1):
        p = section_prefix(limb, segment, k)
        names += [f"{p}_plane", f"{p}_bend", f"{p}_chord"]
    names.append(f"{limb}_s{segment}_tip_bend")
    return names


ROD_NODE = "node"  # a rod node's spherical joint: {section prefix}_node, {tip prefix}_node


def rod_tip_prefix(limb: str, segment: int) -> str:
    """``{limb}_s{segment}_tip``: the rod chain's tip-node joints and links of a segment."""
    return f"{limb}_s{segment}_tip"


def rod_segment_joint_names(limb: str, segment: int, sections: int) -> list[str]:
    """Rod-chain joint names of one segment in chain order, ``2 N + 1`` names: a spherical node and a
    chord per section, the tip node (see :mod:`~pccbullet.urdf_gen.rod`)."""
    names = []
    for k in range(1, sections + 1):
        p = section_prefix(limb, segment, k)
        names += [f"{p}_{ROD_NODE}", f"{p}_chord"]
    return names + [f"{rod_tip_prefix(limb, segment)}_{ROD_NODE}"]


def section_body_links(limb: LimbSpec) -> list[str]:
    """The slice body links of a limb, base to tip."""
    return [
        section_prefix(limb.name, s, k)
        for s, seg in enumerate(limb.segments, start=1)
        for k in range(1, seg.sections + 1)
    ]
