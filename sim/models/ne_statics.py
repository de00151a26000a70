"""Static equilibrium of a :class:`~sim.models.newton_euler.LimbModel` (or a subclass).

Solves ``Q(q, 0) + tau - K q = 0`` (gravity, buoyancy and tip loads in ``Q``; see
:meth:`LimbModel.dynamics`) with :func:`scipy.optimize.root` (Powell's hybrid method), stepping the
gravity, the actuation and the tip load up together from zero in ``load_steps`` equal increments so that
large deflections (a soft tentacle hanging under its own weight) are followed continuously.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import root

from sim.models.newton_euler import LimbModel
from urdf_gen.errors import ConfigurationError
from urdf_gen.types import FloatArray


def static_equilibrium(
    model: LimbModel,
    tau: FloatArray | None = None,
    *,
    tip_force: FloatArray | None = None,
    tip_moment: FloatArray | None = None,
    load_steps: int = 10,
    tol: float = 1e-12,
) -> FloatArray:
    """Strain state ``q`` ``(4n,)`` where the limb is at rest under gravity, ``tau`` and a tip load.

    Args:
        model: the limb model (its ``gravity`` is scaled during the load steps and restored).
        tau: generalized actuation ``(4n,)`` (e.g. ``ChamberActuation.tau(P)``), default none.
        tip_force (N), tip_moment (N m): ``(3,)`` in the limb base frame.
        load_steps: number of load increments (>= 1).
        tol: tolerance of the root finder on ``q``; the residual must end below ``1e-9`` of the
            largest elastic force.

    Raises:
        ConfigurationError: ``load_steps < 1`` or the root finder fails at some increment.
    """
    if not (isinstance(load_steps, int) and load_steps >= 1):
        raise ConfigurationError(f"load_steps = {load_steps!r} is invalid; allowed: an integer >= 1")
    gravity = model.gravity
    q = model.rest_state()
    zero = np.zeros(model.dof)
    try:
        for s in np.arange(1, load_steps + 1) / load_steps:
            model.gravity = gravity * s
            t = zero if tau is None else s * np.asarray(tau, dtype=float)
            f = None if tip_force is None else s * np.asarray(tip_force, dtype=float)
            m = None if tip_moment is None else s * np.asarray(tip_moment, dtype=float)

            def residual(x: FloatArray, t: FloatArray = t, f=f, m=m) -> FloatArray:  # noqa: ANN001
                _, Q = model.dynamics(x, zero, f, m, with_mass=False)
                return Q + t - model.K * x

            sol = root(residual, q, method="hybr", tol=tol)
            scale = 1.0 + float(np.max(np.abs(model.K * sol.x)))
            if not np.all(np.isfinite(sol.x)) or np.max(np.abs(residual(sol.x))) > 1e-9 * scale:
                raise ConfigurationError(f"static equilibrium not found at load {s:.2f}: {sol.message}")
            q = sol.x
    finally:
        model.gravity = gravity
    return q
