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

from pccbullet.teleop.demo.summary import SummaryFile, sigint_deferred

CLI = "import sys; from pccbullet.teleop.cli import main; sys.exit(main(sys.argv[1:]))"


def _demo(out: Path, *extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    cmd = [sys.executable, "-c", CLI, "demo", "--headless", "--out", str(out), *extra]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


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
# another one loads as its dependency. A KeyboardInterrupt raised inside a VTK module's loading became
# "ImportError: Failed to load vtkCommonMath" (exit 1 with a traceback) or a crash (-11) later.
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
from pccbullet.teleop.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_ctrl_c_while_the_renderer_loads_vtk_ends_the_demo_cleanly(tmp_path) -> None:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    cmd = [sys.executable, "-c", CTRL_C_IN_VTK, "demo", "--headless", "--out", str(out), "--duration", "0.3"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 130, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["interrupted_in"] == "outputs"
    assert summary["loop"]["physics_steps"] == 300 and not (out / "demo.gif").exists()
    for name in ("metrics.png", "tips.png", "camera_tip.png"):
        assert str(out / name) in summary["files"]


# Ctrl-C inside a callback of the garbage collector (here a weakref's, as the "WeakSet._remove" of the
# report) while the plots are drawn: Python cannot raise it there, printed "Exception ignored in ..." and
# dropped it: the demo went on as if no Ctrl-C had come
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
from pccbullet.teleop.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_ctrl_c_in_a_garbage_collector_callback_is_not_lost(tmp_path) -> None:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    cmd = [sys.executable, "-c", CTRL_C_IN_GC_CALLBACK, "demo", "--headless", "--out", str(out)]
    cmd += ["--duration", "0.3", "--no-gif"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 130, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["interrupted_in"] == "outputs"
    assert summary["loop"]["physics_steps"] == 300 and "metrics" in summary


# Ctrl-C right as the demo's outputs finish, at two exact moments of the interpreter's exit: in its exit
# callbacks (Python's handler still installed: a KeyboardInterrupt raised in one is printed, "Exception
# ignored in ..."), and in the teardown after it reset its handlers (SIGINT's default then kills: -2)
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
from pccbullet.teleop.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_ctrl_c_while_the_interpreter_exits_changes_neither_the_status_nor_prints(tmp_path) -> None:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    cmd = [sys.executable, "-c", LATE_CTRL_C, "demo", "--headless", "--out", str(out), "--duration", "0.3"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "complete" and summary["loop"]["physics_steps"] == 300
    assert json.loads(proc.stdout) == summary


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
