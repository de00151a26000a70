"""Compiled (numba) kernels of the Newton–Euler soft-limb model: dynamics and the integrator step.

What is compiled and why. At the sizes of the 1 kHz loop (all four URSULA limbs, 10–40 pieces per limb) the
numpy evaluation of :func:`pccbullet.sim.models.newton_euler.batch_dynamics.ne_dynamics` is bound by the cost
of its ~100 small array operations and by forming and factorizing dense mass matrices, not by arithmetic.
These kernels evaluate the same equations with scalar loops over limbs and pieces in
``@numba.njit(cache=True)`` functions (no ``parallel``: the two cores are shared with PyBullet), one call per
dynamics evaluation or per integrator step:

* :func:`dynamics_kernel`: mass matrices and non-elastic generalized forces ``Q`` of ``L`` limbs
  (:func:`~pccbullet.sim.models.newton_euler.batch_dynamics.ne_dynamics`,
  :meth:`~pccbullet.sim.models.newton_euler.batch.MultiLimbModel.dynamics`);
* :func:`step_kernel`: one step of :func:`pccbullet.sim.models.newton_euler.integrators.step` (midpoint
  dynamics, linearly implicit elastic and damping terms, linear solve, state update); with ``dt = 0`` it
  returns the explicit accelerations of
  :meth:`~pccbullet.sim.models.newton_euler.batch.MultiLimbModel.acceleration`.

Formulation (identical to :func:`pccbullet.sim.models.newton_euler.batch_dynamics.ne_dynamics`, the numpy
reference). Per piece: the local tip rotation ``R`` and the 13 local columns ``[Jp (4) | Jw (4) | d/dt(Jp) v |
d/dt(Jw) v | Jp v | p | Jw v]`` from the bend functions
(:func:`~pccbullet.sim.models.newton_euler.piece_kernels.bend_functions`, Taylor series below
:data:`~pccbullet.sim.models.newton_euler.piece_kernels.SERIES_BELOW`) with the analytic bias terms of
:func:`pccbullet.sim.models.newton_euler.piece_kinematics.piece_kinematics`. Forward (base to tip): world
rotations by successive products, node positions ``o``, angular velocities ``w``, angular and linear
accelerations at zero strain acceleration; node wrenches (net gravity, inertia, Morison drag on the normal
velocity, tip loads) as (moment about the base origin; force). Backward (tip to base): summed wrenches
projected on each piece's motion subspace ``S = [Ww; Wp + o x Ww]`` give ``Q``. With node spatial inertias
about the base origin (second moment ``Iw + m (|o|^2 I - o o^T)``, first moment ``m o``, mass ``m``),
:func:`dynamics_kernel` forms ``M[I, J] = S_I^T Ic_J S_J`` from the composite inertias ``Ic_J``
(composite-rigid-body algorithm), while :func:`step_kernel` never forms ``M``: it solves
``(M + c1 D + c2 K) a = rhs`` by the articulated-body recursion (:func:`_articulated_solve`), ``O(n)`` per
limb instead of the ``O(n^3)`` Cholesky factorization, with the same solution up to rounding.

Data layout shared by the kernels: the pieces of all limbs are rows of ``pieces`` ``(P, 7)``
``[l0, net mass (mass - rho V), inertial mass (incl. added mass), Ix, Iy, Iz, drag factor
1/2 rho C_d A]``; limb ``l`` is the pieces ``start .. start + count - 1`` with
``limbs[l] = (start, count)``; per-dof vectors (``q, qd, tau, K, D, Q``) are flat ``(4 P,)`` with piece
``k``'s strains at ``4 k .. 4 k + 3``; mass matrices live in ``(L, 4 Nmax, 4 Nmax)`` buffers, limb ``l``
in the top-left ``4 count`` block of ``M[l]``. ``loads`` ``(L, 3, 3)``: per limb the gravity (m/s^2), tip
force (N) and tip moment (N m) in its base frame
(:func:`pccbullet.sim.models.newton_euler.params.kernel_loads`); a limb's drag terms are evaluated where one
of its pieces has a drag factor.

Compilation: callers pass float64 C-contiguous arrays and int64 ``limbs`` only, so each kernel compiles
once, on its first call (~12 s for both kernels on the 2-core reference machine), and is then loaded
from numba's on-disk cache (``__pycache__``, ~0.3 s per process); the cross product is compiled in from
:mod:`pccbullet.sim.limb.chain.rotation`, so this module's entries are dropped when the chain package's
sources change (:func:`pccbullet.sim.limb.chain.drop_stale_cache`). Arithmetic is strict IEEE (no
``fastmath``); the inner sums are written with independent accumulators instead.
"""

