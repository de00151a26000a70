"""Scripted and recorded operators: waypoints for tests and the headless demo, exact record/replay.

:class:`ScriptedDevice` plays a timeline: position waypoints (linear interpolation, held before the first
and after the last) and action intervals. :class:`Recorder` wraps any device and keeps every sample;
:class:`ReplayDevice` plays a recording back tick by tick, bit for bit (JSON floats round-trip exactly).
"""

from __future__ import annotations

import bisect
import json
from collections import deque
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pccbullet.core import strict_json
from pccbullet.core.atomic import write_atomic
from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.base import DeviceSample, InputDevice

FORCE_HISTORY = 10_000  # forces kept for inspection: a long session must not grow without bound


class ScriptedDevice:
    """A device that follows a script in simulated time.

    Args:
        waypoints: ``(t, (x, y, z))`` pairs, times increasing (s, m, device frame); linear in between,
            held before the first and after the last; a ``None`` position means no position from that
            waypoint to the next (e.g. while keys drive another limb).
        holds: ``(t0, t1, action)``: ``action`` is held for ``t0 <= t < t1``.
        presses: ``(t, action)``: ``action`` fires once, on the first tick with time ``>= t``.
        fail_at: time from which the device reports ``ok = False`` (device error), or ``None``.
    """

    def __init__(
        self,
        waypoints: Sequence[tuple[float, Sequence[float] | None]] = (),
        holds: Sequence[tuple[float, float, str]] = (),
        presses: Sequence[tuple[float, str]] = (),
        fail_at: float | None = None,
    ) -> None:
        times = [float(t) for t, _ in waypoints]
        if any(b < a for a, b in zip(times, times[1:], strict=False)):
            raise ConfigurationError(f"waypoint times {times} are invalid; allowed: non-decreasing times")
        points = np.asarray(
            [[np.nan] * 3 if p is None else list(p) for _, p in waypoints], dtype=float
        ).reshape(-1, 3)
        self._times = times
        self._points: list[tuple[float, float, float] | None] = [
            None if np.isnan(p).any() else (float(p[0]), float(p[1]), float(p[2])) for p in points
        ]
        self._holds = list(holds)
        self._presses = sorted(presses, key=lambda p: p[0])
        self._next_press = 0
        self._fail_at = fail_at
        self.forces: deque[np.ndarray] = deque(maxlen=FORCE_HISTORY)  # the last 10 s at 1 kHz

    @property
    def first_position(self) -> float | None:
        """The first waypoint time with a position (s); ``None`` without one."""
        return next((t for t, p in zip(self._times, self._points, strict=True) if p is not None), None)

    @property
    def presses(self) -> list[tuple[float, str]]:
        """The script's ``(t, action)`` presses, in time order."""
        return list(self._presses)

    def position_at(self, t: float) -> tuple[float, float, float] | None:
        """Interpolated waypoint position ``(3,)`` (m) at time ``t`` or ``None`` without waypoints.

        ``numpy.interp``'s arithmetic (``slope (t - t_j) + p_j``) on Python floats: a tick reads the
        device, and three ``numpy.interp`` calls took ~10 us of it."""
        wt, wp = self._times, self._points
        n = len(wt)
        if n == 0:
            return None
        k = bisect.bisect_right(wt, t)
        a, b = wp[max(k - 1, 0)], wp[min(k, n - 1)]
        if a is None or b is None:
            return None
        if k == 0 or k == n or t == wt[-1]:  # held before the first and after the last waypoint
            return a if k == 0 else wp[-1]
        t0, t1 = wt[k - 1], wt[k]
        return tuple(  # type: ignore[return-value]
            (b[i] - a[i]) / (t1 - t0) * (t - t0) + a[i] for i in range(3)
        )

    def read(self, t: float) -> DeviceSample:
        """The scripted sample at time ``t`` (s)."""
        held = frozenset(a for t0, t1, a in self._holds if t0 <= t < t1)
        pressed = []
        while self._next_press < len(self._presses) and self._presses[self._next_press][0] <= t + 1e-12:
            pressed.append(self._presses[self._next_press][1])
            self._next_press += 1
        ok = self._fail_at is None or t < self._fail_at
        return DeviceSample(t=t, held=held, pressed=tuple(pressed), position=self.position_at(t), ok=ok)

    def send_force(self, force: np.ndarray) -> None:
        """Keep the force ``(3,)`` (N) for inspection in :attr:`forces`."""
        self.forces.append(np.array(force, dtype=float))

    def close(self) -> None:
        """Nothing to release."""


class Recorder:
    """Wrap ``device`` and record every sample it returns; :meth:`save` writes them as JSON."""

    def __init__(self, device: InputDevice) -> None:
        self.device = device
        self.samples: list[DeviceSample] = []

    def read(self, t: float) -> DeviceSample:
        """Read the wrapped device and keep the sample."""
        sample = self.device.read(t)
        self.samples.append(sample)
        return sample

    def send_force(self, force: np.ndarray) -> None:
        """Forward to the wrapped device."""
        self.device.send_force(force)

    def close(self) -> None:
        """Close the wrapped device."""
        self.device.close()

    def save(self, path: str | Path) -> Path:
        """Write the session to ``path`` (JSON: format tag and one dict per tick)."""
        path = Path(path)
        doc = {
            "format": "pccbullet-teleop-session",
            "version": 1,
            "samples": [s.to_dict() for s in self.samples],
        }
        return write_atomic(path, strict_json.dumps(doc))


class ReplayDevice:
    """Play back a recorded session: the k-th :meth:`read` returns the k-th recorded sample.

    After the end it repeats the last sample's position with no actions. ``samples`` or ``path``.
    """

    def __init__(
        self, samples: Sequence[DeviceSample] | None = None, *, path: str | Path | None = None
    ) -> None:
        if path is not None:
            doc = json.loads(Path(path).read_text())
            if doc.get("format") != "pccbullet-teleop-session" or doc.get("version") != 1:
                raise ConfigurationError(
                    f"{path}: format = {doc.get('format')!r} version {doc.get('version')!r} is invalid; "
                    "allowed: 'pccbullet-teleop-session' version 1"
                )
            samples = [DeviceSample.from_dict(d) for d in doc["samples"]]
        self.samples = list(samples or [])
        self._k = 0
        self.forces: deque[np.ndarray] = deque(maxlen=FORCE_HISTORY)  # the last 10 s at 1 kHz

    def read(self, t: float) -> DeviceSample:
        """The next recorded sample (its own time stamp is kept)."""
        if self._k < len(self.samples):
            s = self.samples[self._k]
            self._k += 1
            return s
        last = self.samples[-1] if self.samples else DeviceSample(t=t)
        return DeviceSample(t=t, position=last.position, ok=last.ok)

    def send_force(self, force: np.ndarray) -> None:
        """Keep the force for inspection."""
        self.forces.append(np.array(force, dtype=float))

    def close(self) -> None:
        """Nothing to release."""
