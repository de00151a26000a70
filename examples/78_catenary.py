"""A cable pinned at both ends against the elastic catenary.

``pcb.rod``: L = 0.4 m, r = 1 mm, 1100 kg/m^3, E = 100 kPa (it stretches up to 2 %; ``E I / (H L^2)`` =
2e-4), hanging in air from a pinned base (``Robot.pin_base``) and a pinned tip (``Robot.hold_end``) at the
same height, 0.2546 m apart (where a semicircle puts them). Reference: the elastic catenary (Irvine,
*Cable Structures*, 1981, supports at one level), its horizontal tension ``H`` from the span.
Usage: python examples/78_catenary.py
"""

import math

import numpy as np
import pybullet as pb
from scipy.optimize import brentq

import pccbullet as pcb

L, R, RHO, E, G = 0.4, 0.001, 1100.0, 1e5, 9.80665


def half_span(h: float, w: float, ea: float, half: float, span: float) -> float:
    """The elastic catenary's half span at horizontal tension ``h`` less the one wanted (m)."""
    return h * half / ea + h / w * math.asinh(w * half / h) - 0.5 * span


for n in (10, 20, 40):
    spec = pcb.rod(L, R, density=RHO, youngs_modulus=E, damping_ratio=0.05, sections=n, mount="down")
    with pcb.World(medium="air") as world:
        robot = world.load_robot(spec)
        robot.set_pcc("rod", [pcb.PccConfig(math.pi, 0.0, L)])
        robot.set_pcc("rod", [pcb.PccConfig(0.0, 0.0, L)], mode="target")
        robot.pin_base("rod")
        end = robot.hold_end("rod", "pinned")
        base, tip = robot.T_world_limbbase("rod")[:3, 3], robot.tip_pose("rod")[:3, 3]
        world.step(7000)
        sag = base[2] - robot.section_poses("rod")[:, 2, 3].min()
        w = (RHO - world.medium.density) * math.pi * R * R * G
    ea, half, span = E * math.pi * R * R, 0.5 * L, float(np.linalg.norm(tip - base))
    H = brentq(half_span, 1e-6, 10.0, args=(w, ea, half, span))
    ref = w * half * half / (2 * ea) + H / w * (math.sqrt(1 + (w * half / H) ** 2) - 1)
    print(f"N = {n:2d}: sag {sag * 1e3:.3f} mm (catenary {ref * 1e3:.3f}, {100 * (sag / ref - 1):+.2f} %), "
          f"H {-end.force[0] * 1e3:.4f} mN ({H * 1e3:.4f}, {100 * (-end.force[0] / H - 1):+.2f} %), "
          f"V {end.force[2] * 1e3:.4f} mN (w L / 2 = {w * half * 1e3:.4f})")  # fmt: skip

# The same cable at N = 20 with its tip held by a PyBullet point-to-point constraint instead of the hold:
# outside the implicit step, without and with the limb estimating the constraint's force from the last step.
for estimate in (False, True):
    spec = pcb.rod(L, R, density=RHO, youngs_modulus=E, damping_ratio=0.05, sections=20, mount="down")
    with pcb.World(medium="air") as world:
        robot = world.load_robot(spec, external_loads=estimate)
        robot.set_pcc("rod", [pcb.PccConfig(math.pi, 0.0, L)])
        robot.set_pcc("rod", [pcb.PccConfig(0.0, 0.0, L)], mode="target")
        robot.pin_base("rod")
        body, link = robot.link_index("rod_tip")
        base, tip = robot.T_world_limbbase("rod")[:3, 3], robot.tip_pose("rod")[:3, 3]
        pcb_client = world.client
        import pybullet as pb

        pb.createConstraint(
            body,
            link,
            -1,
            -1,
            pb.JOINT_POINT2POINT,
            [0, 0, 0],
            [0, 0, 0],
            tip.tolist(),
            physicsClientId=pcb_client,
        )
        world.step(7000)
        sag = base[2] - robot.section_poses("rod")[:, 2, 3].min()
    print(f"PyBullet constraint, external_loads={estimate}: sag {sag * 1e3:.3f} mm")
