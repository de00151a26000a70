"""Compiled (numba) implicit spring-damper step of a URDF chain: the articulated-body solve.

:func:`spring_torques`: one step of the implicit spring-damper of :mod:`pccbullet.sim.dynamics`, its linear
system ``(M + dt C + dt^2 K) qdd = b`` solved by the articulated-body algorithm with the diagonal terms as
joint armature (:func:`implicit_solve`, :func:`_articulated_solve`): exact ``M`` every step, O(n), nothing to
refresh. Arguments are the flat arrays of :class:`pccbullet.sim.chain.rigid.ChainModel`.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.chain.kernels import _bias_and_fluid, _cross, _inertia_about_origin, _kinematics
from pccbullet.urdf_gen.types import FloatArray


@numba.njit(cache=True)
def spring_torques(  # type: ignore[no-untyped-def]
    parent, jtype, dof, params, q, qd, gravity, target, offset, K, C, dt, tau
) -> None:
    """One implicit spring-damper step (see :mod:`pccbullet.sim.dynamics`); writes the joint torques ``tau``.

    ``(M + dt C + dt^2 K) qdd = s + offset + tau_fluid - h`` with ``s = -K (q + dt qd - q*) - C qd``,
    solved by :func:`_articulated_solve` at the current ``q`` (exact ``M``, O(n));
    ``tau = s - dt (C + dt K) qdd + offset + tau_fluid``.
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
    _articulated_solve(parent, jtype, dof, params, R, p, arm, x)
    for k in range(nd):
        tau[k] = ext[k] - arm[k] * x[k]


@numba.njit(cache=True)
def implicit_solve(parent, jtype, dof, params, q, armature, b) -> FloatArray:  # type: ignore[no-untyped-def]
    """``(M(q) + diag(armature))^-1 b`` by the articulated-body recursion, ``(n_dof,)``."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    x = b.copy()
    _articulated_solve(parent, jtype, dof, params, R, p, armature, x)
    return x


@numba.njit(cache=True)
def _articulated_solve(parent, jtype, dof, params, R, p, armature, x) -> None:  # type: ignore[no-untyped-def]
    """Solve ``(M + diag(armature)) y = x`` in place: Featherstone's articulated-body algorithm at rest
    without gravity, the diagonal terms as joint armature.

    Spatial vectors ``[angular; linear]`` about the base origin in base axes, so no frame changes
    between links: rigid-body inertia ``[[Ic + m [c]x [c]x^T, m [c]x], [m [c]x^T, m 1]]``, motion
    subspace ``[u; p x u]`` (revolute about ``u`` through ``p``) or ``[0; u]`` (prismatic). Exact for any
    configuration, O(n), no factorization to keep.
    """
    n = parent.shape[0]
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
