"""The ``pccbullet`` command's entry point: the signals are guarded before the command line's modules load.

Importing :mod:`pccbullet.teleop.cli` takes seconds (numpy, PyBullet, numba, trimesh, ...). A Ctrl-C
meanwhile was raised inside some module's loading: printed as a ``KeyboardInterrupt`` traceback, or
swallowed, or turned into an ``ImportError``, with no summary written; a SIGTERM or SIGHUP killed the
process. Here the guard (:func:`~pccbullet.teleop.interrupts.ctrl_c_guarded`) is in place first and the
signals are held while the command line loads, then handed to it (:func:`pccbullet.teleop.cli.main`'s
``start_up``): a signal at that moment ends the command as one at any other moment of its start-up does
(one line on stderr, exit status 128 + its number, the demo's ``summary.json`` saying it was interrupted
at start-up). Only the interpreter's own start, before this module runs, is out of reach.

This module imports nothing but :mod:`pccbullet.teleop.interrupts` (the standard library) before the hold.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pccbullet.teleop.interrupts import ctrl_c_guarded, sigint_deferred


def main(argv: Sequence[str] | None = None) -> int:
    """``pccbullet``: :func:`pccbullet.teleop.cli.main` with the signals held while it is imported;
    ``pccbullet --version`` answers without importing it (a few ms instead of seconds)."""
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        from pccbullet import __version__

        sys.stdout.write(f"pccbullet {__version__}\n")
        return 0
    with ctrl_c_guarded():
        start_up = sigint_deferred().hold()
        try:
            from pccbullet.teleop.cli import main as command_line
        except BaseException:
            start_up.drop()
            raise
        return command_line(argv, start_up=start_up)


if __name__ == "__main__":
    sys.exit(main())
