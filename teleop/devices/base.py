"""One interface for every operator input device: a sample per 1 kHz tick, a force back.

A device is anything with ``read(t) -> DeviceSample``, ``send_force(force)`` and ``close()``.
Samples speak in *actions*, not key codes, so the operator mapping (:mod:`pccbullet.teleop.mapping`) does not
care whether they came from a keyboard, a gamepad, a haptic stylus, a UDP stream or a script:

* ``held``: rate actions active during this tick: ``bend+``, ``bend-``, ``plane+``, ``plane-``,
  ``length+``, ``length-``.
* ``pressed``: one-shot actions this tick: ``next_limb``, ``next_segment``, ``follow``,
  ``select:<limb>``, ``segment:<n>``, ``grasp`` (close or open the selected limb's grasp: the ``g`` key),
  ``grasp:close``, ``grasp:open`` (the selected limb's) and ``grasp:close:<limb>``, ``grasp:open:<limb>``
  (for scripts: :data:`GRASP_ACTIONS`).
* ``position``: a 6-DoF device's handle position in the device frame, ``(3,)`` (m), or ``None``.
* ``ok``: ``False`` when the device reported an error or its stream went stale.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol, cast

import numpy as np

from pccbullet.core.errors import ConfigurationError, PccBulletError

Vec3 = tuple[float, float, float]

RATE_ACTIONS = ("bend+", "bend-", "plane+", "plane-", "length+", "length-")
ONE_SHOT_ACTIONS = ("next_limb", "next_segment", "follow", "grasp")
GRASP_ACTIONS = ("grasp", "grasp:close", "grasp:open")  # then optionally ":<limb>" after close / open


class DeviceError(PccBulletError, RuntimeError):
    """An input device failed while in use (disconnected, SDK error)."""


class DeviceUnavailableError(ConfigurationError):
    """An optional device SDK is not installed; the message carries the install hint."""


@dataclass(frozen=True, slots=True)
class DeviceSample:
    """What the operator did during one tick (see the module docstring).

    Attributes:
        t: time of the sample (s, simulated or device clock).
        held: rate actions held this tick.
        pressed: one-shot actions this tick, in order.
        position: handle position ``(3,)`` (m) in the device frame, or ``None``.
        ok: ``False`` on a device error or a stale stream.
    """

    t: float
    held: frozenset[str] = frozenset()
    pressed: tuple[str, ...] = ()
    position: tuple[float, float, float] | None = None
    ok: bool = True

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict (floats round-trip exactly through :mod:`json`)."""
        return {
            "t": self.t,
            "held": sorted(self.held),
            "pressed": list(self.pressed),
            "position": None if self.position is None else list(self.position),
            "ok": self.ok,
        }

    @staticmethod
    def from_dict(d: dict[str, object]) -> DeviceSample:
        """Inverse of :meth:`to_dict`."""
        pos = cast("Sequence[float] | None", d.get("position"))
        return DeviceSample(
            t=float(cast(float, d["t"])),
            held=frozenset(cast("Iterable[str]", d.get("held", ()))),
            pressed=tuple(cast("Iterable[str]", d.get("pressed", ()))),
            position=None if pos is None else cast(Vec3, tuple(float(v) for v in pos)),
            ok=bool(d.get("ok", True)),
        )


class InputDevice(Protocol):
    """The device interface used by the mapping and the teleoperation loop."""

    def read(self, t: float) -> DeviceSample:
        """The operator's input for the tick at time ``t`` (s)."""
        ...

    def send_force(self, force: np.ndarray) -> None:
        """Render ``force`` ``(3,)`` (N, device frame) on the device; no-op for devices without motors."""
        ...

    def close(self) -> None:
        """Release the device (zero force first when it has motors)."""
        ...


def require_module(module: str, pip_name: str, device: str) -> ModuleType:
    """Import an optional SDK ``module`` or raise :class:`DeviceUnavailableError` with an install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DeviceUnavailableError(
            f"the {device} needs the Python package '{pip_name}' (module '{module}'), which is not "
            f"installed; install it with: pip install {pip_name}"
        ) from exc
