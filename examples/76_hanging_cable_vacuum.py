"""A hanging cable's first mode in a vacuum against the hanging chain (Bernoulli, Euler) with bending.

``pcb.rod``: L = 0.4 m, r = 3 mm, 1100 kg/m^3, E = 2 MPa, no material damping, clamped at the top,
hanging down, released from a 0.2 rad arc in a vacuum. The reference: Euler–Bernoulli with the weight's
tension (Hermite beam elements, 400 of them, the tension's geometric stiffness and stretch), whose limit
without bending is the hanging chain's ``T1 = 4 pi / j01 sqrt(L / g)``. The period from the zero crossings
of the first mode's coordinate over 5 s; the amplitude kept over those 5 s, in a vacuum and in air.
Usage: python examples/76_hanging_cable_vacuum.py
"""

import math

import numpy as np
import scipy.linalg as sl

import pccbullet as pcb

L, R, RHO, E, G = 0.4, 0.003, 1100.0, 2e6, 9.80665
MU, EI, EA = RHO * math.pi * R**2, E * math.pi * R**4 / 4, E * math.pi * R**2


def reference(ei: float, n_el: int = 400) -> tuple[float, np.ndarray]:
    h = L / n_el
    ke = (
        ei
        / h**3
        * np.array(
            [
                [12, 6 * h, -12, 6 * h],
                [6 * h, 4 * h * h, -6 * h, 2 * h * h],
                [-12, -6 * h, 12, -6 * h],
                [6 * h, 2 * h * h, -6 * h, 4 * h * h],
            ]
        )
    )
    kg = np.array(
        [
            [36, 3 * h, -36, 3 * h],
            [3 * h, 4 * h * h, -3 * h, -h * h],
            [-36, -3 * h, 36, -3 * h],
            [3 * h, -h * h, -3 * h, 4 * h * h],
        ]
    ) / (30 * h)
    me = (
        MU
        * h
        / 420
        * np.array(
            [
                [156, 22 * h, 54, -13 * h],
                [22 * h, 4 * h * h, 13 * h, -3 * h * h],
                [54, 13 * h, 156, -22 * h],
                [-13 * h, -3 * h * h, -22 * h, 4 * h * h],
            ]
        )
    )
    K, M = np.zeros((2 * n_el + 2,) * 2), np.zeros((2 * n_el + 2,) * 2)
    for e in range(n_el):
        tension = MU * G * (L - (e + 0.5) * h)
        K[2 * e : 2 * e + 4, 2 * e : 2 * e + 4] += ke + tension / (1 + tension / EA) * kg
        M[2 * e : 2 * e + 4, 2 * e : 2 * e + 4] += me
    w2, V = sl.eigh(K[2:, 2:], M[2:, 2:], subset_by_index=[0, 0])
    return 2 * math.pi / math.sqrt(w2[0]), np.concatenate([[0.0], V[0::2, 0]])  # fmt: skip


def swing(n: int, medium: str) -> tuple[float, float]:
    period_ref, phi = reference(EI)
    spec = pcb.rod(L, R, density=RHO, youngs_modulus=E, damping_ratio=0.0, sections=n, mount="down")
    with pcb.World(medium=medium) as world:
        robot = world.load_robot(spec)
        robot.set_pcc("rod", [pcb.PccConfig(0.2, 0.0, L)])
        robot.set_pcc("rod", [pcb.PccConfig(0.0, 0.0, L)], mode="target")
        w = np.interp((np.arange(n) + 0.5) * L / n, np.linspace(0, L, len(phi)), phi)
        q = np.array([robot.section_poses("rod")[:, 0, 3] @ w for _ in range(5000) if world.step() is None])
    i = np.nonzero(np.sign(q[1:]) * np.sign(q[:-1]) < 0)[0]
    crossings = (i - q[i] / (q[i + 1] - q[i])) * 1e-3
    period = 2 * np.polyfit(np.arange(len(crossings)), crossings, 1)[0]
    k = round(period / 1e-3)
    return period, np.abs(q[-k:]).max() / np.abs(q[:k]).max()


period_ref, _ = reference(EI)
chain = 4 * math.pi / 2.404825557695773 * math.sqrt(L / G)
print(f"reference {period_ref:.5f} s; the hanging chain without bending {chain:.5f} s")
for n, medium in ((10, "vacuum"), (20, "vacuum"), (40, "vacuum"), (20, "air")):
    period, kept = swing(n, medium)
    error = 100 * (period / period_ref - 1)
    print(
        f"N = {n:2d} {medium}: period {period:.5f} s, error {error:+.3f} %, amplitude kept {100 * kept:.1f} %"
    )
