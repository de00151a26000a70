"""Round trip of every bundled robot's URDF through an independent parser (yourdfpy).

For each robot of :func:`pccbullet.urdf_gen.catalog.bundled` the files written by ``write_robot_urdf`` are read back
with yourdfpy and compared with what the robot's spec says: the set of links, and for every joint its
type, parent, child, axis (movable joints) and origin (4 x 4, to 1e-9 m / rad; the files hold 9 or 12
significant digits). The expectations are written from the specs' documented layout, not from the files.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yourdfpy

from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.catalog import bundled, write_robot_urdf
from pccbullet.urdf_gen.pneunet import load_pneunet
from pccbullet.urdf_gen.rolling_snake.spec import load_rolling_snake
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.three_actuator import load_three_actuator

ROBOTS = bundled()
X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
ZERO = (0.0, 0.0, 0.0)

# joint name -> (type, parent, child, axis or None, xyz (m), rpy (rad))
Joints = dict[str, tuple[str, str, str, tuple[float, ...] | None, tuple[float, ...], tuple[float, ...]]]


def _pose(xyz: tuple[float, ...], rpy: tuple[float, ...]) -> np.ndarray:
    """``(4, 4)`` pose of a URDF origin: ``Rz(yaw) Ry(pitch) Rx(roll)``, then translation."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    T = np.eye(4)
    T[:3, :3] = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
    T[:3, 3] = xyz
    return T


def _limb_joints(limb: LimbSpec) -> Joints:
    """Per section plane (R z), bend (R y), chord (P z) at zero origins; a tip_bend (R y) per segment; the
    fixed tip and payload frames (payload at its offset)."""
    out: Joints = {}
    parent = naming.base_link(limb.name)
    for s, seg in enumerate(limb.segments, start=1):
        for k in range(1, seg.sections + 1):
            p = naming.section_prefix(limb.name, s, k)
            out[f"{p}_plane"] = ("revolute", parent, f"{p}_a", Z, ZERO, ZERO)
            out[f"{p}_bend"] = ("revolute", f"{p}_a", f"{p}_b", Y, ZERO, ZERO)
            out[f"{p}_chord"] = ("prismatic", f"{p}_b", p, Z, ZERO, ZERO)
            parent = p
        end = naming.segment_end_link(limb.name, s)
        out[f"{limb.name}_s{s}_tip_bend"] = ("revolute", parent, end, Y, ZERO, ZERO)
        parent = end
    tip = naming.tip_link(limb.name)
    out[f"{limb.name}_tip_fixed"] = ("fixed", parent, tip, None, ZERO, ZERO)
    if limb.payload is not None:
        out[f"{limb.payload.frame}_fixed"] = (
            "fixed",
            tip,
            limb.payload.frame,
            None,
            limb.payload.offset,
            ZERO,
        )
    return out


def _expected(path: Path, kind: str) -> dict[str, Joints]:
    """File name -> the joints its URDF must hold, from the spec."""
    if kind == "pcc":
        spec = load_robot(path)
        files: dict[str, Joints] = {f"{spec.name}_head.urdf": {}}
        whole: Joints = {}
        for limb in spec.limbs:
            joints = _limb_joints(limb)
            files[f"{spec.name}_{limb.name}.urdf"] = joints
            whole.update(joints)
            whole[f"{limb.name}_mount"] = (
                "fixed",
                naming.HEAD_LINK,
                naming.base_link(limb.name),
                None,
                limb.mount_xyz,
                limb.mount_rpy,
            )
        files[f"{spec.name}.urdf"] = whole
        return files
    if kind == "pneunet":
        pn = load_pneunet(path)
        n, lengths = pn.n_chambers, pn.link_lengths_m
        joints: Joints = {"base_joint": ("fixed", "base_link", "link_1", None, ZERO, ZERO)}
        for k in range(1, n):
            joints[f"joint_{k}"] = (
                "revolute",
                f"link_{k}",
                f"link_{k + 1}",
                Z,
                (lengths[k - 1], 0.0, 0.0),
                ZERO,
            )
        joints["tip_joint"] = ("fixed", f"link_{n}", "tip", None, (lengths[-1], 0.0, 0.0), ZERO)
        return {f"{pn.name}.urdf": joints}
    if kind == "three_actuator":
        ta = load_three_actuator(path)
        joints = {"plane": ("revolute", "base_link", "plane_link", Z, ZERO, ZERO)}
        parent = "plane_link"
        for k in range(1, ta.n_sections + 1):
            joints[f"bend_{k}"] = ("revolute", parent, f"bend_link_{k}", Y, ZERO, ZERO)
            joints[f"chord_{k}"] = ("prismatic", f"bend_link_{k}", f"section_{k}", Z, ZERO, ZERO)
            parent = f"section_{k}"
        joints["tip_bend"] = ("revolute", parent, "tip", Y, ZERO, ZERO)
        return {f"{ta.name}.urdf": joints}
    assert kind == "rolling_snake"
    rs = load_rolling_snake(path)
    h0 = 0.5 * rs.link_length - rs.contact_radius  # contact-cylinder axis to link centre (m)
    joints = {"base_to_link_1": ("fixed", "snake_base", "link_1", None, rs.d1, ZERO)}
    for k in range(1, rs.n_links):
        psi = rs.joint_plane(k)
        axis = (-math.sin(psi), math.cos(psi), 0.0)
        start = h0 if k == 1 else 2.0 * h0
        mid = f"roll_{k}_mid"
        joints[f"roll_{k}_a"] = ("revolute", f"link_{k}", mid, axis, (0.0, 0.0, start), ZERO)
        joints[f"roll_{k}_b"] = (
            "revolute",
            mid,
            f"link_{k + 1}",
            axis,
            (0.0, 0.0, 2 * rs.contact_radius),
            ZERO,
        )
    off = rs.tip_offset()
    joints["tip_joint"] = ("fixed", f"link_{rs.n_links}", "tip", None, (off[0], off[1], h0 + off[2]), ZERO)
    return {f"{rs.name}.urdf": joints}


@pytest.mark.parametrize("robot", ROBOTS, ids=[r.name for r in ROBOTS])
def test_urdf_round_trip_through_yourdfpy(robot, tmp_path: Path) -> None:
    written = write_robot_urdf(robot.path, tmp_path, combined=robot.kind == "pcc")
    expected = _expected(robot.path, robot.kind)
    assert sorted(p.name for p in written) == sorted(expected)
    for path in written:
        want = expected[path.name]
        urdf = yourdfpy.URDF.load(str(path), build_scene_graph=False, load_meshes=False).robot
        got = {j.name: j for j in urdf.joints}
        assert sorted(got) == sorted(want), path.name
        links = {name for _, parent, child, *_ in want.values() for name in (parent, child)}
        if not want:  # a head alone
            links = {naming.HEAD_LINK}
        assert {link.name for link in urdf.links} == links, path.name
        for name, (kind, parent, child, axis, xyz, rpy) in want.items():
            j = got[name]
            assert (j.type, j.parent, j.child) == (kind, parent, child), name
            if axis is not None:
                np.testing.assert_allclose(j.axis, axis, atol=1e-9, err_msg=name)
            np.testing.assert_allclose(j.origin, _pose(xyz, rpy), atol=1e-9, err_msg=name)
