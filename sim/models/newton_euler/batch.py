"""Several limbs of the Newton–Euler soft-limb model of :mod:`pccbullet.sim.models.newton_euler.model` at
once.

One dynamics evaluation or integrator step handles any number of limbs (:class:`MultiLimbModel`). The
equations are exactly those of :meth:`~pccbullet.sim.models.newton_euler.model.LimbModel.dynamics`, with
analytic velocity-product (bias) terms ``d/dt(Jp) v`` and ``d/dt(Jw) v`` (closed-form derivatives of the piece
transform, see :func:`~pccbullet.sim.models.newton_euler.piece_kinematics.piece_kinematics`; no central
differences, so none of their ~1e-8 relative truncation error). Two evaluations of them (``backend``):

``"numba"`` (default): the compiled kernels of :mod:`pccbullet.sim.models.newton_euler.kernels` — scalar loops
over limbs and pieces, one call per dynamics evaluation or integrator step; the step solves each limb's system
by the articulated-body recursion (``O(n)``, exact) instead of assembling and factorizing ``M``.

``"numpy"``: the vectorized evaluation of :mod:`pccbullet.sim.models.newton_euler.batch_dynamics` (padded
``(L, N)`` arrays, polynomial piece kinematics, one batched CRBA product), kept as the reference, and a
Cholesky solve per limb.

Where things live: the limbs' constant arrays in :mod:`pccbullet.sim.models.newton_euler.params`, the numpy
piece kinematics in :mod:`pccbullet.sim.models.newton_euler.piece_kinematics`, one dynamics evaluation
(:func:`~pccbullet.sim.models.newton_euler.batch_dynamics.ne_dynamics`) in
:mod:`pccbullet.sim.models.newton_euler.batch_dynamics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler import kernels as ne_kernels
from pccbullet.sim.models.newton_euler.batch_dynamics import ne_dynamics, solve_spd_lower
from pccbullet.sim.models.newton_euler.params import NEParams, check_backend, kernel_loads
from pccbullet.sim.models.strain_model import Loads, Opt, Pair, StrainModel, Vec, implicit_rhs, theta_update


class MultiLimbModel(StrainModel):
    """Several :class:`~pccbullet.sim.models.newton_euler.model.LimbModel` s evaluated together (one kernel
    call per step).

    The state is the concatenation of the limbs' states (``dof = sum 4 n_l``); :meth:`split` cuts a
    vector into per-limb views. Results equal the limbs' own :meth:`LimbModel.dynamics` to rounding.

    Args:
        models: the limb models (their node arrays are copied; ``gravity`` is kept per limb in
            :attr:`gravity` ``(L, 3)`` and may be changed).
        backend: ``"numba"`` (default): :meth:`dynamics`, :meth:`acceleration` and :meth:`step` are one
            call each of the compiled kernels of :mod:`pccbullet.sim.models.newton_euler.kernels` on the
            concatenated state (the solves by the articulated-body recursion, without forming ``M``);
            ``"numpy"``: the padded numpy evaluation of :func:`ne_dynamics` and a Cholesky solve (LAPACK) per
            limb, the reference. Both evaluate the same equations; results agree to rounding.

    Attributes:
        models: the limb models.
        L: number of limbs.
        N: most pieces of any limb.
        dof: total degrees of freedom.
        offsets: ``(L + 1,)`` state offsets.
        K: ``(dof,)`` stiffness.
        D: ``(dof,)`` damping.
        backend: ``"numba"`` or ``"numpy"``.
    """

    def __init__(self, models: Sequence, *, backend: str = "numba") -> None:
        self.models = list(models)
        if not self.models:
            raise ValueError("MultiLimbModel needs at least one limb model")
        self.backend = check_backend(backend)
        self.prm = NEParams.from_models(self.models)
        self.L, self.N = self.prm.L, self.prm.N
        dofs = [m.dof for m in self.models]
        self.offsets = np.concatenate([[0], np.cumsum(dofs)])
        self.dof = int(self.offsets[-1])
        self.K = np.concatenate([m.K for m in self.models])
        self.D = np.concatenate([m.D for m in self.models])
        self.gravity = np.stack([np.asarray(m.gravity, dtype=float) for m in self.models])
        # flat state index -> padded (L * N * 4) index
        self._index = np.concatenate([i * 4 * self.N + np.arange(d) for i, d in enumerate(dofs)])
        self._dofs = dofs
        self._buf = np.zeros((2, self.L * self.N * 4))  # padded q, qd (the padding stays zero)
        self._diag: dict[tuple[float, float], FloatArray] = {}
        # compiled path: the real pieces only, concatenated like the state (no padding)
        _, padded = self.prm.packed()
        counts = np.array([m.n for m in self.models], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self._limbs = np.ascontiguousarray(np.stack([starts, counts], axis=1))
        self._pieces = np.ascontiguousarray(padded[self._index[::4] // 4])
        self._no_tau = np.zeros(self.dof)  # a read-only input of the kernels

    def rest_state(self) -> FloatArray:
        """Straight, unstrained state ``(dof,)`` zeros."""
        return np.zeros(self.dof)

    def split(self, x: FloatArray) -> list[FloatArray]:
        """Per-limb views of a ``(dof,)`` vector."""
        return [x[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=True)]

    def _pad(self, x: FloatArray) -> FloatArray:
        out = np.zeros(self.L * self.N * 4)
        out[self._index] = x
        return out.reshape(self.L, self.N, 4)

    @staticmethod
    def _loads(x: FloatArray | None) -> FloatArray | None:
        return None if x is None else np.asarray(x, dtype=float).reshape(-1, 3)

    def _kernel_inputs(self, q: Vec, qd: Vec, loads: Loads) -> tuple[Any, ...]:
        """The arguments the two kernels of :mod:`pccbullet.sim.models.newton_euler.kernels` share: ``limbs,
        pieces, loads, q, qd``."""
        q, qd = self._vector(q), self._vector(qd)
        return self._limbs, self._pieces, kernel_loads(self.L, self.gravity, *loads), q, qd

    def _vector(self, x: FloatArray) -> FloatArray:
        """``(dof,)`` float64 C-contiguous (no copy if ``x`` already is one)."""
        x = np.asarray(x, dtype=float)
        if x.shape != (self.dof,):
            x = np.broadcast_to(x, (self.dof,))
        return np.ascontiguousarray(x)

    def _numpy_dynamics(self, qp: Vec, qdp: Vec, loads: Loads, with_mass: bool, symmetric: bool) -> Any:
        """:func:`ne_dynamics` by the numpy backend on padded ``(L, N, 4)`` states: ``M`` ``(L, 4N, 4N)``
        (or ``None``) and ``Q`` ``(dof,)``."""
        M, Q = ne_dynamics(
            self.prm,
            qp,
            qdp,
            self.gravity,
            self._loads(loads[0]),
            self._loads(loads[1]),
            with_mass=with_mass,
            symmetric=symmetric,
            backend="numpy",
        )
        return M, Q.reshape(-1)[self._index]

    def _dynamics(self, q: Vec, qd: Vec, loads: Loads, with_mass: bool) -> tuple[list[Vec] | None, Vec]:
        """Per-limb mass matrices (list of ``(4 n_l, 4 n_l)``) and Q ``(dof,)``; loads ``(L, 3)``."""
        if self.backend == "numba":
            L, N = self.L, self.N
            Qf = np.empty(self.dof)
            Mb = np.zeros((L, 4 * N, 4 * N) if with_mass else (L, 0, 0))
            ne_kernels.dynamics_kernel(*self._kernel_inputs(q, qd, loads), with_mass, Qf, Mb)  # type: ignore[call-arg]  # numba stub
            M: FloatArray | None = Mb if with_mass else None
        else:
            M, Qf = self._numpy_dynamics(self._pad(q), self._pad(qd), loads, with_mass, True)
        if M is None:
            return None, Qf
        return [M[i, :d, :d] for i, d in enumerate(self._dofs)], Qf

    def _acceleration(self, q: Vec, qd: Vec, tau: Opt, loads: Loads) -> Vec:
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        if self.backend == "numba":
            _, _, a, ok = self._step_kernel(q, qd, 0.0, tau, 0.5, loads)
            if ok:
                return a
        M, Q = self._numpy_dynamics(self._pad(q), self._pad(qd), loads, True, False)
        rhs = Q - self.K * q - self.D * qd
        if tau is not None:
            rhs = rhs + tau
        return self._solve_blocks(M, rhs)

    def _solve_blocks(self, M: FloatArray, rhs: FloatArray) -> FloatArray:
        out = np.empty(self.dof)
        for i, d in enumerate(self._dofs):
            a, b = self.offsets[i], self.offsets[i + 1]
            out[a:b] = solve_spd_lower(M[i, :d, :d], rhs[a:b])
        return out

    def _step(self, q: Vec, qd: Vec, dt: float, tau: Opt, theta: float, loads: Loads) -> Pair:
        """With the ``"numba"`` backend the whole step is one call of
        :func:`pccbullet.sim.models.newton_euler.kernels.step_kernel`; if a limb's matrix is not numerically
        positive definite there, the step is redone by the numpy path (whose solve falls back to LU)."""
        if self.backend == "numba":
            qn, qdn, _, ok = self._step_kernel(q, qd, dt, tau, theta, loads)
            if ok:
                return qn, qdn
        return self._step_numpy(q, qd, dt, tau, theta, loads)

    def _step_kernel(self, q: Vec, qd: Vec, dt: float, tau: Opt, theta: float, loads: Loads) -> Any:
        """One call of :func:`pccbullet.sim.models.newton_euler.kernels.step_kernel`: ``(q', qd',
        acceleration, ok)`` (``dt = 0``: the explicit acceleration)."""
        return ne_kernels.step_kernel(  # type: ignore[call-arg]  # numba stub: no *args
            *self._kernel_inputs(q, qd, loads),
            self._no_tau if tau is None else self._vector(tau),
            self._vector(self.K),
            self._vector(self.D),
            float(dt),
            float(theta),
        )

    def _step_numpy(self, q: Vec, qd: Vec, dt: float, tau: Opt, theta: float, loads: Loads) -> Pair:
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        L, N = self.L, self.N
        buf = self._buf
        buf[0, self._index] = q + 0.5 * dt * qd
        buf[1, self._index] = qd
        M, Q = self._numpy_dynamics(buf[0].reshape(L, N, 4), buf[1].reshape(L, N, 4), loads, True, False)
        rhs = implicit_rhs(self, Q, q, qd, tau, theta * dt)
        diag = self._diag.get((dt, theta))
        if diag is None:
            diag = np.zeros(L * N * 4)
            diag[self._index] = theta * dt * self.D + (theta * dt) ** 2 * self.K
            diag = self._diag.setdefault((dt, theta), diag.reshape(L, -1))
        M.reshape(L, -1)[:, :: 4 * N + 1] += diag
        return theta_update(q, qd, self._solve_blocks(M, rhs), dt, theta)
