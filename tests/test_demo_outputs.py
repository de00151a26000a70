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
