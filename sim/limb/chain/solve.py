"""Compiled (numba) implicit spring-damper step of a URDF chain: the articulated-body solve.

:func:`spring_torques`: one step of the implicit spring-damper of :mod:`pccbullet.sim.limb.dynamics`, its
linear system ``(M + M_a + dt C + dt^2 K) qdd = b`` solved by the articulated-body algorithm with the
stiffness and damping terms as joint armature (:func:`implicit_solve`, :func:`_articulated_solve`): exact
``M`` every step, O(n), nothing to refresh. Arguments are the flat arrays of
:class:`pccbullet.sim.limb.chain.rigid.ChainModel`.

Joint springs and the rod chain's shear: :mod:`pccbullet.sim.limb.chain.springs`.

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

from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain.added_mass import accelerates, base_added_mass
from pccbullet.sim.limb.chain.articulated import _articulated_resolve_many, _articulated_solve
from pccbullet.sim.limb.chain.inertia import spatial_inertia
from pccbullet.sim.limb.chain.kernels import (
    AT_REST,
    FIXED,
    SPHERICAL,
    _kinematics,
    _moving_bias_and_fluid,
    _transmit,
    joint_axes,
    joint_dofs,
)
from pccbullet.sim.limb.chain.springs import joint_springs


@numba.njit(cache=True)
def spring_torques(
    parent, jtype, dof, qpos, params, q, qd, gravity, target, offset, K, C, dt, tau, qdd, memory,
    tG, tT, tS,
) -> None:  # fmt: skip
    """:func:`moving_spring_torques` on a fixed base (the limbs of a :class:`~pccbullet.sim.world.World`)."""
    moving_spring_torques(
        parent, jtype, dof, qpos, params, q, qd, gravity, AT_REST, target, offset, K, C, dt, tau, qdd, memory,
        tG, tT, tS,
    )  # fmt: skip


@numba.njit(cache=True)
def moving_spring_torques(
    parent, jtype, dof, qpos, params, q, qd, gravity, base, target, offset, K, C, dt, tau, qdd, memory,
    tG, tT, tS,
) -> None:  # fmt: skip
    """One implicit spring-damper step (see :mod:`pccbullet.sim.limb.dynamics`); writes the joint torques
    ``tau`` and the accelerations ``qdd`` the step solved for (what PyBullet's forward dynamics gives with
    ``tau``).

    ``(M + M_a + A) qdd = s + offset + tau_fluid + f_ext - h`` with ``s`` the springs (at ``q + dt qd``) and
    dampers, ``A`` their armature (:mod:`pccbullet.sim.limb.chain.springs`), solved by
    :func:`_articulated_solve` at the current ``q`` (exact ``M``, O(n)); ``tau = s - A qdd - M_a qdd + offset
    + tau_fluid``.

    ``f_ext``: the loads PyBullet adds itself (contacts, ``applyExternalForce``) in the last step,
    ``f_ext_prev + M ((qd - qd_prev) / dt - qdd_prev)`` (PyBullet's accelerations beyond the ones solved
    for), left out of ``tau`` (PyBullet applies them). A constant load is then held exactly: the
    estimate converges to it by a factor ``A (M + A)^-1`` a step. ``memory (2, n_dof)``: the previous step's
    ``qd`` (row 0; NaN: no previous step, no estimate) and the estimate (row 1, written), both updated
    here; ``qdd`` holds the previous step's solution on entry.

    Tendons (:mod:`pccbullet.sim.limb.chain.tendons`; none: zero rows): ``tG (n_t, n_dof)`` their lengths'
    Jacobian, ``tT (n_t,)`` their tensions at the step's start, ``tS (n_t, n_t)`` how the tensions
    change with the lengths' change over the step, ``dT = tS tG qdd``. Their generalized force ``-tG^T T``
    enters implicitly: ``(M + M_a + A + tG^T tS tG) qdd = b - tG^T tT``, solved by the Woodbury identity
    with one more articulated-body pass for all tendons (:func:`_articulated_resolve_many`); ``tT`` is
    overwritten with the tensions the step applies, ``tT + tS tG qdd``. A tendon whose tension would come
    out negative goes slack (a tendon cannot push): its row is dropped and the step solved again (only
    the small ``n_t x n_t`` system; until no tendon goes slack).

    ``base (4, 3)``: the motion of the chain's base frame (angular velocity, velocity of its origin,
    angular acceleration, acceleration of its origin; absolute, base axes;
    :func:`pccbullet.sim.limb.chain.kernels._moving_bias_and_fluid`), all zero for a fixed base. A moving
    base's acceleration also pushes the slices' added mass through the fluid: ``-J^T m_a (1 - t t^T) a_c``
    (and the rotary part) with ``a_c`` the acceleration of the base-fixed point at the slice's centre, a fluid
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
    nt = tT.shape[0]
    for t in range(nt):
        for j in range(nd):
            x[j] -= tG[t, j] * tT[t]
    fa = np.zeros(nd)
    U = np.empty((nd, 6))
    Dinv = np.empty((n, 3, 3))
    added = _articulated_solve(parent, jtype, dof, params, R, p, S, IB, arm, x, fa, U, Dinv)
    coupled = False
    for a in range(nt):
        for b in range(nt):
            coupled = coupled or tS[a, b] != 0.0
    if coupled:
        # (A0 + G^T S G)^-1 b = y - X (1 + S G X)^-1 S G y, X = A0^-1 G^T, y = A0^-1 b
        X = np.empty((nt, nd))
        FX = np.empty((nt, nd))
        X[:, :] = tG
        _articulated_resolve_many(parent, jtype, dof, params, R, p, S, U, Dinv, added, X, FX)
        GX = tG @ X.T  # (nt, nt): G X
        y = x.copy()
        fy = fa.copy()
        Gy = tG @ y
        T0 = tT.copy()
        Sm = tS.copy()
        for _ in range(nt + 1):  # every pass that repeats drops a tendon
            c = np.linalg.solve(np.eye(nt) + Sm @ GX, Sm @ Gy)
            x[:] = y
            fa[:] = fy
            for t in range(nt):
                for j in range(nd):
                    x[j] -= c[t] * X[t, j]
                    fa[j] -= c[t] * FX[t, j] if added else 0.0
            Tn = T0 + Sm @ (tG @ x)
            slack = False
            for t in range(nt):
                if Tn[t] < 0.0:  # slack: without its pull (y += A0^-1 g_t T0_t) and coupling
                    slack = True
                    for j in range(nd):
                        y[j] += T0[t] * X[t, j]
                        fy[j] += T0[t] * FX[t, j] if added else 0.0
                    T0[t] = 0.0
                    Sm[t, :] = 0.0
            tT[:] = Tn
            if not slack:
                break
            Gy = tG @ y
        for t in range(nt):
            tT[t] = max(tT[t], 0.0)
    for t in range(nt):
        for j in range(nd):
            ext[j] -= tG[t, j] * tT[t]
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
def _mass_times(parent, jtype, dof, S, IB, v) -> None:
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
    _transmit(parent, jtype, dof, S, F, v)


@numba.njit(cache=True)
def implicit_solve(parent, jtype, dof, qpos, params, q, armature, b) -> FloatArray:
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
    nd = b.shape[0]
    U, Dinv = np.empty((nd, 6)), np.empty((n, 3, 3))
    _articulated_solve(parent, jtype, dof, params, R, p, S, IB, armature, x, np.zeros(nd), U, Dinv)
    return x


@numba.njit(cache=True)
def diagonal_armature(jtype, dof, values):
    """The armature ``(n_dof, 3)`` of :func:`implicit_solve` for a diagonal one, ``values (n_dof,)``."""
    arm = np.zeros((values.shape[0], 3))
    for i in range(jtype.shape[0]):
        if jtype[i] == FIXED:
            continue
        for c in range(joint_dofs(jtype[i])):
            arm[dof[i] + c, 0 if jtype[i] != SPHERICAL else c] = values[dof[i] + c]
    return arm
