"""Compiled (numba) articulated-body solve of a URDF chain: ``(M + M_a + A) y = x`` in O(n).

:func:`_articulated_solve` builds the articulated inertias and solves for one right-hand side, leaving the
factors (``U``, ``Dinv``) with which :func:`_articulated_resolve` solves for more right-hand sides at
O(n) each without rebuilding them (the tendons' implicit coupling, :mod:`pccbullet.sim.chain.solve`).
Added mass: see :mod:`pccbullet.sim.chain.solve`.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.chain.kernels import ADDED_INERTIA, ADDED_MASS, FIXED, _cross, joint_dofs


@numba.njit(cache=True, inline="always")
def _added_at(params, R, p, i):  # type: ignore[no-untyped-def]
    """Link ``i``'s added mass and rotary inertia, its z axis and centre of mass (base axes)."""
    com = params[i, 16:19]
    c0 = p[i, 0] + R[i, 0, 0] * com[0] + R[i, 0, 1] * com[1] + R[i, 0, 2] * com[2]
    c1 = p[i, 1] + R[i, 1, 0] * com[0] + R[i, 1, 1] * com[1] + R[i, 1, 2] * com[2]
    c2 = p[i, 2] + R[i, 2, 0] * com[0] + R[i, 2, 1] * com[1] + R[i, 2, 2] * com[2]
    return params[i, ADDED_MASS], params[i, ADDED_INERTIA], R[i, 0, 2], R[i, 1, 2], R[i, 2, 2], c0, c1, c2


@numba.njit(cache=True)
def _add_added_inertia(params, R, p, i, I6) -> None:  # type: ignore[no-untyped-def]
    """Add link ``i``'s added-mass spatial inertia about the base origin to ``I6 (6, 6)``:
    ``[[j_a P + [c]x Ma [c]x^T, [c]x Ma], [Ma [c]x^T, Ma]]`` with ``Ma = m_a P``, ``P = 1 - t t^T``;
    written out with ``w = c x t``: ``[c]x Ma = m_a ([c]x - w t^T)`` and
    ``[c]x Ma [c]x^T = m_a (|c|^2 1 - c c^T - w w^T)``."""
    ma, ja, t0, t1, t2, c0, c1, c2 = _added_at(params, R, p, i)
    t = (t0, t1, t2)
    c = (c0, c1, c2)
    w = _cross(c0, c1, c2, t0, t1, t2)
    cx = ((0.0, -c2, c1), (c2, 0.0, -c0), (-c1, c0, 0.0))
    cc = c0 * c0 + c1 * c1 + c2 * c2
    for a in range(3):
        for b in range(3):
            eye = 1.0 if a == b else 0.0
            proj = eye - t[a] * t[b]
            upper = ma * (cx[a][b] - w[a] * t[b])
            I6[a, b] += ja * proj + ma * (cc * eye - c[a] * c[b] - w[a] * w[b])
            I6[a, 3 + b] += upper
            I6[3 + b, a] += upper
            I6[3 + a, 3 + b] += ma * proj


@numba.njit(cache=True, inline="always")
def _inverse3(D, out) -> None:  # type: ignore[no-untyped-def]
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
def _articulated_solve(parent, jtype, dof, params, R, p, S, IB, armature, x, fa, U, Dinv) -> bool:  # type: ignore[no-untyped-def]
    """Solve ``(M + M_a + A) y = x`` in place: Featherstone's articulated-body algorithm at rest without
    gravity, ``A`` the joint armature (``armature (n_dof, 3)``: ``[d, 0]`` for a 1-dof joint at ``d``, the
    3 x 3 block ``[d:d+3, :]`` for a spherical joint), the added mass in the link inertias; writes ``M_a y``
    into ``fa (n_dof,)`` (zero where no link has added mass). Leaves its factors in ``U (n_dof, 6)`` and
    ``Dinv (n, 3, 3)`` for :func:`_articulated_resolve`; returns whether any link has added mass.
    ``S``: the motion subspaces (:func:`pccbullet.sim.chain.kernels.joint_axes`); ``IB``: the links'
    rigid-body spatial inertias.

    Spatial vectors ``[angular; linear]`` about the base origin in base axes, so no frame changes
    between links (:mod:`pccbullet.sim.chain.inertia`). Exact for any configuration, O(n).
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
def _articulated_resolve(parent, jtype, dof, params, R, p, S, U, Dinv, added, x, fa) -> None:  # type: ignore[no-untyped-def]
    """Solve ``(M + M_a + A) y = x`` in place with the factors ``U``, ``Dinv`` that
    :func:`_articulated_solve` left for the same configuration and armature; ``fa`` as there."""
    n = parent.shape[0]
    nd = x.shape[0]
    pA = np.zeros((n, 6))
    uu = np.zeros(nd)
    for i in range(n - 1, -1, -1):
        pa = parent[i]
        kind = jtype[i]
        if kind == FIXED:
            if pa >= 0:
                for a in range(6):
                    pA[pa, a] += pA[i, a]
            continue
        j = dof[i]
        m = joint_dofs(kind)
        for c in range(m):
            u = x[j + c]
            for a in range(6):
                u -= S[j + c, a] * pA[i, a]
            uu[j + c] = u
        if pa < 0:
            continue
        for a in range(6):
            acc = pA[i, a]
            for r in range(m):
                w = 0.0
                for c in range(m):
                    w += U[j + c, a] * Dinv[i, c, r]
                acc += w * uu[j + r]
            pA[pa, a] += acc
    acc6 = np.zeros((n, 6))
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


@numba.njit(cache=True)
def _added_mass_forces(parent, jtype, dof, params, R, p, S, acc6, fa) -> None:  # type: ignore[no-untyped-def]
    """``fa = M_a qdd``: the generalized forces of the links' added masses at the spatial accelerations
    ``acc6 (n, 6)`` (``[angular; linear]`` about the base origin, from ``qdd`` alone)."""
    n = parent.shape[0]
    Fs = np.zeros((n, 6))  # spatial forces [moment about the origin; force]
    for i in range(n):
        ma, ja, t0, t1, t2, c0, c1, c2 = _added_at(params, R, p, i)
        if ma == 0.0 and ja == 0.0:
            continue
        l0, l1, l2 = acc6[i, 0], acc6[i, 1], acc6[i, 2]
        x0, x1, x2 = _cross(l0, l1, l2, c0, c1, c2)
        a0, a1, a2 = acc6[i, 3] + x0, acc6[i, 4] + x1, acc6[i, 5] + x2  # centre-of-mass acceleration
        ta = t0 * a0 + t1 * a1 + t2 * a2
        F0, F1, F2 = ma * (a0 - ta * t0), ma * (a1 - ta * t1), ma * (a2 - ta * t2)
        tl = t0 * l0 + t1 * l1 + t2 * l2
        m0, m1, m2 = _cross(c0, c1, c2, F0, F1, F2)
        Fs[i, 0] = ja * (l0 - tl * t0) + m0
        Fs[i, 1] = ja * (l1 - tl * t1) + m1
        Fs[i, 2] = ja * (l2 - tl * t2) + m2
        Fs[i, 3], Fs[i, 4], Fs[i, 5] = F0, F1, F2
    for i in range(n - 1, -1, -1):
        kind = jtype[i]
        if kind != FIXED:
            j = dof[i]
            for c in range(joint_dofs(kind)):
                acc = 0.0
                for a in range(6):
                    acc += S[j + c, a] * Fs[i, a]
                fa[j + c] = acc
        pa = parent[i]
        if pa >= 0:
            for a in range(6):
                Fs[pa, a] += Fs[i, a]