from __future__ import annotations

import math
from pathlib import Path

import numba
import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain import drop_stale_cache
from pccbullet.sim.limb.chain.rotation import cross
from pccbullet.sim.models.newton_euler.articulated import _articulated_solve
from pccbullet.sim.models.newton_euler.piece_kernels import piece_local

__all__ = [
    "PIECE_COLUMNS",
    "dynamics_kernel",
    "step_kernel",
]

PIECE_COLUMNS = 7  # columns of the ``pieces`` array

drop_stale_cache(__file__, (Path(__file__).stem,))


@numba.njit(cache=True)
def _forward(
    start: int,
    n: int,
    pieces: FloatArray,
    use_drag: bool,
    g: FloatArray,
    tf: FloatArray,
    tm: FloatArray,
    q: FloatArray,
    qd: FloatArray,
    S: FloatArray,
    U: FloatArray,
    Jn: FloatArray,
) -> None:
    """Forward pass over one limb's pieces ``start .. start + n - 1``: per node ``i``, the motion subspace
    ``S[i]`` ``(6, 4)`` (angular; linear about the base origin), the node wrench ``U[i]`` (moment about the
    base origin; force) and the node inertia about the base origin ``Jn[i]`` = (second moment ``(3, 3)``
    row-major, first moment ``m o``, mass ``m``)."""
    R = np.empty((3, 3))
    X = np.empty((13, 3))
    Xw = np.empty((13, 3))
    G = np.eye(3)
    Gn = np.empty((3, 3))
    Iw = np.empty((3, 3))
    o0 = o1 = o2 = 0.0
    w0 = w1 = w2 = 0.0
    al0 = al1 = al2 = 0.0
    ac0 = ac1 = ac2 = 0.0
    ve0 = ve1 = ve2 = 0.0
    g0, g1, g2 = g[0], g[1], g[2]
    for i in range(n):
        k = start + i
        l0, mnet, mi = pieces[k, 0], pieces[k, 1], pieces[k, 2]
        piece_local(l0, q, qd, 4 * k, R, X)
        for c in range(13):
            x0, x1, x2 = X[c, 0], X[c, 1], X[c, 2]
            for a in range(3):
                Xw[c, a] = G[a, 0] * x0 + G[a, 1] * x1 + G[a, 2] * x2
        for a in range(3):
            for b in range(3):
                Gn[a, b] = G[a, 0] * R[0, b] + G[a, 1] * R[1, b] + G[a, 2] * R[2, b]
        P0, P1, P2 = Xw[11, 0], Xw[11, 1], Xw[11, 2]
        v0, v1, v2 = Xw[10, 0], Xw[10, 1], Xw[10, 2]  # Jp v
        o0, o1, o2 = o0 + P0, o1 + P1, o2 + P2
        p0, p1, p2 = w0, w1, w2  # previous node's angular velocity
        w0, w1, w2 = w0 + Xw[12, 0], w1 + Xw[12, 1], w2 + Xw[12, 2]
        x0, x1, x2 = cross(p0, p1, p2, P0, P1, P2)  # w_prev x P
        y0, y1, y2 = cross(p0, p1, p2, Xw[12, 0], Xw[12, 1], Xw[12, 2])
        pa0, pa1, pa2 = al0, al1, al2
        al0, al1, al2 = al0 + (y0 + Xw[9, 0]), al1 + (y1 + Xw[9, 1]), al2 + (y2 + Xw[9, 2])
        c0, c1, c2 = cross(p0, p1, p2, v0, v1, v2)
        d0, d1, d2 = cross(p0, p1, p2, x0, x1, x2)
        e0, e1, e2 = cross(pa0, pa1, pa2, P0, P1, P2)
        ac0 += 2.0 * c0 + Xw[8, 0] + d0 + e0
        ac1 += 2.0 * c1 + Xw[8, 1] + d1 + e1
        ac2 += 2.0 * c2 + Xw[8, 2] + d2 + e2
        F0, F1, F2 = mnet * g0 - mi * ac0, mnet * g1 - mi * ac1, mnet * g2 - mi * ac2
        t0, t1, t2 = Gn[0, 2], Gn[1, 2], Gn[2, 2]
        if use_drag:
            ve0, ve1, ve2 = ve0 + (v0 + x0), ve1 + (v1 + x1), ve2 + (v2 + x2)
            vt = ve0 * t0 + ve1 * t1 + ve2 * t2
            n0, n1, n2 = ve0 - vt * t0, ve1 - vt * t1, ve2 - vt * t2
            f = pieces[k, 6] * math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
            F0, F1, F2 = F0 - f * n0, F1 - f * n1, F2 - f * n2
        if i == n - 1:
            F0, F1, F2 = F0 + tf[0], F1 + tf[1], F2 + tf[2]
        I0, I1, I2 = pieces[k, 3], pieces[k, 4], pieces[k, 5]
        for a in range(3):
            for b in range(a, 3):
                Iw[a, b] = Gn[a, 0] * I0 * Gn[b, 0] + Gn[a, 1] * I1 * Gn[b, 1] + Gn[a, 2] * I2 * Gn[b, 2]
                Iw[b, a] = Iw[a, b]
        h0 = Iw[0, 0] * w0 + Iw[0, 1] * w1 + Iw[0, 2] * w2
        h1 = Iw[1, 0] * w0 + Iw[1, 1] * w1 + Iw[1, 2] * w2
        h2 = Iw[2, 0] * w0 + Iw[2, 1] * w1 + Iw[2, 2] * w2
        m0, m1, m2 = cross(w0, w1, w2, h0, h1, h2)
        m0 += Iw[0, 0] * al0 + Iw[0, 1] * al1 + Iw[0, 2] * al2
        m1 += Iw[1, 0] * al0 + Iw[1, 1] * al1 + Iw[1, 2] * al2
        m2 += Iw[2, 0] * al0 + Iw[2, 1] * al1 + Iw[2, 2] * al2
        u0, u1, u2 = cross(o0, o1, o2, F0, F1, F2)
        U[i, 0], U[i, 1], U[i, 2] = u0 - m0, u1 - m1, u2 - m2
        if i == n - 1:
            U[i, 0] += tm[0]
            U[i, 1] += tm[1]
            U[i, 2] += tm[2]
        U[i, 3], U[i, 4], U[i, 5] = F0, F1, F2
        for j in range(4):
            a0, a1, a2 = Xw[4 + j, 0], Xw[4 + j, 1], Xw[4 + j, 2]
            z0, z1, z2 = cross(o0, o1, o2, a0, a1, a2)
            S[i, 0, j], S[i, 1, j], S[i, 2, j] = a0, a1, a2
            S[i, 3, j], S[i, 4, j], S[i, 5, j] = Xw[j, 0] + z0, Xw[j, 1] + z1, Xw[j, 2] + z2
        # node second moment about the base origin, first moment, mass
        mo0, mo1, mo2 = mi * o0, mi * o1, mi * o2
        dg = mo0 * o0 + mo1 * o1 + mo2 * o2
        Jn[i, 0] = Iw[0, 0] - mo0 * o0 + dg
        Jn[i, 1] = Iw[0, 1] - mo0 * o1
        Jn[i, 2] = Iw[0, 2] - mo0 * o2
        Jn[i, 3] = Iw[1, 0] - mo1 * o0
        Jn[i, 4] = Iw[1, 1] - mo1 * o1 + dg
        Jn[i, 5] = Iw[1, 2] - mo1 * o2
        Jn[i, 6] = Iw[2, 0] - mo2 * o0
        Jn[i, 7] = Iw[2, 1] - mo2 * o1
        Jn[i, 8] = Iw[2, 2] - mo2 * o2 + dg
        Jn[i, 9], Jn[i, 10], Jn[i, 11], Jn[i, 12] = mo0, mo1, mo2, mi
        G, Gn = Gn, G


