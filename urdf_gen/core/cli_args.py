"""Checks of command-line arguments shared by every ``pccbullet`` subcommand (argparse ``type=`` callables).

Each check raises :class:`argparse.ArgumentTypeError` with a one-line message; the CLI's parser turns it
into ``pccbullet: error: argument --flag: ...`` and exit status 2 (see :class:`OneLineParser`).

- :func:`out_dir`: an output folder that exists or can be created and written: not a file, not below a
  file, not on a read-only or unreachable path. Checked when the arguments are parsed, before any work.
- :func:`real`: a finite float in a range (no NaN, no inf). :func:`integer`: an int in a range.
- :func:`udp_port_free`: a UDP port number that this process can bind now.
"""

from __future__ import annotations

import argparse
import math
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from pccbullet.core.errors import UsageError, clip

MAX_PORT = 65535


class OneLineParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors raise :class:`UsageError` instead of printing the
    usage and exiting, so that ``main(argv)`` reports every bad argument as one line with status 2.
    Subparsers made by :meth:`add_subparsers` inherit the class."""

    def error(self, message: str) -> NoReturn:
        """Raise :class:`UsageError` with ``message`` and a pointer to ``--help``."""
        raise UsageError(f"{clip(message, 300)} (see '{self.prog} --help')")


def out_dir(text: str) -> Path:
    """An output folder: an existing folder, or a path whose nearest existing ancestor is a writable folder.

    Writability is probed by creating and removing a temporary folder (``os.access`` says yes to root
    on a read-only file system). Nothing is left behind; the folder itself is created later by the command.
    """
    if not text or "\x00" in text:
        raise argparse.ArgumentTypeError(f"{clip(repr(text))} is not a folder path")
    path = Path(text).expanduser()
    try:
        probe = path
        while not probe.exists():
            if probe.is_symlink():  # a dangling link: mkdir would fail
                raise argparse.ArgumentTypeError(f"{clip(str(path))!r} is a broken symbolic link")
            if probe.parent == probe:
                break
            probe = probe.parent
        if probe.exists() and not probe.is_dir():
            where = "is a file" if probe == path else f"lies below the file {clip(str(probe))!r}"
            raise argparse.ArgumentTypeError(f"{clip(str(path))!r} {where}; allowed: a folder path")
        tempfile.TemporaryDirectory(dir=probe, prefix=".pccbullet-probe-").cleanup()
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise argparse.ArgumentTypeError(
            f"{clip(str(path))!r} is not a writable folder ({reason}); allowed: a folder that exists or "
            "can be created and written"
        ) from exc
    return path


def real(lo: float = -math.inf, hi: float = math.inf, *, lo_open: bool = False) -> Callable[[str], float]:
    """A ``type=`` callable: a finite float in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
    allowed = "a finite number"
    if math.isfinite(lo) or math.isfinite(hi):
        allowed += f" in {'(' if lo_open else '['}{lo:g}, {hi:g}]"

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{clip(repr(text))} is not a number; allowed: {allowed}"
            ) from None
        if not math.isfinite(x) or (x <= lo if lo_open else x < lo) or x > hi:
            raise argparse.ArgumentTypeError(f"{clip(repr(text))} is out of range; allowed: {allowed}")
        return x

    parse.__name__ = "real"
    return parse


def integer(lo: int, hi: int) -> Callable[[str], int]:
    """A ``type=`` callable: an integer in ``[lo, hi]``."""
    allowed = f"an integer in [{lo}, {hi}]"

    def parse(text: str) -> int:
        try:
            n = int(text) if len(text) < 40 else None
        except ValueError:
            n = None
        if n is None or not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"{clip(repr(text))} is invalid; allowed: {allowed}")
        return n

    parse.__name__ = "integer"
    return parse


def udp_port_free(port: int, host: str = "127.0.0.1", flag: str = "--udp-port") -> None:
    """Raise :class:`UsageError` unless a UDP socket can bind ``(host, port)`` now (0: any port, skipped).

    A check at argument time: a port taken between this check and the bridge's own bind still fails
    there, with an ``OSError`` that the CLI also reports as one line.
    """
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise UsageError(
                f"argument {flag}: UDP port {port} on {host} is not available ({exc.strerror}); "
                "allowed: a free port, or 0 for any free port"
            ) from exc


port = integer(0, MAX_PORT)  # a ``type=`` callable: a port number in [0, 65535] (0: any free port)
