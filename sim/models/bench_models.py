"""Cost of the Newton–Euler model inside the 1 kHz loop (for ``pccbullet bench``)."""

from __future__ import annotations

import time

import numpy as np

from pccbullet.sim.medium import SEAWATER
from pccbullet.sim.models.newton_euler.batch import MultiLimbModel
from pccbullet.sim.models.newton_euler.integrators import step
from pccbullet.sim.models.newton_euler.model import LimbModel


def bench_newton_euler(
    pieces: tuple[int, ...] = (5, 10, 20), steps: int = 200, repeats: int = 5, backend: str = "numba"
) -> dict:
    """Median wall time (s) of one 1 ms step of all four URSULA limbs together, per pieces-per-segment n.

    All limbs are advanced together by one :class:`~pccbullet.sim.models.newton_euler.batch.MultiLimbModel`
    step, the fastest path: with ``backend="numba"`` (default) one call of the compiled
    :func:`pccbullet.sim.models.newton_euler.kernels.step_kernel`; ``"numpy"`` times the numpy reference (one
    batched dynamics evaluation and one Cholesky solve per limb). One untimed step first (kernel compilation
    or loading from numba's cache).

    Returns:
        ``{"n=5": seconds, "n=10": seconds, ...}`` plus ``"dof"`` per n.
    """
    from pccbullet.urdf_gen.spec_loader import load_robot

    robot = load_robot("ursula")
    out: dict = {}
    for n in pieces:
        model = MultiLimbModel([LimbModel(limb, n, medium=SEAWATER) for limb in robot.limbs], backend=backend)
        q, qd = model.rest_state(), np.zeros(model.dof)
        q, qd = step(model, q, qd, 1e-3)
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(steps):
                q, qd = step(model, q, qd, 1e-3)
            samples.append((time.perf_counter() - t0) / steps)
        out[f"n={n}"] = float(np.median(samples))
        out[f"dof n={n}"] = model.dof
    return out
