"""What every strain-space limb model offers: ``dynamics``, ``acceleration`` and ``step``, stated once.

:class:`StrainModel` gives the three public methods (arguments, shapes, units) and leaves three hooks to a
model, which take the tip loads as one pair :data:`Loads` ``(tip_force, tip_moment)``:
``_dynamics(q, qd, loads, with_mass)``, ``_acceleration(q, qd, tau, loads)`` and
``_step(q, qd, dt, tau, theta, loads)``. The two models are
:class:`~pccbullet.sim.models.newton_euler.model.LimbModel` (one limb;
:class:`~pccbullet.sim.models.chambers.ChamberWallLimb` adds its wall law) and
:class:`~pccbullet.sim.models.newton_euler.batch.MultiLimbModel` (several limbs, concatenated states, ``(L,
3)`` loads).

The step is the linearly implicit theta-method of :mod:`pccbullet.sim.models.newton_euler.integrators`::

    (M(q_m) + theta dt D + theta^2 dt^2 K) a = Q(q_m, qd) + tau - K (q + theta dt qd) - D qd
    qd' = qd + dt a,    q' = q + dt ((1 - theta) qd + theta qd'),    q_m = q + dt qd / 2

whose right-hand side and update are :func:`implicit_rhs` and :func:`theta_update`.
"""

from __future__ import annotations

from typing import Any

from pccbullet.core.types import FloatArray

Vec = FloatArray  # (dof,) float
Opt = FloatArray | None  # an optional array argument
Loads = tuple[FloatArray | None, FloatArray | None]  # (tip force (N), tip moment (N m)), limb base frame
Pair = tuple[FloatArray, FloatArray]  # (q, qd)


class StrainModel:
    """Base of the strain-space limb models (see the module docstring).

    Attributes (set by the model): K, D ``(dof,)`` diagonal stiffness and damping in strain coordinates.
    """

    K: FloatArray
    D: FloatArray

    def dynamics(
        self,
        q: FloatArray,
        qd: FloatArray,
        tip_force: FloatArray | None = None,
        tip_moment: FloatArray | None = None,
        *,
        with_mass: bool = True,
    ) -> tuple[Any, FloatArray]:
        """Mass matrix and non-elastic generalized forces at ``(q, qd)``.

        Args:
            q, qd: state ``(dof,)``. tip_force (N), tip_moment (N m): ``(3,)`` in the limb base frame
                (``(L, 3)``, one row a limb, for several limbs).
            with_mass: compute ``M`` (else ``None`` is returned for it).

        Returns:
            M and Q ``(dof,)`` such that ``M q'' = Q + tau - K q - D qd``; ``M`` is ``(dof, dof)`` for
            one limb, the list of the limbs' ``(4 n_l, 4 n_l)`` blocks for several.
        """
        return self._dynamics(q, qd, (tip_force, tip_moment), with_mass)

    def acceleration(
        self,
        q: FloatArray,
        qd: FloatArray,
        tau: FloatArray | None = None,
        tip_force: FloatArray | None = None,
        tip_moment: FloatArray | None = None,
    ) -> FloatArray:
        """Strain accelerations ``(dof,)`` from the full equations of motion (explicit); ``tau``
        ``(dof,)`` generalized actuation, loads as in :meth:`dynamics`."""
        return self._acceleration(q, qd, tau, (tip_force, tip_moment))

    def step(
        self,
        q: FloatArray,
        qd: FloatArray,
        dt: float,
        tau: FloatArray | None = None,
        *,
        theta: float = 0.5,
        tip_force: FloatArray | None = None,
        tip_moment: FloatArray | None = None,
    ) -> tuple[FloatArray, FloatArray]:
        """Advance one step of ``dt`` (s) (:mod:`pccbullet.sim.models.newton_euler.integrators`;
        ``integrators.step(model, ...)`` is this method).

        Args:
            q, qd: state ``(dof,)``. tau: generalized actuation ``(dof,)`` or ``None``.
            theta: implicitness of the elastic/damping terms in [0.5, 1].
            tip_force (N), tip_moment (N m): as in :meth:`dynamics`.

        Returns:
            the new ``(q, qd)``.
        """
        return self._step(q, qd, dt, tau, theta, (tip_force, tip_moment))

    def _dynamics(self, q: Vec, qd: Vec, loads: Loads, with_mass: bool) -> tuple[Any, Vec]:
        raise NotImplementedError

    def _acceleration(self, q: Vec, qd: Vec, tau: Opt, loads: Loads) -> Vec:
        raise NotImplementedError

    def _step(self, q: Vec, qd: Vec, dt: float, tau: Opt, theta: float, loads: Loads) -> Pair:
        raise NotImplementedError


def implicit_rhs(model: StrainModel, Q: Vec, q: Vec, qd: Vec, tau: Opt, c: float) -> Vec:
    """``Q + tau - K (q + c qd) - D qd`` ``(dof,)``, with ``c = theta dt``."""
    rhs = Q - model.K * (q + c * qd) - model.D * qd
    if tau is not None:
        rhs += tau
    return rhs


def theta_update(q: Vec, qd: Vec, a: Vec, dt: float, theta: float) -> Pair:
    """``(q', qd')`` of the step from the accelerations ``a`` ``(dof,)``."""
    qd_new = qd + dt * a
    return q + dt * ((1.0 - theta) * qd + theta * qd_new), qd_new
