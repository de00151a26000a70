"""Is the robot behind the link alive, and does it keep up? The master's watchdog on the robot's reports.

The robot reports every ``1 / state_rate`` s of its own clock; a report reaches the master one link delay
later. A robot that dies, stalls (a stopped process, a hung loop) or loses its link stops the reports, and
the master cannot know more than that: :class:`RobotWatchdog` declares the robot **lost** when no report
has arrived for :attr:`RobotWatchdog.timeout` after the last one. A robot that is alive but slower than
real time (a loaded machine) reports at longer intervals; the watchdog learns them, so it calls that robot
**slow** (with its measured real-time factor) rather than lost.

**The margin** follows the robot's own reports, as TCP's retransmission timeout follows the measured
round trips (RFC 6298): each inter-arrival interval ``a`` (master time, clipped at the ceiling) updates a
smoothed interval ``m += (a - m) / 8`` and a smoothed deviation ``v += (|a - m| - v) / 4`` (deviation
first, with the old ``m``), and the timeout is ``m + max(4 v, 0.1 m, 10 ms)`` held between

* a **floor**, the nominal timeout of a robot on time (:func:`report_timeout`: ``interval + 2 jitter +
  max(0.1 interval, 10 ms)``, 0.24 s for 5 reports a second over the acoustic link): a robot that keeps
  its rate is judged by it (the margin learned from the link's jitter alone stays within ~15 ms of it),
  and
* a **ceiling** of :data:`CEILING_INTERVALS` nominal intervals (1.0 s at 5 Hz): a robot slower than
  about 0.25x real time, or silent for that long, is lost whatever the margin learned.

``m`` starts at the nominal interval and ``v`` at 0 (the floor rules until the reports say otherwise), so
the first long interval of a robot slow from the start is one loss; the margin has learned it by the
next. A long gap (a loss) widens the margin for the next reports (a 3 s stop: the ceiling, back at the
floor within ~6 s of reports on time). So a robot that stops is declared lost within one report
interval, the link's delay and the margin after its last report left it: about the floor for a robot
that was on time, at most the ceiling. Before the first report the watchdog waits one link delay more.

**Slow**: every report carries the robot's clock when it was sent; the robot's real-time factor is its
clock's advance over the master's between the oldest and the newest of the last :data:`RATE_REPORTS`
reports (from the third report on: :data:`MIN_RATE_REPORTS`). Below :data:`SLOW_FACTOR` the robot is ``slow``.

The session fades the haptic force to 0 while the robot is lost
(:meth:`~pccbullet.teleop.haptics.HapticRenderer.tick`, ``link_ok``) and back in when reports flow again;
:meth:`RobotWatchdog.summary` is the ``robot`` entry of the demo's ``summary.json``.
"""

from __future__ import annotations

import logging
import math
from collections import deque

from pccbullet.core.errors import ConfigurationError

log = logging.getLogger(__name__)

TOLERANCE_S = 0.01  # s, smallest tolerance beyond a report interval and the jitter
TOLERANCE_SHARE = 0.1  # share of a report interval tolerated beyond it
GAIN_INTERVAL = 1.0 / 8.0  # RFC 6298's alpha: weight of a new interval in the smoothed one
GAIN_DEVIATION = 1.0 / 4.0  # RFC 6298's beta: weight of a new deviation in the smoothed one
K_DEVIATION = 4.0  # RFC 6298's K: deviations tolerated beyond the smoothed interval
CEILING_INTERVALS = 5.0  # nominal report intervals: the longest margin (1.0 s at 5 Hz)
RATE_REPORTS = 6  # reports over which the robot's real-time factor is measured (1 s of robot time at 5 Hz)
MIN_RATE_REPORTS = 3  # reports before the first measure (over 1 interval the link's jitter is 10 % of it)
SLOW_FACTOR = 0.9  # a robot below this real-time factor is slow


def report_timeout(state_rate: float, jitter: float) -> float:
    """The floor: silence (s) after which a robot on time, reporting at ``state_rate`` (Hz) over a link
    with mean jitter ``jitter`` (s, uniform on ``[0, 2 jitter]``), is lost: ``interval + 2 jitter +
    max(0.1 interval, 10 ms)``."""
    interval = 1.0 / state_rate
    return interval + 2.0 * jitter + max(TOLERANCE_SHARE * interval, TOLERANCE_S)


