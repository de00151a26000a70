"""Time integration of :class:`~pccbullet.sim.models.newton_euler.model.LimbModel`: a fixed-step scheme for
the 1 kHz loop and a reference path through :func:`scipy.integrate.solve_ivp`. Equilibria without time:
:func:`pccbullet.sim.models.newton_euler.statics.static_equilibrium`.

Fixed step (linearly implicit theta-method). The stiff, linear elastic and damping terms are taken at
``q_theta = q + theta dt qd_new``-weighted points, everything else (M(q), gravity, drag, Coriolis)
explicitly at the predicted midpoint ``q_m = q + dt qd / 2`` (for a conservative force this update has
a unit-determinant amplification matrix, i.e. no secular energy growth, stable for ``omega dt < 2``)::

    (M(q_m) + theta dt D + theta^2 dt^2 K) a = Q(q_m, qd) + tau - K (q + theta dt qd) - D qd
    qd' = qd + dt a,    q' = q + dt ((1 - theta) qd + theta qd')

``theta = 1/2`` is the implicit midpoint rule on the linear part: unconditionally stable for any
stiffness and free of numerical damping (energy is conserved up to the explicit nonlinear terms);
``theta = 1`` adds strong numerical damping of the fastest modes. One linear solve per step.

:func:`step` is :meth:`pccbullet.sim.models.strain_model.StrainModel.step` (``step(model, q, qd, dt, ...)``):
a :class:`~pccbullet.sim.models.newton_euler.model.LimbModel` or
:class:`~pccbullet.sim.models.newton_euler.batch.MultiLimbModel` step is one call of the compiled
:func:`pccbullet.sim.models.newton_euler.kernels.step_kernel` (the linear solve by the articulated-body
recursion, exact); a subclass with forces of its own (e.g.
:class:`~pccbullet.sim.models.chambers.ChamberWallLimb`) goes through its ``dynamics`` and a Cholesky solve.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.sim.models.strain_model import StrainModel

step = StrainModel.step  # step(model, q, qd, dt, tau=None, *, theta=0.5, tip_force=None, tip_moment=None)


def simulate(
    model: LimbModel,
    q0: FloatArray,
    qd0: FloatArray,
    dt: float,
    steps: int,
    tau_fn: Callable[[float, FloatArray, FloatArray], FloatArray | None] | None = None,
    *,
    theta: float = 0.5,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Fixed-step run; returns times ``(steps + 1,)``, q ``(steps + 1, 4n)`` and qd ``(steps + 1, 4n)``."""
    if dt <= 0.0 or steps < 0:
        raise ConfigurationError(f"dt = {dt!r}, steps = {steps!r} are invalid; allowed: dt > 0, steps >= 0")
    qs = np.empty((steps + 1, model.dof))
    vs = np.empty_like(qs)
    q, qd = np.array(q0, dtype=float), np.array(qd0, dtype=float)
    qs[0], vs[0] = q, qd
    for k in range(steps):
        tau = tau_fn(k * dt, q, qd) if tau_fn is not None else None
        q, qd = step(model, q, qd, dt, tau, theta=theta)
        qs[k + 1], vs[k + 1] = q, qd
    return np.arange(steps + 1, dtype=float) * dt, qs, vs


def simulate_ivp(
    model: LimbModel,
    q0: FloatArray,
    qd0: FloatArray,
    t_span: tuple[float, float],
    tau_fn: Callable[[float, FloatArray, FloatArray], FloatArray | None] | None = None,
    *,
    t_eval: FloatArray | None = None,
    method: str = "Radau",
    rtol: float = 1e-8,
    atol: float = 1e-10,
):
    """Reference solution with :func:`scipy.integrate.solve_ivp` on ``y = [q, qd]``.

    Returns:
        the ``OdeResult`` (``.t`` ``(m,)``, ``.y`` ``(8n, m)``).
    """
    n = model.dof

    def rhs(t: float, y: FloatArray) -> FloatArray:
        q, qd = y[:n], y[n:]
        tau = tau_fn(t, q, qd) if tau_fn is not None else None
        return np.concatenate([qd, model.acceleration(q, qd, tau)])

    y0 = np.concatenate([np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)])
    return solve_ivp(rhs, t_span, y0, method=method, t_eval=t_eval, rtol=rtol, atol=atol)
