"""The demo with the terminal keyboard, in a real pseudo-terminal: key help, a status line at ~5 Hz,
and Ctrl-C ending the session with exit status 0 and every output file written."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="needs a Linux pseudo-terminal"),
]


def _read_until(fd: int, pattern: str, timeout: float, buf: list[str]) -> re.Match[str] | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                buf.append(os.read(fd, 65536).decode(errors="replace"))
            except OSError:
                break
        m = re.search(pattern, "".join(buf))
        if m:
            return m
    return None


def _controlling_terminal() -> None:
    """In the child: a new session whose controlling terminal is the pty on standard input, so that
    Ctrl-C typed into it sends SIGINT as in a real terminal."""
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_terminal_demo_prints_help_and_status_and_ends_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    master, slave = os.openpty()
    # a terminal as wide as the whole status line (the line is fitted to the width: a narrower one drops
    # the force field this test reads); $COLUMNS, which the status line falls back to, not inherited
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"DISPLAY": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pccbullet.teleop.cli", "demo", "--device", "terminal", "--headless",
         "--out", str(tmp_path / "out"), "--duration", "120"],
        stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=_controlling_terminal,
    )  # fmt: skip
    os.close(slave)
    buf: list[str] = []
    try:
        assert _read_until(master, r"w/s: bend", 120, buf), "".join(buf)[-2000:]
        first = _read_until(master, r"t +[\d.]+ s \| grasper segment 1 \| bend +[-\d.]+ deg", 60, buf)
        assert first, "".join(buf)[-2000:]
        os.write(master, b"wwww")  # bend the selected limb (grasper, the first limb) up
        bent = _read_until(master, r"grasper segment 1 \| bend +[1-9][\d.]* deg", 30, buf)
        assert bent, "".join(buf)[-800:]
        os.write(master, b"\x03")  # Ctrl-C through the terminal: SIGINT to the foreground process
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(master)
    assert proc.returncode == 0, "".join(buf)[-2000:]
    text = "".join(buf)
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    lines = re.findall(r"\| force \[[#.]+\] +[\d.]+ N", text)
    assert len(lines) >= 2  # the status line is rewritten while the session runs
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["loop"]["interrupted"] is True
    assert 0 < summary["loop"]["physics_steps"] < 120_000
    for name in ("demo.gif", "camera_tip.png", "tips.png", "metrics.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
