"""Ctrl-C for the ``pccbullet`` command: none lost, none after the exit status is decided.

:func:`ctrl_c_guarded` wraps the command line's work:

* a :class:`KeyboardInterrupt` raised where Python cannot raise it (a weakref callback or a ``__del__``
  run by the garbage collector, such as ``WeakSet._remove``) is printed as "Exception ignored in ..." and
  dropped; while the block runs, :func:`sys.unraisablehook` delivers that Ctrl-C again
  :data:`REDELIVER_S` later from a thread, to be raised where the program runs (raised in the hook, it
  would be dropped again);
* after the block, an exit callback registered last (so that it runs first) ignores SIGINT: the
  interpreter's exit after the demo takes ~1 s (the other exit callbacks, then the garbage of numba,
  PyBullet, VTK), and a Ctrl-C then would be raised in a callback ("Exception ignored in ...") or, once
  the interpreter has reset its handlers, kill the process (exit status -2) with its outputs whole.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

REDELIVER_S = 0.01  # s, delay of a Ctrl-C delivered again (the program has left the callback by then)


def _ignore_sigint() -> None:
    """Ignore SIGINT from now on (the interpreter is exiting)."""
    with contextlib.suppress(ValueError):  # only the main thread may set a handler
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _redeliver_sigint() -> None:
    time.sleep(REDELIVER_S)
    os.kill(os.getpid(), signal.SIGINT)


def _unraisable_hook(hook: Callable[[Any], object]) -> Callable[[Any], object]:
    """``hook``, except for a :class:`KeyboardInterrupt`: delivered again (module docstring)."""

    def unraisable(info: Any) -> object:
        if isinstance(info.exc_value, KeyboardInterrupt):
            threading.Thread(target=_redeliver_sigint, name="ctrl-c", daemon=True).start()
            return None
        return hook(info)

    return unraisable


@contextlib.contextmanager
def ctrl_c_guarded() -> Iterator[None]:
    """Run the block with Ctrl-Cs in garbage-collector callbacks delivered again, and SIGINT ignored from
    the interpreter's first exit callback on (module docstring). The hook is restored at the end."""
    previous = sys.unraisablehook
    sys.unraisablehook = _unraisable_hook(previous)
    try:
        yield
    finally:
        sys.unraisablehook = previous
        atexit.unregister(_ignore_sigint)
        atexit.register(_ignore_sigint)
