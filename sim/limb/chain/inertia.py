"""Compiled (numba) inertias of a URDF chain: link spatial inertias and the joint-space inertia ``M(q)``.

Spatial vectors are ``[angular; linear]`` about the base origin in base axes (as in
:mod:`pccbullet.sim.limb.chain.solve`): a link's spatial inertia is ``[[Ic + m [c]x [c]x^T, m [c]x], [m
[c]x^T, m 1]]`` with ``c`` its centre of mass. Arguments are the flat arrays of
:class:`pccbullet.sim.limb.chain.rigid.ChainModel`.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.limb.chain.kernels import FIXED, _kinematics, joint_axes, joint_dofs


@numba.njit(cache=True)
def _inertia_about_origin(params, R, p, i, out):
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
def spatial_inertia(params, R, p, i, out) -> None:
    """Link ``i``'s rigid-body spatial inertia about the base origin into ``out (6, 6)`` (overwritten)."""
    m = params[i, 15]
    c0, c1, c2 = _inertia_about_origin(params, R, p, i, out[:3, :3])
    for a in range(3):
        for b in range(3):
            out[3 + a, 3 + b] = m if a == b else 0.0
    # m [c]x (upper right) and its transpose (lower left)
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -m * c2, m * c1
    out[1, 3], out[1, 4], out[1, 5] = m * c2, 0.0, -m * c0
    out[2, 3], out[2, 4], out[2, 5] = -m * c1, m * c0, 0.0
    for a in range(3):
        for b in range(3):
            out[3 + b, a] = out[a, 3 + b]


@numba.njit(cache=True)
def mass_matrix(parent, jtype, dof, qpos, params, q, M) -> None:
    """Composite-rigid-body joint-space inertia; writes ``M (n_dof, n_dof)``."""
    n = parent.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, qpos, params, q, R, p)
    S = np.zeros((M.shape[0], 6))
    joint_axes(jtype, dof, params, R, p, S)
    IC = np.zeros((n, 6, 6))  # composite (subtree) spatial inertias
    for i in range(n):
        spatial_inertia(params, R, p, i, IC[i])
    for i in range(n - 1, -1, -1):
        pa = parent[i]
        if pa >= 0:
            IC[pa] += IC[i]
    F = np.empty(6)
    for i in range(n):
        if jtype[i] == FIXED:
            continue
        di = dof[i]
        for c in range(joint_dofs(jtype[i])):
            for a in range(6):  # the spatial force of a unit acceleration of column di + c
                acc = 0.0
                for b in range(6):
                    acc += IC[i, a, b] * S[di + c, b]
                F[a] = acc
            j = i
            while j >= 0:  # the joint itself and its ancestors
                if jtype[j] != FIXED:
                    dj = dof[j]
                    for cj in range(joint_dofs(jtype[j])):
                        val = 0.0
                        for a in range(6):
                            val += S[dj + cj, a] * F[a]
                        M[dj + cj, di + c] = val
                        M[di + c, dj + cj] = val
                j = parent[j]
