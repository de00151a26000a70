"""Static equilibrium of a :class:`~pccbullet.sim.models.newton_euler.model.LimbModel` (or a subclass).

Solves ``Q(q, 0) + tau - K q = 0`` (gravity, buoyancy and tip loads in ``Q``; see
:meth:`LimbModel.dynamics`) with :func:`scipy.optimize.root` (Powell's hybrid method), stepping the
gravity, the actuation and the tip load up together from zero in ``load_steps`` equal increments so that
large deflections (a soft tentacle hanging under its own weight) are followed continuously.

Opt-in transverse shear for statics (:class:`TimoshenkoShear`, ``shear=True``). The model's strain state
has no shear; a thick, soft limb hanging under its weight shears by millimetres. Under dead loads
(gravity, buoyancy, a fixed tip force) the force carried by piece j is the known sum ``F_j`` of the loads
beyond it, and piece j shears by ``gamma_j = F_perp,j / (kappa G A_j)`` across its tangent ``t_j``
(Timoshenko; ``kappa = 6 (1 + nu) / (7 + 6 nu)``, Cowper's value for a solid circle, ``A_j`` at the piece's
mid radius), displacing everything beyond it by ``delta_j = c_j F_perp,j`` with ``c_j = l0_j / (kappa G
A_j)``. Minimizing the potential over the shear strains leaves the complementary term
``-Phi(q) = -1/2 sum c_j |F_perp,j(q)|^2``, so the strain equilibrium becomes
``Q + tau - K q + dPhi/dq = 0`` and the shape is the model's plus the offsets ``delta_j``
(:meth:`TimoshenkoShear.node_positions`). Default off: ``static_equilibrium`` is then unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import root

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler.kinematics import chain_rotations, piece_jacobians
from pccbullet.sim.models.newton_euler.model import LimbModel


def shear_coefficient(poisson_ratio: float, coefficient: float | None = None) -> float:
    """Timoshenko shear coefficient kappa (-): ``coefficient`` if given, else Cowper's value for a solid
    circle, ``6 (1 + nu) / (7 + 6 nu)``.

    Raises:
        ConfigurationError: kappa is not > 0.
    """
    nu = poisson_ratio
    kappa = 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu) if coefficient is None else float(coefficient)
    if not kappa > 0.0:
        raise ConfigurationError(f"coefficient = {coefficient!r} is invalid; allowed: a number > 0")
    return kappa


class TimoshenkoShear:
    """Transverse shear compliance of a :class:`LimbModel` under dead loads (statics only).

    Args:
        model: the limb model (its current ``gravity`` and medium give the loads).
        tip_force: dead tip force ``(3,)`` (N) in the limb base frame, default none.
        coefficient: shear coefficient kappa (-); default Cowper's ``6 (1 + nu) / (7 + 6 nu)``.
    """

    def __init__(
        self, model: LimbModel, tip_force: FloatArray | None = None, coefficient: float | None = None
    ) -> None:
        mat = model.limb.material
        kappa = shear_coefficient(mat.poisson_ratio, coefficient)
        self.model = model
        self.kappa = kappa
        # mid radius of every piece from the node radii (node i = tip of piece i), base radius of piece 0
        r_tip = model.node_radius
        r_base = np.empty_like(r_tip)
        r_base[1:] = r_tip[:-1]
        for s, seg in enumerate(model.limb.segments):
            first = int(np.flatnonzero(model.segment == s)[0])
            r_base[first] = seg.radius_base
        area = np.pi * (0.5 * (r_base + r_tip)) ** 2
        self.c = model.l0 / (kappa * mat.shear_modulus * area)  # m/N
        self.tip_force = np.zeros(3) if tip_force is None else np.asarray(tip_force, dtype=float)

    def loads(self) -> FloatArray:
        """``F_j``: the dead load carried by each piece, ``(n, 3)`` (N), limb base frame."""
        m = self.model
        weight = (m.mass - m.medium.density * m.volume)[:, None] * m.gravity[None, :]
        return np.cumsum(weight[::-1], axis=0)[::-1] + self.tip_force

    def _perp(self, q: FloatArray) -> FloatArray:
        _, R = self.model.forward_kinematics(q)
        t = R[:-1, :, 2] + R[1:, :, 2]
        t /= np.linalg.norm(t, axis=1, keepdims=True)
        F = self.loads()
        return F - np.sum(F * t, axis=1, keepdims=True) * t

    def phi(self, q: FloatArray) -> float:
        """``Phi(q) = 1/2 sum c_j |F_perp,j|^2`` (J)."""
        return 0.5 * float(np.sum(self.c * np.sum(self._perp(q) ** 2, axis=1)))

    def force(self, q: FloatArray) -> FloatArray:
        """``dPhi/dq`` ``(4n,)`` (N or N m per unit strain), analytic.

        With ``u_j = z_j + z_(j+1)`` (the piece's end tangents), ``t_j = u_j / |u_j|``, ``a_j = (I - t_j
        t_j^T) F_j / |u_j|`` and ``b_j = c_j (t_j . F_j) a_j``: a strain change of piece i turns every
        tangent beyond it by ``W_i dq_i`` (``W_i`` its world angular Jacobian), so ``dPhi/dq_i =
        -W_i^T sum_(k > i) z_k x (b_k + b_(k-1))``.
        """
        m = self.model
        q = np.asarray(q, dtype=float)
        R_local, _, _, Jw = piece_jacobians(q.reshape(m.n, 4), m.l0)
        Rw = chain_rotations(R_local)
        z = Rw[:, :, 2]  # (n + 1, 3) tangents at the nodes
        u = z[:-1] + z[1:]
        norm = np.linalg.norm(u, axis=1, keepdims=True)
        t = u / norm
        F = self.loads()
        tf = np.sum(t * F, axis=1, keepdims=True)
        a = (F - tf * t) / norm
        b = self.c[:, None] * tf * a  # (n, 3)
        bb = np.zeros((m.n + 1, 3))
        bb[:-1] += b
        bb[1:] += b
        v = np.cross(z, bb)  # (n + 1, 3)
        S = np.cumsum(v[::-1], axis=0)[::-1]  # S[k] = sum over nodes >= k
        W = np.einsum("nij,njk->nik", Rw[:-1], Jw)  # (n, 3, 4) world angular Jacobians
        return -np.einsum("nik,ni->nk", W, S[1:]).ravel()

    def node_positions(self, q: FloatArray) -> FloatArray:
        """Node positions with the shear offsets, ``(n + 1, 3)`` (m), row 0 the base."""
        pos, _ = self.model.forward_kinematics(q)
        delta = self.c[:, None] * self._perp(q)
        pos = pos.copy()
        pos[1:] += np.cumsum(delta, axis=0)
        return pos

    def tip_position(self, q: FloatArray) -> FloatArray:
        """Tip position with the shear offsets ``(3,)`` (m), limb base frame."""
        return self.node_positions(q)[-1]


def static_equilibrium(
    model: LimbModel,
    tau: FloatArray | None = None,
    *,
    tip_force: FloatArray | None = None,
    tip_moment: FloatArray | None = None,
    load_steps: int = 10,
    tol: float = 1e-12,
    shear: bool = False,
    q0: FloatArray | None = None,
    normalized: bool = False,
) -> FloatArray:
    """Strain state ``q`` ``(4n,)`` where the limb is at rest under gravity, ``tau`` and a tip load.

    Args:
        model: the limb model (its ``gravity`` is scaled during the load steps and restored).
        tau: generalized actuation ``(4n,)`` (e.g. ``ChamberActuation.tau(P)``), default none.
        tip_force (N), tip_moment (N m): ``(3,)`` in the limb base frame.
        load_steps: number of load increments (>= 1).
        tol: tolerance of the root finder on ``q``; the residual must end below ``1e-9`` of the
            largest elastic force.
        shear: add the transverse shear compliance of :class:`TimoshenkoShear` (opt-in); the returned
            ``q`` is then the strain state of the sheared equilibrium, and its positions are
            ``TimoshenkoShear(model, tip_force).node_positions(q)``.
        q0: starting state ``(4n,)`` of the first increment (default: straight).
        normalized: give the root finder the residual divided by the stiffness ``K`` (strain units); the
            acceptance test is the same.

    Raises:
        ConfigurationError: ``load_steps < 1`` or the root finder fails at some increment.
    """
    if not (isinstance(load_steps, int) and load_steps >= 1):
        raise ConfigurationError(f"load_steps = {load_steps!r} is invalid; allowed: an integer >= 1")
    gravity = model.gravity
    q = model.rest_state() if q0 is None else np.array(q0, dtype=float)
    zero = np.zeros(model.dof)
    unit = model.K if normalized else 1.0
    try:
        for s in np.arange(1, load_steps + 1) / load_steps:
            model.gravity = gravity * s
            t = zero if tau is None else s * np.asarray(tau, dtype=float)
            f = None if tip_force is None else s * np.asarray(tip_force, dtype=float)
            m = None if tip_moment is None else s * np.asarray(tip_moment, dtype=float)

            sh = TimoshenkoShear(model, f) if shear else None

            def residual(x: FloatArray, t: FloatArray = t, f=f, m=m, sh=sh) -> FloatArray:
                _, Q = model.dynamics(x, zero, f, m, with_mass=False)
                r = Q + t - model.K * x
                r = r if sh is None else r + sh.force(x)
                return r / model.K if normalized else r

            sol = root(residual, q, method="hybr", tol=tol)
            scale = 1.0 + float(np.max(np.abs(model.K * sol.x)))
            if (
                not np.all(np.isfinite(sol.x))
                or np.max(np.abs(unit * residual(sol.x))) > (1e-7 if shear else 1e-9) * scale
            ):
                raise ConfigurationError(f"static equilibrium not found at load {s:.2f}: {sol.message}")
            q = sol.x
    finally:
        model.gravity = gravity
    return q
