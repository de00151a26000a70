"""A lost or stalled robot is detected, shown and fades the force out (pccbullet.teleop.mmt.watchdog)."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.teleop.demo.run import scripted_operator
from pccbullet.teleop.haptics import HapticParams, HapticRenderer, passivity_margin
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.mmt.watchdog import RobotWatchdog, report_timeout
from pccbullet.urdf_gen.errors import ConfigurationError


def test_the_watchdog_declares_the_robot_lost_after_a_report_interval_and_a_tolerance() -> None:
    timeout = report_timeout(5.0, 0.01)
    assert timeout == pytest.approx(0.2 + 0.02 + 0.02)
    dog = RobotWatchdog(timeout, first_delay=1.0)
    assert dog.state == "waiting" and dog.check(1.0 + timeout)  # the first report may take a delay
    assert not dog.check(1.0 + timeout + 1e-3) and dog.state == "lost"
    dog.heard(1.5)
    assert dog.state == "ok" and dog.check(1.5 + timeout)
    assert not dog.check(1.5 + timeout + 1e-3)
    assert dog.summary()["losses"] == [
        {"last_report_s": None, "detected_s": 1.0 + timeout + 1e-3, "back_s": 1.5},
        {"last_report_s": 1.5, "detected_s": 1.5 + timeout + 1e-3, "back_s": None},
    ]
    with pytest.raises(ConfigurationError, match=r"report_timeout = nan s is invalid"):
        MmtConfig(report_timeout=float("nan"))


def test_a_silent_robot_is_lost_within_an_interval_plus_the_delay_and_the_force_fades_out_and_back() -> None:
    """The robot's reports stop at 8 s (in contact) and flow again at 10 s: the master declares it lost
    within one report interval, the link delay and the tolerance, the force fades to 0 within the ramp
    (never a step above the renderer's slew limit) and comes back once reports flow again."""
    halt, resume = 8.0, 10.0
    with MmtSession(MmtConfig(sections=3)) as s:
        send = s.transport.send_states

        def gated(k: int, t: float, slave: object) -> None:
            if not halt <= t < resume:
                send(k, t, slave)  # type: ignore[arg-type]

        s.transport.send_states = gated  # type: ignore[method-assign]
        s.run(scripted_operator(), 12.0)
        t, f = s.log["t"], np.linalg.norm(s.log["f_m"], axis=1)
        steps = np.linalg.norm(np.diff(s.log["f_m"], axis=0), axis=1)
        (loss,) = s.watchdog.summary()["losses"]  # type: ignore[misc]
        timeout, delay, ramp = s.watchdog.timeout, s.transport.report_delay(), s.haptics.params.ramp_time
        interval = 1.0 / s.cfg.state_rate
        max_step = s.haptics.params.max_step
    assert halt < loss["detected_s"] <= halt + interval + delay + (timeout - interval)
    assert f[(t > halt - 1.0) & (t < halt)].max() > 0.05  # pressing the rock when the robot went silent
    assert (f[(t >= loss["detected_s"] + ramp) & (t < resume)] == 0.0).all()  # faded out
    assert steps.max() <= max_step + 1e-12  # never a step
    assert resume < loss["back_s"] < resume + delay + timeout
    assert f[t > loss["back_s"] + ramp].max() > 0.05  # back


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
