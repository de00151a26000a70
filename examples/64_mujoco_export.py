"""The MJCF export in MuJoCo against the World's rod chain, and a ball joint per node against three hinges.

For the URSULA camera tentacle (600 mm, Ecoflex 00-30, N sections) it settles, in a dynamic
:class:`pccbullet.sim.world.World` (``chain_static``, ``chain_frequency`` of ``examples/63_3d_comparison.py``)
and in MuJoCo on the export (:class:`pccbullet.sim.mjcf.peer.MujocoRobot`), the cases of the 3D comparison:

* ``sag``: straight, gravity across it (the URSULA mount), air and water, critical damping;
* ``prebent``: PCC bend 90 deg in plane 90 deg, gravity across the plane (air);
* ``twist``: a 2 mN m torque about the straight tip's tangent, no gravity (MuJoCo: ``xfrc_applied``; World:
  the generalized torque in the limb's offset);
* ``frequency``: the first bending frequency, no gravity, no material damping, from a 5 mm tip bend.

and prints the tip difference (mm, % of L) and the tip frame's (deg), the twists and the frequencies, for
the export's nodes (three hinges, ``hinges``), the same without the chords' shear slides (``no-shear``), and a
ball joint per node (``ball``: the export's file with each node's hinges replaced by one ``ball`` joint of the
bending stiffness ``E I / l``, the rest turn in its body's frame). What the module docstring of
:mod:`pccbullet.sim.mjcf.material` quotes comes from here.

Usage: python examples/64_mujoco_export.py [--sections 10 20] [--cases sag prebent twist frequency]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from pccbullet.sim.mjcf.peer import MujocoRobot
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.pcc import PccConfig, rot_z, rotation_angle
from pccbullet.urdf_gen.rod import node_quaternions, node_rotation
from pccbullet.urdf_gen.topology import Topology

_spec = importlib.util.spec_from_file_location("cmp3d", Path(__file__).with_name("63_3d_comparison.py"))
cmp3d = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["cmp3d"] = cmp3d
_spec.loader.exec_module(cmp3d)  # type: ignore[union-attr]

LIMB = "camera"
LENGTH = 0.6
TWIST_TORQUE = 2e-3  # N m
KINDS = ("hinges", "no-shear", "ball")


def balls(robot: MujocoRobot, rest: list[PccConfig]) -> MujocoRobot:
    """``robot``'s model again with every node's three hinges replaced by one ball joint of its bending
    stiffness and damping (isotropic), the node's rest rotation (of the PCC ``rest``) as its body's frame."""
    root = ET.parse(robot.path).getroot()
    q_rest = robot.pcc_joints(LIMB, rest)
    nodes = _nodes(robot)
    for body in root.iter("body"):
        hinges = [
            j for j in body.findall("joint") if j.get("name", "").endswith(("_node_x", "_node_y", "_node_z"))
        ]
        if not hinges:
            continue
        node = hinges[0].get("name", "")[: -len("_x")]
        x, y, z, w = node_quaternions(q_rest[nodes[node] : nodes[node] + 3])
        body.set("quat", ux.fmt([w, x, y, z]))
        for h in hinges:
            body.remove(h)
        attrs = {"name": node, "type": "ball", "stiffness": hinges[0].get("stiffness", "0")}
        body.insert(0, ET.Element("joint", attrs, damping=hinges[0].get("damping", "0")))
    path = robot.path.with_name("ball.xml")
    path.write_text(ET.tostring(root, encoding="unicode"))
    out = object.__new__(MujocoRobot)
    out.__dict__.update(robot.__dict__)
    out.model = mujoco.MjModel.from_xml_path(str(path))
    out.data = mujoco.MjData(out.model)
    mujoco.mj_forward(out.model, out.data)
    return out


def _nodes(robot: MujocoRobot) -> dict[str, int]:
    """Node joint name -> index of its first Euler angle in the joint vector (one segment)."""
    names = Topology.ROD.joint_names(robot.spec.limb(LIMB))
    return {n: 4 * i for i, n in enumerate(names[0::2])}


def pose_balls(robot: MujocoRobot, rest: list[PccConfig], configs: list[PccConfig]) -> None:
    """Put the ball model's nodes at ``configs`` (each ball the turn from its rest rotation), at rest."""
    q, q_rest = robot.pcc_joints(LIMB, configs), robot.pcc_joints(LIMB, rest)
    for node, i in _nodes(robot).items():
        R = node_rotation(*q_rest[i : i + 3]).T @ node_rotation(*q[i : i + 3])
        x, y, z, w = Rotation.from_matrix(R).as_quat()
        adr = robot.model.jnt_qposadr[mujoco.mj_name2id(robot.model, mujoco.mjtObj.mjOBJ_JOINT, node)]
        robot.data.qpos[adr : adr + 4] = [w, x, y, z]
    mujoco.mj_forward(robot.model, robot.data)