@numba.njit(cache=True)
def _generalized_forces(start: int, n: int, S: FloatArray, U: FloatArray, Q: FloatArray) -> None:
    """Backward pass: ``Q_i = S_i^T sum_{k >= i} U_k`` into ``Q[4 start:4 (start + n)]``."""
    ub = np.zeros(6)
    for i in range(n - 1, -1, -1):
        for r in range(6):
            ub[r] += U[i, r]
        o = 4 * (start + i)
        for j in range(4):
            s = 0.0
            for r in range(6):
                s += S[i, r, j] * ub[r]
            Q[o + j] = s


@numba.njit(cache=True)
def _mass_matrix(n: int, S: FloatArray, Jn: FloatArray, FT: FloatArray, M: FloatArray) -> None:
    """Composite rigid-body algorithm: ``M[I, J] = S_I^T Ic_J S_J`` (``I <= J``) into ``M[:4n, :4n]``,
    mirrored to the lower triangle. ``FT`` ``(6, 4N)``: work (columns ``Ic_J S_J``)."""
    Jc = np.zeros(13)
    for i in range(n - 1, -1, -1):
        for r in range(13):
            Jc[r] += Jn[i, r]
        hc0, hc1, hc2, mc = Jc[9], Jc[10], Jc[11], Jc[12]
        for j in range(4):
            a0, a1, a2 = S[i, 0, j], S[i, 1, j], S[i, 2, j]
            b0, b1, b2 = S[i, 3, j], S[i, 4, j], S[i, 5, j]
            x0, x1, x2 = cross(hc0, hc1, hc2, b0, b1, b2)
            y0, y1, y2 = cross(hc0, hc1, hc2, a0, a1, a2)
            c = 4 * i + j
            FT[0, c] = Jc[0] * a0 + Jc[1] * a1 + Jc[2] * a2 + x0
            FT[1, c] = Jc[3] * a0 + Jc[4] * a1 + Jc[5] * a2 + x1
            FT[2, c] = Jc[6] * a0 + Jc[7] * a1 + Jc[8] * a2 + x2
            FT[3, c] = mc * b0 - y0
            FT[4, c] = mc * b1 - y1
            FT[5, c] = mc * b2 - y2
    for bi in range(n):  # 4 x 4 blocks, 16 independent sums
        r = 4 * bi
        for bj in range(bi, n):
            c0 = 4 * bj
            m00 = m01 = m02 = m03 = m10 = m11 = m12 = m13 = 0.0
            m20 = m21 = m22 = m23 = m30 = m31 = m32 = m33 = 0.0
            for k in range(6):
                a0, a1, a2, a3 = S[bi, k, 0], S[bi, k, 1], S[bi, k, 2], S[bi, k, 3]
                f0, f1, f2, f3 = FT[k, c0], FT[k, c0 + 1], FT[k, c0 + 2], FT[k, c0 + 3]
                m00 += a0 * f0
                m01 += a0 * f1
                m02 += a0 * f2
                m03 += a0 * f3
                m10 += a1 * f0
                m11 += a1 * f1
                m12 += a1 * f2
                m13 += a1 * f3
                m20 += a2 * f0
                m21 += a2 * f1
                m22 += a2 * f2
                m23 += a2 * f3
                m30 += a3 * f0
                m31 += a3 * f1
                m32 += a3 * f2
                m33 += a3 * f3
            M[r, c0], M[r, c0 + 1], M[r, c0 + 2], M[r, c0 + 3] = m00, m01, m02, m03
            M[r + 1, c0], M[r + 1, c0 + 1], M[r + 1, c0 + 2], M[r + 1, c0 + 3] = m10, m11, m12, m13
            M[r + 2, c0], M[r + 2, c0 + 1], M[r + 2, c0 + 2], M[r + 2, c0 + 3] = m20, m21, m22, m23
            M[r + 3, c0], M[r + 3, c0 + 1], M[r + 3, c0 + 2], M[r + 3, c0 + 3] = m30, m31, m32, m33
    d = 4 * n
    for r in range(d):
        for c in range(r + 1, d):
            M[c, r] = M[r, c]