class RobotWatchdog:
    """Tracks the arrival of the robot's state reports (master time, s) and the robot's own clock.

    Args:
        interval: the robot's nominal report interval (s).
        floor: the shortest timeout (s), :func:`report_timeout`.
        first_delay: the link's expected delay (s): the first report may arrive that much later.
        ceiling: the longest timeout (s); ``None``: :data:`CEILING_INTERVALS` intervals (at least the
            floor). ``ceiling == floor`` fixes the timeout.

    Attributes:
        lost: whether the robot is lost now. last_report: arrival time of the newest report (s), ``None``
            before the first. mean_interval / deviation: the smoothed inter-arrival interval and its
            smoothed deviation (s). real_time_factor: the robot's measured real-time factor (``None``
            before :data:`MIN_RATE_REPORTS` reports). slowest: the lowest one over :data:`RATE_REPORTS`
            reports. events: one dict per loss: ``last_report_s`` (the last report before it),
            ``detected_s``, ``timeout_s`` (the margin then) and ``back_s`` (``None`` while it lasts).
    """

    def __init__(
        self, interval: float, floor: float, first_delay: float, ceiling: float | None = None
    ) -> None:
        if not (0 < interval and 0 < floor <= 3600 and first_delay >= 0):
            raise ConfigurationError(
                f"interval = {interval!r} s, floor = {floor!r} s, first_delay = {first_delay!r} s are "
                "invalid; allowed: interval > 0, 0 < floor <= 3600, first_delay >= 0"
            )
        self.interval = interval
        self.floor = floor
        self.ceiling = max(floor, CEILING_INTERVALS * interval) if ceiling is None else max(floor, ceiling)
        self.mean_interval = interval
        self.deviation = 0.0
        self._timeout = floor
        self._deadline = first_delay + floor
        self.lost = False
        self.last_report: float | None = None
        self.real_time_factor: float | None = None
        self._clocks: deque[tuple[float, float]] = deque(maxlen=RATE_REPORTS)  # (arrival, robot clock)
        self.slowest: float | None = None
        self.events: list[dict[str, float | None]] = []

    @property
    def timeout(self) -> float:
        """Silence after the last report (s) that makes the robot lost now (module docstring)."""
        return self._timeout

    def heard(self, t: float, sent: float | None = None) -> None:
        """A state report arrived at time ``t`` (s), sent at ``sent`` on the robot's clock (s; ``None``:
        unknown, the real-time factor is not measured)."""
        if self.last_report is not None:
            gap = min(max(t - self.last_report, 0.0), self.ceiling)
            self.deviation += GAIN_DEVIATION * (abs(gap - self.mean_interval) - self.deviation)
            self.mean_interval += GAIN_INTERVAL * (gap - self.mean_interval)
            m = self.mean_interval
            margin = m + max(K_DEVIATION * self.deviation, TOLERANCE_SHARE * m, TOLERANCE_S)
            self._timeout = min(max(margin, self.floor), self.ceiling)
        if sent is not None and math.isfinite(sent):
            self._clocks.append((t, sent))
            (t0, s0), (t1, s1) = self._clocks[0], self._clocks[-1]
            if len(self._clocks) >= MIN_RATE_REPORTS and t1 > t0:
                self.real_time_factor = max(s1 - s0, 0.0) / (t1 - t0)
                if len(self._clocks) == RATE_REPORTS:  # a full window: a figure worth keeping
                    slowest = math.inf if self.slowest is None else self.slowest
                    self.slowest = min(slowest, self.real_time_factor)
        self.last_report = t
        self._deadline = t + self._timeout
        if self.lost:
            self.lost = False
            self.events[-1]["back_s"] = t
            log.warning("robot heard again at t = %.3f s", t)

    def check(self, t: float) -> bool:
        """Whether the robot is alive at time ``t`` (s): ``False`` once no report has arrived for
        :attr:`timeout` (logged once per loss)."""
        if not self.lost and t > self._deadline:
            self.lost = True
            self.events.append(
                {
                    "last_report_s": self.last_report,
                    "detected_s": t,
                    "timeout_s": self._timeout,
                    "back_s": None,
                }
            )
            log.warning(
                "robot LOST at t = %.3f s: no state report for %.3f s (last at %s); the force fades to 0",
                t,
                self._timeout,
                "none" if self.last_report is None else f"{self.last_report:.3f} s",
            )
        return not self.lost

    @property
    def slow(self) -> bool:
        """Whether the robot runs below :data:`SLOW_FACTOR` of real time (by its last reports)."""
        return self.real_time_factor is not None and self.real_time_factor < SLOW_FACTOR

    @property
    def state(self) -> str:
        """``"waiting"`` before the first report, ``"lost"``, ``"slow"`` or ``"ok"``."""
        if self.lost:
            return "lost"
        if self.last_report is None:
            return "waiting"
        return "slow" if self.slow else "ok"

    def summary(self) -> dict[str, object]:
        """The watchdog's record: ``state`` at the end, the margin (``timeout_s`` now, its
        ``timeout_floor_s`` and ``timeout_ceiling_s``, the smoothed ``report_interval_s`` and
        ``report_deviation_s``), the robot's ``real_time_factor`` (last and ``slowest``),
        ``last_report_s``, ``losses``."""
        return {
            "state": self.state,
            "timeout_s": self._timeout,
            "timeout_floor_s": self.floor,
            "timeout_ceiling_s": self.ceiling,
            "report_interval_s": self.mean_interval,
            "report_deviation_s": self.deviation,
            "real_time_factor": self.real_time_factor,
            "slowest_real_time_factor": self.slowest,
            "last_report_s": self.last_report,
            "losses": [dict(e) for e in self.events],
        }
