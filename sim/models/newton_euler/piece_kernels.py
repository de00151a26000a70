"""Compiled (numba) local kinematics of one Newton–Euler piece, shared by the kernels of
:mod:`pccbullet.sim.models.newton_euler.kernels`.

:func:`bend_functions`: the bend-angle functions ``A, B, C`` and their derivatives (Taylor series in
``th^2`` below :data:`SERIES_BELOW`, closed form above); :func:`piece_local`: a piece's local tip rotation
and its 13 local columns ``[Jp (4) | Jw (4) | d/dt(Jp) v | d/dt(Jw) v | Jp v | p | Jw v]`` with the
analytic bias terms of :func:`pccbullet.sim.models.newton_euler.piece_kinematics.piece_kinematics` (the numpy
reference). ``@numba.njit(cache=True)``, strict IEEE arithmetic (no ``fastmath``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pccbullet.core.types import FloatArray

SERIES_BELOW = 0.5  # rad: below this bend angle the bend-angle functions use their Taylor series
SERIES_TERMS = 7  # series terms (powers of th^2 up to th^12): truncation < 1e-19 at th = 0.5


def series_matrix() -> FloatArray:
    """Taylor coefficients (in powers of th^2) of A, B, C, A'/th, B'/th, C'/th, (A'/th)'/th, (B'/th)'/th.

    ``(8, SERIES_TERMS)``; row ``r`` column ``j`` is the coefficient of ``th^(2 j)`` of function ``r``.
    """
    k = SERIES_TERMS + 2

    def base(offset: int) -> list[float]:
        return [(-1) ** j / math.factorial(2 * j + offset) for j in range(k)]

    def deriv(c: list[float]) -> list[float]:  # f(t) = sum c_j t^2j  ->  f'(t)/t
        return [2 * (j + 1) * c[j + 1] for j in range(len(c) - 1)]

    a, b, c = base(2), base(1), base(3)
    rows = [a, b, c, deriv(a), deriv(b), deriv(c), deriv(deriv(a)), deriv(deriv(b))]
    return np.array([r[:SERIES_TERMS] for r in rows])


_SERIES = series_matrix()  # frozen into the compiled code as a constant
_SERIES_BELOW2 = SERIES_BELOW * SERIES_BELOW


@numba.njit(cache=True)
def _horner(row: int, x: float) -> float:
    acc = _SERIES[row, SERIES_TERMS - 1]
    for j in range(SERIES_TERMS - 2, -1, -1):
        acc = acc * x + _SERIES[row, j]
    return acc


@numba.njit(cache=True)
def bend_functions(th2: float) -> tuple[float, float, float, float, float, float, float, float]:
    """A, B, C, A'/th, B'/th, C'/th, (A'/th)'/th, (B'/th)'/th of the squared bend angle ``th2``.

    ``A = (1 - cos th)/th^2``, ``B = sin th / th``, ``C = (th - sin th)/th^3`` (scalar twin of
    :func:`pccbullet.sim.models.newton_euler.piece_kinematics.bend_functions`: series below
    :data:`SERIES_BELOW`, closed form above).
    """
    if th2 < _SERIES_BELOW2:
        return (
            _horner(0, th2),
            _horner(1, th2),
            _horner(2, th2),
            _horner(3, th2),
            _horner(4, th2),
            _horner(5, th2),
            _horner(6, th2),
            _horner(7, th2),
        )
    t = math.sqrt(th2)
    s, c = math.sin(t), math.cos(t)
    i1 = 1.0 / t
    i2 = i1 * i1
    i3 = i2 * i1
    i5 = i3 * i2
    omc = 1.0 - c
    ts, tc = t * s, t * c
    return (
        omc * i2,
        s * i1,
        (t - s) * i3,
        (ts - 2.0 * omc) * i2 * i2,
        (tc - s) * i3,
        (3.0 * s - 2.0 * t - tc) * i5,
        (t * tc - 5.0 * ts + 8.0 * omc) * i3 * i3,
        (3.0 * s - 3.0 * tc - t * ts) * i5,
    )


@numba.njit(cache=True)
def _put(
    X: FloatArray,
    k: int,
    c_rp: float,
    c_up: float,
    ex: float,
    ey: float,
    z: float,
    rx: float,
    ry: float,
    ux: float,
    uy: float,
) -> None:
    # column k = c_rp (ry, -rx, 0) + c_up (uy, -ux, 0) + (ex, ey, z)
    X[k, 0] = c_rp * ry + c_up * uy + ex
    X[k, 1] = -c_rp * rx - c_up * ux + ey
    X[k, 2] = z


@numba.njit(cache=True)
def piece_local(l0: float, q: FloatArray, v: FloatArray, o: int, R: FloatArray, X: FloatArray) -> None:
    """Local rotation ``R`` ``(3, 3)`` and columns ``X`` ``(13, 3)`` of the piece with strains
    ``q[o:o + 4]`` and rates ``v[o:o + 4]`` (column ``k`` of
    :func:`pccbullet.sim.models.newton_euler.piece_kinematics.piece_kinematics`' ``X`` is row ``k`` here)."""
    e, ux, uy, w = l0 * v[o], l0 * v[o + 1], l0 * v[o + 2], l0 * v[o + 3]
    rx, ry = l0 * q[o + 1], l0 * q[o + 2]
    arc = l0 * q[o] + l0
    tau = l0 * q[o + 3]
    ct, st = math.cos(tau), math.sin(tau)
    th2 = rx * rx + ry * ry
    ru = rx * ux + ry * uy
    uu = ux * ux + uy * uy
    cr = rx * uy - ry * ux
    A, B, C, dA, dB, dC, ddA, ddB = bend_functions(th2)
    ll = l0 * arc
    Ad, Bd, Cd = dA * ru, dB * ru, dC * ru
    Add = dA * uu + ddA * ru * ru
    Bdd = dB * uu + ddB * ru * ru
    Rb22 = 1.0 - A * th2
    Axy = A * rx * ry
    b00, b01, b02 = 1.0 - A * ry * ry, Axy, B * ry
    b10, b11, b12 = Axy, 1.0 - A * rx * rx, -B * rx
    b20, b21 = -B * ry, B * rx
    R[0, 0], R[0, 1], R[0, 2] = b00 * ct + b01 * st, b01 * ct - b00 * st, b02
    R[1, 0], R[1, 1], R[1, 2] = b10 * ct + b11 * st, b11 * ct - b10 * st, b12
    R[2, 0], R[2, 1], R[2, 2] = b20 * ct + b21 * st, b21 * ct - b20 * st, Rb22
    _put(X, 0, l0 * A, 0.0, 0.0, 0.0, l0 * B, rx, ry, ux, uy)  # Jp: eps
    _put(X, 1, ll * dA * rx, 0.0, 0.0, -ll * A, ll * dB * rx, rx, ry, ux, uy)  # Jp: kx
    _put(X, 2, ll * dA * ry, 0.0, ll * A, 0.0, ll * dB * ry, rx, ry, ux, uy)  # Jp: ky
    _put(X, 3, 0.0, 0.0, 0.0, 0.0, 0.0, rx, ry, ux, uy)  # Jp: kz
    _put(X, 4, 0.0, 0.0, 0.0, 0.0, 0.0, rx, ry, ux, uy)  # Jw: eps
    _put(X, 5, -l0 * C * ry, 0.0, l0, 0.0, -l0 * A * ry, rx, ry, ux, uy)  # Jw: kx
    _put(X, 6, l0 * C * rx, 0.0, 0.0, l0, l0 * A * rx, rx, ry, ux, uy)  # Jw: ky
    _put(X, 7, l0 * B, 0.0, 0.0, 0.0, l0 * Rb22, rx, ry, ux, uy)  # Jw: kz
    _put(  # d/dt(Jp) v
        X,
        8,
        2.0 * e * Ad + arc * Add,
        2.0 * (e * A + arc * Ad),
        0.0,
        0.0,
        2.0 * e * Bd + arc * Bdd,
        rx,
        ry,
        ux,
        uy,
    )
    _put(  # d/dt(Jw) v
        X,
        9,
        cr * Cd + w * Bd,
        cr * C + w * B,
        0.0,
        0.0,
        cr * Ad - w * (Ad * th2 + 2.0 * A * ru),
        rx,
        ry,
        ux,
        uy,
    )
    _put(X, 10, e * A + arc * Ad, arc * A, 0.0, 0.0, e * B + arc * Bd, rx, ry, ux, uy)  # Jp v
    _put(X, 11, arc * A, 0.0, 0.0, 0.0, arc * B, rx, ry, ux, uy)  # p
    _put(X, 12, C * cr + w * B, 0.0, ux, uy, A * cr + w * Rb22, rx, ry, ux, uy)  # Jw v
