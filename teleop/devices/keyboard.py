"""Keyboard operators: PyBullet GUI key events, or the terminal when there is no window.

Both use the one key table of :mod:`pccbullet.teleop.devices.keys` (``pccbullet demo --help-keys``).
A terminal has no key-up events: each press of a rate key holds its action for ``hold`` seconds, and
presses add up (three ``w`` bend three times as far as one). Keys typed faster than the loop reads
them are applied in the order typed: a key that selects another limb or segment waits until the rate
keys typed before it have acted on the segment they were meant for.
"""

from __future__ import annotations

import math
import os
import select
import sys
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from pccbullet.sim.bullet import pb
from pccbullet.teleop.devices.base import DeviceSample
from pccbullet.teleop.devices.keys import PRESS_KEYS, RATE_KEYS, changes_target, key_table, limb_keys

HELP_LINES = tuple(key_table())
"""The key table for URSULA's limbs (what the GUI shows)."""


TAP_HOLD_S = 0.15
"""s, how long a rate key acts at least once pressed: a tap (down and up between two reads, as a quick
press on a busy machine or a synthetic key event gives) still moves the segment; the terminal's hold."""


class KeyboardDevice:
    """Keys of the PyBullet GUI window of ``client`` as operator actions.

    A rate key acts while it is down and at least ``tap_hold`` s from its press: a key pressed and
    released between two reads of the window's events arrives without ``KEY_IS_DOWN`` and would
    otherwise do nothing.

    Args:
        client: PyBullet client id (a GUI connection).
        limbs: limb names in the order keys 1-4 select them.
        events: the key events of another window (e.g.
            :meth:`pccbullet.sim.views.gui.ViewerProcess.keyboard_events`) instead of ``client``'s.
        tap_hold: the least time a rate key acts once pressed (s; :data:`TAP_HOLD_S`).
    """

    def __init__(
        self,
        client: int,
        limbs: Sequence[str] = (),
        events: Callable[[], dict[int, int]] | None = None,
        tap_hold: float = TAP_HOLD_S,
    ) -> None:
        self.client = client
        self.events = events
        self.tap_hold = tap_hold
        self._held_map = {ord(k): a for k, a in RATE_KEYS.items()}
        self._pressed_map = {ord(k): a for k, a in {**PRESS_KEYS, **limb_keys(limbs)}.items()}
        self._tapped: dict[str, float] = {}  # rate action -> until when its last press holds it (s)

    def read(self, t: float) -> DeviceSample:
        """Translate this tick's key events (held keys, taps of rate keys, fresh presses)."""
        events = (
            self.events() if self.events is not None else pb.getKeyboardEvents(physicsClientId=self.client)
        )
        for k, a in self._held_map.items():
            if events.get(k, 0) & pb.KEY_WAS_TRIGGERED:
                self._tapped[a] = t + self.tap_hold
        held = frozenset(
            a
            for k, a in self._held_map.items()
            if events.get(k, 0) & pb.KEY_IS_DOWN or self._tapped.get(a, -math.inf) > t
        )
        pressed = tuple(a for k, a in self._pressed_map.items() if events.get(k, 0) & pb.KEY_WAS_TRIGGERED)
        return DeviceSample(t=t, held=held, pressed=pressed)

    def send_force(self, force: np.ndarray) -> None:
        """A keyboard has no motors."""

    def close(self) -> None:
        """Nothing to release."""


class TerminalKeyboard:
    """Single key presses from a terminal (cbreak mode while open); see the module docstring.

    Args:
        limbs: limb names for keys 1-9. hold: how long a press holds its rate action (s).
        stream: a file object with ``fileno()``; standard input by default.
    """

    def __init__(self, limbs: Sequence[str] = (), *, hold: float = 0.15, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stdin
        self.hold = hold
        self._pressed_map = {**PRESS_KEYS, **limb_keys(limbs)}
        self._until: dict[str, float] = {}
        self._queue: deque[str] = deque(maxlen=1024)  # keys typed, not yet acted on
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
        """Keys typed so far, in order: a rate key holds its action ``hold`` s more (presses add up), a
        one-shot key fires once; a key that changes the selected segment waits while rate keys typed
        before it still act (one such key a tick)."""
        self._queue.extend(c for c in self._chars().lower() if c in RATE_KEYS or c in self._pressed_map)
        pressed = []
        while self._queue:
            c = self._queue[0]
            if c in RATE_KEYS:
                action = RATE_KEYS[c]
                self._until[action] = max(self._until.get(action, t), t) + self.hold
            else:
                action = self._pressed_map[c]
                if changes_target(action):
                    if any(until > t for until in self._until.values()):
                        break  # the earlier rate keys are still moving the segment they were typed for
                    pressed.append(action)
                    self._queue.popleft()
                    break  # the keys after it act on the new segment from the next tick
                pressed.append(action)
            self._queue.popleft()
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
