"""Damped least-squares inverse kinematics of a PCC limb for a tip position target.

Unknowns per segment are ``(bend, plane, length)`` (bend = total arc angle, rad). The chain is smooth in
them; ``plane`` loses its effect on a segment's own arc at ``bend = 0`` (it still turns the following
segments, since the plane rotation is not undone at a segment's tip), which the damping
handles. The Jacobian of the tip position (``pccbullet.urdf_gen.pcc.limb_transform``) is numerical
(forward differences). Each step ``dx = J^T (J J^T + lambda^2 I)^-1 e`` is limited in size,
projected onto the spec's limits (|bend| <= bend_max, |plane| <= plane_max, length_min <= length <=
length_max) and accepted only if it lowers the error (halved otherwise), so an unreachable target
leaves the tip at a local nearest point on the workspace boundary instead of diverging.

The teleoperation loop runs an iteration per tick at 1 kHz, so the solver is one compiled kernel
(:func:`_solve_kernel`, numba, cached on disk): a one-iteration solve took ~400 us in numpy and
takes ~28 us compiled (its Python wrapper included). Its tip position is
:func:`pccbullet.urdf_gen.pcc.limb_transform`'s, written out (tested equal to 1e-15 m).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.specs import LimbSpec

TOL = 1e-4  # m, solve_ik's default convergence distance
DAMPING = 0.02  # m, solve_ik's default lambda of the damped least squares


@dataclass(frozen=True, slots=True)
class IkResult:
    """Outcome of :func:`solve_ik`.

    Attributes:
        configs: per-segment solution within the limits.
        error: distance tip - target (m).
        iterations: iterations used.
        converged: ``error <= tol``.
    """

    configs: tuple[PccConfig, ...]
    error: float
    iterations: int
    converged: bool


def clamp_config(c: PccConfig, seg) -> PccConfig:
    """``c`` moved into the limits of segment spec ``seg`` (bend, plane and length clipped)."""
    bend = min(max(c.bend, -seg.bend_max), seg.bend_max)
    plane = min(max(c.plane, -seg.plane_max), seg.plane_max)
    return PccConfig(bend, plane, min(max(c.length, seg.length_min), seg.length_max))


def _to_x(configs: Sequence[PccConfig]) -> FloatArray:
    return np.array([[c.bend, c.plane, c.length] for c in configs], dtype=float).ravel()


def tip_position(configs: Sequence[PccConfig]) -> FloatArray:
    """Tip position in the limb base frame, ``(3,) float`` (m)."""
    return limb_transform(configs)[:3, 3]


def solve_ik(
    limb: LimbSpec,
    target: FloatArray,
    initial: Sequence[PccConfig],
    *,
    max_iter: int = 100,
    tol: float = TOL,
    damping: float = DAMPING,
    max_step: float = 0.2,
    restarts: int = 0,
) -> IkResult:
    """Per-segment configurations putting the tip at ``target`` (limb base frame, ``(3,)`` m).

    Args:
        limb: the limb's spec (segments and limits).
        target: desired tip position ``(3,) float`` (m), limb base frame.
        initial: starting configurations (warm start), one per segment.
        max_iter: iteration budget (a 1 kHz loop uses a few per tick).
        tol: converged below this distance (m).
        damping: lambda of the damped least squares (m).
        max_step: largest parameter step per iteration (rad / m).
        restarts: if not converged, retry from this many fixed starts (bent 1 rad in evenly spaced
            planes, alternating per segment) and keep the best; deterministic.
    """
    best = _solve(limb, target, initial, max_iter, tol, damping, max_step)
    for k in range(restarts):
        if best.converged:
            break
        a = 2.0 * math.pi * k / restarts
        start = [PccConfig(1.0, a + math.pi * (i % 2), seg.length) for i, seg in enumerate(limb.segments)]
        r = _solve(limb, target, start, max_iter, tol, damping, max_step)
        if r.error < best.error:
            best = r
    return best


def limits(limb: LimbSpec) -> tuple[FloatArray, FloatArray]:
    """Lower and upper bounds of ``x = (bend, plane, length) per segment``, each ``(3 S,)``."""
    hi = np.array([[seg.bend_max, seg.plane_max, seg.length_max] for seg in limb.segments]).ravel()
    lo = -hi
    lo[2::3] = [seg.length_min for seg in limb.segments]
    return lo, hi


def _solve(
    limb: LimbSpec,
    target: FloatArray,
    initial: Sequence[PccConfig],
    max_iter: int,
    tol: float,
    damping: float,
    max_step: float,
) -> IkResult:
    target = np.asarray(target, dtype=float)
    if not (damping > 0.0 and max_step > 0.0):
        raise ValueError(f"damping = {damping!r} m, max_step = {max_step!r} are invalid; allowed: both > 0")
    if target.shape != (3,):
        raise ValueError(f"target of shape {target.shape} is invalid; allowed: (3,) (m)")
    lo, hi = limits(limb)
    x = _to_x(initial)
    if x.size != lo.size:
        raise ValueError(f"{len(initial)} initial configurations for a limb of {len(limb.segments)} segments")
    e, it = _solve_kernel(x, target, lo, hi, max_iter, tol, damping, max_step, JACOBIAN_STEP)
    configs = tuple(PccConfig(float(b), float(p), float(length)) for b, p, length in x.reshape(-1, 3))
    return IkResult(configs=configs, error=e, iterations=it, converged=e <= tol)


JACOBIAN_STEP = 1e-7  # forward-difference step of the Jacobian (rad or m)


def load_kernels() -> None:
    """Compile the solver, or load it from numba's disk cache (~0.3 s), now rather than at the first
    solve: in a 1 kHz loop that solve would overrun by as much."""
    x, target = np.array([0.1, 0.0, 0.3]), np.array([0.0, 0.0, 0.3])
    lo, hi = np.array([-1.0, -1.0, 0.2]), np.ones(3)
    _solve_kernel(x, target, lo, hi, 1, 1e-4, 0.02, 0.2, JACOBIAN_STEP)


@numba.njit(cache=True)
def _tip(x, out) -> None:
    """Tip position of arcs ``x = (bend, plane, length) per segment`` into ``out (3,)``:
    :func:`pccbullet.urdf_gen.pcc.limb_transform` (``Rz(plane) Ry(bend)`` and the arc's chord) written out."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    p0 = p1 = p2 = 0.0
    for k in range(x.size // 3):
        bend, plane, length = x[3 * k], x[3 * k + 1], x[3 * k + 2]
        half = 0.5 * bend
        if abs(half) < 1e-4:  # pccbullet.urdf_gen.pcc.sinc
            h2 = half * half
            sinc_half = 1.0 - h2 / 6.0 + h2 * h2 / 120.0
        else:
            sinc_half = math.sin(half) / half
        if abs(bend) < 1e-4:
            b2 = bend * bend
            sinc_bend = 1.0 - b2 / 6.0 + b2 * b2 / 120.0
        else:
            sinc_bend = math.sin(bend) / bend
        ax = length * math.sin(half) * sinc_half
        az = length * sinc_bend
        c, s = math.cos(plane), math.sin(plane)
        cb, sb = math.cos(bend), math.sin(bend)
        # the arc's transform A: rotation [[c cb, -s, c sb], [s cb, c, s sb], [-sb, 0, cb]], origin
        # (c ax, s ax, az); T <- T A
        t0, t1, t2 = c * ax, s * ax, az
        p0 += r00 * t0 + r01 * t1 + r02 * t2
        p1 += r10 * t0 + r11 * t1 + r12 * t2
        p2 += r20 * t0 + r21 * t1 + r22 * t2
        a00, a01, a02 = c * cb, -s, c * sb
        a10, a11, a12 = s * cb, c, s * sb
        a20, a21, a22 = -sb, 0.0, cb
        r00, r01, r02 = (
            r00 * a00 + r01 * a10 + r02 * a20,
            r00 * a01 + r01 * a11 + r02 * a21,
            r00 * a02 + r01 * a12 + r02 * a22,
        )
        r10, r11, r12 = (
            r10 * a00 + r11 * a10 + r12 * a20,
            r10 * a01 + r11 * a11 + r12 * a21,
            r10 * a02 + r11 * a12 + r12 * a22,
        )
        r20, r21, r22 = (
            r20 * a00 + r21 * a10 + r22 * a20,
            r20 * a01 + r21 * a11 + r22 * a21,
            r20 * a02 + r21 * a12 + r22 * a22,
        )
    out[0], out[1], out[2] = p0, p1, p2


@numba.njit(cache=True)
def _error(x, target, tip, err) -> float:
    """``err = target - tip(x)``; returns ``|err|``."""
    _tip(x, tip)
    for a in range(3):
        err[a] = target[a] - tip[a]
    return math.sqrt(err[0] * err[0] + err[1] * err[1] + err[2] * err[2])


@numba.njit(cache=True)
def _dls_step(J, free, err, damping, dx) -> None:
    """``dx = Jf^T (Jf Jf^T + damping^2 I)^-1 err`` with ``Jf`` the columns of ``J`` where ``free``."""
    n = J.shape[1]
    A = np.zeros((3, 3))
    for a in range(3):
        for b in range(3):
            acc = 0.0
            for i in range(n):
                if free[i]:
                    acc += J[a, i] * J[b, i]
            A[a, b] = acc
        A[a, a] += damping * damping
    # A is symmetric positive definite (damping > 0): Cholesky A = L L^T
    l00 = math.sqrt(A[0, 0])
    l10 = A[1, 0] / l00
    l20 = A[2, 0] / l00
    l11 = math.sqrt(A[1, 1] - l10 * l10)
    l21 = (A[2, 1] - l20 * l10) / l11
    l22 = math.sqrt(A[2, 2] - l20 * l20 - l21 * l21)
    y0 = err[0] / l00
    y1 = (err[1] - l10 * y0) / l11
    y2 = (err[2] - l20 * y0 - l21 * y1) / l22
    z2 = y2 / l22
    z1 = (y1 - l21 * z2) / l11
    z0 = (y0 - l10 * z1 - l20 * z2) / l00
    for i in range(n):
        dx[i] = (J[0, i] * z0 + J[1, i] * z1 + J[2, i] * z2) if free[i] else 0.0


@numba.njit(cache=True)
def _solve_kernel(x, target, lo, hi, max_iter, tol, damping, max_step, h):
    """Damped least squares from ``x`` (updated in place, ``(3 S,)``) within ``[lo, hi]``; returns the
    error (m) and the iterations used. See the module docstring."""
    n = x.size
    for i in range(n):  # start inside the limits
        x[i] = min(max(x[i], lo[i]), hi[i])
    tip_x = np.empty(3)  # the tip at x
    tip = np.empty(3)  # scratch: perturbed and candidate tips
    err = np.empty(3)
    cand_err = np.empty(3)
    J = np.empty((3, n))
    xi = np.empty(n)
    dx = np.empty(n)
    cand = np.empty(n)
    free = np.empty(n, np.bool_)
    e = _error(x, target, tip_x, err)
    it = 0
    while it < max_iter and e > tol:
        it += 1
        # forward differences around x
        p0, p1, p2 = tip_x[0], tip_x[1], tip_x[2]
        for i in range(n):
            xi[:] = x
            xi[i] += h
            _tip(xi, tip)
            J[0, i] = (tip[0] - p0) / h
            J[1, i] = (tip[1] - p1) / h
            J[2, i] = (tip[2] - p2) / h
        # active set: variables at a limit that the step would push further stay fixed
        free[:] = True
        for _ in range(3):
            _dls_step(J, free, err, damping, dx)
            newly_blocked = False
            for i in range(n):
                if free[i] and (
                    (x[i] >= hi[i] - 1e-12 and dx[i] > 0.0) or (x[i] <= lo[i] + 1e-12 and dx[i] < 0.0)
                ):
                    free[i] = False
                    newly_blocked = True
            if not newly_blocked:
                break
        norm = math.sqrt(np.sum(dx * dx))
        if norm > max_step:
            for i in range(n):
                dx[i] *= max_step / norm
        descended = False
        cand_e = e
        for _ in range(8):  # halve the step until the error falls
            for i in range(n):
                cand[i] = min(max(x[i] + dx[i], lo[i]), hi[i])
            cand_e = _error(cand, target, tip, cand_err)
            if cand_e < e:
                descended = True
                break
            for i in range(n):
                dx[i] *= 0.5
        if not descended:
            break  # no descent: at the boundary (or a local minimum)
        improvement = e - cand_e
        x[:] = cand
        tip_x[:] = tip
        err[:] = cand_err
        e = cand_e
        if improvement < 1e-9:
            break
    return e, it
