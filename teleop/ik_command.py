"""One tick of the operator's 6-DoF command, compiled: the model through the offsets, one IK iteration,
the offsets taken off again, the command kept continuous and clipped.

:meth:`pccbullet.teleop.mapping.OperatorMapping.update` does, for a tip target and the model's offsets::

    model   = add_offset(canonical_limb(command), offset)          per segment (pccbullet.urdf_gen.pcc_fit)
    solved  = solve_ik(limb, target, model, ...)                    (pccbullet.teleop.ik)
    wanted  = add_offset(canonical_limb(solved), -offset)
    command = clamp_config(continue_limb(wanted, command, max_turn))

In Python on lists of :class:`~pccbullet.urdf_gen.pcc.PccConfig` that took ~30 us a tick (most of it building
configurations), more than any other part of the master's tick but the model's step.
:func:`command_step` is the same arithmetic on arrays in one compiled call around the IK's own kernel
(:func:`pccbullet.teleop.ik._solve_kernel`). The helpers below are the compiled twins of
:func:`~pccbullet.urdf_gen.pcc_fit.canonical_limb`, :func:`~pccbullet.urdf_gen.pcc_fit.add_offset` and
:func:`~pccbullet.urdf_gen.pcc_fit.continue_limb` (``math.remainder`` by :func:`_remainder_2pi`, exact but for
an exact tie, which no angle here is). The two paths differ only where numba's sin, cos, atan2 and hypot
round differently from the C library's (the last bit, in ~0.5 % of calls): a seeded test holds them
within 1e-8 (3e-10 seen after up to three IK iterations); the scripted demo's metrics are unchanged
to the last digit.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.teleop.ik import JACOBIAN_STEP, _solve_kernel

TWO_PI = 2.0 * math.pi


@numba.njit(cache=True)
def _remainder_2pi(x: float) -> float:
    """``math.remainder(x, 2 pi)``: ``fmod`` (exact) moved into ``[-pi, pi]`` (exact by Sterbenz)."""
    r = np.fmod(x, TWO_PI)
    if r > math.pi:
        r -= TWO_PI
    elif r < -math.pi:
        r += TWO_PI
    return r


@numba.njit(cache=True)
def _canonical(x: FloatArray, out: FloatArray) -> None:
    """:func:`~pccbullet.urdf_gen.pcc_fit.canonical_limb` of ``x`` ``(S, 3)`` (bend, plane, length) into
    ``out``."""
    carry = 0.0
    for s in range(x.shape[0]):
        plane = x[s, 1] + carry
        bend = x[s, 0]
        carry = 0.0
        if bend < 0.0:
            bend, plane = -bend, plane + math.pi
            carry = -math.pi
        out[s, 0], out[s, 1], out[s, 2] = bend, _remainder_2pi(plane), x[s, 2]


@numba.njit(cache=True)
def _add_offset(b0: float, p0: float, l0: float, d0: float, d1: float, d2: float, out: FloatArray) -> None:
    """:func:`~pccbullet.urdf_gen.pcc_fit.add_offset` of the arc ``(b0, p0, l0)`` and ``(d0, d1, d2)``
    into ``out``."""
    ux = b0 * math.cos(p0) + d0
    uy = b0 * math.sin(p0) + d1
    bend = math.hypot(ux, uy)
    plane = math.atan2(uy, ux) if bend > 0.0 else p0
    if b0 < 0.0:
        bend = -bend
        plane = math.atan2(-uy, -ux) if bend != 0.0 else p0
    elif bend > 0.0 and b0 > 0.0:
        plane = p0 + _remainder_2pi(plane - p0)
    out[0], out[1], out[2] = bend, plane, l0 + d2


@numba.njit(cache=True)
def command_step(
    command: FloatArray,
    offset: FloatArray,
    has_offset: bool,
    target: FloatArray,
    lo: FloatArray,
    hi: FloatArray,
    iters: int,
    tol: float,
    damping: float,
    max_step: float,
    max_turn: float,
    out: FloatArray,
) -> float:
    """The new command ``(S, 3)`` (bend, plane, length) into ``out`` from the present ``command`` for a
    tip ``target`` ``(3,)`` (limb base frame), the model's ``offset`` ``(S, 3)`` (bend vector, length;
    ignored before the IK unless ``has_offset``: :func:`pccbullet.teleop.mapping.apply_offset` of ``None``)
    and the IK's settings (:func:`pccbullet.teleop.ik.solve_ik`; limits ``lo``, ``hi`` ``(3 S,)``, which also
    clip the result); returns the IK's error (m)."""
    S = command.shape[0]
    tmp = np.empty((S, 3))
    x = np.empty((S, 3))
    if has_offset:
        _canonical(command, tmp)
        for s in range(S):
            _add_offset(tmp[s, 0], tmp[s, 1], tmp[s, 2], offset[s, 0], offset[s, 1], offset[s, 2], x[s])
    else:
        x[:, :] = command
    flat = x.reshape(3 * S)
    e, _ = _solve_kernel(flat, target, lo, hi, iters, tol, damping, max_step, JACOBIAN_STEP)
    _canonical(x, tmp)
    for s in range(S):  # the offset taken off again
        _add_offset(tmp[s, 0], tmp[s, 1], tmp[s, 2], -offset[s, 0], -offset[s, 1], -offset[s, 2], x[s])
    carry = 0.0  # pccbullet.urdf_gen.pcc_fit.continue_limb from the present command, then clamp_config
    for s in range(S):
        ux = x[s, 0] * math.cos(x[s, 1] + carry)
        uy = x[s, 0] * math.sin(x[s, 1] + carry)
        prev = command[s, 1]
        goal = math.atan2(uy, ux) if (ux != 0.0 or uy != 0.0) else prev
        turn = _remainder_2pi(goal - prev)
        if abs(turn) > 0.5 * math.pi:
            turn = _remainder_2pi(turn - math.pi)
        plane = prev + max(-max_turn, min(max_turn, turn))
        bend = ux * math.cos(plane) + uy * math.sin(plane)
        carry = math.pi if bend < 0.0 else 0.0
        out[s, 0] = min(max(bend, lo[3 * s]), hi[3 * s])
        out[s, 1] = min(max(plane, lo[3 * s + 1]), hi[3 * s + 1])
        out[s, 2] = min(max(x[s, 2], lo[3 * s + 2]), hi[3 * s + 2])
    return e


def load_command_kernel() -> None:
    """Compile :func:`command_step`, or load it from numba's disk cache, now rather than in a loop's
    first tick."""
    x = np.array([[0.1, 0.0, 0.3]])
    lo, hi = np.array([-1.0, -1.0, 0.2]), np.ones(3)
    target = np.array([0.0, 0.0, 0.3])
    command_step(x, np.zeros((1, 3)), True, target, lo, hi, 1, 1e-4, 0.02, 0.2, 1e-3, x.copy())
