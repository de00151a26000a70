"""The operator's console: what the demo shows about the session, in the GUI window and the terminal.

:func:`hud_lines` gives the heads-up display: time, the selected limb and segment, its commanded PCC,
the force felt as a bar against the device's limit, the link (its kind and one-way delay) and whether
the robot is heard (and keeps up with real time), the faults, the distance between the model's tip and
the robot's last reported one, how old the camera frame the operator sees is, and the grip: whether the
selected limb's grasp is closed (the ``g`` key) and the robot holds it, and the largest tendon tension in
the robot's last report. The GUI viewer draws
them over the scene (:class:`~pccbullet.sim.views.gui.ViewerProcess`, ``hud``); the terminal device shows
:func:`status_line`, the same in one line, fitted to the terminal's width (:func:`fit`: the fields
least needed give way first).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pccbullet.teleop.mmt.session import MmtSession

BAR_WIDTH = 20  # characters of the force bar


def force_bar(force: float, limit: float, width: int = BAR_WIDTH) -> str:
    """``[#####.......]`` filled in proportion to ``force / limit`` (N), clipped to the bar."""
    share = 0.0 if not limit > 0 else min(max(force / limit, 0.0), 1.0)
    n = int(round(share * width))
    return "[" + "#" * n + "." * (width - n) + "]"


def faults(session: MmtSession) -> list[str]:
    """The faults now, in words (empty: none)."""
    out = []
    if session.watchdog.lost:
        out.append("ROBOT LOST (force faded out)")
    if session.haptics.fault is not None:
        out.append(f"haptic: {session.haptics.fault}")
    if session.haptics.device_fault:
        out.append("device stream stale")
    return out


def tip_error(session: MmtSession) -> float:
    """Distance (m) between the model's haptic tip now and the robot's in its last report (NaN before)."""
    report = session.last_report
    if report is None:
        return math.nan
    return float(np.linalg.norm(session.model_tip - report.tip))


def robot_state(session: MmtSession) -> str:
    """The robot as the watchdog sees it: ``waiting``, ``ok``, ``SLOW x0.40 real time`` (alive, its clock
    behind the master's) or ``LOST``."""
    dog = session.watchdog
    if dog.state == "slow":
        return f"SLOW x{dog.real_time_factor:.2f} real time"
    return "LOST" if dog.state == "lost" else dog.state


def _report_age(session: MmtSession) -> str:
    last = session.watchdog.last_report
    return "none yet" if last is None else f"{session.world.time - last:4.1f} s ago"


def hud_lines(session: MmtSession) -> list[str]:
    """The heads-up display of ``session`` now, one line a topic."""
    m, h, cfg = session.mapping, session.haptics, session.cfg
    c = m.command[m.limb][m.segment]
    n_seg = len(session.spec.limb(m.limb).segments)
    force = float(np.linalg.norm(h.last_force))
    link = cfg.downlink
    delay = session.transport.command_delay()
    err = tip_error(session)
    return [
        f"t {session.world.time:7.2f} s     {m.limb} segment {m.segment + 1}/{n_seg}",
        f"command  bend {math.degrees(c.bend):7.1f} deg   plane {math.degrees(c.plane):7.1f} deg   "
        f"length {c.length * 1e3:6.1f} mm",
        f"force {force_bar(force, h.params.peak_force)} {force:4.2f} N (limit {h.params.peak_force:g} N)",
        f"link {link.name} {delay:.2f} s one way   robot {robot_state(session)}, last report "
        + _report_age(session),
        "faults: " + ("; ".join(faults(session)) or "none"),
        f"model - robot tip ({cfg.haptic_limb}): " + ("n/a" if math.isnan(err) else f"{err * 1e3:5.0f} mm"),
        camera_line(session),
        grip_line(session),
    ]


def grip_line(session: MmtSession) -> str:
    """The selected limb's grasp as commanded (``g``) and as the robot last reported it, and the largest
    tendon tension in that report; a robot driven by its joints has no tendons: the key does nothing."""
    m = session.mapping
    if not m.grasp_enabled:
        return "grip (g): none, the robot is driven by its joints (no tendons; --drive mixed or tendons)"
    i = m.names.index(m.limb)
    report = session.last_report
    closed = "CLOSED" if m.grips >> i & 1 else "open"
    line = f"grip (g) {m.limb}: {closed}"
    if report is None or not len(report.tensions):
        return line + ", robot: no report yet"
    k = int(report.tensions.argmax())
    robot = "holds" if report.held >> i & 1 else "open"
    return line + f", robot {robot}   tendons: max {report.tensions[k]:4.1f} N ({session.tendon_names[k]})"


def camera_line(session: MmtSession) -> str:
    """How old the newest camera frame that crossed the link is, and what the link allows."""
    video = session.transport.video
    w, h = video.plan.size
    plan = f"({w}x{h} px, a frame every {video.plan.period:.2g} s)"
    if video.frame is None:
        return f"camera: no frame yet {plan}"
    return f"camera: frame {video.age(session.world.time):4.1f} s old {plan}"


def status_fields(session: MmtSession) -> list[tuple[str, str, int]]:
    """The terminal line's fields in order: ``(separator before it, text, rank)``; fields of a higher rank
    give way first when the line is too long (0: never)."""
    m, h = session.mapping, session.haptics
    c = m.command[m.limb][m.segment]
    force = float(np.linalg.norm(h.last_force))
    err = tip_error(session)
    fault = faults(session)
    fields = [
        ("", f"t {session.world.time:6.2f} s", 0),
        (" | ", f"{m.limb} segment {m.segment + 1}", 0),
        (" | ", f"bend {math.degrees(c.bend):7.2f} deg", 1),
        (" ", f"plane {math.degrees(c.plane):7.2f} deg", 3),
        (" ", f"length {c.length * 1e3:6.1f} mm", 4),
        (" | ", f"force {force_bar(force, h.params.peak_force, 10)} {force:4.2f} N", 1),
        (" | ", f"robot {robot_state(session)}", 0),
        (" | ", "tip err " + ("n/a" if math.isnan(err) else f"{err * 1e3:.0f} mm"), 2),
    ]
    if m.grips >> m.names.index(m.limb) & 1:
        fields.append((" | ", "grip CLOSED", 2))
    if fault:
        fields.append((" | ", "FAULT " + "; ".join(fault), 0))
    return fields


def fit(fields: list[tuple[str, str, int]], width: int | None) -> str:
    """``fields`` (:func:`status_fields`) joined in at most ``width`` characters (``None``: no limit): the
    highest ranks dropped first (the last of a rank first), then the line cut, ending in ``...``."""
    kept = list(fields)

    def joined() -> str:
        return "".join((sep if i else "") + text for i, (sep, text, _) in enumerate(kept))

    while width is not None and len(joined()) > width and any(rank for _, _, rank in kept):
        top = max(rank for _, _, rank in kept)
        del kept[max(i for i, (_, _, rank) in enumerate(kept) if rank == top)]
    line = joined()
    if width is not None and len(line) > width:
        line = line[: max(width - 3, 0)] + "..."[:width]
    return line


def status_line(session: MmtSession, width: int | None = None) -> str:
    """The display in one terminal line of at most ``width`` characters (:func:`fit`; ``None``: all of
    it): time, limb and segment, commanded PCC, force bar, robot, tip error, the selected limb's grasp
    when closed, faults."""
    return fit(status_fields(session), width)
