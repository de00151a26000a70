"""Compiled (numba) implicit spring-damper step of a URDF chain: the articulated-body solve.

:func:`spring_torques`: one step of the implicit spring-damper of :mod:`pccbullet.sim.dynamics`, its linear
system ``(M + M_a + dt C + dt^2 K) qdd = b`` solved by the articulated-body algorithm with the diagonal
terms as joint armature (:func:`implicit_solve`, :func:`_articulated_solve`): exact ``M`` every step, O(n),
nothing to refresh. Arguments are the flat arrays of :class:`pccbullet.sim.chain.rigid.ChainModel`.

Added mass ``M_a``: a link with added-mass columns (the slices in a fluid) gets, in the articulated-body
inertias only, a translational mass ``m_a (1 - t t^T)`` at its centre of mass and a rotary inertia
``j_a (1 - t t^T)`` about it (``t`` its z axis: across the slice, nothing along or about it). PyBullet
does not know of it, so the torque sent is ``tau = b' - M_a qdd`` with ``qdd`` the solved accelerations:
PyBullet's own ``M qdd = tau - h`` then gives the same ``qdd``, implicitly in the added mass (stable for
any ``m_a``). Gravity, buoyancy and the velocity terms keep the true masses; the added mass's own
velocity terms (its Coriolis part, the Munk moment) are left out.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.chain.kernels import (
    ADDED_INERTIA,
    ADDED_MASS,
    _bias_and_fluid,
    _cross,
    _inertia_about_origin,
    _kinematics,
)
from pccbullet.urdf_gen.types import FloatArray


@numba.njit(cache=True)
def spring_torques(  # type: ignore[no-untyped-def]
    parent, jtype, dof, params, q, qd, gravity, target, offset, K, C, dt, tau
) -> None:
    """One implicit spring-damper step (see :mod:`pccbullet.sim.dynamics`); writes the joint torques ``tau``.

    ``(M + M_a + dt C + dt^2 K) qdd = s + offset + tau_fluid - h`` with ``s = -K (q + dt qd - q*) - C qd``,
    solved by :func:`_articulated_solve` at the current ``q`` (exact ``M``, O(n));
    ``tau = s - dt (C + dt K) qdd - M_a qdd + offset + tau_fluid``.
    """
    n = parent.shape[0]
    nd = q.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    h = np.zeros(nd)
    tau_f = np.zeros(nd)
    _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f)
    ext = np.empty(nd)
    x = np.empty(nd)
    arm = np.empty(nd)
    for k in range(nd):
        s = -K[k] * (q[k] + dt * qd[k] - target[k]) - C[k] * qd[k]
        ext[k] = s + offset[k] + tau_f[k]
        x[k] = ext[k] - h[k]
        arm[k] = dt * (C[k] + dt * K[k])
    fa = np.zeros(nd)
    _articulated_solve(parent, jtype, dof, params, R, p, arm, x, fa)
    for k in range(nd):
        tau[k] = ext[k] - arm[k] * x[k] - fa[k]


@numba.njit(cache=True)
def implicit_solve(parent, jtype, dof, params, q, armature, b) -> FloatArray:  # type: ignore[no-untyped-def]
    """``(M(q) + M_a(q) + diag(armature))^-1 b`` by the articulated-body recursion, ``(n_dof,)``."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    x = b.copy()
    _articulated_solve(parent, jtype, dof, params, R, p, armature, x, np.zeros(b.shape[0]))
    return x


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


