"""Time integration of :class:`~sim.models.newton_euler.LimbModel`: a fixed-step scheme for the 1 kHz
loop and a reference path through :func:`scipy.integrate.solve_ivp`.

Fixed step (linearly implicit theta-method). The stiff, linear elastic and damping terms are taken at
``q_theta = q + theta dt qd_new``-weighted points, everything else (M(q), gravity, drag, Coriolis)
explicitly at the predicted midpoint ``q_m = q + dt qd / 2`` (for a conservative force this update has
a unit-determinant amplification matrix, i.e. no secular energy growth, stable for ``omega dt < 2``)::

    (M(q_m) + theta dt D + theta^2 dt^2 K) a = Q(q_m, qd) + tau - K (q + theta dt qd) - D qd
    qd' = qd + dt a,    q' = q + dt ((1 - theta) qd + theta qd')

``theta = 1/2`` is the implicit midpoint rule on the linear part: unconditionally stable for any
stiffness and free of numerical damping (energy is conserved up to the explicit nonlinear terms);
``theta = 1`` adds strong numerical damping of the fastest modes. One linear solve per step.

A :class:`~sim.models.newton_euler.LimbModel` or :class:`~sim.models.ne_batch.MultiLimbModel` step is
one call of the compiled :func:`sim.models.ne_kernels.step_kernel` (the linear solve by the
articulated-body recursion, exact); other models go through their ``dynamics`` and a Cholesky solve.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp

from sim.models import ne_kernels, ne_statics
from sim.models.ne_batch import MultiLimbModel, solve_spd_lower
from sim.models.newton_euler import LimbModel
from urdf_gen.errors import ConfigurationError
from urdf_gen.types import FloatArray


def step(
    model: LimbModel | MultiLimbModel,
    q: FloatArray,
    qd: FloatArray,
    dt: float,
    tau: FloatArray | None = None,
    *,
    theta: float = 0.5,
    tip_force: FloatArray | None = None,
    tip_moment: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Advance one step of ``dt`` (s).

    Args:
        model: the limb, or a :class:`~sim.models.ne_batch.MultiLimbModel` (all its limbs in one step;
            state, tau: concatenated, tip loads ``(L, 3)``). q, qd: state ``(4n,)``. tau: generalized
            actuation ``(4n,)`` or ``None``.
        theta: implicitness of the elastic/damping terms in [0.5, 1].
        tip_force (N), tip_moment (N m): ``(3,)`` in the limb base frame.

    Returns:
        the new ``(q, qd)``.
    """
    if isinstance(model, MultiLimbModel):
        return model.step(q, qd, dt, tau, theta=theta, tip_force=tip_force, tip_moment=tip_moment)
    if type(model) is LimbModel:
        out = _kernel_step(model, q, qd, dt, tau, theta, tip_force, tip_moment)
        if out is not None:
            return out
    return _dynamics_step(model, q, qd, dt, tau, theta, tip_force, tip_moment)


def _load(x: FloatArray | None) -> FloatArray:
    return np.zeros((1, 3)) if x is None else np.ascontiguousarray(x, dtype=float).reshape(1, 3)


def _kernel_step(
    model: LimbModel,
    q: FloatArray,
    qd: FloatArray,
    dt: float,
    tau: FloatArray | None,
    theta: float,
    tip_force: FloatArray | None,
    tip_moment: FloatArray | None,
) -> tuple[FloatArray, FloatArray] | None:
    """:func:`step` by the compiled kernel; ``None`` if the mass matrix is not numerically positive
    definite (the caller then takes :func:`_dynamics_step`, whose solve falls back to LU)."""
    prm = model.batch_params()
    limbs, pieces = prm.packed()
    n = model.dof
    qn, qdn, _, ok = ne_kernels.step_kernel(
        limbs,
        pieces,
        prm.drag is not None,
        _load(model.gravity),
        _load(tip_force),
        _load(tip_moment),
        np.ascontiguousarray(q, dtype=float),
        np.ascontiguousarray(qd, dtype=float),
        np.zeros(n) if tau is None else np.ascontiguousarray(np.broadcast_to(tau, (n,)), dtype=float),
        np.ascontiguousarray(model.K, dtype=float),
        np.ascontiguousarray(model.D, dtype=float),
        float(dt),
        float(theta),
    )
    return (qn, qdn) if ok else None


def _dynamics_step(
    model: LimbModel,
    q: FloatArray,
    qd: FloatArray,
    dt: float,
    tau: FloatArray | None,
    theta: float,
    tip_force: FloatArray | None,
    tip_moment: FloatArray | None,
) -> tuple[FloatArray, FloatArray]:
    """:func:`step` through ``model.dynamics`` and a Cholesky solve (any model with that interface)."""
    M, Q = model.dynamics(q + 0.5 * dt * qd, qd, tip_force, tip_moment)
    assert M is not None  # with_mass=True
    K, D = model.K, model.D
    rhs = Q - K * (q + theta * dt * qd) - D * qd
    if tau is not None:
        rhs += tau
    A = M  # dynamics() returns a fresh array
    A.flat[:: len(A) + 1] += theta * dt * D + (theta * dt) ** 2 * K
    a = solve_spd_lower(A, rhs)  # M is symmetric positive definite: Cholesky
    qd_new = qd + dt * a
    return q + dt * ((1.0 - theta) * qd + theta * qd_new), qd_new


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


def static_equilibrium(
    model: LimbModel,
    tau: FloatArray | None = None,
    q0: FloatArray | None = None,
    *,
    load_steps: int = 4,
    tip_force: FloatArray | None = None,
) -> FloatArray:
    """Solve ``Q(q, 0) + tau - K q = 0`` for ``q`` ``(4n,)`` with load continuation (Powell hybrid method).

    Gravity, buoyancy, tip force and ``tau`` are scaled together from 1/load_steps to 1. Kept for its
    defaults (4 load steps, a start ``q0``); it is :func:`sim.models.ne_statics.static_equilibrium` with
    the residual divided by the stiffness, which also raises :class:`ConfigurationError` if no
    equilibrium is found.
    """
    return ne_statics.static_equilibrium(
        model, tau, tip_force=tip_force, load_steps=load_steps, q0=q0, normalized=True
    )
