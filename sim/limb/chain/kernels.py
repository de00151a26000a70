"""Compiled (numba) kinematics and dynamics terms of a URDF chain read by
:mod:`pccbullet.sim.limb.chain.rigid`.

:func:`bias_and_fluid`: recursive Newton-Euler with ``qdd = 0`` (Coriolis, centrifugal and gravity torques
``h(q, qd)``) and, in the same backward pass, the fluid's generalized forces ``J^T f`` (buoyancy, Morison
drag). The joint-space inertia is in :mod:`pccbullet.sim.limb.chain.inertia`. Arguments are the flat arrays of
:class:`pccbullet.sim.limb.chain.rigid.ChainModel` (``parent``, ``jtype``, ``dof``, ``qpos``, ``params`` with
the column layout given there), all in the limb's base frame.

Joint types: fixed (0), revolute (1), prismatic (2) and spherical (3). A spherical joint has four position
entries (the quaternion ``x, y, z, w`` of the child relative to the joint frame, at ``q[qpos[i]:]``) and
three velocity entries (the child's angular velocity relative to its parent in child axes, at
``qd[dof[i]:]``), as PyBullet stores them; its generalized forces are the torque's child-axis components.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pccbullet.sim.limb.chain.rotation import cross, quat_matrix

FIXED, REVOLUTE, PRISMATIC, SPHERICAL = 0, 1, 2, 3

# Columns of the params array read here besides the kinematic and inertial ones (layout:
# pccbullet.sim.limb.chain.rigid): the added mass across a link's z axis at its centre of mass (kg), the added
# rotary inertia about the transverse axes through it (kg m^2), and the shear compliance of a chord joint
# (1 / (kappa G A), 1/N; pccbullet.sim.limb.chain.solve)
ADDED_MASS = 31
ADDED_INERTIA = 32
SHEAR = 33


@numba.njit(cache=True, inline="always")
def joint_dofs(kind):
    """Velocity entries of a joint type: 0, 1 or 3."""
    return 3 if kind == SPHERICAL else (0 if kind == FIXED else 1)


@numba.njit(cache=True)
def _kinematics(parent, jtype, qpos, params, q, R, p) -> None:
    """Link frames in the base frame: rotations ``R (n, 3, 3)`` and origins ``p (n, 3)``."""
    n = parent.shape[0]
    R_j = np.empty((3, 3))
    rot = np.empty((3, 3))
    for i in range(n):
        pa = parent[i]
        for a in range(3):
            for b in range(3):
                if pa < 0:
                    R_j[a, b] = params[i, 3 * a + b]
                else:
                    R_j[a, b] = (
                        R[pa, a, 0] * params[i, b]
                        + R[pa, a, 1] * params[i, 3 + b]
                        + R[pa, a, 2] * params[i, 6 + b]
                    )
            if pa < 0:
                p[i, a] = params[i, 9 + a]
            else:
                p[i, a] = p[pa, a] + (
                    R[pa, a, 0] * params[i, 9] + R[pa, a, 1] * params[i, 10] + R[pa, a, 2] * params[i, 11]
                )
        kind = jtype[i]
        if kind == REVOLUTE or kind == SPHERICAL:
            if kind == REVOLUTE:  # R = R_j Rot(axis, q) (Rodrigues)
                x, y, z = params[i, 12], params[i, 13], params[i, 14]
                angle = q[qpos[i]]
                c, s = math.cos(angle), math.sin(angle)
                t = 1.0 - c
                rot[0, 0] = c + x * x * t
                rot[0, 1] = x * y * t - z * s
                rot[0, 2] = x * z * t + y * s
                rot[1, 0] = y * x * t + z * s
                rot[1, 1] = c + y * y * t
                rot[1, 2] = y * z * t - x * s
                rot[2, 0] = z * x * t - y * s
                rot[2, 1] = z * y * t + x * s
                rot[2, 2] = c + z * z * t
            else:
                k = qpos[i]
                quat_matrix(q[k], q[k + 1], q[k + 2], q[k + 3], rot)
            for a in range(3):
                for b in range(3):
                    R[i, a, b] = R_j[a, 0] * rot[0, b] + R_j[a, 1] * rot[1, b] + R_j[a, 2] * rot[2, b]
        else:
            for a in range(3):
                for b in range(3):
                    R[i, a, b] = R_j[a, b]
            if kind == PRISMATIC:
                x, y, z = params[i, 12], params[i, 13], params[i, 14]
                qi = q[qpos[i]]
                for a in range(3):
                    p[i, a] += (R_j[a, 0] * x + R_j[a, 1] * y + R_j[a, 2] * z) * qi


@numba.njit(cache=True)
def bias_and_fluid(parent, jtype, dof, qpos, params, q, qd, gravity, h, tau_f) -> None:
    """Recursive Newton-Euler (``qdd = 0``) with fluid loads; writes ``h`` and ``tau_f`` (``(n_dof,)``).

    ``h`` is the torque that holds the chain at ``qdd = 0`` against gravity and velocity products (the
    fluid excluded); ``tau_f`` the generalized force the fluid exerts (buoyancy up, drag against the
    centre-of-mass velocity of each link, split into its z-axis and normal parts).
    """
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, qpos, params, q, R, p)
    loads = np.empty((2, n, 3))
    _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f, loads)


AT_REST = np.zeros((4, 3))
"""The base motion of a fixed base (:func:`_moving_bias_and_fluid`'s ``base``): all zero."""


@numba.njit(cache=True)
def _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f, loads) -> None:
    """:func:`bias_and_fluid` on link frames ``R``, ``p`` from :func:`_kinematics`: a fixed base.

    Also writes ``loads (2, n, 3)``: ``loads[0, i]`` the net force link ``i``'s joint passes to its subtree
    (what holds it at ``qdd = 0``, less the fluid's loads on it), ``loads[1, i]`` the same for link ``i``
    alone; base axes (N). The rod chain's shear reads them (:mod:`pccbullet.sim.limb.chain.solve`).
    """
    _moving_bias_and_fluid(parent, jtype, dof, params, qd, gravity, AT_REST, R, p, h, tau_f, loads)


