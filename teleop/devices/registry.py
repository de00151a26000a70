"""The operator's input devices by name: :func:`open_device` opens one (hardware SDKs are imported only
then), :data:`DEVICE_NAMES` and :data:`DEMO_DEVICES` list what it and ``pccbullet demo --device`` take."""

from __future__ import annotations

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.base import InputDevice

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
        return cls[name](**kwargs)
    if name == "udp":
        from pccbullet.teleop.udp.bridge import UdpBridge

        return UdpBridge(**kwargs)  # type: ignore[arg-type]
    raise ConfigurationError(f"device = {name!r} is invalid; allowed: {', '.join(DEVICE_NAMES)}")
