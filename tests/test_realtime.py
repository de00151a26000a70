"""The master's loop under real-time scheduling where the system allows it (pccbullet.teleop.realtime)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from pccbullet.teleop.devices.scripted import ScriptedDevice
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.realtime import RT_PRIORITY, realtime_priority
from pccbullet.teleop.slave_process import ROBOT_RT_PRIORITY
from pccbullet.urdf_gen.spec_loader import load_robot

ROOT = os.geteuid() == 0


@pytest.mark.skipif(not ROOT, reason="SCHED_FIFO needs root or CAP_SYS_NICE here")
def test_the_block_runs_under_sched_fifo_and_the_policy_comes_back() -> None:
    before = os.sched_getscheduler(0), os.sched_getparam(0).sched_priority
    seen: list[int] = []
    with realtime_priority() as granted:
        policy = os.sched_getscheduler(0) & ~os.SCHED_RESET_ON_FORK
        priority = os.sched_getparam(0).sched_priority
        thread = threading.Thread(target=lambda: seen.append(os.sched_getscheduler(0)))
        thread.start()
        thread.join()
    assert granted and policy == os.SCHED_FIFO and priority == RT_PRIORITY
    assert seen == [os.SCHED_OTHER]  # a new thread does not inherit it
    assert (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority) == before
    with pytest.raises(ValueError, match="priority = 0 is invalid"):
        with realtime_priority(0):
            pass


NOT_ALLOWED = """
import os, resource
from pccbullet.teleop.realtime import realtime_priority
os.setgid(65534)
os.setuid(65534)  # nobody (after the imports: it may not read them): no CAP_SYS_NICE, RLIMIT_RTPRIO 0
with realtime_priority() as granted:
    print(granted, os.sched_getscheduler(0) == os.SCHED_OTHER)
"""


@pytest.mark.skipif(not ROOT, reason="the test drops root to an unprivileged user")
def test_without_the_right_the_block_runs_at_normal_priority() -> None:
    proc = subprocess.run([sys.executable, "-c", NOT_ALLOWED], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["False", "True"]


def test_a_real_time_session_says_whether_it_had_the_priority_and_gives_it_back() -> None:
    device = ScriptedDevice(waypoints=[(0.0, (0.55, 0.06, -0.40))])
    before = os.sched_getscheduler(0)
    with MmtSession(load_robot("ursula", sections=3)) as s:
        stats = s.run(device, 0.2, realtime=True, priority=True)
        plain = s.run(device, 0.1, realtime=True)
    assert stats["realtime_priority"] is ROOT and plain["realtime_priority"] is False
    assert os.sched_getscheduler(0) == before


def test_a_robot_in_its_own_process_runs_under_real_time_scheduling_below_the_master() -> None:
    device = ScriptedDevice(waypoints=[(0.0, (0.55, 0.06, -0.40))])
    with MmtSession(load_robot("ursula", sections=3), slave="process") as s:
        stats = s.run(device, 0.3, realtime=True, priority=True)
    assert stats["realtime_priority"] is ROOT
    assert stats["slave"]["realtime_priority"] is ROOT  # type: ignore[index]
    assert ROBOT_RT_PRIORITY < RT_PRIORITY
