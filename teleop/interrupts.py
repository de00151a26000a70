"""Ctrl-C, SIGTERM and SIGHUP for the ``pccbullet`` command: one way to stop, none lost, none raised where
Python cannot keep it, none after the exit status is decided.

A supervisor's SIGTERM (``kill``, ``timeout``, systemd) and a closed terminal's SIGHUP must leave what a
Ctrl-C leaves: whole files, no temporaries, a demo summary that says it was interrupted. So they *are* a
Ctrl-C here: :func:`ctrl_c_guarded` wraps the command line's work and

* sends SIGTERM and SIGHUP where SIGINT goes at that moment (:func:`deliver`): to a handler that holds
  it back (:func:`sigint_deferred`) or ends a loop cleanly (:mod:`pccbullet.sim.loop`), else raised as
  :class:`Interrupt`, a :class:`KeyboardInterrupt` that names its signal, so that every
  ``except KeyboardInterrupt`` (atomic writes removing their temporaries, the demo's summary) treats
  them alike; the command exits with 128 + the signal's number (130, 143, 129). A signal the process
  was started ignoring (``nohup``'s SIGHUP) stays ignored;
* holds the three back while a module is imported, until it has loaded: a :class:`KeyboardInterrupt`
  raised inside a module's loading is swallowed by some (numpy's ``ma``), turns into an ``ImportError``
  in others (numba's ``_devicearray``) or leaves a module half-loaded; the command line's own modules
  take seconds to import, and numba and matplotlib import more while kernels compile and plots are drawn;
* delivers again a :class:`KeyboardInterrupt` raised where Python cannot raise it (a weakref callback or
  a ``__del__`` run by the garbage collector, such as ``WeakSet._remove``: printed as "Exception ignored
  in ..." and dropped): :func:`sys.unraisablehook` sends the same signal again :data:`REDELIVER_S` later
  from a thread, to be raised where the program runs;
* after the block, an exit callback registered last (so that it runs first) ignores the three: the
  interpreter's exit after the demo takes ~1 s (the other exit callbacks, then the garbage of numba,
  PyBullet, VTK), and a signal then would be raised in a callback ("Exception ignored in ...") or, once
  the interpreter has reset its handlers, kill the process with its outputs whole.

Everything it installs (the handlers, the import hook, the unraisable hook) is restored when it ends.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any

REDELIVER_S = 0.01  # s, delay of a signal delivered again (the program has left the callback by then)
FORWARDED = (signal.SIGTERM, signal.SIGHUP)  # the signals that are a Ctrl-C
INTERRUPTS = (signal.SIGINT, *FORWARDED)


class Interrupt(KeyboardInterrupt):
    """A :class:`KeyboardInterrupt` raised for a signal (``signum``: SIGINT, SIGTERM or SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(exc: BaseException) -> int:
    """The signal a :class:`KeyboardInterrupt` stands for: its own, or SIGINT (Python's Ctrl-C)."""
    return int(getattr(exc, "signum", signal.SIGINT))


def signal_name(signum: int) -> str:
    """``"SIGINT"``, ``"SIGTERM"``, ``"SIGHUP"``, ..."""
    return signal.Signals(signum).name


def deliver(signum: int, frame: FrameType | None = None) -> None:
    """Send ``signum`` where SIGINT goes now: SIGINT's handler when it is a Python function other than
    Python's own (a hold, a loop's flag), nothing when SIGINT is ignored and this is a SIGINT, else
    :class:`Interrupt` raised here. Installed as SIGTERM's and SIGHUP's handler."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        handler(signum, frame)
    elif handler == signal.SIG_IGN and signum == signal.SIGINT:
        return
    else:
        raise Interrupt(signum)


class Deferral:
    """SIGINT held back (and with it SIGTERM and SIGHUP, which go where it goes): a signal that arrives is
    noted, and delivered (:func:`deliver`) when the deferral ends; in a thread other than the main one
    nothing is held. Deferrals nest: an inner one delivers to the outer one, which holds it on.

    Attributes:
        signum: the first signal held so far (``None``: none).
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: Any = None
        self._holding = False

    def _note(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum

    def hold(self) -> Deferral:
        """Start holding (main thread only); returns itself."""
        if not self._holding and threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._note)
            self._holding = True
        return self

    def drop(self) -> int | None:
        """Stop holding; the signal held (``None``: none) is returned, not delivered."""
        if self._holding:
            signal.signal(signal.SIGINT, self._previous)
            self._holding = False
        signum, self.signum = self.signum, None
        return signum

    def end(self) -> None:
        """Stop holding and deliver the signal held, if any (a :class:`KeyboardInterrupt` may be raised)."""
        signum = self.drop()
        if signum is not None:
            deliver(signum)

    def __enter__(self) -> Deferral:
        return self.hold()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.end()
        else:  # the block's exception goes on; a signal held meanwhile is dropped
            self.drop()


def sigint_deferred() -> Deferral:
    """``with sigint_deferred():`` holds Ctrl-C (SIGTERM, SIGHUP) back for the block: one that arrives
    meanwhile raises :class:`KeyboardInterrupt` when the block ends (or goes to the handler outside it);
    :class:`Deferral`'s ``hold``/``end`` hold it across calls."""
    return Deferral()


def exit_on_interrupt(work: Callable[[], int], start_up: Deferral) -> int:
    """``work()``'s exit status; after a :class:`KeyboardInterrupt` (Ctrl-C, SIGTERM or SIGHUP) one line on
    stderr, ``pccbullet: interrupted`` (``pccbullet: interrupted by SIGTERM``), and 128 + the signal's
    number (130, 143, 129). A signal that ``start_up`` still holds at the end (the command never began its
    work: bad arguments) is dropped."""
    try:
        return work()
    except KeyboardInterrupt as exc:
        signum = signal_of(exc)
        with contextlib.suppress(KeyboardInterrupt), sigint_deferred():  # a second one: the same end
            by = "" if signum == signal.SIGINT else f" by {signal_name(signum)}"
            sys.stderr.write(f"pccbullet: interrupted{by}\n")
        return 128 + signum
    finally:
        start_up.drop()


def _held_import(original: Callable[..., Any]) -> Callable[..., Any]:
    """``__import__`` that holds the signals while a module loads (a module already loaded: as is)."""

    def load(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        module = sys.modules.get(name) if level == 0 else None
        if module is not None and all(item in vars(module) for item in fromlist or ()):
            return original(name, globals, locals, fromlist, level)
        with Deferral():
            return original(name, globals, locals, fromlist, level)

    load.held_import = True  # type: ignore[attr-defined]
    return load


def _ignore_interrupts() -> None:
    """Ignore SIGINT, SIGTERM and SIGHUP from now on (the interpreter is exiting)."""
    with contextlib.suppress(ValueError):  # only the main thread may set a handler
        for signum in INTERRUPTS:
            signal.signal(signum, signal.SIG_IGN)


def _redeliver(signum: int) -> None:
    time.sleep(REDELIVER_S)
    os.kill(os.getpid(), signum)


def _unraisable_hook(hook: Callable[[Any], object]) -> Callable[[Any], object]:
    """``hook``, except for a :class:`KeyboardInterrupt`: its signal delivered again (module docstring)."""

    def unraisable(info: Any) -> object:
        if isinstance(info.exc_value, KeyboardInterrupt):
            signum = signal_of(info.exc_value)
            threading.Thread(target=_redeliver, args=(signum,), name="interrupt", daemon=True).start()
            return None
        return hook(info)

    return unraisable


def _forward() -> dict[int, Any]:
    """Send SIGTERM and SIGHUP to :func:`deliver` where they have their default action; returns the
    handlers replaced (none off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced: dict[int, Any] = {}
    for signum in FORWARDED:
        if signal.getsignal(signum) == signal.SIG_DFL:
            replaced[signum] = signal.signal(signum, deliver)
    return replaced


@contextlib.contextmanager
def ctrl_c_guarded() -> Iterator[None]:
    """Run the block with SIGTERM and SIGHUP as Ctrl-C, the three held while a module loads, a
    :class:`KeyboardInterrupt` in a garbage-collector callback delivered again, and the three ignored from
    the interpreter's first exit callback on (module docstring). All is restored when the block ends; a
    guard inside a guard changes nothing."""
    if getattr(builtins.__import__, "held_import", False):
        yield
        return
    previous_hook, previous_import = sys.unraisablehook, builtins.__import__
    sys.unraisablehook = _unraisable_hook(previous_hook)
    builtins.__import__ = ours = _held_import(previous_import)
    replaced = _forward()
    try:
        yield
    finally:
        for signum, handler in replaced.items():
            signal.signal(signum, handler)
        if builtins.__import__ is ours:
            builtins.__import__ = previous_import
        sys.unraisablehook = previous_hook
        atexit.unregister(_ignore_interrupts)
        atexit.register(_ignore_interrupts)
