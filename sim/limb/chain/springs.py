"""Compiled (numba) joint springs of a URDF chain's implicit step (:mod:`pccbullet.sim.limb.chain.solve`), and
the rod chain's shear.

Joint springs. A revolute or prismatic joint: ``-K (q - q*)``, its armature the scalar ``dt (C + dt K)``.
A spherical joint (a rod chain's node, :mod:`pccbullet.urdf_gen.rod`): its target ``q*`` is three x-y-z
Euler angles, the rest rotation ``R0``; the deviation ``R_dev = R0^(-1/2) R R0^(-1/2)`` is measured in the
frame halfway through the rest turn (the node's midpoint, where the rod's curvature is sampled), its
rotation vector ``theta`` gives the potential ``1/2 theta^T K theta`` with ``K = diag(k_x, k_y, k_twist)``
in that frame, whose exact gradient (through the log map's Jacobian) is the spring torque. Damping acts on
the relative angular velocity in the same frame; the armature is the 3 x 3 block ``R0^(1/2)T dt (C + dt
K) R0^(1/2)`` in child axes. Measured halfway, the error of splitting a load into bending and torsion is
second order in the node's rest turn (after the node it would be first order).

Shear (rod chains, chord links with a shear compliance ``1 / (kappa G A)``): each chord tilts from its
cross-section's director by the shear strain ``gamma = F_perp / (kappa G A)`` of the load it carries
(Timoshenko), with ``F`` the force its joint passes on at the chord's middle, from the same Newton-Euler
pass (gravity, velocity terms, buoyancy, drag; quasi-static: contact and the acceleration's inertial forces
are not in it). The nodes' springs then see the directors' rotation: node k's deviation loses the tilt of
the chord after it and gains the tilt of the chord before it.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.limb.chain.kernels import FIXED, PRISMATIC, SHEAR, SPHERICAL
from pccbullet.sim.limb.chain.rotation import (
    cross,
    euler_xyz_quat,
    log_jacobian_transpose_apply,
    quat_half,
    quat_log,
    quat_matrix,
    quat_mul,
    rotate,
)


@numba.njit(cache=True)
def joint_springs(parent, jtype, dof, qpos, params, R, loads, q, qd, target, K, C, dt, ext, arm) -> None:
    """The springs and dampers of every joint at ``q + dt qd`` into ``ext (n_dof,)`` and their armature
    into ``arm (n_dof, 3)`` (1-dof joints: ``[d, 0]``; spherical: the 3 x 3 block ``[d:d+3, :]``); link
    frames ``R`` and the joints' ``loads`` from :func:`pccbullet.sim.limb.chain.kernels._bias_and_fluid`."""
    n = parent.shape[0]
    tilt = np.zeros((n, 3))
    _shear_tilts(jtype, params, R, loads, tilt)
    Q = np.empty((3, 3))
    for i in range(n):
        kind = jtype[i]
        if kind == FIXED:
            continue
        d = dof[i]
        if kind != SPHERICAL:
            s = -K[d] * (q[qpos[i]] + dt * qd[d] - target[d]) - C[d] * qd[d]
            ext[d] = s
            arm[d, 0] = dt * (C[d] + dt * K[d])
            continue
        # the node's shear shift: the tilt of the chord before it less the tilt of the one after it
        pa = parent[i]
        b0, b1, b2 = (tilt[pa, 0], tilt[pa, 1], tilt[pa, 2]) if pa >= 0 else (0.0, 0.0, 0.0)
        after = i + 1 if i + 1 < n and parent[i + 1] == i else -1
        if after >= 0:
            b0, b1, b2 = b0 - tilt[after, 0], b1 - tilt[after, 1], b2 - tilt[after, 2]
        k = qpos[i]
        rx, ry, rz, rw = euler_xyz_quat(target[d], target[d + 1], target[d + 2])
        hx, hy, hz, hw = quat_half(rx, ry, rz, rw)
        # R_dev = R0h^T R R0h^T and its rotation vector (frame halfway through the rest turn)
        x, y, z, w = quat_mul(-hx, -hy, -hz, hw, q[k], q[k + 1], q[k + 2], q[k + 3])
        x, y, z, w = quat_mul(x, y, z, w, -hx, -hy, -hz, hw)
        t0, t1, t2 = quat_log(x, y, z, w)
        c0 = R[i, 0, 0] * b0 + R[i, 1, 0] * b1 + R[i, 2, 0] * b2  # shift in child axes ...
        c1 = R[i, 0, 1] * b0 + R[i, 1, 1] * b1 + R[i, 2, 1] * b2
        c2 = R[i, 0, 2] * b0 + R[i, 1, 2] * b1 + R[i, 2, 2] * b2
        e0, e1, e2 = rotate(hx, hy, hz, hw, c0, c1, c2)  # ... and halfway
        g0, g1, g2 = K[d] * (t0 + e0), K[d + 1] * (t1 + e1), K[d + 2] * (t2 + e2)
        m0, m1, m2 = log_jacobian_transpose_apply(t0, t1, t2, g0, g1, g2)
        v0, v1, v2 = rotate(hx, hy, hz, hw, qd[d], qd[d + 1], qd[d + 2])  # relative spin, halfway
        m0 += (C[d] + dt * K[d]) * v0
        m1 += (C[d + 1] + dt * K[d + 1]) * v1
        m2 += (C[d + 2] + dt * K[d + 2]) * v2
        s0, s1, s2 = rotate(-hx, -hy, -hz, hw, m0, m1, m2)  # back to child axes
        ext[d], ext[d + 1], ext[d + 2] = -s0, -s1, -s2
        quat_matrix(hx, hy, hz, hw, Q)  # child axes -> halfway axes
        for r in range(3):
            for c in range(3):
                acc = 0.0
                for j in range(3):
                    acc += Q[j, r] * dt * (C[d + j] + dt * K[d + j]) * Q[j, c]
                arm[d + r, c] = acc


