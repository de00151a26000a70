"""Dynamic mode against beam theory: cantilever sag (air, water) and first natural frequency.

The rod of tests/data/stiff_rod.toml: uniform, r = 30 mm, L = 300 mm, E = 10 MPa, nu = 0.49, 20 sections.
The rod chain (the default; its chords shear) against Timoshenko's beam, ``w L^4 / (8 E I) + w L^2 / (2
kappa G A)`` with Cowper's ``kappa = 6 (1 + nu) / (7 + 6 nu)``; the RRP chain (no shear) against
Euler-Bernoulli, ``w L^4 / (8 E I)``.
Usage: python examples/50_dynamic_mode_checks.py
"""

import dataclasses
import math
from pathlib import Path

import numpy as np

from pccbullet.sim.world import World
from pccbullet.urdf_gen.spec_loader import load_robot

ROD = Path(__file__).resolve().parent.parent / "tests" / "data" / "stiff_rod.toml"
r, L, E, nu, rho, g = 0.03, 0.3, 1e7, 0.49, 1070.0, 9.80665
EI, A = E * math.pi * r**4 / 4, math.pi * r * r
kGA = 6 * (1 + nu) / (7 + 6 * nu) * E / (2 * (1 + nu)) * A


def sag(medium: str, chain: str) -> float:
    with World(medium=medium, chain=chain) as world:
        robot = world.load_robot(ROD)
        z0 = robot.tip_pose("rod")[2, 3]
        world.step(1500)
        return z0 - robot.tip_pose("rod")[2, 3]


for chain, theory in (("rod", "Timoshenko"), ("rrp", "Euler-Bernoulli")):
    for medium, rho_f in (("air", 1.204), ("water", 1000.0)):
        w = (rho - rho_f) * A * g
        beam = w * L**4 / (8 * EI) + (w * L**2 / (2 * kGA) if chain == "rod" else 0.0)
        s = sag(medium, chain)
        error = 100 * (s / beam - 1)
        print(f"{chain} {medium:5s}: sag {s * 1e3:.4f} mm, {theory} {beam * 1e3:.4f} mm ({error:+.2f} %)")
    ratio = sag("air", chain) / sag("water", chain)
    print(f"{chain} air/water sag ratio {ratio:.2f} (net weight ratio {rho / (rho - 1000.0):.2f})")

spec = load_robot(ROD)
limb = dataclasses.replace(
    spec.limbs[0], material=dataclasses.replace(spec.limbs[0].material, damping_ratio=0.005)
)
with World() as world:
    robot = world.load_robot(dataclasses.replace(spec, limbs=(limb,)))
    z = []
    for _ in range(800):
        world.step()
        z.append(robot.tip_pose("rod")[2, 3])
z = np.asarray(z[100:]) - np.mean(z[100:])
f = 1.0 / (np.mean(np.diff(np.flatnonzero(np.diff(np.sign(z)) > 0))) * world.dt)
f_beam = 1.875**2 * math.sqrt(EI / (rho * A * L**4)) / (2 * math.pi)
print(f"first natural frequency {f:.3f} Hz, clamped beam {f_beam:.3f} Hz ({100 * (f / f_beam - 1):+.1f} %)")
