"""Compiled (numba) added mass of a chain's links in a fluid, for the implicit step of
:mod:`pccbullet.sim.limb.chain.solve`: a link's added-mass spatial inertia (in the articulated-body inertias),
the generalized forces of its added mass at given accelerations, and those of a moving base's
acceleration. A link with added-mass columns (``ADDED_MASS``, ``ADDED_INERTIA`` of
:class:`pccbullet.sim.limb.chain.rigid.ChainModel`: the slices in a fluid) has the translational mass ``m_a (1
- t t^T)`` at its centre of mass and the rotary inertia ``j_a (1 - t t^T)`` about it, ``t`` its z axis.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.limb.chain.kernels import ADDED_INERTIA, ADDED_MASS, _transmit
from pccbullet.sim.limb.chain.rotation import cross


@numba.njit(cache=True, inline="always")
def _added_at(params, R, p, i):
    """Link ``i``'s added mass and rotary inertia, its z axis and centre of mass (base axes)."""
    com = params[i, 16:19]
    c0 = p[i, 0] + R[i, 0, 0] * com[0] + R[i, 0, 1] * com[1] + R[i, 0, 2] * com[2]
    c1 = p[i, 1] + R[i, 1, 0] * com[0] + R[i, 1, 1] * com[1] + R[i, 1, 2] * com[2]
    c2 = p[i, 2] + R[i, 2, 0] * com[0] + R[i, 2, 1] * com[1] + R[i, 2, 2] * com[2]
    return params[i, ADDED_MASS], params[i, ADDED_INERTIA], R[i, 0, 2], R[i, 1, 2], R[i, 2, 2], c0, c1, c2


@numba.njit(cache=True)
def _add_added_inertia(params, R, p, i, I6) -> None:
    """Add link ``i``'s added-mass spatial inertia about the base origin to ``I6 (6, 6)``:
    ``[[j_a P + [c]x Ma [c]x^T, [c]x Ma], [Ma [c]x^T, Ma]]`` with ``Ma = m_a P``, ``P = 1 - t t^T``;
    written out with ``w = c x t``: ``[c]x Ma = m_a ([c]x - w t^T)`` and
    ``[c]x Ma [c]x^T = m_a (|c|^2 1 - c c^T - w w^T)``."""
    ma, ja, t0, t1, t2, c0, c1, c2 = _added_at(params, R, p, i)
    t = (t0, t1, t2)
    c = (c0, c1, c2)
    w = cross(c0, c1, c2, t0, t1, t2)
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
def _added_mass_forces(parent, jtype, dof, params, R, p, S, acc6, fa) -> None:
    """``fa = M_a qdd``: the generalized forces of the links' added masses at the spatial accelerations
    ``acc6 (n, 6)`` (``[angular; linear]`` about the base origin, from ``qdd`` alone)."""
    n = parent.shape[0]
    Fs = np.zeros((n, 6))  # spatial forces [moment about the origin; force]
    for i in range(n):
        ma, ja, t0, t1, t2, c0, c1, c2 = _added_at(params, R, p, i)
        if ma == 0.0 and ja == 0.0:
            continue
        l0, l1, l2 = acc6[i, 0], acc6[i, 1], acc6[i, 2]
        x0, x1, x2 = cross(l0, l1, l2, c0, c1, c2)
        a0, a1, a2 = acc6[i, 3] + x0, acc6[i, 4] + x1, acc6[i, 5] + x2  # centre-of-mass acceleration
        ta = t0 * a0 + t1 * a1 + t2 * a2
        F0, F1, F2 = ma * (a0 - ta * t0), ma * (a1 - ta * t1), ma * (a2 - ta * t2)
        tl = t0 * l0 + t1 * l1 + t2 * l2
        m0, m1, m2 = cross(c0, c1, c2, F0, F1, F2)
        Fs[i, 0] = ja * (l0 - tl * t0) + m0
        Fs[i, 1] = ja * (l1 - tl * t1) + m1
        Fs[i, 2] = ja * (l2 - tl * t2) + m2
        Fs[i, 3], Fs[i, 4], Fs[i, 5] = F0, F1, F2
    _transmit(parent, jtype, dof, S, Fs, fa)


@numba.njit(cache=True, inline="always")
def accelerates(base) -> bool:
    """Whether a base motion ``base (4, 3)`` (:func:`pccbullet.sim.limb.chain.solve.moving_spring_torques`)
    has an angular velocity, angular acceleration or acceleration: whether its added-mass forces are not
    zero."""
    for r in (0, 2, 3):
        for c in range(3):
            if base[r, c] != 0.0:
                return True
    return False


@numba.njit(cache=True)
def base_added_mass(parent, jtype, dof, params, R, p, S, base, ext) -> None:
    """``ext -= J^T (added-mass forces of the base's motion)``: each link with added mass at the acceleration
    ``a_0 + alpha_0 x c + omega_0 x (omega_0 x c)`` of the base-fixed point at its centre ``c`` and the
    angular acceleration ``alpha_0`` (``base`` as
    :func:`pccbullet.sim.limb.chain.solve.moving_spring_torques` takes it)."""
    n = parent.shape[0]
    acc6 = np.zeros((n, 6))
    w0, w1, w2 = base[0, 0], base[0, 1], base[0, 2]
    for i in range(n):
        _, _, _, _, _, c0, c1, c2 = _added_at(params, R, p, i)
        x0, x1, x2 = cross(w0, w1, w2, c0, c1, c2)
        y0, y1, y2 = cross(w0, w1, w2, x0, x1, x2)
        acc6[i, 0], acc6[i, 1], acc6[i, 2] = base[2, 0], base[2, 1], base[2, 2]
        acc6[i, 3], acc6[i, 4], acc6[i, 5] = base[3, 0] + y0, base[3, 1] + y1, base[3, 2] + y2
    forces = np.zeros(ext.shape[0])
    _added_mass_forces(parent, jtype, dof, params, R, p, S, acc6, forces)
    for j in range(ext.shape[0]):
        ext[j] -= forces[j]