@numba.njit(cache=True)
def _max_pieces(limbs: np.ndarray) -> int:
    nmax = 1
    for li in range(limbs.shape[0]):
        nmax = max(nmax, limbs[li, 1])
    return nmax


@numba.njit(cache=True)
def _has_drag(pieces: FloatArray, start: int, n: int) -> bool:
    """Whether a piece of the limb has a drag factor (else the drag terms are skipped)."""
    for k in range(start, start + n):
        if pieces[k, 6] != 0.0:
            return True
    return False


@numba.njit(cache=True)
def dynamics_kernel(
    limbs: np.ndarray,
    pieces: FloatArray,
    loads: FloatArray,
    q: FloatArray,
    qd: FloatArray,
    with_mass: bool,
    Q: FloatArray,
    M: FloatArray,
) -> None:
    """Write ``Q`` ``(4 P,)`` and (``with_mass``) the symmetric mass matrices into ``M``
    ``(L, 4 Nmax, 4 Nmax)``; entries outside the limbs' pieces / blocks are left untouched."""
    nmax = _max_pieces(limbs)
    S = np.empty((nmax, 6, 4))
    U = np.empty((nmax, 6))
    Jn = np.empty((nmax, 13))
    FT = np.empty((6, 4 * nmax))
    for li in range(limbs.shape[0]):
        start, n = limbs[li, 0], limbs[li, 1]
        g, tf, tm = loads[li, 0], loads[li, 1], loads[li, 2]
        _forward(start, n, pieces, _has_drag(pieces, start, n), g, tf, tm, q, qd, S, U, Jn)
        _generalized_forces(start, n, S, U, Q)
        if with_mass:
            _mass_matrix(n, S, Jn, FT, M[li])


