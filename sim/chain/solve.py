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

from pccbullet.sim.chain.added_mass import (
    _add_added_inertia,
    _added_mass_forces,
    accelerates,
    base_added_mass,
)
from pccbullet.sim.chain.inertia import spatial_inertia
from pccbullet.sim.chain.kernels import (
    ADDED_INERTIA,
    ADDED_MASS,
    AT_REST,
    FIXED,
    SPHERICAL,
    _kinematics,
    _moving_bias_and_fluid,
    joint_axes,
    joint_dofs,
)
from pccbullet.sim.chain.springs import joint_springs
from pccbullet.urdf_gen.types import FloatArray


@numba.njit(cache=True)
def spring_torques(  # type: ignore[no-untyped-def]
    parent, jtype, dof, qpos, params, q, qd, gravity, target, offset, K, C, dt, tau, qdd, memory
) -> None:
    """:func:`moving_spring_torques` on a fixed base (the limbs of a :class:`~pccbullet.sim.world.World`)."""
    moving_spring_torques(
        parent, jtype, dof, qpos, params, q, qd, gravity, AT_REST, target, offset, K, C, dt, tau, qdd, memory
    )


@numba.njit(cache=True)
def moving_spring_torques(  # type: ignore[no-untyped-def]
    parent, jtype, dof, qpos, params, q, qd, gravity, base, target, offset, K, C, dt, tau, qdd, memory
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

    ``base (4, 3)``: the motion of the chain's base frame (angular velocity, velocity of its origin,
    angular acceleration, acceleration of its origin; absolute, base axes;
    :func:`pccbullet.sim.chain.kernels._moving_bias_and_fluid`), all zero for a fixed base. A moving base's
    acceleration also pushes the slices' added mass through the fluid: ``-J^T m_a (1 - t t^T) a_c`` (and
    the rotary part) with ``a_c`` the acceleration of the base-fixed point at the slice's centre, a fluid
    load like ``tau_fluid``.
    """
    n = parent.shape[0]
    nd = qd.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, qpos, params, q, R, p)
    h = np.zeros(nd)
    tau_f = np.zeros(nd)
    loads = np.empty((2, n, 3))
    _moving_bias_and_fluid(parent, jtype, dof, params, qd, gravity, base, R, p, h, tau_f, loads)
    ext = np.empty(nd)
    arm = np.zeros((nd, 3))
    joint_springs(parent, jtype, dof, qpos, params, R, loads, q, qd, target, K, C, dt, ext, arm)
    for j in range(nd):
        ext[j] += offset[j] + tau_f[j]
    S = np.zeros((nd, 6))
    joint_axes(jtype, dof, params, R, p, S)
    if accelerates(base):
        base_added_mass(parent, jtype, dof, params, R, p, S, base, ext)
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
