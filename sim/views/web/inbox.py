"""What pages send a web view: each message checked, and the keys they hold released when they go away.

A page sends JSON text messages (:func:`parse_message` checks each: its size, strict JSON, an object of a
known ``type`` with exactly the known fields, each of its type and in its range; a key must be one of
the page's keys): ``{"type": "key", "key": "w", "down": true}``, its figures ``{"type": "stats", "fps":
..., "mean_fps": ..., "frames": ..., "render_ms": ...}`` and a heartbeat ``{"type": "beat"}`` every
:data:`BEAT_S` (the server tells it the period). A bad message is dropped, counted and answered with one
line (``{"type": "error", "message": ...}``), never a traceback.

:class:`KeyRelay` folds the keys every page holds into one stream of presses and releases for the
publisher: a key is down while any page holds it. When a page's socket closes, or the page has sent
nothing for :data:`STALL_S` (its tab froze, its machine slept, its network went away) while it holds keys,
every key it holds is released: nobody is left at the controls with a key held down. Silence is measured
on an injectable clock (:class:`SharedClock` in tests: a clock the test moves, shared with the view's
process).
"""

from __future__ import annotations

import math
import queue
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from pccbullet.core import strict_json

BEAT_S = 0.5  # s, how often a page sends its heartbeat
STALL_S = 2.0  # s, a page silent this long has its keys released
MAX_MESSAGE = 1024  # characters of a page's message (its largest, the figures, is under 150)
STATS = {  # a page's figures and their ranges: frames drawn per second, frames received, ms per draw
    "fps": (0.0, 1000.0),
    "mean_fps": (0.0, 1000.0),
    "frames": (0.0, 1e12),
    "render_ms": (0.0, 1e6),
}
FIELDS = {"key": {"type", "key", "down"}, "stats": {"type", *STATS}, "beat": {"type"}}


class BadMessage(ValueError):
    """A page's message that is not one of :data:`FIELDS`' (the message says what and what is allowed)."""


def parse_message(message: str | bytes, keys: Iterable[str]) -> dict[str, Any]:
    """A page's message checked (module docstring); ``keys``: the page's keys.

    Raises:
        BadMessage: one line naming what is wrong and what is allowed.
    """
    if not isinstance(message, str):
        raise BadMessage("a binary message is invalid; allowed: JSON text")
    if len(message) > MAX_MESSAGE:
        raise BadMessage(f"a message of {len(message)} characters is invalid; allowed: up to {MAX_MESSAGE}")
    try:
        msg = strict_json.loads(message)
    except (ValueError, RecursionError) as exc:
        raise BadMessage(f"message is invalid: {str(exc)[:120]}; allowed: standard JSON") from None
    kind = msg.get("type") if isinstance(msg, dict) else None
    if not isinstance(kind, str) or kind not in FIELDS:
        raise BadMessage(f"message type {str(kind)[:40]!r} is invalid; allowed: {', '.join(sorted(FIELDS))}")
    extra = set(msg) - FIELDS[kind]
    if extra:
        names = ", ".join(sorted(str(k)[:40] for k in extra)[:5])
        raise BadMessage(
            f"{kind} message field {names} is invalid; allowed: {', '.join(sorted(FIELDS[kind]))}"
        )
    if kind == "key":
        allowed = sorted(keys)
        if not isinstance(msg.get("key"), str) or msg["key"] not in allowed:
            raise BadMessage(
                f"key {str(msg.get('key'))[:40]!r} is invalid; allowed: one of {''.join(allowed)!r}"
            )
        if not isinstance(msg.get("down"), bool):
            raise BadMessage(f"key down = {str(msg.get('down'))[:40]!r} is invalid; allowed: true or false")
    elif kind == "stats":
        for name, value in msg.items():
            low, high = STATS.get(name, (0.0, 0.0))
            if name == "type":
                continue
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            if not ok or not low <= value <= high:
                raise BadMessage(
                    f"stats {name} = {str(value)[:40]} is invalid; allowed: a number in [{low:g}, {high:g}]"
                )
    return msg


class SharedClock:
    """A clock (s) that its owner sets, readable in the view's process: a test's stand-in for
    :func:`time.monotonic`, so that a page's silence is measured without waiting for it.

    Args:
        start: its first reading (s).
    """

    def __init__(self, start: float = 0.0) -> None:
        import multiprocessing as mp

        self._value = mp.get_context("spawn").Value("d", start)

    def __call__(self) -> float:
        """The time (s)."""
        return float(self._value.value)

    def advance(self, seconds: float) -> None:
        """Move the clock on by ``seconds`` (>= 0)."""
        with self._value.get_lock():
            self._value.value += max(0.0, float(seconds))


class KeyRelay:
    """The keys every page holds, as one stream of ``(key, down)`` events (module docstring).

    Args:
        out: the publisher's queue (``put_nowait``; full: a press is dropped, a release waits in order).
        clock: the time (s) that a page's silence is measured on. stall: silence (s) that releases keys.
    """

    def __init__(self, out: Any, clock: Callable[[], float] = time.monotonic, stall: float = STALL_S) -> None:
        self.out, self.clock, self.stall = out, clock, stall
        self.held: dict[int, set[str]] = {}  # by page: the keys it holds
        self.heard: dict[int, float] = {}  # by page: when it last sent a message
        self.down: set[str] = set()  # keys the publisher was told are down
        self.pending: deque[str] = deque()  # releases the queue had no room for, in order
        self.released = 0  # keys released because their page closed or went silent

    def open(self, page: int) -> None:
        """A page connected."""
        self.held[page], self.heard[page] = set(), self.clock()

    def hear(self, page: int) -> None:
        """A message from ``page`` (any message: it is alive)."""
        self.heard[page] = self.clock()

    def key(self, page: int, key: str, down: bool) -> None:
        """``page`` pressed or released ``key``."""
        held = self.held.setdefault(page, set())
        if down:
            held.add(key)
            if key not in self.down and self._send(key, True):
                self.down.add(key)
        else:
            held.discard(key)
            self._release(key)

    def close(self, page: int) -> list[str]:
        """``page`` went away: release what it held; the keys released."""
        keys = sorted(self.held.pop(page, set()))
        self.heard.pop(page, None)
        for key in keys:
            self._release(key)
        self.released += len(keys)
        return keys

    def stalled(self) -> dict[int, list[str]]:
        """Release the keys of every page silent for :attr:`stall` s; the keys released by page."""
        now, out = self.clock(), {}
        for page, held in self.held.items():
            if held and now - self.heard.get(page, now) > self.stall:
                out[page] = sorted(held)
                held.clear()
        for keys in out.values():
            for key in keys:
                self._release(key)
            self.released += len(keys)
        return out

    def flush(self) -> None:
        """Send the releases waiting for room in the queue, in order."""
        while self.pending:
            try:
                self.out.put_nowait((self.pending[0], False))
            except queue.Full:
                return
            self.pending.popleft()

    def _release(self, key: str) -> None:
        if key in self.down and not any(key in held for held in self.held.values()):
            self.down.discard(key)
            self.pending.append(key)
            self.flush()

    def _send(self, key: str, down: bool) -> bool:
        self.flush()
        if self.pending:
            return False
        try:
            self.out.put_nowait((key, down))
        except queue.Full:
            return False
        return True
