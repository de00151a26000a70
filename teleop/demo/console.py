"""The operator's side of the demo: the device it reads (and the key that ends the session), the
terminal's key table and status line, the GUI's HUD colours (:mod:`pccbullet.teleop.demo.hud`).

The status line (:class:`StatusLine`) is rewritten in place five times a second, so it must neither wrap
(a carriage return then goes back to the start of its last row only, and every rewrite leaves a row
behind) nor share its row with anything else: it is fitted to the terminal's width, asked at every
rewrite (a window may be resized), and a log record (a warning such as the watchdog's "robot LOST")
first clears it, so that the alert gets a line of its own; the next rewrite puts the status back below.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from pccbullet.teleop.demo.hud import fit, hud_lines, status_line
from pccbullet.teleop.devices.base import DeviceSample, InputDevice
from pccbullet.teleop.devices.keys import QUIT, key_table
from pccbullet.teleop.devices.registry import open_device

if TYPE_CHECKING:
    from pccbullet.teleop.mmt.session import MmtSession


def columns(stream: TextIO) -> int | None:
    """The width of the terminal ``stream`` writes to (characters); else ``$COLUMNS``; else ``None``."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        width = os.get_terminal_size(stream.fileno()).columns
        if width > 0:
            return width
    env = os.environ.get("COLUMNS", "")
    return int(env) if env.isdigit() and int(env) > 0 else None


def _handlers() -> list[logging.Handler]:
    """Every handler of every logger, and the one Python falls back on."""
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    found = [h for lg in loggers if isinstance(lg, logging.Logger) for h in lg.handlers]
    return [*found, *([logging.lastResort] if logging.lastResort is not None else [])]


class StatusLine(logging.Filter):
    """One line of ``stream`` rewritten in place, fitted to ``width`` characters (``None``: the
    terminal's, asked at every rewrite; :func:`columns`). While it is shown, a log record written to the
    same stream clears it first (this filter, on every such handler until :meth:`close`)."""

    def __init__(self, stream: TextIO, width: int | None = None) -> None:
        super().__init__()
        self.stream = stream
        self.width = width
        self.shown = False
        self._handlers = [h for h in _handlers() if getattr(h, "stream", None) is stream]
        for handler in self._handlers:
            handler.addFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        """Clear the line before a record is written (the record always passes)."""
        self.clear()
        return True

    def room(self) -> int | None:
        """Characters the line may take: the width but one (``None``: any), since a terminal may wrap a
        line that reaches its last column."""
        width = self.width or columns(self.stream)
        return None if width is None else width - 1

    def show(self, text: str) -> None:
        """Rewrite the line with ``text`` (cut to :meth:`room`: :func:`~pccbullet.teleop.demo.hud.fit`)."""
        self._write("\r" + fit([("", text, 0)], self.room()) + "\x1b[K")
        self.shown = True

    def clear(self) -> None:
        """Clear the line, the cursor at its start."""
        if self.shown:
            self._write("\r\x1b[K")
            self.shown = False

    def close(self) -> None:
        """End the line (the text stays) and stop clearing it for log records."""
        for handler in self._handlers:
            handler.removeFilter(self)
        if self.shown:
            self._write("\n")
            self.shown = False

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a terminal that hung up or closed: nothing shown
            self.stream.write(text)
            self.stream.flush()


class StatusPrinter:
    """The terminal device's display: the key table once, then :meth:`__call__` rewrites the status
    line (:func:`~pccbullet.teleop.demo.hud.status_line` fitted to the width; :class:`StatusLine`)."""

    def __init__(self, session: MmtSession, stream: TextIO | None = None, width: int | None = None) -> None:
        self.session = session
        self.line = StatusLine(sys.stderr if stream is None else stream, width)
        limbs = [limb.name for limb in session.spec.limbs]
        table = [*key_table(limbs), "Ctrl-C also ends the session (the outputs are written)"]
        self.line._write("\n".join(table) + "\n")

    def __call__(self) -> None:
        """Rewrite the status line now."""
        self.line.show(status_line(self.session, self.line.room()))

    def close(self) -> None:
        """End the status line (:meth:`StatusLine.close`)."""
        self.line.close()


def status_printer(session: MmtSession) -> StatusPrinter:
    """Print the key table once on stderr; returns what rewrites the status line there."""
    return StatusPrinter(session)


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
