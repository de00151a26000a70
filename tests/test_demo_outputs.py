"""Nothing lost: the demo's summary.json comes first and survives a Ctrl-C at any moment; files are
atomic; the GIF comes last."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pccbullet.teleop.demo.summary import SummaryFile
from pccbullet.teleop.interrupts import sigint_deferred

CLI = "import sys; from pccbullet.teleop.cli import main; sys.exit(main(sys.argv[1:]))"


def _demo(out: Path, *extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    cmd = [sys.executable, "-c", CLI, "demo", "--headless", "--out", str(out), *extra]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _demo_with(program: str, out: Path, returncode: int, *extra: str) -> dict:
    """The headless demo of 0.3 s into ``out``, run by the command line's main after ``program`` (a
    ``python -c`` text that sets a Ctrl-C up); checks it ends with ``returncode`` and prints no traceback,
    returns its summary.json (and the summary it printed under ``"printed"``, when it printed one)."""
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    code = program + "from pccbullet.teleop.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    cmd = [sys.executable, "-c", code, "demo", "--headless", "--out", str(out), "--duration", "0.3", *extra]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == returncode, proc.stderr[-2000:]
    for text in ("Traceback", "Exception ignored", "KeyboardInterrupt"):
        assert text not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    return {**summary, "printed": json.loads(proc.stdout)} if proc.stdout else summary


def _status(out: Path) -> str | None:
    try:
        return json.loads((out / "summary.json").read_text())["status"]
    except (OSError, ValueError, KeyError):
        return None


def _wait(predicate, timeout: float = 300.0) -> None:  # type: ignore[no-untyped-def]
    """Wait for ``predicate()`` (generous: the machine may be loaded, the worlds take long to build)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_ctrl_c_during_start_up_leaves_a_summary_that_says_so(tmp_path) -> None:
    out = tmp_path / "out"
    proc = _demo(out, "--duration", "1")
    _wait(lambda: _status(out) == "starting")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["interrupted_in"] == "start-up"


@pytest.mark.slow
def test_a_second_ctrl_c_while_rendering_leaves_the_summary_and_the_plots(tmp_path) -> None:
    """The session's figures are on disk the moment the loop ends; a Ctrl-C while the GIF renders keeps
    them and the files written, and says the outputs were interrupted."""
    out = tmp_path / "out"
    proc = _demo(out, "--duration", "3")
    _wait(lambda: (out / "camera_tip.png").exists() or proc.poll() is not None)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    summary = json.loads((out / "summary.json").read_text())
    assert "metrics" in summary and summary["loop"]["physics_steps"] == 3000
    for name in ("metrics.png", "tips.png", "camera_tip.png"):
        assert str(out / name) in summary["files"] and (out / name).stat().st_size > 1000
    if proc.returncode == 130:  # the GIF was still rendering
        assert summary["status"] == "interrupted" and summary["interrupted_in"] == "outputs"
        assert not (out / "demo.gif").exists()
    else:  # the machine was fast enough to finish first
        assert proc.returncode == 0 and summary["status"] == "complete"
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no temporary left
    assert "Traceback" not in err


# Ctrl-C while VTK loads (the GIF's renderer is built after the session): at the first VTK module that
# another one loads as its dependency. A KeyboardInterrupt raised there becomes "ImportError: Failed to
# load vtkCommonMath" (exit 1 with a traceback), is swallowed, or crashes the process later (-11); the
# demo holds Ctrl-C back until the renderer is built.
CTRL_C_IN_VTK = """
import os, signal, sys
import vtkmodules  # its package only (VTK's module finder, in front of ours otherwise); modules load later

class CtrlCInVtk:
    fired = False

    def find_spec(self, name, path, target=None):
        if not self.fired and name.startswith("vtkmodules.vtk") and sys.modules["vtkmodules"].LOADING_STACK:
            self.fired = True
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCInVtk())
"""


@pytest.mark.slow
def test_a_ctrl_c_while_the_renderer_loads_vtk_ends_the_demo_cleanly(tmp_path) -> None:
    out = tmp_path / "out"
    summary = _demo_with(CTRL_C_IN_VTK, out, 130)
    assert summary["status"] == "interrupted" and summary["interrupted_in"] == "outputs"
    assert summary["loop"]["physics_steps"] == 300 and not (out / "demo.gif").exists()
    for name in ("metrics.png", "tips.png", "camera_tip.png"):
        assert str(out / name) in summary["files"]


# Ctrl-C inside a callback of the garbage collector (here a weakref's, like WeakSet._remove's) while the
# plots are drawn: Python cannot raise it there, prints "Exception ignored in ..." and drops it; the
# command line delivers it again.
CTRL_C_IN_GC_CALLBACK = """
import os, signal, sys, weakref
import pccbullet.teleop.demo.run as run

plot = run.plot_metrics

class Garbage:
    pass

def ctrl_c(_):
    os.kill(os.getpid(), signal.SIGINT)
    sum(range(100_000))

def plot_metrics(*args, **kwargs):
    garbage = Garbage()
    ref = weakref.ref(garbage, ctrl_c)
    del garbage  # the callback runs now
    return plot(*args, **kwargs)

run.plot_metrics = plot_metrics
"""


@pytest.mark.slow
def test_a_ctrl_c_in_a_garbage_collector_callback_is_not_lost(tmp_path) -> None:
    summary = _demo_with(CTRL_C_IN_GC_CALLBACK, tmp_path / "out", 130, "--no-gif")
    assert summary["status"] == "interrupted" and summary["interrupted_in"] == "outputs"
    assert summary["loop"]["physics_steps"] == 300 and "metrics" in summary


# Ctrl-C right as the demo's outputs finish, at two exact moments of the interpreter's exit: in its exit
# callbacks (with Python's handler a KeyboardInterrupt raised in one is printed, "Exception ignored in
# ..."), and in the teardown after it reset its handlers (with SIGINT's default the process dies: -2); the
# command line ignores SIGINT from its first exit callback on.
LATE_CTRL_C = """
import atexit, os, signal, sys

def ctrl_c_at_exit():  # registered before main's: runs after it
    os.kill(os.getpid(), signal.SIGINT)
    sum(range(100_000))  # Python code runs: a handler that raises would raise here

class CtrlCAtTeardown:  # dropped with __main__'s globals, after the interpreter reset its handlers
    def __del__(self, kill=os.kill, pid=os.getpid(), sig=signal.SIGINT):
        kill(pid, sig)
        sum(range(100_000))

atexit.register(ctrl_c_at_exit)
teardown = CtrlCAtTeardown()
"""


@pytest.mark.slow
def test_a_ctrl_c_while_the_interpreter_exits_changes_neither_the_status_nor_prints(tmp_path) -> None:
    out = tmp_path / "out"
    summary = _demo_with(LATE_CTRL_C, out, 0)
    printed = summary.pop("printed")
    assert summary["status"] == "complete" and summary["loop"]["physics_steps"] == 300
    assert printed == summary


def test_the_summary_holds_ctrl_c_back_until_it_is_written(tmp_path) -> None:
    summary = SummaryFile(tmp_path, {"mode": "headless"})
    assert json.loads(summary.path.read_text())["status"] == "starting"
    with pytest.raises(KeyboardInterrupt):
        with sigint_deferred():
            os.kill(os.getpid(), signal.SIGINT)  # held back ...
            summary.update(status="complete", value=float("nan"))  # ... until the file is whole
    assert json.loads(summary.path.read_text()) == {
        "status": "complete",
        "mode": "headless",
        "files": [str(summary.path)],
        "value": None,  # JSON has no NaN
    }
