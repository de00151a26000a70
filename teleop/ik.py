"""Damped least-squares inverse kinematics of a PCC limb for a tip position target.

Unknowns per segment are ``(bend, plane, length)`` (bend = total arc angle, rad). The chain is smooth in
them; ``plane`` loses its effect on a segment's own arc at ``bend = 0`` (it still turns the following
segments, since the plane rotation is not undone at a segment's tip), which the damping
handles. The Jacobian of the tip position (``urdf_gen.pcc.limb_transform``) is numerical
(forward differences). Each step ``dx = J^T (J J^T + lambda^2 I)^-1 e`` is limited in size,
projected onto the spec's limits (|bend| <= bend_max, |plane| <= plane_max, length_min <= length <=
length_max) and accepted only if it lowers the error (halved otherwise), so an unreachable target
leaves the tip at a local nearest point on the workspace boundary instead of diverging.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from urdf_gen.pcc import PccConfig, limb_transform
from urdf_gen.specs import LimbSpec
from urdf_gen.types import FloatArray


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


def clamp_config(c: PccConfig, seg) -> PccConfig:  # type: ignore[no-untyped-def]
    """``c`` moved into the limits of segment spec ``seg`` (bend, plane and length clipped)."""
    bend = min(max(c.bend, -seg.bend_max), seg.bend_max)
    plane = min(max(c.plane, -seg.plane_max), seg.plane_max)
    return PccConfig(bend, plane, min(max(c.length, seg.length_min), seg.length_max))


def _to_x(configs: Sequence[PccConfig]) -> FloatArray:
    return np.array([[c.bend, c.plane, c.length] for c in configs], dtype=float).ravel()


def _to_configs(x: FloatArray, limb: LimbSpec) -> list[PccConfig]:
    return [
        clamp_config(PccConfig(float(b), float(p), float(length)), seg)
        for (b, p, length), seg in zip(x.reshape(-1, 3), limb.segments, strict=True)
    ]


def _project(x: FloatArray, limb: LimbSpec) -> FloatArray:
    return _to_x(_to_configs(x, limb))


def tip_position(configs: Sequence[PccConfig]) -> FloatArray:
    """Tip position in the limb base frame, ``(3,) float`` (m)."""
    return limb_transform(configs)[:3, 3]


def jacobian(configs: Sequence[PccConfig], h: float = 1e-7) -> FloatArray:
    """d(tip position)/d(bend, plane, length per segment), ``(3, 3 S) float``, forward differences."""
    x = _to_x(configs)
    p0 = tip_position(configs)
    J = np.empty((3, x.size))
    for i in range(x.size):
        xi = x.copy()
        xi[i] += h
        J[:, i] = (tip_position([PccConfig(*row) for row in xi.reshape(-1, 3)]) - p0) / h
    return J


def solve_ik(
    limb: LimbSpec,
    target: FloatArray,
    initial: Sequence[PccConfig],
    *,
    max_iter: int = 100,
    tol: float = 1e-4,
    damping: float = 0.02,
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
    x = _project(_to_x(initial), limb)
    configs = _to_configs(x, limb)
    err = target - tip_position(configs)
    e = float(np.linalg.norm(err))
    hi = np.array([[seg.bend_max, seg.plane_max, seg.length_max] for seg in limb.segments]).ravel()
    lo = -hi
    lo[2::3] = [seg.length_min for seg in limb.segments]
    it = 0
    while it < max_iter and e > tol:
        it += 1
        J = jacobian(configs)
        free = np.ones(x.size, dtype=bool)
        for _ in range(3):  # active set: variables at a limit that the step would push further stay fixed
            Jf = J * free
            dx = Jf.T @ np.linalg.solve(Jf @ Jf.T + damping**2 * np.eye(3), err)
            blocked = (x >= hi - 1e-12) & (dx > 0) | (x <= lo + 1e-12) & (dx < 0)
            if not (blocked & free).any():
                break
            free &= ~blocked
        norm = float(np.linalg.norm(dx))
        if norm > max_step:
            dx *= max_step / norm
        for _ in range(8):
            cand_x = _project(x + dx, limb)
            cand = _to_configs(cand_x, limb)
            cand_err = target - tip_position(cand)
            if float(np.linalg.norm(cand_err)) < e:
                break
            dx *= 0.5
        else:
            break  # no descent: at the boundary (or a local minimum)
        improvement = e - float(np.linalg.norm(cand_err))
        x, configs, err, e = cand_x, cand, cand_err, float(np.linalg.norm(cand_err))
        if improvement < 1e-9:
            break
    return IkResult(configs=tuple(configs), error=e, iterations=it, converged=e <= tol)
