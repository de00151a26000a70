"""Operator input devices behind one interface (:class:`~pccbullet.teleop.devices.base.InputDevice`).

Hardware SDKs are imported only when a device is opened: :func:`open_device` by name.
"""

from __future__ import annotations

from pccbullet.teleop.devices.base import (
    DeviceError,
    DeviceSample,
    DeviceUnavailableError,
    InputDevice,
    require_module,
)
from pccbullet.teleop.devices.scripted import Recorder, ReplayDevice, ScriptedDevice
from pccbullet.urdf_gen.errors import ConfigurationError

DEVICE_NAMES = ("keyboard", "terminal", "touch", "spacemouse", "gamepad", "udp")
# what `pccbullet demo --device` takes: "auto" (keyboard with a display, else scripted), the scripted
# operator, or any device above
DEMO_DEVICES = ("auto", "scripted", *DEVICE_NAMES)


def open_device(name: str, **kwargs: object) -> InputDevice:
    """Open a device by name (one of :data:`DEVICE_NAMES`); keyword arguments go to its constructor."""
    if name == "keyboard":
        from pccbullet.teleop.devices.keyboard import KeyboardDevice

        return KeyboardDevice(**kwargs)  # type: ignore[arg-type]
    if name == "terminal":
        from pccbullet.teleop.devices.keyboard import TerminalKeyboard

        return TerminalKeyboard(**kwargs)  # type: ignore[arg-type]
    if name in ("touch", "spacemouse", "gamepad"):
        from pccbullet.teleop.devices import haptic

        cls = {
            "touch": haptic.TouchDevice,
            "spacemouse": haptic.SpaceMouseDevice,
            "gamepad": haptic.GamepadDevice,
        }
        return cls[name](**kwargs)  # type: ignore[arg-type]
    if name == "udp":
        from pccbullet.teleop.udp.bridge import UdpBridge

        return UdpBridge(**kwargs)  # type: ignore[arg-type]
    raise ConfigurationError(f"device = {name!r} is invalid; allowed: {', '.join(DEVICE_NAMES)}")


__all__ = [
    "DEMO_DEVICES",
    "DEVICE_NAMES",
    "DeviceError",
    "DeviceSample",
    "DeviceUnavailableError",
    "InputDevice",
    "Recorder",
    "ReplayDevice",
    "ScriptedDevice",
    "open_device",
    "require_module",
]
