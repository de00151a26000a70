"""SIGTERM and SIGHUP end the demo as Ctrl-C does, at every moment: real ``pccbullet demo --headless``
processes get each signal at a point the test waits for (a module about to load, the summary saying
``starting``, the compile notice, a temporary file being written, the session's first frame), never
after a guessed delay.

Each ends with one line on stderr (besides PyBullet's build banner and the first run's compile notice),
no traceback, a ``summary.json`` that says what happened, and no temporary left in the output folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pccbullet.teleop.cli import COMPILE_NOTICE

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="POSIX signals")

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
IDS = [s.name for s in SIGNALS]
TIMEOUT_S = 600.0  # s, a loaded 2-core machine compiling the kernels on a first run
# the console script as installed (pyproject's [project.scripts]), run as its wrapper runs it
SCRIPT = (
    "from importlib.metadata import entry_points\n"
    "(script,) = entry_points(group='console_scripts', name='pccbullet')\n"
    "sys.exit(script.load()())\n"
)


def _start(out: Path, program: str, *args: str, **env_vars: str) -> subprocess.Popen[str]:
    """``pccbullet demo --headless --out OUT ARGS`` after ``program`` (``python -c`` text)."""
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"} | env_vars
    cmd = [sys.executable, "-c", "import sys\n" + program + SCRIPT, "demo", "--headless", "--out", str(out)]
    return subprocess.Popen([*cmd, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait(predicate: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not predicate():
        assert proc.poll() is None, f"ended first: {proc.returncode}"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _ours(stderr: str) -> list[str]:
    """stderr's lines but PyBullet's build banner and the compile notice (the first run's)."""
    lines = stderr.splitlines()
    return [s for s in lines if not s.startswith("pybullet build time:") and s != COMPILE_NOTICE]


def _ended(proc: subprocess.Popen[str], out: Path, sig: signal.Signals) -> dict:
    """Checks the end of a demo that ``sig`` interrupted; returns its summary."""
    _, err = proc.communicate(timeout=TIMEOUT_S)
    line = "pccbullet: interrupted" + ("" if sig == signal.SIGINT else f" by {sig.name}")
    assert proc.returncode == 128 + sig, err[-2000:]
    assert _ours(err) == [line], err[-2000:]
    assert "Traceback" not in err
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no temporary left
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["interrupted_by"] == sig.name
    return summary


# The signal while the command line's own modules load (scipy, through trimesh): Python raised Ctrl-C
# inside a module's loading (a traceback, or swallowed), SIGTERM and SIGHUP killed the process.
SIGNAL_ON_IMPORT = """
import os, signal

class SignalOnImport:
    fired = False

    def find_spec(self, name, path, target=None):
        if not self.fired and name == "scipy":
            self.fired = True
            os.kill(os.getpid(), signal.{sig})
        return None

sys.meta_path.insert(0, SignalOnImport())
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS, ids=IDS)
def test_a_signal_while_the_command_line_loads_ends_it_with_a_summary(tmp_path, sig) -> None:
    out = tmp_path / "out"
    proc = _start(out, SIGNAL_ON_IMPORT.format(sig=sig.name), "--duration", "1")
    summary = _ended(proc, out, sig)
    assert summary["interrupted_in"] == "start-up" and summary["mode"] == "headless"


def _status(out: Path) -> str | None:
    try:
        return json.loads((out / "summary.json").read_text())["status"]
    except (OSError, ValueError, KeyError):
        return None


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS[1:], ids=IDS[1:])
def test_a_signal_while_the_worlds_are_built_ends_the_demo_with_a_summary(tmp_path, sig) -> None:
    out = tmp_path / "out"
    proc = _start(out, "", "--duration", "1")
    _wait(lambda: _status(out) == "starting", proc)
    proc.send_signal(sig)
    assert _ended(proc, out, sig)["interrupted_in"] == "start-up"


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS[:2], ids=IDS[:2])
def test_a_signal_while_the_kernels_compile_ends_the_demo_with_a_summary(tmp_path, sig) -> None:
    """An empty kernel cache of its own: the demo compiles, and says so on stderr; the signal follows
    that line (numba imports modules while it compiles: a Ctrl-C there became an ImportError)."""
    out = tmp_path / "out"
    proc = _start(out, "", "--duration", "1", NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert proc.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
    reader.start()
    _wait(lambda: COMPILE_NOTICE + "\n" in lines, proc)
    proc.send_signal(sig)
    proc.wait(timeout=TIMEOUT_S)
    reader.join(timeout=60)
    line = "pccbullet: interrupted" + ("" if sig == signal.SIGINT else f" by {sig.name}")
    assert proc.returncode == 128 + sig and _ours("".join(lines)) == [line], "".join(lines)[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["interrupted_in"] == "start-up"
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


# A slow disk: the file's temporary is written, then its flush waits (at most 10 min) while the test sends
# the signal; the harness says so in a file of its own beside the output folder.
SLOW_WRITE = """
import time
from pathlib import Path
import pccbullet.core.atomic as atomic

fsync = atomic._fsync

def slow_fsync(path):
    if Path(path).name.startswith(".{name}"):
        Path("{marker}").write_text(str(path))
        time.sleep(600)
    fsync(path)

atomic._fsync = slow_fsync
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "sig"),
    [("metrics", signal.SIGTERM), ("demo", signal.SIGHUP), ("tips", signal.SIGINT)],
    ids=["metrics-SIGTERM", "demo.gif-SIGHUP", "tips-SIGINT"],
)
def test_a_signal_while_a_file_is_written_leaves_no_temporary_and_says_interrupted(
    tmp_path, name, sig
) -> None:
    out, marker = tmp_path / "out", tmp_path / "writing"
    proc = _start(out, SLOW_WRITE.format(name=name + ".tmp-", marker=marker), "--duration", "0.3")
    _wait(marker.exists, proc)
    assert Path(marker.read_text()).exists()  # the temporary, being written
    proc.send_signal(sig)
    summary = _ended(proc, out, sig)
    assert summary["interrupted_in"] == "outputs" and summary["loop"]["physics_steps"] == 300
    assert not [p for p in out.iterdir() if p.name.startswith(name)]


# The session's first frame: the signal then ends the session cleanly, as Ctrl-C does (the outputs are
# written and the exit status is 0; the loop says it was interrupted).
MARK_FIRST_FRAME = """
from pathlib import Path
from pccbullet.teleop.mmt.session import MmtSession

run = MmtSession.run

def marked(self, *args, on_visual=None, **kwargs):
    def visual(k, t):
        if k == 0:
            Path("{marker}").write_text("running")
        if on_visual is not None:
            on_visual(k, t)
    return run(self, *args, on_visual=visual, **kwargs)

MmtSession.run = marked
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS[1:], ids=IDS[1:])
def test_a_signal_during_the_session_ends_it_as_ctrl_c_does(tmp_path, sig) -> None:
    out, marker = tmp_path / "out", tmp_path / "running"
    proc = _start(out, MARK_FIRST_FRAME.format(marker=marker), "--duration", "600", "--no-gif")
    _wait(marker.exists, proc)
    proc.send_signal(sig)
    printed, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 0, err[-2000:]
    assert _ours(err) == [] and "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary == json.loads(printed)
    assert summary["status"] == "complete" and summary["loop"]["interrupted"] is True
    assert summary["interrupted_in"] == "session" and summary["interrupted_by"] == sig.name
    assert summary["loop"]["interrupted_by"] == sig.name
    assert 0 < summary["loop"]["physics_steps"] < 600_000
    for file in ("metrics.png", "tips.png", "camera_tip.png"):
        assert str(out / file) in summary["files"]
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
