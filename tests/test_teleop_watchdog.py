"""A lost or stalled robot is detected, shown and fades the force out (pccbullet.teleop.mmt.watchdog)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.demo.hud import hud_lines, robot_state
from pccbullet.teleop.demo.script import scripted_operator
from pccbullet.teleop.haptics import HapticParams, HapticRenderer, passivity_margin
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.mmt.watchdog import RobotWatchdog, report_timeout
from pccbullet.urdf_gen.spec_loader import load_robot

FLOOR = report_timeout(5.0, 0.01)  # 0.24 s: the acoustic link's jitter, 5 reports a second
DELAY = 1.04  # s, about the acoustic link's delay of a report


def test_the_watchdog_declares_the_robot_lost_after_a_report_interval_and_a_tolerance() -> None:
    assert FLOOR == pytest.approx(0.2 + 0.02 + 0.02)
    dog = RobotWatchdog(0.2, FLOOR, first_delay=1.0)
    assert dog.ceiling == pytest.approx(1.0)  # five report intervals
    assert dog.state == "waiting" and dog.check(1.0 + FLOOR)  # the first report may take a delay
    assert not dog.check(1.0 + FLOOR + 1e-3) and dog.state == "lost"
    dog.heard(1.5, 0.0)
    assert dog.state == "ok" and dog.check(1.5 + FLOOR)
    assert not dog.check(1.5 + FLOOR + 1e-3)
    assert dog.summary()["losses"] == [
        {"last_report_s": None, "detected_s": 1.0 + FLOOR + 1e-3, "timeout_s": FLOOR, "back_s": 1.5},
        {"last_report_s": 1.5, "detected_s": 1.5 + FLOOR + 1e-3, "timeout_s": FLOOR, "back_s": None},
    ]
    with pytest.raises(ConfigurationError, match=r"report_timeout = nan s is invalid"):
        MmtConfig(report_timeout=float("nan"))
    with pytest.raises(ConfigurationError, match=r"interval = 0 s, floor = 0.24 s, first_delay = -1 s"):
        RobotWatchdog(0, 0.24, -1)


def _listen(dog: RobotWatchdog, arrivals: np.ndarray, sent: np.ndarray, until: float) -> list[float]:
    """Master ticks (1 ms, simulated) up to ``until`` s: report i arrives at ``arrivals[i]`` (s), sent at
    ``sent[i]`` on the robot's clock; returns the watchdog's timeout after each report."""
    timeouts, i = [], 0
    for j in range(int(round(until * 1000)) + 1):
        t = j * 1e-3
        while i < len(arrivals) and arrivals[i] <= t:
            dog.heard(t, float(sent[i]))
            timeouts.append(dog.timeout)
            i += 1
        dog.check(t)
    return timeouts


def _robot(n: int, real_time_factor: float = 1.0, late: np.ndarray | None = None, seed: int = 0):
    """Arrival times (s, master) and send times (s, robot) of ``n`` reports of a robot at
    ``real_time_factor`` over the acoustic link (its jitter uniform on [0, 20 ms]), each report
    ``late`` s more (the robot's own pacing)."""
    sent = 0.2 * np.arange(n)
    jitter = np.random.default_rng(seed).uniform(0.0, 0.02, n)
    return DELAY + sent / real_time_factor + jitter + (0.0 if late is None else late), sent


def test_a_robot_on_time_is_judged_by_the_floor_and_a_stop_is_detected_after_it() -> None:
    """Reports every 0.2 s over the link's jitter: the margin stays within 15 ms of the floor (the learned
    one is mostly below it), and a robot that stops after its 60th report is lost one margin after it
    arrived."""
    arrivals, sent = _robot(60)
    dog = RobotWatchdog(0.2, FLOOR, DELAY)
    timeouts = _listen(dog, arrivals, sent, arrivals[-1] + 1.0)
    assert FLOOR == min(timeouts) and max(timeouts) < FLOOR + 0.015 and dog.state == "lost"
    ((loss),) = dog.events
    assert loss["last_report_s"] == pytest.approx(arrivals[-1], abs=1e-3)
    assert loss["detected_s"] - loss["last_report_s"] == pytest.approx(timeouts[-1], abs=1.5e-3)
    assert dog.real_time_factor == pytest.approx(1.0, abs=0.03) and dog.state == "lost"


def test_a_slow_robot_is_shown_slow_not_lost_and_a_stop_is_still_detected() -> None:
    """A robot at 0.4x real time reports every 0.5 s: the first long interval comes before the watchdog has
    measured any (one loss, 0.26 s), then the margin has learned the interval; the HUD says
    ``SLOW x0.40 real time``; when it stops, it is lost one learned margin (below the ceiling) later."""
    arrivals, sent = _robot(40, real_time_factor=0.4)
    dog = RobotWatchdog(0.2, FLOOR, DELAY)
    timeouts = _listen(dog, arrivals, sent, arrivals[-1])
    (first,) = dog.events
    assert first["detected_s"] == pytest.approx(arrivals[0] + FLOOR, abs=2e-3)
    assert first["back_s"] == pytest.approx(arrivals[1], abs=1e-3)
    assert dog.state == "slow" and dog.real_time_factor == pytest.approx(0.4, abs=0.02)
    assert robot_state(SimpleNamespace(watchdog=dog)) == "SLOW x0.40 real time"  # type: ignore[arg-type]
    assert 0.5 < timeouts[-1] < 0.6 <= dog.ceiling
    _listen(dog, np.array([]), np.array([]), arrivals[-1] + 1.0)
    stop = dog.events[-1]
    assert stop["detected_s"] - stop["last_report_s"] == pytest.approx(timeouts[-1], abs=1.5e-3)
    # a robot slower than ~0.25x real time (reports 1.33 s apart here) is lost at the ceiling every time
    arrivals, sent = _robot(10, real_time_factor=0.15)
    dog = RobotWatchdog(0.2, FLOOR, DELAY)
    _listen(dog, arrivals, sent, arrivals[-1])
    assert len(dog.events) == 9 and max(e["timeout_s"] for e in dog.events) == dog.ceiling == 1.0


def test_a_loaded_robots_late_reports_widen_the_margin_instead_of_making_false_losses() -> None:
    """Under load each report leaves late by its robot's pacing (exponential, mean 15 ms, at most 80 ms):
    a fixed 0.24 s margin declares the robot lost 12 times in 60 s, the learned one 3 times (at most 0.41
    s); once the robot stops it is lost one learned margin after its last report."""
    late = np.minimum(np.random.default_rng(0).exponential(0.015, 300), 0.08)
    arrivals, sent = _robot(300, late=late, seed=1)
    fixed = RobotWatchdog(0.2, FLOOR, DELAY, ceiling=FLOOR)
    assert _listen(fixed, arrivals, sent, arrivals[-1]) == [FLOOR] * 300
    dog = RobotWatchdog(0.2, FLOOR, DELAY)
    timeouts = _listen(dog, arrivals, sent, arrivals[-1] + 1.0)
    assert len(fixed.events) == 12 and len(dog.events) - 1 == 3  # the last one: the stop
    assert FLOOR <= min(timeouts) and max(timeouts) < 0.41
    assert dog.events[-1]["detected_s"] - arrivals[-1] == pytest.approx(timeouts[-1], abs=2e-3)


def test_after_a_stall_the_margin_widens_within_the_ceiling_and_comes_back_to_the_floor() -> None:
    """A robot stopped for 3 s (SIGSTOP) and continued: lost one margin after its last report, heard again;
    the next margin is the ceiling (the 3 s gap counts as 1 s), and it is back within 5 ms of the floor
    within 6 s of reports on time (the deviation shrinks by a quarter a report, the interval by an
    eighth)."""
    arrivals, sent = _robot(80)
    arrivals[30:] += 3.0
    dog = RobotWatchdog(0.2, FLOOR, DELAY)
    timeouts = _listen(dog, arrivals, sent, arrivals[-1])
    (stall,) = dog.events
    assert stall["detected_s"] - stall["last_report_s"] == pytest.approx(timeouts[29], abs=1.5e-3)
    assert stall["back_s"] == pytest.approx(arrivals[30], abs=1e-3)
    assert timeouts[30] == dog.ceiling == 1.0
    back = next(i for i in range(31, 80) if timeouts[i] == FLOOR)
    assert arrivals[back] - arrivals[30] < 6.0 and max(timeouts[back:]) < FLOOR + 0.005


@pytest.mark.slow
def test_a_silent_robot_is_lost_within_an_interval_plus_the_delay_and_the_force_fades_out_and_back() -> None:
    """The robot's reports stop at 16 s (in contact) and flow again at 18 s: the master declares it lost
    within one report interval, the link delay and the tolerance, the force fades to 0 within the ramp
    (never a step above the renderer's slew limit) and comes back once reports flow again."""
    halt, resume = 16.0, 18.0
    with MmtSession(load_robot("ursula", sections=3)) as s:
        send = s.transport.send_states

        def gated(k: int, t: float, slave: object) -> None:
            if not halt <= t < resume:
                send(k, t, slave)  # type: ignore[arg-type]

        s.transport.send_states = gated  # type: ignore[method-assign]
        s.run(scripted_operator(), 20.0)
        t, f = s.log["t"], np.linalg.norm(s.log["f_m"], axis=1)
        steps = np.linalg.norm(np.diff(s.log["f_m"], axis=0), axis=1)
        (loss,) = s.watchdog.summary()["losses"]  # type: ignore[misc]
        timeout, delay, ramp = loss["timeout_s"], s.transport.report_delay(), s.haptics.params.ramp_time
        interval = 1.0 / s.cfg.state_rate
        max_step = s.haptics.params.max_step
    assert halt < loss["detected_s"] <= halt + interval + delay + (timeout - interval)
    assert f[(t > halt - 1.0) & (t < halt)].max() > 0.05  # pressing the rock when the robot went silent
    assert (f[(t >= loss["detected_s"] + ramp) & (t < resume)] == 0.0).all()  # faded out
    assert steps.max() <= max_step + 1e-12  # never a step
    assert resume < loss["back_s"] < resume + delay + timeout
    assert f[t > loss["back_s"] + ramp].max() > 0.05  # back


@pytest.mark.slow
def test_a_slow_robot_keeps_the_force_and_the_hud_and_summary_say_slow() -> None:
    """The robot's reports leave every 0.5 s carrying its clock at 0.4x the master's (a robot at 0.4x real
    time, in lockstep): one loss at the first long interval, none after; the operator feels the contact
    to the end; the HUD says ``SLOW x0.40 real time`` and the summary ``slow``."""
    with MmtSession(load_robot("ursula", sections=3)) as s:
        slave = s.slave

        def slow(k: int, t: float, _: object) -> None:
            if k % 500 == 0:
                s.transport.up.send(t, slave.state_packet(k + 1, 0.4 * t))  # type: ignore[union-attr]

        s.transport.send_states = slow  # type: ignore[method-assign]
        s.run(scripted_operator(), 17.0)  # the arm presses the rock from about 13 s
        t, f = s.log["t"], np.linalg.norm(s.log["f_m"], axis=1)
        report, hud = s.robot_report(), hud_lines(s)[3]
    (loss,) = report["losses"]  # type: ignore[misc]
    assert loss["detected_s"] < 2.0 and loss["back_s"] < 2.0
    assert "robot SLOW x0.40 real time" in hud and report["state"] == "slow"
    assert report["real_time_factor"] == pytest.approx(0.4, abs=0.02)
    assert 0.5 < report["timeout_s"] < 0.7 < report["timeout_ceiling_s"]  # type: ignore[operator]
    assert f[(t > 15.0)].min() > 0.05  # pressing the rock, the force felt


def test_the_renderer_renders_the_stiffness_it_is_given_within_its_passive_bound() -> None:
    """The stiffness is an argument of the tick, not folded into the penetration: a stiffness above the
    checked one is rendered at the checked one (passive), the damping scales with it, and the
    penetration limit sees the true depth."""
    p = HapticParams(ramp_time=0.0, thermal_tau=100.0)
    r = HapticRenderer(p)
    d = np.array([0.0, 0.0, 0.001])
    for k in (20.0, 400.0, 2000.0):
        r.reset()
        r._last = (0.0, 0.0, 0.0)
        for _ in range(40):
            f = r.tick(d, stiffness=k)
        assert r.stiffness == min(k, p.stiffness)
        assert f[2] == pytest.approx(min(k, p.stiffness) * 1e-3)
        assert passivity_margin(r.stiffness, r.damping, p.device_damping, p.dt) >= passivity_margin(
            p.stiffness, p.damping, p.device_damping, p.dt
        )
    r = HapticRenderer(p)
    r.tick(np.array([0.0, 0.0, 0.5]), stiffness=1.0)  # 0.5 N: deep but a true depth within 1 m
    assert r.fault is None
    r.tick(
        np.array([0.0, 0.0, 1.5]), stiffness=1.0
    )  # 1.5 m: a fault (a depth scaled by 1/400 would read 3.75 mm)
    assert r.fault is not None and "longer than 1 m" in r.fault
    for bad in (float("nan"), -1.0, float("inf")):
        r = HapticRenderer(p)
        assert not r.tick(d, stiffness=bad).any() and "stiffness" in str(r.fault)
