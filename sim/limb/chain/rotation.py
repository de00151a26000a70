"""Compiled (numba) rotation helpers of the chain kernels: quaternions, x-y-z Euler angles, the rotation
vector (log map) and its Jacobian, for the spherical joints of the rod chain; the cross product of three
floats each, also used by the Newton–Euler model's kernels (:mod:`pccbullet.sim.models.newton_euler.kernels`).

Quaternions are ``(x, y, z, w)`` as PyBullet writes them, passed as four floats. A spherical joint's
position is the quaternion of the child's rotation relative to the joint frame; its velocity is the
child's angular velocity relative to the parent, in child axes (PyBullet's convention, tested in
``tests/test_chain_spherical.py``). The numpy counterparts for the user's joint vector are in
:mod:`pccbullet.urdf_gen.rod`.
"""

from __future__ import annotations

import math

import numba


@numba.njit(cache=True, inline="always")
def cross(a0, a1, a2, b0, b1, b2):
    """``a x b`` of ``a = (a0, a1, a2)``, ``b = (b0, b1, b2)``."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@numba.njit(cache=True, inline="always")
def quat_mul(ax, ay, az, aw, bx, by, bz, bw):
    """``a b`` (Hamilton product), ``(x, y, z, w)``."""
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


@numba.njit(cache=True, inline="always")
def euler_xyz_quat(a, b, c):
    """Quaternion of ``Rx(a) Ry(b) Rz(c)`` (intrinsic x-y-z Euler angles, rad), ``w >= 0`` for
    ``|a|, |b|, |c| < pi / 2`` (the rod chain's node angles)."""
    sa, ca = math.sin(0.5 * a), math.cos(0.5 * a)
    sb, cb = math.sin(0.5 * b), math.cos(0.5 * b)
    sc, cc = math.sin(0.5 * c), math.cos(0.5 * c)
    x, y, z, w = quat_mul(sa, 0.0, 0.0, ca, 0.0, sb, 0.0, cb)
    return quat_mul(x, y, z, w, 0.0, 0.0, sc, cc)


@numba.njit(cache=True, inline="always")
def quat_half(x, y, z, w):
    """The square root of a unit quaternion: the rotation by half the angle about the same axis
    (``w >= 0`` in and out: the rotation by less than pi, taken the short way)."""
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    w1 = w + 1.0
    norm = math.sqrt(x * x + y * y + z * z + w1 * w1)
    return x / norm, y / norm, z / norm, w1 / norm


@numba.njit(cache=True, inline="always")
def quat_log(x, y, z, w):
    """Rotation vector (rad) of a unit quaternion, angle in ``[0, pi]``."""
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    s = math.sqrt(x * x + y * y + z * z)
    k = 2.0 / w if s < 1e-9 else 2.0 * math.atan2(s, w) / s
    return k * x, k * y, k * z


@numba.njit(cache=True, inline="always")
def quat_matrix(x, y, z, w, out) -> None:
    """Rotation matrix of a quaternion (normalized here) into ``out (3, 3)``."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    out[0, 0] = 1.0 - s * (y * y + z * z)
    out[0, 1] = s * (x * y - z * w)
    out[0, 2] = s * (x * z + y * w)
    out[1, 0] = s * (x * y + z * w)
    out[1, 1] = 1.0 - s * (x * x + z * z)
    out[1, 2] = s * (y * z - x * w)
    out[2, 0] = s * (x * z - y * w)
    out[2, 1] = s * (y * z + x * w)
    out[2, 2] = 1.0 - s * (x * x + y * y)


@numba.njit(cache=True, inline="always")
def rotate(x, y, z, w, v0, v1, v2):
    """``R(q) v`` for a unit quaternion ``q``."""
    # t = 2 (u x v); v' = v + w t + u x t
    t0 = 2.0 * (y * v2 - z * v1)
    t1 = 2.0 * (z * v0 - x * v2)
    t2 = 2.0 * (x * v1 - y * v0)
    return (
        v0 + w * t0 + (y * t2 - z * t1),
        v1 + w * t1 + (z * t0 - x * t2),
        v2 + w * t2 + (x * t1 - y * t0),
    )


@numba.njit(cache=True, inline="always")
def log_jacobian_transpose_apply(t0, t1, t2, g0, g1, g2):
    """``J_r^-T(theta) g``: the torque about the child that the potential gradient ``g = dV/dtheta``
    amounts to, for the rotation vector ``theta`` of ``R = exp(theta)`` perturbed on the right.

    ``J_r^-1(theta) = 1 + 1/2 [theta]x + c [theta]x^2`` with ``c = 1/|theta|^2 - (1 + cos|theta|) / (2
    |theta| sin|theta|)``, so ``J_r^-T g = g - 1/2 theta x g + c theta x (theta x g)``."""
    a2 = t0 * t0 + t1 * t1 + t2 * t2
    if a2 < 0.0625:  # |theta| < 0.25 rad: the series, exact to 3e-13 (and no cancellation)
        c = 1.0 / 12.0 + a2 * (1.0 / 720.0 + a2 * (1.0 / 30240.0 + a2 / 1209600.0))
    else:
        a = math.sqrt(a2)
        c = 1.0 / a2 - (1.0 + math.cos(a)) / (2.0 * a * math.sin(a))
    x0, x1, x2 = t1 * g2 - t2 * g1, t2 * g0 - t0 * g2, t0 * g1 - t1 * g0  # theta x g
    y0, y1, y2 = t1 * x2 - t2 * x1, t2 * x0 - t0 * x2, t0 * x1 - t1 * x0  # theta x (theta x g)
    return g0 - 0.5 * x0 + c * y0, g1 - 0.5 * x1 + c * y1, g2 - 0.5 * x2 + c * y2
