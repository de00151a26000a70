"""A rod without a robot file, held as a cantilever, a tip force inside the implicit step vs Euler–Bernoulli.

``pcb.rod``: L = 0.3 m, r = 30 mm, E = 10 MPa, nu = 0.49 (the rod of tests/data/stiff_rod.toml), clamped
horizontal, no gravity; a 2 N force on its tip frame (``Robot.add_load``) across (world +y and -z) and
along it, in air and water, at N = 10, 20, 40. References: ``P L^3 / (3 E I)`` across, ``P L / (E A)``
along (a point load's shear is not in the chain: Timoshenko adds 2.5 % for this thick rod).
Usage: python examples/75_rod_cantilever_tip_load.py
"""

import math

import numpy as np

import pccbullet as pcb

L, R, E, P = 0.3, 0.03, 1e7, 2.0
ACROSS, ALONG = P * L**3 / (3 * E * math.pi * R**4 / 4), P * L / (E * math.pi * R**2)

for n in (10, 20, 40):
    for medium in ("air", "water"):
        for direction in ((0.0, 1.0, 0.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0)):
            spec = pcb.rod(L, R, youngs_modulus=E, density=1070.0, poisson_ratio=0.49, damping_ratio=0.5,
                           sections=n)  # fmt: skip
            with pcb.World(medium=medium, gravity=(0.0, 0.0, 0.0)) as world:
                robot = world.load_robot(spec)
                start = robot.tip_pose("rod")[:3, 3]
                robot.add_load("rod", "tip", force=P * np.asarray(direction))
                world.step(1500)
                moved = float((robot.tip_pose("rod")[:3, 3] - start) @ np.asarray(direction))
            reference = ALONG if direction[0] else ACROSS
            print(f"N = {n:2d} {medium:5s} force {direction}: {moved * 1e6:8.3f} um, reference "
                  f"{reference * 1e6:8.3f} um, error {100 * (moved / reference - 1):+.3f} %")  # fmt: skip
