"""The camera tentacle on a KUKA iiwa's flange in your own PyBullet client: our material on your robot.

The KUKA (pybullet_data) holds its joints with position motors and swings its first joint through 0.8 rad
in 2 s and back; the tentacle is welded to the flange (link 6, along its z axis) by
:func:`pccbullet.sim.attach.attach` and carries its material (springs, damping, the fluid) through
``apply()`` before every step. Prints the tentacle's tip in the flange frame at rest, while swinging and
after, and the mean cost of ``apply()``.

Usage: python examples/65_attach_kuka.py [--medium water] [--seconds 6]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pybullet as p
import pybullet_data

import pccbullet as pcb


def flange_tip(kuka: int, T_world_tip: np.ndarray, cid: int) -> np.ndarray:
    """The tip ``(3,)`` in the KUKA's link-6 frame (m)."""
    state = p.getLinkState(kuka, 6, computeForwardKinematics=True, physicsClientId=cid)
    R = np.asarray(p.getMatrixFromQuaternion(state[5])).reshape(3, 3)
    return R.T @ (T_world_tip[:3, 3] - np.asarray(state[4]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--medium", default="air", choices=["air", "water", "seawater"])
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    cid = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=cid)
    p.setTimeStep(1e-3, physicsClientId=cid)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
    kuka = p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=cid)
    home = [0.0, 0.6, 0.0, -1.2, 0.0, 0.6, 0.0]
    for j, angle in enumerate(home):
        p.resetJointState(kuka, j, angle, physicsClientId=cid)
    camera = pcb.attach(cid, "ursula", kuka, 6, limb="camera", medium=args.medium, position=(0, 0, 0.02))
    spent, steps = 0.0, int(round(args.seconds / 1e-3))
    for k in range(steps):
        t = k * 1e-3
        swing = 0.4 * (1.0 - math.cos(math.pi * min(max(t - 2.0, 0.0), 2.0))) if t < 4.0 else 0.0
        targets = [home[0] + swing, *home[1:]]
        p.setJointMotorControlArray(
            kuka, range(7), p.POSITION_CONTROL, targetPositions=targets, physicsClientId=cid
        )
        t0 = time.perf_counter()
        camera.apply()
        spent += time.perf_counter() - t0
        p.stepSimulation(physicsClientId=cid)
        if k + 1 in (2000, 3000, steps):
            tip = flange_tip(kuka, camera.tip_pose("camera"), cid)
            print(f"t = {t + 1e-3:4.1f} s: tip in the flange frame {np.round(tip, 4)} m")
    joints = camera.limb_joints("camera").n_dof
    print(f"apply(): {spent / steps * 1e6:.0f} us a step (one limb, {joints} joints)")
    camera.detach()
    p.disconnect(cid)


if __name__ == "__main__":
    main()
