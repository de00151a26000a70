"""Is the robot behind the link alive? The master's watchdog on the robot's state reports.

The robot reports every ``1 / state_rate`` s; a report reaches the master one link delay later. A robot
that dies, stalls (a stopped process, a hung loop) or loses its link stops the reports, and the master
cannot know more than that: :class:`RobotWatchdog` declares the robot **lost** when no report has
arrived for :attr:`RobotWatchdog.timeout` after the last one, one report interval plus a tolerance for
the link's jitter and the robot's pacing (``interval + 2 jitter + max(0.1 interval, 10 ms)``, 0.24 s for
5 reports a second over the acoustic link). A robot that stops is thus declared lost within one report
interval, the link's delay and that tolerance after its last report left it. Before the first report the
watchdog waits one link delay more. The session fades the haptic force to 0 while the robot is lost
(:meth:`~pccbullet.teleop.haptics.HapticRenderer.tick`, ``link_ok``) and back in when reports flow again;
:meth:`RobotWatchdog.summary` is the ``robot`` entry of the demo's ``summary.json``.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

TOLERANCE_S = 0.01  # s, smallest tolerance beyond a report interval and the jitter
TOLERANCE_SHARE = 0.1  # share of a report interval tolerated beyond it


def report_timeout(state_rate: float, jitter: float) -> float:
    """Silence (s) after which a robot reporting at ``state_rate`` (Hz) over a link with mean jitter
    ``jitter`` (s, uniform on ``[0, 2 jitter]``) is lost: ``interval + 2 jitter + max(0.1 interval,
    10 ms)``."""
    interval = 1.0 / state_rate
    return interval + 2.0 * jitter + max(TOLERANCE_SHARE * interval, TOLERANCE_S)


class RobotWatchdog:
    """Tracks the arrival of the robot's state reports (master time, s).

    Args:
        timeout: silence after the last report (s) that makes the robot lost (:func:`report_timeout`).
        first_delay: the link's expected delay (s): the first report may arrive that much later.

    Attributes:
        lost: whether the robot is lost now. last_report: arrival time of the newest report (s), ``None``
            before the first. events: one dict per loss: ``last_report_s`` (the last report before it),
            ``detected_s`` and ``back_s`` (``None`` while it lasts).
    """

    def __init__(self, timeout: float, first_delay: float) -> None:
        self.timeout = timeout
        self._deadline = first_delay + timeout
        self.lost = False
        self.last_report: float | None = None
        self.events: list[dict[str, float | None]] = []

    def heard(self, t: float) -> None:
        """A state report arrived at time ``t`` (s)."""
        self.last_report = t
        self._deadline = t + self.timeout
        if self.lost:
            self.lost = False
            self.events[-1]["back_s"] = t
            log.warning("robot heard again at t = %.3f s", t)

    def check(self, t: float) -> bool:
        """Whether the robot is alive at time ``t`` (s): ``False`` once no report has arrived for
        :attr:`timeout` (logged once per loss)."""
        if not self.lost and t > self._deadline:
            self.lost = True
            self.events.append({"last_report_s": self.last_report, "detected_s": t, "back_s": None})
            log.warning(
                "robot LOST at t = %.3f s: no state report for %.3f s (last at %s); the force fades to 0",
                t,
                self.timeout,
                "none" if self.last_report is None else f"{self.last_report:.3f} s",
            )
        return not self.lost

    @property
    def state(self) -> str:
        """``"waiting"`` before the first report, ``"lost"`` or ``"ok"``."""
        if self.lost:
            return "lost"
        return "waiting" if self.last_report is None else "ok"

    def summary(self) -> dict[str, object]:
        """The watchdog's record: ``state`` at the end, ``timeout_s``, ``last_report_s``, ``losses``."""
        return {
            "state": self.state,
            "timeout_s": self.timeout,
            "last_report_s": self.last_report,
            "losses": [dict(e) for e in self.events],
        }
