"""What the robot's state reports correct in the master's model of its limbs: per-segment residuals.

The master's model of a limb is ``command + prediction + residual`` per segment, offsets on the bend
vector (:mod:`pccbullet.urdf_gen.pcc_fit`). The residual is what the robot measured minus what the master
predicted for the same command and time: :class:`Corrections` keeps the master's prediction of every tick
in a ring of :data:`~pccbullet.teleop.mmt.config.RING_TICKS` ticks (longer than the link's round trip),
looks up the tick a report answers (:attr:`~pccbullet.teleop.mmt.transport.StateReport.tick`) and blends
each new residual in over ``blend_time`` with a cosine ramp (:func:`blend_ramp`), so the operator feels no
step. Residuals are learned from steady states only (the limb settled in the robot and in the
prediction: a swinging limb is not a model error); the haptic limb's in free space only (no reported
force, the model's sensor ball out of the modelled surfaces): in contact the shape differs by the contact
itself, which the contact model renders (:mod:`pccbullet.teleop.mmt.contact`).
"""

from __future__ import annotations

import math

import numpy as np

from pccbullet.teleop.mmt.config import RING_TICKS
from pccbullet.teleop.mmt.transport import StateReport

RESIDUAL_TOLERANCE = 1e-4  # rad or m: a reported residual this close to the current target starts no blend


def blend_ramp(u: float) -> float:
    """The corrections' cosine ramp: 0 for ``u <= 0``, 1 for ``u >= 1``, ``0.5 - 0.5 cos(pi u)`` between
    (``u``: the fraction of the blend time gone)."""
    return 0.0 if u <= 0 else 1.0 if u >= 1 else 0.5 - 0.5 * math.cos(math.pi * u)


class Corrections:
    """Per-segment residuals of every limb, their blends and the master's predictions they are learned from.

    Args:
        shape: ``(limb, segments)`` of every limb, in the order of the stacked rows (and of the reports'
            settled bits).
        blend_time: duration of a blend (s).
        haptic_limb: the limb whose residual is learned in free space only.

    Attributes:
        residuals: ``(n, 3) float``, every segment's residual now (bend vector x, y (rad), length (m)),
            limbs stacked in ``shape``'s order.
        residual: limb -> ``(S, 3)``, that limb's rows of :attr:`residuals` (views).
    """

    def __init__(self, shape: list[tuple[str, int]], blend_time: float, haptic_limb: str) -> None:
        self.shape = shape
        self.blend_time = blend_time
        self.haptic_limb = haptic_limb
        self._rows: dict[str, slice] = {}
        k = 0
        for n, s in shape:
            self._rows[n] = slice(k, k + s)
            k += s
        self.residuals = np.zeros((k, 3))
        self.residual = {n: self.residuals[sl] for n, sl in self._rows.items()}
        # the blends, stacked like the residuals: from A to B, ramp value per row, start per limb
        self._blend_a, self._blend_b, self._blend_rows = np.zeros((3, k, 3))
        self._blend_t0 = {n: -1.0 for n, _ in shape}
        self._blend_u: dict[str, float] = {}
        self._done = False
        self._ring_u = np.zeros((RING_TICKS, k, 3))  # predicted model (no residual) per tick
        self._ring_rest = np.zeros(RING_TICKS, dtype=np.uint8)  # bit i: limb i's prediction at rest

    def advance(self, t: float) -> bool:
        """Advance the blends to time ``t`` (s); returns whether one is under way."""
        if self._done:  # every blend at its end: nothing changes until a report starts one
            return False
        active = False
        done = True
        changed = False
        for n, t0 in self._blend_t0.items():
            u = blend_ramp((t - t0) / self.blend_time)
            if self._blend_u.get(n) != u:
                self._blend_rows[self._rows[n]] = u
                self._blend_u[n] = u
                changed = True
            active |= 0.0 < u < 1.0
            done &= u == 1.0
        if changed:  # every limb's residual a + (b - a) u in one go
            np.add(self._blend_a, (self._blend_b - self._blend_a) * self._blend_rows, out=self.residuals)
        self._done = done
        return active

    def record(self, k: int, command_u: np.ndarray, prediction: np.ndarray, rest: int) -> None:
        """Keep tick ``k``'s prediction: ``command_u + prediction`` (both ``(n, 3) float``, stacked bend
        vectors and offsets) and ``rest`` (bit i: limb i's prediction at rest)."""
        self._ring_rest[k % RING_TICKS] = rest
        np.add(command_u, prediction, out=self._ring_u[k % RING_TICKS])

    def learn(self, report: StateReport, t: float, *, haptic_depth: float) -> None:
        """Start a blend at time ``t`` (s) towards each settled limb's new residual in ``report``.

        ``haptic_depth``: the model's sensor ball depth in the modelled surfaces (m) at the report's tick
        (:meth:`~pccbullet.teleop.mmt.contact.ContactModel.depth_at`).
        """
        if report.tick is None:
            return
        ring = self._ring_u[report.tick % RING_TICKS]
        rest = int(self._ring_rest[report.tick % RING_TICKS])
        contact = report.contact
        for i, (n, _) in enumerate(self.shape):
            if not (report.settled >> i & 1 and rest >> i & 1):
                continue  # learned from steady states only: a swinging limb is not a model error
            if n == self.haptic_limb and (contact or haptic_depth > 0):
                continue  # in contact the shape differs by the contact itself: learned in free space
            sl = self._rows[n]
            new = report.measured[n] - ring[sl]
            if not np.allclose(new, self._blend_b[sl], atol=RESIDUAL_TOLERANCE):
                self._blend_a[sl], self._blend_b[sl], self._blend_t0[n] = self.residual[n], new, t
                self._blend_u.pop(n, None)
                self._done = False
