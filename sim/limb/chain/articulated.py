"""Compiled (numba) articulated-body solve of a URDF chain: ``(M + M_a + A) y = x`` in O(n).

:func:`_articulated_solve` builds the articulated inertias and solves for one right-hand side, leaving the
factors (``U``, ``Dinv``) with which :func:`_articulated_resolve_many` solves for more right-hand sides at
O(n) each without rebuilding them (the tendons' implicit coupling, :mod:`pccbullet.sim.limb.chain.solve`).
Added mass: :mod:`pccbullet.sim.limb.chain.added_mass`.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.limb.chain.added_mass import _add_added_inertia, _added_mass_forces
from pccbullet.sim.limb.chain.kernels import ADDED_INERTIA, ADDED_MASS, FIXED, joint_dofs


@numba.njit(cache=True, inline="always")
def _inverse3(D, out) -> None:
    """Inverse of a 3 x 3 matrix (the symmetric positive definite ``D`` of a spherical joint)."""
    a, b, c = D[0, 0], D[0, 1], D[0, 2]
    d, e, f = D[1, 0], D[1, 1], D[1, 2]
    g, h, k = D[2, 0], D[2, 1], D[2, 2]
    A, B, Cc = e * k - f * h, f * g - d * k, d * h - e * g
    inv = 1.0 / (a * A + b * B + c * Cc)
    out[0, 0], out[1, 0], out[2, 0] = A * inv, B * inv, Cc * inv
    out[0, 1], out[1, 1], out[2, 1] = (c * h - b * k) * inv, (a * k - c * g) * inv, (b * g - a * h) * inv
    out[0, 2], out[1, 2], out[2, 2] = (b * f - c * e) * inv, (c * d - a * f) * inv, (a * e - b * d) * inv


@numba.njit(cache=True)
def _articulated_solve(parent, jtype, dof, params, R, p, S, IB, armature, x, fa, U, Dinv) -> bool:
    """Solve ``(M + M_a + A) y = x`` in place: Featherstone's articulated-body algorithm at rest without
    gravity, ``A`` the joint armature (``armature (n_dof, 3)``: ``[d, 0]`` for a 1-dof joint at ``d``, the
    3 x 3 block ``[d:d+3, :]`` for a spherical joint), the added mass in the link inertias; writes ``M_a y``
    into ``fa (n_dof,)`` (zero where no link has added mass). Leaves its factors in ``U (n_dof, 6)`` and
    ``Dinv (n, 3, 3)`` for :func:`_articulated_resolve_many`; returns whether any link has added mass.
    ``S``: the motion subspaces (:func:`pccbullet.sim.limb.chain.kernels.joint_axes`); ``IB``: the links'
    rigid-body spatial inertias.

    Spatial vectors ``[angular; linear]`` about the base origin in base axes, so no frame changes
    between links (:mod:`pccbullet.sim.limb.chain.inertia`). Exact for any configuration, O(n).
    """
    n = parent.shape[0]
    nd = x.shape[0]
    added = False
    IA = IB.copy()  # articulated inertias
    pA = np.zeros((n, 6))  # articulated bias forces (from the right-hand side)
    # U: IA S per velocity entry; Dinv: the inverted joint-space articulated inertias
    uu = np.zeros(nd)
    for i in range(n):
        if params[i, ADDED_MASS] != 0.0 or params[i, ADDED_INERTIA] != 0.0:
            added = True
            _add_added_inertia(params, R, p, i, IA[i])
    D = np.empty((3, 3))
    W = np.empty((6, 3))
    for i in range(n - 1, -1, -1):  # tip to base: articulated inertias
        pa = parent[i]
        kind = jtype[i]
        if kind == FIXED:
            if pa >= 0:  # rigidly part of the parent
                for a in range(6):
                    pA[pa, a] += pA[i, a]
                    for b in range(6):
                        IA[pa, a, b] += IA[i, a, b]
            continue
        j = dof[i]
        m = joint_dofs(kind)
        for c in range(m):
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += IA[i, a, b] * S[j + c, b]
                U[j + c, a] = acc
            u = x[j + c]
            for a in range(6):
                u -= S[j + c, a] * pA[i, a]
            uu[j + c] = u
        if m == 1:  # a scalar D: the common case, written out
            d = armature[j, 0]
            for a in range(6):
                d += S[j, a] * U[j, a]
            inv = 1.0 / d
            Dinv[i, 0, 0] = inv
            if pa < 0:
                continue
            r = uu[j] * inv
            for a in range(6):
                Ua = U[j, a]
                pA[pa, a] += pA[i, a] + Ua * r
                Wa = Ua * inv
                for b in range(a, 6):  # symmetric: the upper triangle, mirrored below
                    IA[pa, a, b] += IA[i, a, b] - Wa * U[j, b]
        else:
            for r in range(3):
                for c in range(3):
                    acc = armature[j + r, c]
                    for a in range(6):
                        acc += S[j + r, a] * U[j + c, a]
                    D[r, c] = acc
            _inverse3(D, Dinv[i])
            if pa < 0:
                continue
            for a in range(6):  # W = U Dinv
                U0, U1, U2 = U[j, a], U[j + 1, a], U[j + 2, a]
                for c in range(3):
                    W[a, c] = U0 * Dinv[i, 0, c] + U1 * Dinv[i, 1, c] + U2 * Dinv[i, 2, c]
            u0, u1, u2 = uu[j], uu[j + 1], uu[j + 2]
            for a in range(6):
                W0, W1, W2 = W[a, 0], W[a, 1], W[a, 2]
                pA[pa, a] += pA[i, a] + W0 * u0 + W1 * u1 + W2 * u2
                for b in range(a, 6):  # symmetric: the upper triangle, mirrored below
                    IA[pa, a, b] += IA[i, a, b] - (W0 * U[j, b] + W1 * U[j + 1, b] + W2 * U[j + 2, b])
        for a in range(1, 6):
            for b in range(a):
                IA[pa, a, b] = IA[pa, b, a]
    acc6 = np.zeros((n, 6))  # base to tip: spatial accelerations
    y = np.empty(3)
    for i in range(n):
        pa = parent[i]
        for a in range(6):
            acc6[i, a] = acc6[pa, a] if pa >= 0 else 0.0
        kind = jtype[i]
        if kind == FIXED:
            continue
        j = dof[i]
        m = joint_dofs(kind)
        for c in range(m):
            acc = uu[j + c]
            for a in range(6):
                acc -= U[j + c, a] * acc6[i, a]
            y[c] = acc
        for r in range(m):
            acc = 0.0
            for c in range(m):
                acc += Dinv[i, r, c] * y[c]
            x[j + r] = acc
            for a in range(6):
                acc6[i, a] += S[j + r, a] * acc
    if added:
        _added_mass_forces(parent, jtype, dof, params, R, p, S, acc6, fa)
    return added


@numba.njit(cache=True)
def _articulated_resolve_many(parent, jtype, dof, params, R, p, S, U, Dinv, added, X, FX) -> None:
    """Solve ``(M + M_a + A) y = x`` for the ``k`` right-hand sides ``X (k, n_dof)`` at once, in place, with
    the factors ``U``, ``Dinv`` that :func:`_articulated_solve` left for the same configuration and
    armature; ``FX (k, n_dof)``: their ``M_a y`` as its ``fa``. One pass over the links for all of them."""
    n = parent.shape[0]
    k = X.shape[0]
    nd = X.shape[1]
    pA = np.zeros((n, k, 6))
    uu = np.zeros((k, nd))
    for i in range(n - 1, -1, -1):
        pa = parent[i]
        kind = jtype[i]
        if kind == FIXED:
            if pa >= 0:
                for t in range(k):
                    for a in range(6):
                        pA[pa, t, a] += pA[i, t, a]
            continue
        j = dof[i]
        m = joint_dofs(kind)
        for t in range(k):
            for c in range(m):
                u = X[t, j + c]
                for a in range(6):
                    u -= S[j + c, a] * pA[i, t, a]
                uu[t, j + c] = u
        if pa < 0:
            continue
        for a in range(6):
            w0 = w1 = w2 = 0.0
            for c in range(m):
                w0 += U[j + c, a] * Dinv[i, c, 0]
                if m == 3:
                    w1 += U[j + c, a] * Dinv[i, c, 1]
                    w2 += U[j + c, a] * Dinv[i, c, 2]
            for t in range(k):
                acc = pA[i, t, a] + w0 * uu[t, j]
                if m == 3:
                    acc += w1 * uu[t, j + 1] + w2 * uu[t, j + 2]
                pA[pa, t, a] += acc
    acc6 = np.zeros((n, k, 6))
    y = np.empty(3)
    for i in range(n):
        pa = parent[i]
        if pa >= 0:
            for t in range(k):
                for a in range(6):
                    acc6[i, t, a] = acc6[pa, t, a]
        kind = jtype[i]
        if kind == FIXED:
            continue
        j = dof[i]
        m = joint_dofs(kind)
        for t in range(k):
            for c in range(m):
                acc = uu[t, j + c]
                for a in range(6):
                    acc -= U[j + c, a] * acc6[i, t, a]
                y[c] = acc
            for r in range(m):
                acc = 0.0
                for c in range(m):
                    acc += Dinv[i, r, c] * y[c]
                X[t, j + r] = acc
                for a in range(6):
                    acc6[i, t, a] += S[j + r, a] * acc
    if added:
        for t in range(k):
            _added_mass_forces(parent, jtype, dof, params, R, p, S, acc6[:, t, :], FX[t])
