"""The tendon-driven rod chain against the Kirchhoff rod: settled tip under constant tensions, N = 5, 10, 20.

Zero gravity, air: the camera tentacle (one segment, four tendons at 0.7 of the radius) pulled by one
tendon (bends towards 0 deg), by two (towards 225 deg), and the grasper (two segments) by a segment-2 tendon
and a segment-1 tendon at once (an S-curve in 3D). Reference: the extensible Kirchhoff rod whose every
cross-section carries each passing tendon's moment ``T r`` and compression ``T`` (curvature ``m / (E I)``,
strain ``-N / (E A)``), integrated on 4001 points (converged to 1e-6 m). Heavily damped material and
massless spools: the same statics, settled sooner. Prints the tip distance (mm and % of the limb's length)
and the angle between the tips' axes.

    python examples/73_tendon_kirchhoff.py
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

import pccbullet as pcb
from pccbullet.urdf_gen.spec_loader import load_robot

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_tendons import kirchhoff_tip, quick_limb  # the tests' reference, one copy

CASES = [
    ("camera", (1.0, 0.0, 0.0, 0.0)),
    ("camera", (0.0, 0.0, 0.5, 0.5)),
    ("grasper", (0.0, 0.0, 1.0, 0.0, 0.4, 0.0, 0.0, 0.0)),
]


def main() -> None:
    print("| limb | tensions (N) | N | tip error (mm) | % of length | axis angle (deg) |")
    print("|---|---|---|---|---|---|")
    for name, tensions in CASES:
        for n in (5, 10, 20):
            spec = quick_limb(load_robot("ursula", sections=n), name)
            limb = spec.limb(name)
            p_ref, R_ref = kirchhoff_tip(limb, tensions)
            with pcb.World(mode="dynamic", medium="air", gravity=(0.0, 0.0, 0.0)) as world:
                robot = world.load_robot(spec)
                robot.compliant[name].tendons.set_tensions(tensions)
                world.step(20000)
                T = np.linalg.inv(robot.T_world_limbbase(name)) @ robot.tip_pose(name)
            err = float(np.linalg.norm(T[:3, 3] - p_ref))
            angle = math.degrees(math.acos(np.clip(T[:3, 2] @ R_ref[:, 2], -1.0, 1.0)))
            print(
                f"| {name} | {' '.join(f'{t:g}' for t in tensions)} | {n} | {err * 1e3:.2f} | "
                f"{err / limb.rest_length * 100:.2f} | {angle:.2f} |"
            )


if __name__ == "__main__":
    main()
