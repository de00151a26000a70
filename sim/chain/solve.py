"""Compiled (numba) implicit spring-damper step of a URDF chain: the articulated-body solve.

:func:`spring_torques`: one step of the implicit spring-damper of :mod:`pccbullet.sim.dynamics`, its linear
system ``(M + M_a + dt C + dt^2 K) qdd = b`` solved by the articulated-body algorithm with the stiffness
and damping terms as joint armature (:func:`implicit_solve`, :func:`_articulated_solve`): exact ``M``
every step, O(n), nothing to refresh. Arguments are the flat arrays of
:class:`pccbullet.sim.chain.rigid.ChainModel`.

Joint springs and the rod chain's shear: :mod:`pccbullet.sim.chain.springs`.

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

from pccbullet.sim.chain.inertia import spatial_inertia
from pccbullet.sim.chain.kernels import (
    ADDED_INERTIA,
    ADDED_MASS,
    FIXED,
    SPHERICAL,
    _bias_and_fluid,
    _cross,
    _kinematics,
    joint_axes,
    joint_dofs,
)
from pccbullet.sim.chain.springs import joint_springs
from pccbullet.urdf_gen.types import FloatArray


@numba.njit(cache=True)
def spring_torques(  # type: ignore[no-untyped-def]
    parent, jtype, dof, qpos, params, q, qd, gravity, target, offset, K, C, dt, tau, qdd, memory
) -> None:
    """One implicit spring-damper step (see :mod:`pccbullet.sim.dynamics`); writes the joint torques ``tau``
    and the accelerations ``qdd`` the step solved for (what PyBullet's forward dynamics gives with ``tau``).

    ``(M + M_a + A) qdd = s + offset + tau_fluid + f_ext - h`` with ``s`` the springs (at ``q + dt qd``) and
    dampers, ``A`` their armature (:mod:`pccbullet.sim.chain.springs`), solved by :func:`_articulated_solve`
    at the current ``q`` (exact ``M``, O(n)); ``tau = s - A qdd - M_a qdd + offset + tau_fluid``.

    ``f_ext``: the loads PyBullet adds itself (contacts, ``applyExternalForce``) in the last step,
    ``f_ext_prev + M ((qd - qd_prev) / dt - qdd_prev)`` (PyBullet's accelerations beyond the ones solved
    for), left out of ``tau`` (PyBullet applies them). A constant load is then held exactly: the
    estimate converges to it by a factor ``A (M + A)^-1`` a step. ``memory (2, n_dof)``: the previous step's
    ``qd`` (row 0; NaN: no previous step, no estimate) and the estimate (row 1, written), both updated
    here; ``qdd`` holds the previous step's solution on entry.
    """
    n = parent.shape[0]
    nd = qd.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, qpos, params, q, R, p)
    h = np.zeros(nd)
    tau_f = np.zeros(nd)
    loads = np.empty((2, n, 3))
    _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f, loads)
    ext = np.empty(nd)
    arm = np.zeros((nd, 3))
    joint_springs(parent, jtype, dof, qpos, params, R, loads, q, qd, target, K, C, dt, ext, arm)
    for j in range(nd):
        ext[j] += offset[j] + tau_f[j]
    S = np.zeros((nd, 6))
    joint_axes(jtype, dof, params, R, p, S)
    IB = np.empty((n, 6, 6))
    for i in range(n):
        spatial_inertia(params, R, p, i, IB[i])
    f_ext = memory[1]
    if np.isfinite(memory[0, 0]):
        # PyBullet gave M qdd_pb = tau - h + f, and tau was M qdd + h - f_ext: f = M (qdd_pb - qdd) + f_ext
        delta = np.empty(nd)
        for j in range(nd):
            delta[j] = (qd[j] - memory[0, j]) / dt - qdd[j]
        _mass_times(parent, jtype, dof, S, IB, delta)
        for j in range(nd):
            f_ext[j] += delta[j]
    else:
        f_ext[:] = 0.0
    memory[0, :] = qd
    x = qdd
    for j in range(nd):
        x[j] = ext[j] + f_ext[j] - h[j]
    fa = np.zeros(nd)
    _articulated_solve(parent, jtype, dof, params, R, p, S, IB, arm, x, fa)
    for i in range(n):
        kind = jtype[i]
        if kind == FIXED:
            continue
        d = dof[i]
        if kind != SPHERICAL:
            tau[d] = ext[d] - arm[d, 0] * x[d] - fa[d]
        else:
            for r in range(3):
                tau[d + r] = (
                    ext[d + r] - arm[d + r, 0] * x[d] - arm[d + r, 1] * x[d + 1] - arm[d + r, 2] * x[d + 2]
                ) - fa[d + r]


@numba.njit(cache=True)
def _mass_times(parent, jtype, dof, S, IB, v) -> None:  # type: ignore[no-untyped-def]
    """``v <- M v`` in place (rigid bodies only, no added mass): the generalized forces of the
    accelerations ``v`` at rest, a Newton-Euler pass over the links' spatial inertias ``IB (n, 6, 6)``."""
    n = parent.shape[0]
    acc = np.zeros((n, 6))
    F = np.zeros((n, 6))
    for i in range(n):
        pa = parent[i]
        for a in range(6):
            acc[i, a] = acc[pa, a] if pa >= 0 else 0.0
        if jtype[i] != FIXED:
            d = dof[i]
            for c in range(joint_dofs(jtype[i])):
                for a in range(6):
                    acc[i, a] += S[d + c, a] * v[d + c]
        for a in range(6):
            f = 0.0
            for b in range(6):
                f += IB[i, a, b] * acc[i, b]
            F[i, a] = f
    for i in range(n - 1, -1, -1):
        if jtype[i] != FIXED:
            d = dof[i]
            for c in range(joint_dofs(jtype[i])):
                f = 0.0
                for a in range(6):
                    f += S[d + c, a] * F[i, a]
                v[d + c] = f
        pa = parent[i]
        if pa >= 0:
            for a in range(6):
                F[pa, a] += F[i, a]


@numba.njit(cache=True)
def implicit_solve(parent, jtype, dof, qpos, params, q, armature, b) -> FloatArray:  # type: ignore[no-untyped-def]
    """``(M(q) + M_a(q) + A)^-1 b`` by the articulated-body recursion, ``(n_dof,)``; the armature ``A`` is
    ``armature (n_dof, 3)`` as :func:`_articulated_solve` takes it (diagonal: ``diagonal_armature``)."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, qpos, params, q, R, p)
    S = np.zeros((b.shape[0], 6))
    joint_axes(jtype, dof, params, R, p, S)
    IB = np.empty((n, 6, 6))
    for i in range(n):
        spatial_inertia(params, R, p, i, IB[i])
    x = b.copy()
    _articulated_solve(parent, jtype, dof, params, R, p, S, IB, armature, x, np.zeros(b.shape[0]))
    return x


@numba.njit(cache=True)
def diagonal_armature(jtype, dof, values):  # type: ignore[no-untyped-def]
    """The armature ``(n_dof, 3)`` of :func:`implicit_solve` for a diagonal one, ``values (n_dof,)``."""
    arm = np.zeros((values.shape[0], 3))
    for i in range(jtype.shape[0]):
        if jtype[i] == FIXED:
            continue
        for c in range(joint_dofs(jtype[i])):
            arm[dof[i] + c, 0 if jtype[i] != SPHERICAL else c] = values[dof[i] + c]
    return arm


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
def _articulated_solve(parent, jtype, dof, params, R, p, S, IB, armature, x, fa) -> None:  # type: ignore[no-untyped-def]
    """Solve ``(M + M_a + A) y = x`` in place: Featherstone's articulated-body algorithm at rest without
    gravity, ``A`` the joint armature (``armature (n_dof, 3)``: ``[d, 0]`` for a 1-dof joint at ``d``, the
    3 x 3 block ``[d:d+3, :]`` for a spherical joint), the added mass in the link inertias; writes ``M_a y``
    into ``fa (n_dof,)`` (zero where no link has added mass). ``S``: the motion subspaces
    (:func:`pccbullet.sim.chain.kernels.joint_axes`); ``IB``: the links' rigid-body spatial inertias.

    Spatial vectors ``[angular; linear]`` about the base origin in base axes, so no frame changes
    between links (:mod:`pccbullet.sim.chain.inertia`). Exact for any configuration, O(n).
    """
    n = parent.shape[0]
    nd = x.shape[0]
    added = False
    IA = IB.copy()  # articulated inertias
    pA = np.zeros((n, 6))  # articulated bias forces (from the right-hand side)
    U = np.zeros((nd, 6))  # IA S per velocity entry
    Dinv = np.zeros((n, 3, 3))
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
        for r in range(m):
            for c in range(m):
                acc = armature[j + r, 0] if m == 1 else armature[j + r, c]
                for a in range(6):
                    acc += S[j + r, a] * U[j + c, a]
                D[r, c] = acc
        if m == 1:
            Dinv[i, 0, 0] = 1.0 / D[0, 0]
        else:
            _inverse3(D, Dinv[i])
        if pa < 0:
            continue
        for a in range(6):  # W = U Dinv
            for c in range(m):
                acc = 0.0
                for r in range(m):
                    acc += U[j + r, a] * Dinv[i, r, c]
                W[a, c] = acc
        for a in range(6):
            acc = 0.0
            for c in range(m):
                acc += W[a, c] * uu[j + c]
            pA[pa, a] += pA[i, a] + acc
            for b in range(a, 6):  # symmetric: the upper triangle, mirrored below
                acc = 0.0
                for c in range(m):
                    acc += W[a, c] * U[j + c, b]
                IA[pa, a, b] += IA[i, a, b] - acc
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
