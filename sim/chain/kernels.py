"""Compiled (numba) kinematics and dynamics terms of a URDF chain read by :mod:`pccbullet.sim.chain.rigid`.

:func:`bias_and_fluid`: recursive Newton-Euler with ``qdd = 0`` (Coriolis, centrifugal and gravity torques
``h(q, qd)``) and, in the same backward pass, the fluid's generalized forces ``J^T f`` (buoyancy, Morison
drag); :func:`mass_matrix`: the joint-space inertia ``M(q)`` by the composite-rigid-body algorithm.
Arguments are the flat arrays of :class:`pccbullet.sim.chain.rigid.ChainModel` (``parent``, ``jtype``,
``dof``, ``params`` with the column layout given there), all in the limb's base frame.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# Columns of the params array read here besides the kinematic and inertial ones (layout:
# pccbullet.sim.chain.rigid): the added mass across a link's z axis at its centre of mass (kg) and the
# added rotary inertia about the transverse axes through it (kg m^2)
ADDED_MASS = 31
ADDED_INERTIA = 32


@numba.njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):  # type: ignore[no-untyped-def]
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@numba.njit(cache=True)
def _kinematics(parent, jtype, dof, params, q, R, p) -> None:  # type: ignore[no-untyped-def]
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
        x, y, z = params[i, 12], params[i, 13], params[i, 14]
        if jtype[i] == 1:  # R = R_j Rot(axis, q) (Rodrigues)
            angle = q[dof[i]]
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
            for a in range(3):
                for b in range(3):
                    R[i, a, b] = R_j[a, 0] * rot[0, b] + R_j[a, 1] * rot[1, b] + R_j[a, 2] * rot[2, b]
        else:
            for a in range(3):
                for b in range(3):
                    R[i, a, b] = R_j[a, b]
            if jtype[i] == 2:
                qi = q[dof[i]]
                for a in range(3):
                    p[i, a] += (R_j[a, 0] * x + R_j[a, 1] * y + R_j[a, 2] * z) * qi


@numba.njit(cache=True)
def bias_and_fluid(parent, jtype, dof, params, q, qd, gravity, h, tau_f) -> None:  # type: ignore[no-untyped-def]
    """Recursive Newton-Euler (``qdd = 0``) with fluid loads; writes ``h`` and ``tau_f`` (``(n_dof,)``).

    ``h`` is the torque that holds the chain at ``qdd = 0`` against gravity and velocity products (the
    fluid excluded); ``tau_f`` the generalized force the fluid exerts (buoyancy up, drag against the
    centre-of-mass velocity of each link, split into its z-axis and normal parts).
    """
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f)


@numba.njit(cache=True)
def _bias_and_fluid(parent, jtype, dof, params, qd, gravity, R, p, h, tau_f) -> None:  # type: ignore[no-untyped-def]
    """:func:`bias_and_fluid` on link frames ``R``, ``p`` from :func:`_kinematics`."""
    n = parent.shape[0]
    work = np.empty((13, n, 3))  # one allocation for all per-link vectors
    w = work[0]  # angular velocity
    v = work[1]  # velocity of the link origin
    al = work[2]  # angular acceleration
    a = work[3]  # acceleration of the link origin (gravity as a base acceleration)
    aw = work[4]  # joint axis, base axes
    d = work[5]  # link origin -> centre of mass, base axes
    F = work[6]  # force on the link (about its centre of mass: N)
    N = work[7]
    Fe = work[8]  # fluid force at the centre of mass
    for i in range(n):
        pa = parent[i]
        axis = params[i, 12:15]
        for k in range(3):
            aw[i, k] = R[i, k, 0] * axis[0] + R[i, k, 1] * axis[1] + R[i, k, 2] * axis[2]
        if pa < 0:
            wp0, wp1, wp2 = 0.0, 0.0, 0.0
            vp0, vp1, vp2 = 0.0, 0.0, 0.0
            lp0, lp1, lp2 = 0.0, 0.0, 0.0
            ap0, ap1, ap2 = -gravity[0], -gravity[1], -gravity[2]
            r0, r1, r2 = p[i, 0], p[i, 1], p[i, 2]
        else:
            wp0, wp1, wp2 = w[pa, 0], w[pa, 1], w[pa, 2]
            vp0, vp1, vp2 = v[pa, 0], v[pa, 1], v[pa, 2]
            lp0, lp1, lp2 = al[pa, 0], al[pa, 1], al[pa, 2]
            ap0, ap1, ap2 = a[pa, 0], a[pa, 1], a[pa, 2]
            r0, r1, r2 = p[i, 0] - p[pa, 0], p[i, 1] - p[pa, 1], p[i, 2] - p[pa, 2]
        # origin velocity and acceleration carried from the parent
        c0, c1, c2 = _cross(wp0, wp1, wp2, r0, r1, r2)
        v0, v1, v2 = vp0 + c0, vp1 + c1, vp2 + c2
        x0, x1, x2 = _cross(lp0, lp1, lp2, r0, r1, r2)
        y0, y1, y2 = _cross(wp0, wp1, wp2, c0, c1, c2)
        a0, a1, a2 = ap0 + x0 + y0, ap1 + x1 + y1, ap2 + x2 + y2
        w0, w1, w2 = wp0, wp1, wp2
        l0, l1, l2 = lp0, lp1, lp2
        if jtype[i] != 0:
            u = qd[dof[i]]
            u0, u1, u2 = aw[i, 0] * u, aw[i, 1] * u, aw[i, 2] * u
            z0, z1, z2 = _cross(wp0, wp1, wp2, u0, u1, u2)
            if jtype[i] == 1:
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
        e0, e1, e2 = _cross(w0, w1, w2, d0, d1, d2)
        vc0, vc1, vc2 = v0 + e0, v1 + e1, v2 + e2
        f0, f1, f2 = _cross(l0, l1, l2, d0, d1, d2)
        g0, g1, g2 = _cross(w0, w1, w2, e0, e1, e2)
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
        gw0, gw1, gw2 = _cross(bw0, bw1, bw2, Iw0, Iw1, Iw2)
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
    # backward: forces and moments (about the link origin) through each joint
    work[9:13] = 0.0
    f = work[9]  # force through the joint (from the parent)
    mo = work[10]  # its moment about the link origin
    ff = work[11]  # the same for the fluid loads alone
    mf = work[12]
    for i in range(n - 1, -1, -1):
        d0, d1, d2 = d[i, 0], d[i, 1], d[i, 2]
        c0, c1, c2 = _cross(d0, d1, d2, F[i, 0], F[i, 1], F[i, 2])
        e0, e1, e2 = _cross(d0, d1, d2, Fe[i, 0], Fe[i, 1], Fe[i, 2])
        mo[i, 0] += N[i, 0] + c0
        mo[i, 1] += N[i, 1] + c1
        mo[i, 2] += N[i, 2] + c2
        mf[i, 0] += e0
        mf[i, 1] += e1
        mf[i, 2] += e2
        for k in range(3):
            f[i, k] += F[i, k]
            ff[i, k] += Fe[i, k]
        j = dof[i]
        if j >= 0:
            if jtype[i] == 1:
                h[j] = aw[i, 0] * mo[i, 0] + aw[i, 1] * mo[i, 1] + aw[i, 2] * mo[i, 2]
                tau_f[j] = aw[i, 0] * mf[i, 0] + aw[i, 1] * mf[i, 1] + aw[i, 2] * mf[i, 2]
            else:
                h[j] = aw[i, 0] * f[i, 0] + aw[i, 1] * f[i, 1] + aw[i, 2] * f[i, 2]
                tau_f[j] = aw[i, 0] * ff[i, 0] + aw[i, 1] * ff[i, 1] + aw[i, 2] * ff[i, 2]
        pa = parent[i]
        if pa >= 0:
            r0, r1, r2 = p[i, 0] - p[pa, 0], p[i, 1] - p[pa, 1], p[i, 2] - p[pa, 2]
            c0, c1, c2 = _cross(r0, r1, r2, f[i, 0], f[i, 1], f[i, 2])
            e0, e1, e2 = _cross(r0, r1, r2, ff[i, 0], ff[i, 1], ff[i, 2])
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
def _inertia_about_origin(params, R, p, i, out):  # type: ignore[no-untyped-def]
    """Link ``i``'s rotational inertia about the base origin, base axes, into ``out (3, 3)``:
    ``R Ic R^T + m (|c|^2 E - c c^T)``; returns its centre of mass ``c``."""
    m = params[i, 15]
    com = params[i, 16:19]
    Ic = params[i, 19:28]
    c0 = p[i, 0] + R[i, 0, 0] * com[0] + R[i, 0, 1] * com[1] + R[i, 0, 2] * com[2]
    c1 = p[i, 1] + R[i, 1, 0] * com[0] + R[i, 1, 1] * com[1] + R[i, 1, 2] * com[2]
    c2 = p[i, 2] + R[i, 2, 0] * com[0] + R[i, 2, 1] * com[1] + R[i, 2, 2] * com[2]
    cc = c0 * c0 + c1 * c1 + c2 * c2
    for a in range(3):
        ca = c0 if a == 0 else (c1 if a == 1 else c2)
        for b in range(3):
            cb = c0 if b == 0 else (c1 if b == 1 else c2)
            acc = 0.0
            for k in range(3):
                acc += R[i, a, k] * (
                    Ic[3 * k] * R[i, b, 0] + Ic[3 * k + 1] * R[i, b, 1] + Ic[3 * k + 2] * R[i, b, 2]
                )
            out[a, b] = acc + m * ((cc if a == b else 0.0) - ca * cb)
    return c0, c1, c2


@numba.njit(cache=True)
def mass_matrix(parent, jtype, dof, params, q, M) -> None:  # type: ignore[no-untyped-def]
    """Composite-rigid-body joint-space inertia; writes ``M (n_dof, n_dof)``."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, dof, params, q, R, p)
    m_c = np.zeros(n)  # subtree mass
    s_c = np.zeros((n, 3))  # subtree first moment about the base origin
    J_c = np.zeros((n, 3, 3))  # subtree inertia about the base origin
    for i in range(n):
        m = params[i, 15]
        c0, c1, c2 = _inertia_about_origin(params, R, p, i, J_c[i])
        s_c[i, 0], s_c[i, 1], s_c[i, 2] = m * c0, m * c1, m * c2
        m_c[i] = m
    for i in range(n - 1, -1, -1):
        pa = parent[i]
        if pa >= 0:
            m_c[pa] += m_c[i]
            s_c[pa] += s_c[i]
            J_c[pa] += J_c[i]
    for i in range(n):
        di = dof[i]
        if di < 0 or m_c[i] <= 0.0:
            continue
        mt = m_c[i]
        g0, g1, g2 = s_c[i, 0] / mt, s_c[i, 1] / mt, s_c[i, 2] / mt  # subtree centre of mass
        axis = params[i, 12:15]
        u0 = R[i, 0, 0] * axis[0] + R[i, 0, 1] * axis[1] + R[i, 0, 2] * axis[2]
        u1 = R[i, 1, 0] * axis[0] + R[i, 1, 1] * axis[1] + R[i, 1, 2] * axis[2]
        u2 = R[i, 2, 0] * axis[0] + R[i, 2, 1] * axis[1] + R[i, 2, 2] * axis[2]
        # force F and moment Nc (about the subtree's centre of mass) for a unit joint acceleration
        if jtype[i] == 1:
            x0, x1, x2 = _cross(u0, u1, u2, g0 - p[i, 0], g1 - p[i, 1], g2 - p[i, 2])
            F0, F1, F2 = mt * x0, mt * x1, mt * x2
            # inertia about the subtree's centre of mass: J_c - m (|g|^2 E - g g^T)
            gg = g0 * g0 + g1 * g1 + g2 * g2
            J = J_c[i]
            gu = g0 * u0 + g1 * u1 + g2 * u2
            Nc0 = J[0, 0] * u0 + J[0, 1] * u1 + J[0, 2] * u2 - mt * (gg * u0 - g0 * gu)
            Nc1 = J[1, 0] * u0 + J[1, 1] * u1 + J[1, 2] * u2 - mt * (gg * u1 - g1 * gu)
            Nc2 = J[2, 0] * u0 + J[2, 1] * u1 + J[2, 2] * u2 - mt * (gg * u2 - g2 * gu)
        else:
            F0, F1, F2 = mt * u0, mt * u1, mt * u2
            Nc0, Nc1, Nc2 = 0.0, 0.0, 0.0
        j = i
        while j >= 0:  # the joint itself and its ancestors
            dj = dof[j]
            if dj >= 0:
                axis_j = params[j, 12:15]
                b0 = R[j, 0, 0] * axis_j[0] + R[j, 0, 1] * axis_j[1] + R[j, 0, 2] * axis_j[2]
                b1 = R[j, 1, 0] * axis_j[0] + R[j, 1, 1] * axis_j[1] + R[j, 1, 2] * axis_j[2]
                b2 = R[j, 2, 0] * axis_j[0] + R[j, 2, 1] * axis_j[1] + R[j, 2, 2] * axis_j[2]
                if jtype[j] == 1:
                    c0, c1, c2 = _cross(g0 - p[j, 0], g1 - p[j, 1], g2 - p[j, 2], F0, F1, F2)
                    val = b0 * (Nc0 + c0) + b1 * (Nc1 + c1) + b2 * (Nc2 + c2)
                else:
                    val = b0 * F0 + b1 * F1 + b2 * F2
                M[dj, di] = val
                M[di, dj] = val
            j = parent[j]