@numba.njit(cache=True)
def _articulated_solve(parent, jtype, dof, params, R, p, armature, x, fa) -> None:  # type: ignore[no-untyped-def]
    """Solve ``(M + M_a + diag(armature)) y = x`` in place: Featherstone's articulated-body algorithm at
    rest without gravity, the diagonal terms as joint armature, the added mass in the link inertias;
    writes ``M_a y`` into ``fa (n_dof,)`` (zero where no link has added mass).

    Spatial vectors ``[angular; linear]`` about the base origin in base axes, so no frame changes
    between links: rigid-body inertia ``[[Ic + m [c]x [c]x^T, m [c]x], [m [c]x^T, m 1]]``, motion
    subspace ``[u; p x u]`` (revolute about ``u`` through ``p``) or ``[0; u]`` (prismatic). Exact for any
    configuration, O(n), no factorization to keep.
    """
    n = parent.shape[0]
    added = False
    IA = np.zeros((n, 6, 6))  # articulated inertias
    pA = np.zeros((n, 6))  # articulated bias forces (from the right-hand side)
    S = np.zeros((n, 6))
    U = np.zeros((n, 6))
    dd = np.zeros(n)
    uu = np.zeros(n)
    for i in range(n):  # rigid-body spatial inertias and motion subspaces
        m = params[i, 15]
        c0, c1, c2 = _inertia_about_origin(params, R, p, i, IA[i, :3, :3])
        for a in range(3):
            IA[i, 3 + a, 3 + a] = m
        # m [c]x (upper right) and its transpose (lower left)
        IA[i, 0, 4], IA[i, 0, 5] = -m * c2, m * c1
        IA[i, 1, 3], IA[i, 1, 5] = m * c2, -m * c0
        IA[i, 2, 3], IA[i, 2, 4] = -m * c1, m * c0
        for a in range(3):
            for b in range(3):
                IA[i, 3 + b, a] = IA[i, a, 3 + b]
        if params[i, ADDED_MASS] != 0.0 or params[i, ADDED_INERTIA] != 0.0:
            added = True
            _add_added_inertia(params, R, p, i, IA[i])
        if jtype[i] != 0:
            axis = params[i, 12:15]
            u0 = R[i, 0, 0] * axis[0] + R[i, 0, 1] * axis[1] + R[i, 0, 2] * axis[2]
            u1 = R[i, 1, 0] * axis[0] + R[i, 1, 1] * axis[1] + R[i, 1, 2] * axis[2]
            u2 = R[i, 2, 0] * axis[0] + R[i, 2, 1] * axis[1] + R[i, 2, 2] * axis[2]
            if jtype[i] == 1:
                S[i, 0], S[i, 1], S[i, 2] = u0, u1, u2
                S[i, 3], S[i, 4], S[i, 5] = _cross(p[i, 0], p[i, 1], p[i, 2], u0, u1, u2)
            else:
                S[i, 3], S[i, 4], S[i, 5] = u0, u1, u2
    for i in range(n - 1, -1, -1):  # tip to base: articulated inertias
        pa = parent[i]
        j = dof[i]
        if j >= 0:
            d = armature[j]
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += IA[i, a, b] * S[i, b]
                U[i, a] = acc
                d += S[i, a] * acc
            u = x[j]
            for a in range(6):
                u -= S[i, a] * pA[i, a]
            dd[i], uu[i] = d, u
            if pa >= 0:
                r = u / d
                inv = 1.0 / d
                for a in range(6):
                    pA[pa, a] += pA[i, a] + U[i, a] * r
                    Ua = U[i, a] * inv
                    for b in range(a, 6):  # symmetric: the upper triangle, mirrored below
                        IA[pa, a, b] += IA[i, a, b] - Ua * U[i, b]
                for a in range(1, 6):
                    for b in range(a):
                        IA[pa, a, b] = IA[pa, b, a]
        elif pa >= 0:  # fixed joint: rigidly part of the parent
            for a in range(6):
                pA[pa, a] += pA[i, a]
                for b in range(6):
                    IA[pa, a, b] += IA[i, a, b]
    acc6 = np.zeros((n, 6))  # base to tip: spatial accelerations
    for i in range(n):
        pa = parent[i]
        j = dof[i]
        for a in range(6):
            acc6[i, a] = acc6[pa, a] if pa >= 0 else 0.0
        if j >= 0:
            y = uu[i]
            for a in range(6):
                y -= U[i, a] * acc6[i, a]
            y /= dd[i]
            x[j] = y
            for a in range(6):
                acc6[i, a] += S[i, a] * y
    if added:
        _added_mass_forces(parent, dof, params, R, p, S, acc6, fa)


@numba.njit(cache=True)
def _added_mass_forces(parent, dof, params, R, p, S, acc6, fa) -> None:  # type: ignore[no-untyped-def]
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
        j = dof[i]
        if j >= 0:
            acc = 0.0
            for a in range(6):
                acc += S[i, a] * Fs[i, a]
            fa[j] = acc
        pa = parent[i]
        if pa >= 0:
            for a in range(6):
                Fs[pa, a] += Fs[i, a]
