"""Rods held at both ends: clamped–clamped and pinned–pinned beams, a driven twist, against beam theory.

``pcb.rod``: L = 0.3 m, r = 30 mm, E = 10 MPa, nu = 0.49, horizontal, no gravity. The tip held where it
rests (``Robot.hold_end``: a stiff spring-damper inside the implicit step), the base clamped or pinned
(``Robot.pin_base``), a 2 N force across at midspan (``Robot.add_load`` on the node at L / 2). References
(Euler–Bernoulli): ``P L^3 / (192 E I)`` clamped–clamped (end moments ``P L / 8``), ``P L^3 / (48 E I)``
pinned–pinned. Then the tip clamped to an anchor turned 0.2 rad about the rod's axis: the reaction moment
against Saint-Venant's ``G J theta / L``.
Usage: python examples/77_rod_ends.py
"""

import math

import numpy as np

import pccbullet as pcb

L, R, E, NU, P = 0.3, 0.03, 1e7, 0.49, 2.0
EI, GJ = E * math.pi * R**4 / 4, E / (2 * (1 + NU)) * math.pi * R**4 / 2


def spec(n: int) -> pcb.RobotSpec:
    return pcb.rod(L, R, youngs_modulus=E, density=1070.0, poisson_ratio=NU, damping_ratio=0.5, sections=n)


for hold, reference in (("clamped", P * L**3 / (192 * EI)), ("pinned", P * L**3 / (48 * EI))):
    for n in (10, 20, 40):
        with pcb.World(gravity=(0.0, 0.0, 0.0)) as world:
            robot = world.load_robot(spec(n))
            end = robot.hold_end("rod", hold)
            if hold == "pinned":
                robot.pin_base("rod")
            mid = n // 2 - 1
            start = robot.section_poses("rod")[mid, 1, 3]
            robot.add_load("rod", mid, force=(0.0, P, 0.0))
            world.step(2000)
            moved = robot.section_poses("rod")[mid, 1, 3] - start
        print(f"{hold}-{hold} N = {n:2d}: {moved * 1e6:8.3f} um, reference {reference * 1e6:8.3f} um, error "
              f"{100 * (moved / reference - 1):+.2f} %; tip reaction {np.round(end.force, 4)} N, "
              f"{np.round(end.moment, 4)} N m")  # fmt: skip

theta = 0.2
with pcb.World(gravity=(0.0, 0.0, 0.0)) as world:
    robot = world.load_robot(spec(20))
    start = robot.tip_pose("rod")

    def anchor(t: float) -> np.ndarray:
        a, turn = theta * min(t, 1.0), np.eye(4)
        turn[1:3, 1:3] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
        return turn @ start

    end = robot.hold_end("rod", "clamped", anchor=anchor)
    world.step(1500)
reference = GJ * theta / L
print(f"driven twist N = 20: reaction {end.moment[0]:.5f} N m, Saint-Venant {reference:.5f} N m, error "
      f"{100 * (end.moment[0] / reference - 1):+.3f} %")  # fmt: skip
