"""Servo-side watchdog of the Touch device: a stalled control loop never leaves the last force on.

The OpenHaptics SDK is not installed here: a scripted stand-in SDK (the three ``pyOpenHaptics`` modules
the device imports) runs the device's real servo callback in a real thread at ~1 kHz."""

from __future__ import annotations

import math
import sys
import threading
import time
import types

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.haptic import ServoWatchdog, TouchDevice


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_watchdog_zeroes_a_stale_force_until_the_loop_has_seen_the_trip() -> None:
    clock = _Clock()
    w = ServoWatchdog(timeout=0.01, peak_force=3.3, clock=clock)
    assert w.output() == (0.0, 0.0, 0.0)  # nothing commanded yet
    w.command([0.0, 0.0, 1.18])
    clock.t = 0.009
    assert w.output() == (0.0, 0.0, 1.18)
    clock.t = 0.0101  # no command for more than 10 ms
    assert w.output() == (0.0, 0.0, 0.0) and w.trips == 1
    w.command([0.0, 0.0, 1.18])  # computed before the stall: not rendered
    assert w.output() == (0.0, 0.0, 0.0)
    assert w.take_trip() and not w.take_trip()  # seen once
    assert w.output() == (0.0, 0.0, 0.0)  # still zero until the next command
    w.command([0.0, 0.0, 0.1])
    assert w.output() == (0.0, 0.0, 0.1)
    w.command([0.0, 0.0, math.nan])  # never rendered
    assert w.output() == (0.0, 0.0, 0.0) and w.trips == 2 and w.take_trip()
    w.command([0.0, 40.0, 0.0])  # clamped to the device's peak
    assert w.output() == pytest.approx((0.0, 3.3, 0.0))
    with pytest.raises(ConfigurationError, match=r"timeout = nan s, .* allowed: 0 < timeout <= 1 s"):
        ServoWatchdog(timeout=math.nan)


class _FakeSdk:
    """The three pyOpenHaptics modules TouchDevice imports; the servo callback runs in a real thread."""

    def __init__(self, clock: _Clock) -> None:
        self.sent: list[tuple[float, tuple[float, ...]]] = []  # (time, force) of every hd.set_force
        self._stop = threading.Event()
        sdk = self
        self.hd = types.ModuleType("pyOpenHaptics.hd")
        self.hd.get_transform = lambda: np.eye(4).ravel().tolist()  # type: ignore[attr-defined]
        self.hd.set_force = lambda f: sdk.sent.append((clock(), tuple(f)))  # type: ignore[attr-defined]
        self.hd_callback = types.ModuleType("pyOpenHaptics.hd_callback")
        self.hd_callback.hd_callback = lambda fn: fn  # type: ignore[attr-defined]

        class HapticDevice:
            def __init__(self, device_name: str, callback) -> None:
                def servo() -> None:
                    while not sdk._stop.is_set():
                        callback()
                        time.sleep(0.001)

                self._thread = threading.Thread(target=servo, daemon=True)
                self._thread.start()

            def close(self) -> None:
                sdk._stop.set()
                self._thread.join()

        self.hd_device = types.ModuleType("pyOpenHaptics.hd_device")
        self.hd_device.HapticDevice = HapticDevice  # type: ignore[attr-defined]

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "pyOpenHaptics", types.ModuleType("pyOpenHaptics"))
        monkeypatch.setitem(sys.modules, "pyOpenHaptics.hd", self.hd)
        monkeypatch.setitem(sys.modules, "pyOpenHaptics.hd_device", self.hd_device)
        monkeypatch.setitem(sys.modules, "pyOpenHaptics.hd_callback", self.hd_callback)


def _servo_ticks(sdk: _FakeSdk, n: int = 1) -> None:
    """Wait until the servo thread has rendered ``n`` more forces (event-like: no wall-clock budget but
    a generous limit, so a loaded machine only makes it slower)."""
    target = len(sdk.sent) + n
    deadline = time.monotonic() + 120.0
    while len(sdk.sent) < target:
        assert time.monotonic() < deadline, "the servo thread does not run"
        time.sleep(0.0005)


def test_touch_servo_thread_stops_the_force_when_the_control_loop_stalls(monkeypatch) -> None:
    """The servo thread runs for real; time is a simulated clock both threads read, so a loaded machine
    that runs either thread late changes nothing."""
    # old: the watchdog lived in the stalled loop; the servo kept sending 1.18 N 781 times in 1 s
    clock = _Clock()
    sdk = _FakeSdk(clock)
    sdk.install(monkeypatch)
    device = TouchDevice()
    device.watchdog.clock = clock
    force = np.array([0.0, 0.0, 1.18])
    try:
        for _ in range(100):  # the control loop feeds the force every 1 ms (simulated)
            clock.t += 1e-3
            assert device.read(clock.t).ok
            device.send_force(force)
            _servo_ticks(sdk, 2)
        stall = clock.t
        clock.t += 1.0  # the control loop stalls for 1 s; the servo thread keeps running
        _servo_ticks(sdk, 300)
        resumed = clock.t
        oks = []
        for _ in range(100):  # the loop resumes: the renderer is told once (ok False) and sends 0 N first
            clock.t += 1e-3
            ok = device.read(clock.t).ok
            oks.append(ok)
            device.send_force(force if ok and len(oks) > 1 else np.zeros(3))
            _servo_ticks(sdk, 2)
    finally:
        device.close()
    stalled = [f for t, f in sdk.sent if stall < t <= resumed]
    assert len(stalled) >= 300  # the servo thread ran through the stall ...
    assert not any(any(f) for f in stalled)  # ... sending 0 N, not 1.18 N
    before = [f for t, f in sdk.sent if t <= stall]
    assert sum(f[2] == pytest.approx(1.18) for f in before) > 50
    assert oks[0] is False and all(oks[1:])
    after = [f for t, f in sdk.sent if t > resumed + 0.002]
    assert after and after[-1] == pytest.approx((0.0, 0.0, 1.18))  # feeding again: rendered again
