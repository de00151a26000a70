"""The operator's side of the demo: the device it reads (and the key that ends the session), the
terminal's key table and status line, the GUI's HUD colours (:mod:`pccbullet.teleop.demo.hud`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pccbullet.teleop.demo.hud import hud_lines, status_line
from pccbullet.teleop.devices.base import DeviceSample, InputDevice
from pccbullet.teleop.devices.keys import QUIT, key_table
from pccbullet.teleop.devices.registry import open_device

if TYPE_CHECKING:
    from pccbullet.teleop.mmt.session import MmtSession


def status_printer(session: MmtSession):
    """Print the key table once, then return a function that rewrites the status line (stderr)."""
    err = sys.stderr
    limbs = [limb.name for limb in session.spec.limbs]
    err.write("\n".join([*key_table(limbs), "Ctrl-C also ends the session (the outputs are written)"]) + "\n")

    def show() -> None:
        err.write("\r" + status_line(session) + "\x1b[K")  # clear what a longer line left
        err.flush()

    return show


class QuitKey:
    """Wraps the operator's device: notes the ``quit`` key (:data:`~pccbullet.teleop.devices.keys.QUIT`),
    which ends an interactive session (:meth:`~pccbullet.teleop.mmt.session.MmtSession.run`'s ``stop``)."""

    def __init__(self, device: InputDevice) -> None:
        self.device = device
        self.quit = False

    def read(self, t: float) -> DeviceSample:
        """The device's sample (a ``quit`` in it is noted)."""
        sample = self.device.read(t)
        if QUIT in sample.pressed:
            self.quit = True
        return sample

    def send_force(self, force: np.ndarray) -> None:
        """To the device."""
        self.device.send_force(force)

    def close(self) -> None:
        """Close the device."""
        self.device.close()

    def stop(self) -> bool:
        """Whether the operator quit."""
        return self.quit


def open_operator(
    device: str, limbs: list[str], udp_port: int, udp_key_file: Path | None = None
) -> InputDevice:
    """A named device for the demo (keyboard devices get the limb selection keys)."""
    if device == "terminal":
        return open_device(device, limbs=limbs)
    if device != "udp":
        return open_device(device)
    from pccbullet.teleop.udp.bridge import open_bridge

    return open_bridge(udp_port, udp_key_file)


def hud_colours(session: MmtSession) -> list[tuple[str, tuple[float, float, float]]]:
    """The HUD lines with their colours: faults in red, the force in yellow, a slow robot in orange, the
    rest white."""
    lines = hud_lines(session)
    colours = [(1.0, 1.0, 1.0)] * len(lines)
    colours[2] = (1.0, 0.85, 0.2)
    if not lines[4].endswith("none"):
        colours[4] = (1.0, 0.25, 0.2)
    colours[6] = (0.6, 0.9, 1.0)
    state = session.watchdog.state
    if state == "slow":  # alive, behind real time
        colours[3] = (1.0, 0.6, 0.1)
    elif state != "ok":
        colours[3] = (1.0, 0.25, 0.2)
    return list(zip(lines, colours, strict=True))