@numba.njit(cache=True)
def bias_and_fluid_moving(parent, jtype, dof, qpos, params, q, qd, gravity, base, h, tau_f) -> None:
    """:func:`bias_and_fluid` on a moving base: ``base (4, 3)`` as :func:`_moving_bias_and_fluid` takes it."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, qpos, params, q, R, p)
    loads = np.empty((2, n, 3))
    _moving_bias_and_fluid(parent, jtype, dof, params, qd, gravity, base, R, p, h, tau_f, loads)


@numba.njit(cache=True)
def _moving_bias_and_fluid(parent, jtype, dof, params, qd, gravity, base, R, p, h, tau_f, loads) -> None:
    """:func:`_bias_and_fluid` with the base frame moving: ``base (4, 3)`` holds its angular velocity, the
    velocity of its origin, its angular acceleration and the (classical) acceleration of its origin, each
    absolute (the world's, the fluid at rest in it) and in base axes. The recursion runs in the inertial
    frame that coincides with the base frame at this instant: the base's acceleration enters like gravity
    (``a_0 - g``; buoyancy keeps ``g`` alone), its rotation through the velocity products, and the drag sees
    the links' absolute velocities."""
    n = parent.shape[0]
    work = np.empty((13, n, 3))  # one allocation for all per-link vectors
    w = work[0]  # angular velocity
    v = work[1]  # velocity of the link origin
    al = work[2]  # angular acceleration
    a = work[3]  # acceleration of the link origin (gravity as a base acceleration)
    aw = work[4]  # joint axis, base axes (1-dof joints)
    d = work[5]  # link origin -> centre of mass, base axes
    F = work[6]  # force on the link (about its centre of mass: N)
    N = work[7]
    Fe = work[8]  # fluid force at the centre of mass
    for i in range(n):
        pa = parent[i]
        kind = jtype[i]
        axis = params[i, 12:15]
        for k in range(3):
            aw[i, k] = R[i, k, 0] * axis[0] + R[i, k, 1] * axis[1] + R[i, k, 2] * axis[2]
        if pa < 0:
            wp0, wp1, wp2 = base[0, 0], base[0, 1], base[0, 2]
            vp0, vp1, vp2 = base[1, 0], base[1, 1], base[1, 2]
            lp0, lp1, lp2 = base[2, 0], base[2, 1], base[2, 2]
            ap0, ap1, ap2 = base[3, 0] - gravity[0], base[3, 1] - gravity[1], base[3, 2] - gravity[2]
            r0, r1, r2 = p[i, 0], p[i, 1], p[i, 2]
        else:
            wp0, wp1, wp2 = w[pa, 0], w[pa, 1], w[pa, 2]
            vp0, vp1, vp2 = v[pa, 0], v[pa, 1], v[pa, 2]
            lp0, lp1, lp2 = al[pa, 0], al[pa, 1], al[pa, 2]
            ap0, ap1, ap2 = a[pa, 0], a[pa, 1], a[pa, 2]
            r0, r1, r2 = p[i, 0] - p[pa, 0], p[i, 1] - p[pa, 1], p[i, 2] - p[pa, 2]
        # origin velocity and acceleration carried from the parent
        c0, c1, c2 = cross(wp0, wp1, wp2, r0, r1, r2)
        v0, v1, v2 = vp0 + c0, vp1 + c1, vp2 + c2
        x0, x1, x2 = cross(lp0, lp1, lp2, r0, r1, r2)
        y0, y1, y2 = cross(wp0, wp1, wp2, c0, c1, c2)
        a0, a1, a2 = ap0 + x0 + y0, ap1 + x1 + y1, ap2 + x2 + y2
        w0, w1, w2 = wp0, wp1, wp2
        l0, l1, l2 = lp0, lp1, lp2
        if kind != FIXED:
            j = dof[i]
            if kind == SPHERICAL:  # relative angular velocity, child axes -> base axes
                s0, s1, s2 = qd[j], qd[j + 1], qd[j + 2]
                u0 = R[i, 0, 0] * s0 + R[i, 0, 1] * s1 + R[i, 0, 2] * s2
                u1 = R[i, 1, 0] * s0 + R[i, 1, 1] * s1 + R[i, 1, 2] * s2
                u2 = R[i, 2, 0] * s0 + R[i, 2, 1] * s1 + R[i, 2, 2] * s2
            else:
                u = qd[j]
                u0, u1, u2 = aw[i, 0] * u, aw[i, 1] * u, aw[i, 2] * u
            z0, z1, z2 = cross(wp0, wp1, wp2, u0, u1, u2)
            if kind != PRISMATIC:
                w0, w1, w2 = w0 + u0, w1 + u1, w2 + u2
                l0, l1, l2 = l0 + z0, l1 + z1, l2 + z2
            else:
                v0, v1, v2 = v0 + u0, v1 + u1, v2 + u2
                a0, a1, a2 = a0 + 2.0 * z0, a1 + 2.0 * z1, a2 + 2.0 * z2
        w[i, 0], w[i, 1], w[i, 2] = w0, w1, w2
        v[i, 0], v[i, 1], v[i, 2] = v0, v1, v2
        al[i, 0], al[i, 1], al[i, 2] = l0, l1, l2
        a[i, 0], a[i, 1], a[i, 2] = a0, a1, a2
        # centre of mass
        com = params[i, 16:19]
        for k in range(3):
            d[i, k] = R[i, k, 0] * com[0] + R[i, k, 1] * com[1] + R[i, k, 2] * com[2]
        d0, d1, d2 = d[i, 0], d[i, 1], d[i, 2]
        e0, e1, e2 = cross(w0, w1, w2, d0, d1, d2)
        vc0, vc1, vc2 = v0 + e0, v1 + e1, v2 + e2
        f0, f1, f2 = cross(l0, l1, l2, d0, d1, d2)
        g0, g1, g2 = cross(w0, w1, w2, e0, e1, e2)
        m = params[i, 15]
        F[i, 0], F[i, 1], F[i, 2] = m * (a0 + f0 + g0), m * (a1 + f1 + g1), m * (a2 + f2 + g2)
        # rotational: I_w al + w x (I_w w), I_w = R I R^T, evaluated in link axes then rotated back
        Ic = params[i, 19:28]
        bl0 = R[i, 0, 0] * l0 + R[i, 1, 0] * l1 + R[i, 2, 0] * l2  # R^T al
        bl1 = R[i, 0, 1] * l0 + R[i, 1, 1] * l1 + R[i, 2, 1] * l2
        bl2 = R[i, 0, 2] * l0 + R[i, 1, 2] * l1 + R[i, 2, 2] * l2
        bw0 = R[i, 0, 0] * w0 + R[i, 1, 0] * w1 + R[i, 2, 0] * w2  # R^T w
        bw1 = R[i, 0, 1] * w0 + R[i, 1, 1] * w1 + R[i, 2, 1] * w2
        bw2 = R[i, 0, 2] * w0 + R[i, 1, 2] * w1 + R[i, 2, 2] * w2
        Iw0 = Ic[0] * bw0 + Ic[1] * bw1 + Ic[2] * bw2
        Iw1 = Ic[3] * bw0 + Ic[4] * bw1 + Ic[5] * bw2
        Iw2 = Ic[6] * bw0 + Ic[7] * bw1 + Ic[8] * bw2
        gw0, gw1, gw2 = cross(bw0, bw1, bw2, Iw0, Iw1, Iw2)
        nl0 = Ic[0] * bl0 + Ic[1] * bl1 + Ic[2] * bl2 + gw0
        nl1 = Ic[3] * bl0 + Ic[4] * bl1 + Ic[5] * bl2 + gw1
        nl2 = Ic[6] * bl0 + Ic[7] * bl1 + Ic[8] * bl2 + gw2
        for k in range(3):
            N[i, k] = R[i, k, 0] * nl0 + R[i, k, 1] * nl1 + R[i, k, 2] * nl2
        # fluid: buoyancy against gravity, drag against the centre-of-mass velocity
        buoy = params[i, 28]
        fe0, fe1, fe2 = -buoy * gravity[0], -buoy * gravity[1], -buoy * gravity[2]
        cn, ca = params[i, 29], params[i, 30]
        if cn != 0.0 or ca != 0.0:
            t0, t1, t2 = R[i, 0, 2], R[i, 1, 2], R[i, 2, 2]
            va = vc0 * t0 + vc1 * t1 + vc2 * t2
            n0, n1, n2 = vc0 - va * t0, vc1 - va * t1, vc2 - va * t2
            vn = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
            fe0 -= cn * vn * n0 + ca * abs(va) * va * t0
            fe1 -= cn * vn * n1 + ca * abs(va) * va * t1
            fe2 -= cn * vn * n2 + ca * abs(va) * va * t2
        Fe[i, 0], Fe[i, 1], Fe[i, 2] = fe0, fe1, fe2
        for k in range(3):
            loads[1, i, k] = F[i, k] - Fe[i, k]
    # backward: forces and moments (about the link origin) through each joint
    work[9:13] = 0.0
    f = work[9]  # force through the joint (from the parent)
    mo = work[10]  # its moment about the link origin
    ff = work[11]  # the same for the fluid loads alone
    mf = work[12]
    for i in range(n - 1, -1, -1):
        d0, d1, d2 = d[i, 0], d[i, 1], d[i, 2]
        c0, c1, c2 = cross(d0, d1, d2, F[i, 0], F[i, 1], F[i, 2])
        e0, e1, e2 = cross(d0, d1, d2, Fe[i, 0], Fe[i, 1], Fe[i, 2])
        mo[i, 0] += N[i, 0] + c0
        mo[i, 1] += N[i, 1] + c1
        mo[i, 2] += N[i, 2] + c2
        mf[i, 0] += e0
        mf[i, 1] += e1
        mf[i, 2] += e2
        for k in range(3):
            f[i, k] += F[i, k]
            ff[i, k] += Fe[i, k]
            loads[0, i, k] = f[i, k] - ff[i, k]
        j = dof[i]
        kind = jtype[i]
        if kind == REVOLUTE:
            h[j] = aw[i, 0] * mo[i, 0] + aw[i, 1] * mo[i, 1] + aw[i, 2] * mo[i, 2]
            tau_f[j] = aw[i, 0] * mf[i, 0] + aw[i, 1] * mf[i, 1] + aw[i, 2] * mf[i, 2]
        elif kind == PRISMATIC:
            h[j] = aw[i, 0] * f[i, 0] + aw[i, 1] * f[i, 1] + aw[i, 2] * f[i, 2]
            tau_f[j] = aw[i, 0] * ff[i, 0] + aw[i, 1] * ff[i, 1] + aw[i, 2] * ff[i, 2]
        elif kind == SPHERICAL:  # the moment's child-axis components
            for k in range(3):
                h[j + k] = R[i, 0, k] * mo[i, 0] + R[i, 1, k] * mo[i, 1] + R[i, 2, k] * mo[i, 2]
                tau_f[j + k] = R[i, 0, k] * mf[i, 0] + R[i, 1, k] * mf[i, 1] + R[i, 2, k] * mf[i, 2]
        pa = parent[i]
        if pa >= 0:
            r0, r1, r2 = p[i, 0] - p[pa, 0], p[i, 1] - p[pa, 1], p[i, 2] - p[pa, 2]
            c0, c1, c2 = cross(r0, r1, r2, f[i, 0], f[i, 1], f[i, 2])
            e0, e1, e2 = cross(r0, r1, r2, ff[i, 0], ff[i, 1], ff[i, 2])
            mo[pa, 0] += mo[i, 0] + c0
            mo[pa, 1] += mo[i, 1] + c1
            mo[pa, 2] += mo[i, 2] + c2
            mf[pa, 0] += mf[i, 0] + e0
            mf[pa, 1] += mf[i, 1] + e1
            mf[pa, 2] += mf[i, 2] + e2
            for k in range(3):
                f[pa, k] += f[i, k]
                ff[pa, k] += ff[i, k]


@numba.njit(cache=True)
def joint_axes(jtype, dof, params, R, p, S) -> None:
    """Motion subspaces ``S (n_dof, 6)``: per velocity entry ``[axis; p x axis]`` (rotational) or ``[0;
    axis]`` (prismatic), about the base origin in base axes; a spherical joint's three entries turn about
    its child's axes through its origin."""
    n = jtype.shape[0]
    for i in range(n):
        kind = jtype[i]
        if kind == FIXED:
            continue
        j = dof[i]
        for k in range(joint_dofs(kind)):
            if kind == SPHERICAL:
                u0, u1, u2 = R[i, 0, k], R[i, 1, k], R[i, 2, k]
            else:
                axis = params[i, 12:15]
                u0 = R[i, 0, 0] * axis[0] + R[i, 0, 1] * axis[1] + R[i, 0, 2] * axis[2]
                u1 = R[i, 1, 0] * axis[0] + R[i, 1, 1] * axis[1] + R[i, 1, 2] * axis[2]
                u2 = R[i, 2, 0] * axis[0] + R[i, 2, 1] * axis[1] + R[i, 2, 2] * axis[2]
            if kind == PRISMATIC:
                S[j + k, 0], S[j + k, 1], S[j + k, 2] = 0.0, 0.0, 0.0
                S[j + k, 3], S[j + k, 4], S[j + k, 5] = u0, u1, u2
            else:
                S[j + k, 0], S[j + k, 1], S[j + k, 2] = u0, u1, u2
                S[j + k, 3], S[j + k, 4], S[j + k, 5] = cross(p[i, 0], p[i, 1], p[i, 2], u0, u1, u2)


@numba.njit(cache=True, inline="always")
def _transmit(parent, jtype, dof, S, F, out) -> None:
    """``out = J^T F``: the generalized forces of the links' spatial forces ``F (n, 6)`` (``[moment about the
    base origin; force]``, base axes; summed into each parent as the pass goes, so ``F`` is changed), tip to
    base: each joint's ``S^T`` times the force its subtree carries."""
    for i in range(parent.shape[0] - 1, -1, -1):
        kind = jtype[i]
        if kind != FIXED:
            j = dof[i]
            for c in range(joint_dofs(kind)):
                acc = 0.0
                for a in range(6):
                    acc += S[j + c, a] * F[i, a]
                out[j + c] = acc
        pa = parent[i]
        if pa >= 0:
            for a in range(6):
                F[pa, a] += F[i, a]
