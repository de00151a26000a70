"""Kinematics of constant-strain pieces for the improved Newton–Euler model (seed 000 sec. 2.1).

A piece i has rest length ``l0`` and strain state ``q_i = [eps, kx, ky, kz]`` (seed 000's
``[eps_i, kx_i, ky_i, kz_i]``): axial strain, the two bending curvatures and torsion. Curvatures here are
*material* curvatures per rest length, so the piece's bending rotation vector is
``rho = l0 (kx, ky, 0)`` (bend angle ``theta = |rho|``, seed 000's ``theta_i``), its twist is
``tau = l0 kz`` and its arc length is ``l = l0 (1 + eps)``. Seed 000 measures curvature per current
length: ``k_paper = k_here / (1 + eps)``; both describe the same arc.

The tip frame of a piece in its base frame (seed 000 eq. 3, the extended D–H transform) is::

    R = exp(rho^) Rz(tau),  p = l (rho_y A, -rho_x A, B),  A = (1 - cos th)/th^2,  B = sin th / th

``exp(rho^) = Rz(phi) Ry(theta) Rz(-phi)``: the bending plane is undone at the tip (a bent, untwisted rod's
material frame), unlike :func:`pccbullet.urdf_gen.pcc.arc_transform`;
:mod:`pccbullet.sim.models.joint_targets` converts.

All functions are vectorized over pieces: inputs ``(n, 4)``, outputs ``(n, ...)``.
"""

from __future__ import annotations

import numpy as np

from pccbullet.core.types import FloatArray

_SMALL = 0.05  # rad: below this bend angle the series expansions are used


def _coeffs(th: FloatArray) -> tuple[FloatArray, ...]:
    """A, B, C, A'/th, B'/th of the bend angle ``th`` ``(n,)`` (series near 0)."""
    small = th < _SMALL
    t = np.where(small, 1.0, th)
    s, c = np.sin(t), np.cos(t)
    i1 = 1.0 / t
    i2 = i1 * i1
    omc = 1.0 - c
    A = omc * i2
    B = s * i1
    C = (t - s) * i2 * i1
    dA = (t * s - 2.0 * omc) * i2 * i2
    dB = (t * c - s) * i2 * i1
    if small.any():
        t2 = th[small] ** 2
        t4 = t2 * t2
        A[small] = 0.5 - t2 / 24.0 + t4 / 720.0
        B[small] = 1.0 - t2 / 6.0 + t4 / 120.0
        C[small] = 1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0
        dA[small] = -1.0 / 12.0 + t2 / 180.0 - t4 / 6720.0
        dB[small] = -1.0 / 3.0 + t2 / 30.0 - t4 / 840.0
    return A, B, C, dA, dB


def piece_pose(q: FloatArray, l0: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Tip frames of pieces in their base frames.

    Args:
        q: strains ``(n, 4)`` [eps (-), kx, ky, kz (1/m)].
        l0: rest lengths ``(n,)`` (m).

    Returns:
        R ``(n, 3, 3)`` and p ``(n, 3)`` (m).
    """
    rx, ry, tau = l0 * q[:, 1], l0 * q[:, 2], l0 * q[:, 3]
    arc = l0 * (1.0 + q[:, 0])
    th = np.hypot(rx, ry)
    A, B, _, _, _ = _coeffs(th)
    n = len(l0)
    Rb = np.empty((n, 3, 3))
    # Rodrigues: I + B K + A K^2 with K = skew(rx, ry, 0)
    Rb[:, 0, 0] = 1.0 - A * ry * ry
    Rb[:, 0, 1] = A * rx * ry
    Rb[:, 0, 2] = B * ry
    Rb[:, 1, 0] = A * rx * ry
    Rb[:, 1, 1] = 1.0 - A * rx * rx
    Rb[:, 1, 2] = -B * rx
    Rb[:, 2, 0] = -B * ry
    Rb[:, 2, 1] = B * rx
    Rb[:, 2, 2] = 1.0 - A * th * th
    ct, st = np.cos(tau), np.sin(tau)
    R = np.empty_like(Rb)
    R[:, :, 0] = Rb[:, :, 0] * ct[:, None] + Rb[:, :, 1] * st[:, None]
    R[:, :, 1] = -Rb[:, :, 0] * st[:, None] + Rb[:, :, 1] * ct[:, None]
    R[:, :, 2] = Rb[:, :, 2]
    p = np.stack([arc * ry * A, -arc * rx * A, arc * B], axis=1)
    return R, p


def piece_jacobians(q: FloatArray, l0: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Tip frames and local Jacobians of pieces, all in each piece's base frame.

    Returns:
        R ``(n, 3, 3)``, p ``(n, 3)``, Jp ``(n, 3, 4)`` = dp/dq (tip linear velocity per strain rate) and
        Jw ``(n, 3, 4)`` (tip angular velocity per strain rate; left Jacobian of SO(3) for bending).
    """
    R, p = piece_pose(q, l0)
    rx, ry = l0 * q[:, 1], l0 * q[:, 2]
    arc = l0 * (1.0 + q[:, 0])
    th = np.hypot(rx, ry)
    A, B, C, dA, dB = _coeffs(th)
    n = len(l0)
    ll = l0 * arc
    Jp = np.zeros((n, 3, 4))
    Jp[:, :, 0] = (l0 / arc)[:, None] * p
    Jp[:, 0, 1] = ll * ry * rx * dA
    Jp[:, 1, 1] = ll * (-A - rx * rx * dA)
    Jp[:, 2, 1] = ll * rx * dB
    Jp[:, 0, 2] = ll * (A + ry * ry * dA)
    Jp[:, 1, 2] = -ll * rx * ry * dA
    Jp[:, 2, 2] = ll * ry * dB
    Jw = np.zeros((n, 3, 4))
    # left Jacobian I + A K + C K^2, columns x and y, times l0
    Jw[:, 0, 1] = l0 * (1.0 - C * ry * ry)
    Jw[:, 1, 1] = l0 * C * rx * ry
    Jw[:, 2, 1] = -l0 * A * ry
    Jw[:, 0, 2] = l0 * C * rx * ry
    Jw[:, 1, 2] = l0 * (1.0 - C * rx * rx)
    Jw[:, 2, 2] = l0 * A * rx
    Jw[:, :, 3] = l0[:, None] * R[:, :, 2]
    return R, p, Jp, Jw


def chain_rotations(R_local: FloatArray) -> FloatArray:
    """World rotations of piece tips: cumulative products, ``(n, 3, 3)`` -> ``(n + 1, 3, 3)`` (0: base)."""
    n = len(R_local)
    Rw = np.empty((n + 1, 3, 3))
    Rw[0] = np.eye(3)
    for i in range(n):
        np.matmul(Rw[i], R_local[i], out=Rw[i + 1])
    return Rw