@numba.njit(cache=True)
def _shear_tilts(jtype, params, R, loads, tilt) -> None:
    """Rotation vectors ``tilt (n, 3)`` (base axes) by which each chord with a shear compliance turns from
    its cross-section's director: towards the transverse load it carries at its middle, by ``gamma = |F_perp|
    / (kappa G A)``; zero elsewhere. ``loads`` as written by
    :func:`pccbullet.sim.limb.chain.kernels._bias_and_fluid`."""
    n = jtype.shape[0]
    for i in range(n):
        compliance = params[i, SHEAR]
        if jtype[i] != PRISMATIC or compliance == 0.0:
            continue
        axis = params[i, 12:15]
        t0 = R[i, 0, 0] * axis[0] + R[i, 0, 1] * axis[1] + R[i, 0, 2] * axis[2]
        t1 = R[i, 1, 0] * axis[0] + R[i, 1, 1] * axis[1] + R[i, 1, 2] * axis[2]
        t2 = R[i, 2, 0] * axis[0] + R[i, 2, 1] * axis[1] + R[i, 2, 2] * axis[2]
        # the force the parent side passes on at the chord's middle: half the slice's own load less
        f0 = loads[0, i, 0] - 0.5 * loads[1, i, 0]
        f1 = loads[0, i, 1] - 0.5 * loads[1, i, 1]
        f2 = loads[0, i, 2] - 0.5 * loads[1, i, 2]
        ft = f0 * t0 + f1 * t1 + f2 * t2
        # the chord leans towards the load on the part beyond it, -F
        g0 = -compliance * (f0 - ft * t0)
        g1 = -compliance * (f1 - ft * t1)
        g2 = -compliance * (f2 - ft * t2)
        tilt[i, 0], tilt[i, 1], tilt[i, 2] = cross(t0, t1, t2, g0, g1, g2)
