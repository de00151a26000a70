"""Cost of the Newton–Euler model inside the 1 kHz loop (for ``pccbullet bench``)."""

from __future__ import annotations

import time

import numpy as np

from sim.models.integrators import step
from sim.models.newton_euler import SEAWATER, LimbModel


def bench_newton_euler(pieces: tuple[int, ...] = (5, 10, 20), steps: int = 200, repeats: int = 5) -> dict:
    """Median wall time (s) of one 1 ms step of all four URSULA limbs together, per pieces-per-segment n.

    Returns:
        ``{"n=5": seconds, "n=10": seconds, ...}`` plus ``"dof"`` per n.
    """
    from urdf_gen.spec_loader import load_robot

    robot = load_robot("ursula")
    out: dict = {}
    for n in pieces:
        models = [LimbModel(limb, n, medium=SEAWATER) for limb in robot.limbs]
        states = [(m.rest_state(), np.zeros(m.dof)) for m in models]
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(steps):
                states = [step(m, q, qd, 1e-3) for m, (q, qd) in zip(models, states, strict=True)]
            samples.append((time.perf_counter() - t0) / steps)
        out[f"n={n}"] = float(np.median(samples))
        out[f"dof n={n}"] = sum(m.dof for m in models)
    return out
