"""Keyboard operators: PyBullet GUI key events, or the terminal when there is no window.

Bindings (GUI): arrows up/down = bend +/-, arrows left/right = plane +/-, page up/down = length +/-,
1-4 = select limb in file order, ``n`` = next segment, ``l`` = next limb, ``f`` = light follows camera.
Terminal: ``w``/``s`` bend, ``a``/``d`` plane, ``e``/``q`` length, 1-4, ``n``, ``l``, ``t`` (follow); a
terminal has no key-up events, so each key press holds its action for ``hold`` seconds.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable, Sequence

import numpy as np

from pccbullet.sim.bullet import pb
from pccbullet.teleop.devices.base import DeviceSample

HELP_LINES = (
    "up/down: bend   left/right: plane   pgup/pgdn: length",
    "1-4: limb   n: segment   l: next limb   f: light follows camera",
)
TERMINAL_HELP_LINES = (
    "keys: w/s bend +/-   a/d plane +/-   e/q length +/-",
    "      1-4 select a limb   n next segment   l next limb   t light follows camera",
)


def _gui_bindings() -> tuple[dict[int, str], dict[int, str]]:
    held = {
        pb.B3G_UP_ARROW: "bend+",
        pb.B3G_DOWN_ARROW: "bend-",
        pb.B3G_LEFT_ARROW: "plane+",
        pb.B3G_RIGHT_ARROW: "plane-",
        pb.B3G_PAGE_UP: "length+",
        pb.B3G_PAGE_DOWN: "length-",
    }
    pressed = {ord("n"): "next_segment", ord("l"): "next_limb", ord("f"): "follow"}
    return held, pressed


class KeyboardDevice:
    """Keys of the PyBullet GUI window of ``client`` as operator actions.

    Args:
        client: PyBullet client id (a GUI connection).
        limbs: limb names in the order keys 1-4 select them.
    """

    def __init__(
        self, client: int, limbs: Sequence[str] = (), events: Callable[[], dict[int, int]] | None = None
    ) -> None:
        self.client = client
        # key events of another window, e.g. pccbullet.sim.viewer.ViewerProcess.keyboard_events
        self.events = events
        self._held_map, self._pressed_map = _gui_bindings()
        for i, limb in enumerate(limbs[:9]):
            self._pressed_map[ord(str(i + 1))] = f"select:{limb}"

    def read(self, t: float) -> DeviceSample:
        """Translate this tick's key events (held keys and fresh presses)."""
        events = (
            self.events() if self.events is not None else pb.getKeyboardEvents(physicsClientId=self.client)
        )
        held = frozenset(a for k, a in self._held_map.items() if events.get(k, 0) & pb.KEY_IS_DOWN)
        pressed = tuple(a for k, a in self._pressed_map.items() if events.get(k, 0) & pb.KEY_WAS_TRIGGERED)
        return DeviceSample(t=t, held=held, pressed=pressed)

    def send_force(self, force: np.ndarray) -> None:
        """A keyboard has no motors."""

    def close(self) -> None:
        """Nothing to release."""


class TerminalKeyboard:
    """Single key presses from a terminal (cbreak mode while open); see the module docstring.

    Args:
        limbs: limb names for keys 1-4. hold: how long a press holds its rate action (s).
        stream: a file object with ``fileno()``; standard input by default.
    """

    HELD = {"w": "bend+", "s": "bend-", "a": "plane+", "d": "plane-", "e": "length+", "q": "length-"}
    PRESSED = {"n": "next_segment", "l": "next_limb", "t": "follow"}

    def __init__(self, limbs: Sequence[str] = (), *, hold: float = 0.15, stream=None) -> None:  # type: ignore[no-untyped-def]
        self.stream = stream if stream is not None else sys.stdin
        self.hold = hold
        self._pressed_map = dict(self.PRESSED)
        for i, limb in enumerate(limbs[:9]):
            self._pressed_map[str(i + 1)] = f"select:{limb}"
        self._until: dict[str, float] = {}
        self._saved = None
        fd = self.stream.fileno()
        if os.isatty(fd):
            import termios
            import tty

            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)

    def _chars(self) -> str:
        fd = self.stream.fileno()
        out = ""
        for _ in range(64):  # bounded: at most 64 characters per tick
            ready, _, _ = select.select([fd], [], [], 0.0)
            if not ready:
                break
            c = os.read(fd, 1).decode(errors="ignore")
            if not c:
                break
            out += c
        return out

    def read(self, t: float) -> DeviceSample:
        """Keys typed since the last tick: rate actions last ``hold`` s, others fire once."""
        pressed = []
        for c in self._chars().lower():
            if c in self.HELD:
                self._until[self.HELD[c]] = t + self.hold
            elif c in self._pressed_map:
                pressed.append(self._pressed_map[c])
        held = frozenset(a for a, until in self._until.items() if t < until)
        return DeviceSample(t=t, held=held, pressed=tuple(pressed))

    def send_force(self, force: np.ndarray) -> None:
        """A keyboard has no motors."""

    def close(self) -> None:
        """Restore the terminal mode."""
        if self._saved is not None:
            import termios

            termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self._saved)
            self._saved = None
