"""Compiled (numba) articulated-body solve of a limb's linearly implicit step
(:mod:`pccbullet.sim.models.newton_euler.kernels`).

:func:`_articulated_solve` solves ``(M + c1 D + c2 K) a = rhs`` for one limb by the articulated-body
recursion over its pieces (``O(n)``, without forming ``M``), from the motion subspaces ``S`` and node
inertias ``Jn`` left by the forward pass of :func:`pccbullet.sim.models.newton_euler.kernels._forward`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pccbullet.core.types import FloatArray


@numba.njit(cache=True)
def _spatial_inertia_add(Jn: FloatArray, i: int, IA: FloatArray) -> None:
    """``IA += [[J, h^], [-h^, m I]]`` for node ``i`` (``Jn[i]`` = J row-major, h = m o, m)."""
    for r in range(3):
        for c in range(3):
            IA[r, c] += Jn[i, 3 * r + c]
    m = Jn[i, 12]
    for r in range(3):  # h^ above the diagonal, -h^ below it: h^[r, b] = -h_c, h^[r, c] = h_b
        b, c = (r + 1) % 3, (r + 2) % 3
        IA[r, 3 + b] -= Jn[i, 9 + c]
        IA[r, 3 + c] += Jn[i, 9 + b]
        IA[3 + b, r] -= Jn[i, 9 + c]
        IA[3 + c, r] += Jn[i, 9 + b]
        IA[3 + r, 3 + r] += m


@numba.njit(cache=True)
def _articulated_solve(
    start: int,
    n: int,
    S: FloatArray,
    Jn: FloatArray,
    K: FloatArray,
    D: FloatArray,
    c1: float,
    c2: float,
    x: FloatArray,
    W: FloatArray,
    Z: FloatArray,
    Lf: FloatArray,
) -> bool:
    """Solve ``(M + c1 D + c2 K) y = x`` in place on the limb's dofs ``x[4 start:4 (start + n)]``.

    ``M = S^T Ic S`` is the mass matrix of :func:`_mass_matrix`; the system is solved without forming it,
    by the articulated-body recursion (Featherstone's ABA at zero velocity, the diagonal ``c1 D + c2 K``
    acting as joint armature): tip to base, the articulated inertia ``IA_i`` and bias force ``pA_i``
    with ``D_i = S_i^T IA_i S_i + diag_i = L_i L_i^T``, ``W_i = IA_i S_i L_i^-T``,
    ``z_i = L_i^-1 (x_i - S_i^T pA_i)``, ``IA_{i-1} = I_{i-1} + IA_i - W_i W_i^T``,
    ``pA_{i-1} = pA_i + W_i z_i``; then base to tip ``y_i = L_i^-T (z_i - W_i^T a_{i-1})``,
    ``a_i = a_{i-1} + S_i y_i``. Exact (same solution as a Cholesky solve of the assembled matrix) in
    ``O(n)``. Returns False if a pivot block is not numerically positive definite.
    ``W (N, 6, 4)``, ``Z (N, 4)``, ``Lf (N, 10)``: work.
    """
    IA = np.zeros((6, 6))
    pA = np.zeros(6)
    _spatial_inertia_add(Jn, n - 1, IA)
    for i in range(n - 1, -1, -1):
        o = 4 * (start + i)
        Si = S[i]
        Wi = W[i]  # holds U_i = IA_i S_i first
        for r in range(6):  # (independent sums in the inner statements: no latency-bound chains)
            u0 = u1 = u2 = u3 = 0.0
            for k in range(6):
                ia = IA[r, k]
                u0 += ia * Si[k, 0]
                u1 += ia * Si[k, 1]
                u2 += ia * Si[k, 2]
                u3 += ia * Si[k, 3]
            Wi[r, 0], Wi[r, 1], Wi[r, 2], Wi[r, 3] = u0, u1, u2, u3
        d00 = d10 = d11 = d20 = d21 = d22 = d30 = d31 = d32 = d33 = 0.0  # S^T U (lower triangle)
        x0, x1, x2, x3 = x[o], x[o + 1], x[o + 2], x[o + 3]
        for k in range(6):
            s0, s1, s2, s3 = Si[k, 0], Si[k, 1], Si[k, 2], Si[k, 3]
            u0, u1, u2 = Wi[k, 0], Wi[k, 1], Wi[k, 2]
            d00 += s0 * u0
            d10 += s1 * u0
            d11 += s1 * u1
            d20 += s2 * u0
            d21 += s2 * u1
            d22 += s2 * u2
            d30 += s3 * u0
            d31 += s3 * u1
            d32 += s3 * u2
            d33 += s3 * Wi[k, 3]
            p = pA[k]
            x0 -= s0 * p
            x1 -= s1 * p
            x2 -= s2 * p
            x3 -= s3 * p
        d00 += c1 * D[o] + c2 * K[o]
        d11 += c1 * D[o + 1] + c2 * K[o + 1]
        d22 += c1 * D[o + 2] + c2 * K[o + 2]
        d33 += c1 * D[o + 3] + c2 * K[o + 3]
        # Cholesky of the 4 x 4 pivot block D_i = L L^T; Lf[i] = (L10, L20, L21, L30, L31, L32, 1/diag)
        if not d00 > 0.0:
            return False
        l00 = math.sqrt(d00)
        i0 = 1.0 / l00
        l10, l20, l30 = d10 * i0, d20 * i0, d30 * i0
        e = d11 - l10 * l10
        if not e > 0.0:
            return False
        l11 = math.sqrt(e)
        i1 = 1.0 / l11
        l21 = (d21 - l20 * l10) * i1
        l31 = (d31 - l30 * l10) * i1
        e = d22 - l20 * l20 - l21 * l21
        if not e > 0.0:
            return False
        l22 = math.sqrt(e)
        i2 = 1.0 / l22
        l32 = (d32 - l30 * l20 - l31 * l21) * i2
        e = d33 - l30 * l30 - l31 * l31 - l32 * l32
        if not e > 0.0:
            return False
        i3 = 1.0 / math.sqrt(e)
        Lf[i, 0], Lf[i, 1], Lf[i, 2], Lf[i, 3], Lf[i, 4], Lf[i, 5] = l10, l20, l21, l30, l31, l32
        Lf[i, 6], Lf[i, 7], Lf[i, 8], Lf[i, 9] = i0, i1, i2, i3
        z0 = x0 * i0  # z = L^-1 (x_i - S^T pA)
        z1 = (x1 - l10 * z0) * i1
        z2 = (x2 - l20 * z0 - l21 * z1) * i2
        z3 = (x3 - l30 * z0 - l31 * z1 - l32 * z2) * i3
        Z[i, 0], Z[i, 1], Z[i, 2], Z[i, 3] = z0, z1, z2, z3
        for r in range(6):  # W = U L^-T, row by row
            w0 = Wi[r, 0] * i0
            w1 = (Wi[r, 1] - l10 * w0) * i1
            w2 = (Wi[r, 2] - l20 * w0 - l21 * w1) * i2
            w3 = (Wi[r, 3] - l30 * w0 - l31 * w1 - l32 * w2) * i3
            Wi[r, 0], Wi[r, 1], Wi[r, 2], Wi[r, 3] = w0, w1, w2, w3
        if i == 0:
            break
        for r in range(6):  # pA += W z, IA -= W W^T, then IA += I_{i-1}
            w0, w1, w2, w3 = Wi[r, 0], Wi[r, 1], Wi[r, 2], Wi[r, 3]
            pA[r] += w0 * z0 + w1 * z1 + w2 * z2 + w3 * z3
            for c in range(r + 1):
                v = IA[r, c] - (w0 * Wi[c, 0] + w1 * Wi[c, 1] + w2 * Wi[c, 2] + w3 * Wi[c, 3])
                IA[r, c] = v
                IA[c, r] = v
        _spatial_inertia_add(Jn, i - 1, IA)
    acc = np.zeros(6)
    for i in range(n):
        o = 4 * (start + i)
        Si = S[i]
        Wi = W[i]
        y0, y1, y2, y3 = Z[i, 0], Z[i, 1], Z[i, 2], Z[i, 3]  # z - W^T a_{i-1}
        for r in range(6):
            ar = acc[r]
            y0 -= Wi[r, 0] * ar
            y1 -= Wi[r, 1] * ar
            y2 -= Wi[r, 2] * ar
            y3 -= Wi[r, 3] * ar
        l10, l20, l21, l30, l31, l32 = Lf[i, 0], Lf[i, 1], Lf[i, 2], Lf[i, 3], Lf[i, 4], Lf[i, 5]
        y3 = y3 * Lf[i, 9]  # L^-T
        y2 = (y2 - l32 * y3) * Lf[i, 8]
        y1 = (y1 - l21 * y2 - l31 * y3) * Lf[i, 7]
        y0 = (y0 - l10 * y1 - l20 * y2 - l30 * y3) * Lf[i, 6]
        x[o], x[o + 1], x[o + 2], x[o + 3] = y0, y1, y2, y3
        for r in range(6):
            acc[r] += Si[r, 0] * y0 + Si[r, 1] * y1 + Si[r, 2] * y2 + Si[r, 3] * y3
    return True