def _robot(n: int, kind: str, medium: str, zeta: float, gravity: bool, rest: list[PccConfig]) -> MujocoRobot:
    g = (0.0, 0.0, -9.80665) if gravity else (0.0, 0.0, 0.0)
    spec = cmp3d._camera_only(n, zeta)
    robot = MujocoRobot(spec, medium=medium, gravity=g, shear=kind != "no-shear", tendons=False)
    robot.set_pcc(LIMB, rest, mode="reset")
    return balls(robot, rest) if kind == "ball" else robot


def mujoco_static(n: int, kind: str, medium: str, rest: list[PccConfig], torque: float = 0.0):
    """Settled tip position (limb base frame) and frame (PCC labelling) in MuJoCo: gravity, or a tip torque
    about the tip tangent (N m) ramped in without gravity."""
    robot = _robot(n, kind, medium, 1.0, not torque, rest)
    try:
        tip_body = mujoco.mj_name2id(robot.model, mujoco.mjtObj.mjOBJ_BODY, "camera_tip")
        T_base = robot.T_world_limbbase(LIMB)
        last = np.full(3, np.inf)
        for second in range(80):
            for k in range(1000):
                if torque:
                    x = min((second + k * 1e-3) / cmp3d.TORQUE_RAMP_S, 1.0)
                    load = T_base[:3, :3] @ [0.0, 0.0, torque * x * x * (3 - 2 * x)]
                    robot.data.xfrc_applied[tip_body, 3:] = load
                robot.step()
            T = np.linalg.solve(T_base, robot.tip_pose(LIMB))
            if second > 20 and np.linalg.norm(T[:3, 3] - last) < 1e-6:
                break
            last = T[:3, 3]
        return T[:3, 3], T[:3, :3] @ rot_z(rest[0].plane)
    finally:
        robot.close()


def mujoco_frequency(n: int, kind: str, medium: str) -> float:
    """First bending frequency (Hz): from a 5 mm PCC tip bend released to straight, zero crossings."""
    straight = [PccConfig(0.0, 0.0, LENGTH)]
    start = [PccConfig(2 * cmp3d.EXCITATION_TIP_M / LENGTH, 0.0, LENGTH)]
    robot = _robot(n, kind, medium, 0.0, False, straight)
    try:
        if kind == "ball":
            pose_balls(robot, straight, start)
        else:
            robot.set_pcc(LIMB, start, mode="reset")
            robot.set_pcc(LIMB, straight)
        T_base = np.linalg.inv(robot.T_world_limbbase(LIMB))
        steps = int(cmp3d.VIBRATION_PERIODS / 0.22 * 1.1 / 1e-3)
        t, x = np.empty(steps), np.empty(steps)
        for k in range(steps):
            robot.step()
            t[k], x[k] = robot.time, (T_base @ robot.tip_pose(LIMB))[0, 3]
        return cmp3d.zero_crossing_frequency(t, x)
    finally:
        robot.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--cases", nargs="+", default=["sag", "prebent", "twist", "frequency"])
    args = parser.parse_args()
    straight = [PccConfig(0.0, 0.0, LENGTH)]
    bent = [PccConfig(math.pi / 2, math.pi / 2, LENGTH)]
    print(f"{'case':16s} {'N':>3s} {'MuJoCo':9s} {'tip mm':>8s} {'% L':>6s} {'frame deg':>9s}  extra")
    for n in args.sections:
        for case in args.cases:
            if case == "frequency":
                for medium in ("air", "water"):
                    ours = cmp3d.chain_frequency(n, medium, chain="rod")["frequency_hz"]
                    for kind in KINDS:
                        f = mujoco_frequency(n, kind, medium)
                        label = f"{'frequency ' + medium:16s} {n:3d} {kind:9s} {'':8s} {'':6s} {'':9s}"
                        print(f"{label}  {f:.5f} Hz vs World {ours:.5f} ({100 * (f / ours - 1):+.2f} %)")
                continue
            media = ("air", "water") if case == "sag" else ("air",)
            for medium in media:
                configs = bent if case == "prebent" else straight
                twist = TWIST_TORQUE if case == "twist" else 0.0
                world_tip, world_R, _ = cmp3d.chain_static(
                    n, medium, bend=configs[0].bend, plane=configs[0].plane, gravity=not twist,
                    tip_torque=(0.0, 0.0, twist) if twist else None, chain="rod",
                )  # fmt: skip
                for kind in KINDS:
                    tip, R = mujoco_static(n, kind, medium, configs, torque=twist)
                    err = float(np.linalg.norm(tip - world_tip))
                    extra = ""
                    if twist:
                        ours = math.degrees(math.atan2(world_R[1, 0], world_R[0, 0]))
                        extra = (
                            f"twist {math.degrees(math.atan2(R[1, 0], R[0, 0])):.2f} vs World {ours:.2f} deg"
                        )
                    frame = math.degrees(rotation_angle(world_R.T @ R))
                    label = f"{case + ' ' + medium:16s} {n:3d} {kind:9s}"
                    print(
                        f"{label} {1e3 * err:8.2f} {100 * err / LENGTH:6.2f} {frame:9.2f}  {extra}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
