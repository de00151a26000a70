"""Worst tip errors: PCC arc vs RRP chain (N = 1..50) and PCC vs PyBullet after a kinematic reset.

Usage: python examples/02_accuracy.py [CONFIGS_PER_N]
"""

import math
import sys

import numpy as np

from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import (
    PccConfig,
    arc_transform,
    chain_transform,
    limb_transform,
    rotation_angle,
    segment_joints,
)

per_n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
rng = np.random.default_rng(1)
pos = rot = 0.0
for n in (1, 2, 5, 10, 20, 50):
    for _ in range(per_n):
        b, p, length = (
            rng.uniform(-math.pi, math.pi),
            rng.uniform(-2 * math.pi, 2 * math.pi),
            rng.uniform(0.29, 0.6),
        )
        T_chain, T_arc = chain_transform(segment_joints(b, p, length, n)), arc_transform(b, p, length)
        pos = max(pos, float(np.linalg.norm(T_chain[:3, 3] - T_arc[:3, 3])))
        rot = max(rot, rotation_angle(T_chain[:3, :3].T @ T_arc[:3, :3]))
print(f"arc vs chain: worst {pos:.2e} m, {rot:.2e} rad over {6 * per_n} configurations, N = 1..50")

pos = rot = 0.0
with World(mode="kinematic") as world:
    robot = world.load_robot("ursula")
    for limb in ("grasper", "palpation", "camera", "light"):
        for _ in range(per_n // 4):
            configs = [
                PccConfig(
                    rng.uniform(-s.bend_max, s.bend_max),
                    rng.uniform(-s.plane_max, s.plane_max),
                    rng.uniform(s.length_min, s.length_max),
                )
                for s in robot.limb(limb).segments
            ]
            robot.set_pcc(limb, configs)
            T = robot.T_world_limbbase(limb) @ limb_transform(configs)
            T_pb = robot.tip_pose(limb)
            pos = max(pos, float(np.linalg.norm(T[:3, 3] - T_pb[:3, 3])))
            rot = max(rot, rotation_angle(T[:3, :3].T @ T_pb[:3, :3]))
print(f"PCC vs PyBullet (N = 10): worst {pos:.2e} m, {rot:.2e} rad over {4 * (per_n // 4)} configurations")