@numba.njit(cache=True)
def step_kernel(
    limbs: np.ndarray,
    pieces: FloatArray,
    loads: FloatArray,
    q: FloatArray,
    qd: FloatArray,
    tau: FloatArray,
    K: FloatArray,
    D: FloatArray,
    dt: float,
    theta: float,
) -> tuple[FloatArray, FloatArray, FloatArray, bool]:
    """One linearly implicit theta-method step (:mod:`pccbullet.sim.models.newton_euler.integrators`) of all
    limbs::

        (M(q_m) + theta dt D + theta^2 dt^2 K) a = Q(q_m, qd) + tau - K (q + theta dt qd) - D qd
        qd' = qd + dt a,    q' = q + dt ((1 - theta) qd + theta qd'),    q_m = q + dt qd / 2

    With ``dt = 0``, ``a`` is the explicit acceleration ``M(q)^-1 (Q(q, qd) + tau - K q - D qd)``.
    Every piece must belong to a limb. Returns the new ``q``, ``qd``, the acceleration ``a`` (flat
    ``(4 P,)``) and False if a limb's matrix was not numerically positive definite (then all three are
    invalid).
    """
    nd = q.shape[0]
    q_m = np.empty(nd)
    q_k = np.empty(nd)
    for j in range(nd):
        q_m[j] = q[j] + 0.5 * dt * qd[j]
        q_k[j] = q[j] + theta * dt * qd[j]
    c1 = theta * dt
    c2 = c1 * c1
    nmax = _max_pieces(limbs)
    S = np.empty((nmax, 6, 4))
    U = np.empty((nmax, 6))
    Jn = np.empty((nmax, 13))
    W = np.empty((nmax, 6, 4))
    Z = np.empty((nmax, 4))
    Lf = np.empty((nmax, 10))
    a = np.zeros(nd)
    ok = True
    for li in range(limbs.shape[0]):
        start, n = limbs[li, 0], limbs[li, 1]
        g, tf, tm = loads[li, 0], loads[li, 1], loads[li, 2]
        _forward(start, n, pieces, _has_drag(pieces, start, n), g, tf, tm, q_m, qd, S, U, Jn)
        _generalized_forces(start, n, S, U, a)
        for j in range(4 * start, 4 * (start + n)):
            a[j] = a[j] - K[j] * q_k[j] - D[j] * qd[j] + tau[j]
        ok = _articulated_solve(start, n, S, Jn, K, D, c1, c2, a, W, Z, Lf) and ok
    q_new = np.empty(nd)
    qd_new = np.empty(nd)
    for j in range(nd):
        qd_new[j] = qd[j] + dt * a[j]
        q_new[j] = q[j] + dt * ((1.0 - theta) * qd[j] + theta * qd_new[j])
    return q_new, qd_new, a, ok
