"""Haptic and 6-DoF devices behind the common interface; each SDK is imported only when opened.

* :class:`TouchDevice`: 3D Systems Touch / Geomagic Touch through ``pyOpenHaptics`` (3-DoF force).
* :class:`SpaceMouseDevice`: 3Dconnexion SpaceMouse through ``pyspacemouse`` (rate-controlled position).
* :class:`GamepadDevice`: any gamepad through ``pygame`` (sticks integrate a position, buttons act).

Without the SDK the constructor raises :class:`~pccbullet.teleop.devices.base.DeviceUnavailableError` with the
``pip install`` hint; nothing is imported at module import time. Positions are metres in the device
frame; forces are newtons in the device frame. The SDK calls follow the packages' published examples
and have not been exercised against hardware here.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.base import DeviceError, DeviceSample, require_module


class ServoWatchdog:
    """The force the device's servo thread renders, zeroed when the control loop stops feeding it.

    The control loop calls :meth:`command` once per tick; the servo thread (the SDK's 1 kHz scheduler)
    calls :meth:`output` once per servo tick and renders what it returns. When no new force arrived for
    ``timeout`` seconds the output is zero and the watchdog is *tripped*: it stays at zero, whatever the
    loop commands, until the loop has seen the trip through :meth:`take_trip` (the device's ``read``
    reports ``ok = False`` once, so the haptic renderer ramps in again from zero instead of stepping back
    to a force computed before the stall). A non-finite force is never rendered (zero, and a trip); any
    force is clamped to ``peak_force``.

    Args:
        timeout: longest gap between two commands before the output is zeroed (s).
        peak_force: largest magnitude ever rendered (N), the device's own limit.
        clock: monotonic clock in seconds, shared by both threads (injectable for tests).
    """

    def __init__(
        self, timeout: float = 0.01, peak_force: float = 3.3, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not (0.0 < timeout <= 1.0) or not (0.0 < peak_force < math.inf):
            raise ConfigurationError(
                f"timeout = {timeout!r} s, peak_force = {peak_force!r} N are invalid; allowed: "
                "0 < timeout <= 1 s, 0 < peak_force < inf"
            )
        self.timeout = timeout
        self.peak_force = peak_force
        self.clock = clock
        self._lock = threading.Lock()
        self._force = (0.0, 0.0, 0.0)
        self._fed: float | None = None  # time of the last command
        self._tripped = False  # zero until the loop takes the trip
        self.trips = 0
        self.zeroed = 0  # servo ticks that rendered zero because of a trip

    def command(self, force: Sequence[float] | np.ndarray) -> None:
        """Control loop: the force ``(3,)`` (N, device frame) to render from now on."""
        f = tuple(float(v) for v in force)
        now = self.clock()
        with self._lock:
            if len(f) != 3 or not all(math.isfinite(v) for v in f):
                self._force, self._tripped = (0.0, 0.0, 0.0), True
                self.trips += 1
                return
            mag = math.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
            if mag > self.peak_force:
                f = tuple(v * self.peak_force / mag for v in f)
            self._force, self._fed = f, now  # type: ignore[assignment]

    def output(self) -> tuple[float, float, float]:
        """Servo thread: the force to render this servo tick (N)."""
        now = self.clock()
        with self._lock:
            if not self._tripped and self._fed is not None and now - self._fed > self.timeout:
                self._tripped = True
                self.trips += 1
            if self._tripped:
                self.zeroed += 1
                return (0.0, 0.0, 0.0)
            return self._force

    def take_trip(self) -> bool:
        """Control loop: ``True`` once after each trip; the output follows the commands again after it
        (the first of which, from a renderer told ``ok = False``, is zero)."""
        with self._lock:
            if not self._tripped:
                return False
            self._tripped = False
            self._force = (0.0, 0.0, 0.0)
            self._fed = self.clock()
            return True


class TouchDevice:
    """3D Systems Touch: stylus position in, force out (servo loop in the SDK's own thread).

    The servo callback renders what a :class:`ServoWatchdog` gives: zero when the control loop has not
    sent a force for ``watchdog_timeout`` seconds (a stalled loop never leaves the last force on).

    Args:
        name: OpenHaptics device name ("Default Device").
        watchdog_timeout: see :class:`ServoWatchdog` (s).
    """

    def __init__(self, name: str = "Default Device", watchdog_timeout: float = 0.01) -> None:
        require_module("pyOpenHaptics", "pyOpenHaptics", "3D Systems Touch")
        hd = require_module("pyOpenHaptics.hd", "pyOpenHaptics", "3D Systems Touch")
        hd_device = require_module("pyOpenHaptics.hd_device", "pyOpenHaptics", "3D Systems Touch")
        hd_callback = require_module("pyOpenHaptics.hd_callback", "pyOpenHaptics", "3D Systems Touch")
        self._lock = threading.Lock()
        self._position = np.zeros(3)
        self._error: str | None = None
        self.watchdog = ServoWatchdog(timeout=watchdog_timeout)

        @hd_callback.hd_callback
        def _servo() -> None:  # runs at 1 kHz in the OpenHaptics scheduler
            try:
                T = np.asarray(hd.get_transform()).reshape(4, 4)
                with self._lock:
                    self._position = T[3, :3] * 1e-3  # column-major, millimetres -> m
                hd.set_force(list(self.watchdog.output()))
            except Exception as exc:  # any SDK failure becomes a device error
                self._error = str(exc)

        try:
            self._device = hd_device.HapticDevice(device_name=name, callback=_servo)
        except Exception as exc:
            raise DeviceError(f"could not open the Touch device {name!r}: {exc}") from exc

    def read(self, t: float) -> DeviceSample:
        """Stylus position (m); ``ok`` is ``False`` after any SDK error, and once after a watchdog trip."""
        with self._lock:
            p = tuple(float(v) for v in self._position)
        tripped = self.watchdog.take_trip()
        return DeviceSample(t=t, position=p, ok=self._error is None and not tripped)  # type: ignore[arg-type]

    def send_force(self, force: np.ndarray) -> None:
        """Set the force (N, device frame) the servo thread renders."""
        self.watchdog.command(force)

    def close(self) -> None:
        """Zero the force and close the device."""
        self.send_force(np.zeros(3))
        self._device.close()


class SpaceMouseDevice:
    """3Dconnexion SpaceMouse: the puck's deflection drives a position at ``speed`` (m/s at full scale)."""

    def __init__(self, speed: float = 0.1) -> None:
        self._sm = require_module("pyspacemouse", "pyspacemouse", "3Dconnexion SpaceMouse")
        if not self._sm.open():
            raise DeviceError("no SpaceMouse found (pyspacemouse.open() returned False)")
        self.speed = speed
        self._p = np.zeros(3)
        self._t: float | None = None

    def read(self, t: float) -> DeviceSample:
        """Integrate the puck's deflection; button 0 = next limb, button 1 = next segment."""
        try:
            s = self._sm.read()
        except Exception:
            return DeviceSample(t=t, position=tuple(self._p), ok=False)  # type: ignore[arg-type]
        dt = 0.0 if self._t is None else max(0.0, t - self._t)
        self._t = t
        self._p += self.speed * dt * np.array([s.x, s.y, s.z], dtype=float)
        buttons = list(getattr(s, "buttons", []))
        pressed = tuple(a for a, b in zip(("next_limb", "next_segment"), buttons, strict=False) if b)
        return DeviceSample(t=t, pressed=pressed, position=tuple(float(v) for v in self._p))  # type: ignore[arg-type]

    def send_force(self, force: np.ndarray) -> None:
        """No motors."""

    def close(self) -> None:
        """Close the HID connection."""
        self._sm.close()


class GamepadDevice:
    """A gamepad: left stick = bend/plane rates, triggers = length, buttons = limb/segment/follow/grasp."""

    def __init__(self, index: int = 0, deadzone: float = 0.15) -> None:
        self._pg = require_module("pygame", "pygame", "gamepad")
        self._pg.init()
        self._pg.joystick.init()
        if self._pg.joystick.get_count() <= index:
            raise DeviceError(f"gamepad {index} not found; {self._pg.joystick.get_count()} connected")
        self._js = self._pg.joystick.Joystick(index)
        self._js.init()
        self.deadzone = deadzone
        self._buttons = [False] * self._js.get_numbuttons()

    def read(self, t: float) -> DeviceSample:
        """Poll axes and buttons; a held stick past the dead zone holds the rate action."""
        try:
            self._pg.event.pump()
            ax = [self._js.get_axis(i) for i in range(self._js.get_numaxes())]
            bt = [bool(self._js.get_button(i)) for i in range(self._js.get_numbuttons())]
        except Exception:
            return DeviceSample(t=t, ok=False)
        dz = self.deadzone
        held = set()
        if len(ax) >= 2:
            held |= {"bend+"} if ax[1] < -dz else {"bend-"} if ax[1] > dz else set()
            held |= {"plane+"} if ax[0] < -dz else {"plane-"} if ax[0] > dz else set()
        if len(ax) >= 6:
            held |= {"length+"} if ax[5] > dz else set()
            held |= {"length-"} if ax[4] > dz else set()
        names = ("next_limb", "next_segment", "follow", "grasp")
        pressed = tuple(n for i, n in enumerate(names) if i < len(bt) and bt[i] and not self._buttons[i])
        self._buttons = bt
        return DeviceSample(t=t, held=frozenset(held), pressed=pressed)

    def send_force(self, force: np.ndarray) -> None:
        """No force feedback (rumble is not force)."""

    def close(self) -> None:
        """Shut the joystick module down."""
        self._pg.joystick.quit()
