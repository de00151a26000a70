"""SIGTERM and SIGHUP are Ctrl-C for the ``pccbullet`` command: they go where SIGINT goes, are held where it
is held, end a loop as it does, set the exit status to 128 + their number; the guard restores all it
installs; the entry point guards before the command line's slow imports."""

from __future__ import annotations

import builtins
import os
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pccbullet.sim.loop import Loop
from pccbullet.teleop.interrupts import Interrupt, ctrl_c_guarded, sigint_deferred, signal_of

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="POSIX signals")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def default_signals() -> Iterator[None]:
    """SIGINT as Python sets it, SIGTERM and SIGHUP at their default action (as a command starts)."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_are_ctrl_c_under_the_guard(default_signals, sig) -> None:
    with ctrl_c_guarded():
        with pytest.raises(KeyboardInterrupt) as raised:
            os.kill(os.getpid(), sig)
        assert signal_of(raised.value) == sig and isinstance(raised.value, Interrupt)
        with pytest.raises(KeyboardInterrupt) as raised:  # held back like Ctrl-C, raised at the end
            with sigint_deferred():
                os.kill(os.getpid(), sig)
                held = True
        assert held and signal_of(raised.value) == sig

        class World:  # a loop ends cleanly after the step, as on Ctrl-C
            dt, time, steps = 1e-3, 0.0, 0

            def step(self) -> None:
                self.steps += 1
                if self.steps == 3:
                    os.kill(os.getpid(), sig)

        stats = Loop(World(), visual_rate=50.0).run(1.0, catch_sigint=True)
        assert stats.interrupted and stats.physics_steps == 3 and stats.interrupted_by == sig.name


def test_deferrals_nest_and_the_outer_one_delivers(default_signals) -> None:
    with ctrl_c_guarded():
        outer = sigint_deferred().hold()
        with sigint_deferred():  # an inner block (a module loading) hands it on to the outer hold
            os.kill(os.getpid(), signal.SIGTERM)
        assert outer.signum == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt) as raised:
            outer.end()
        assert signal_of(raised.value) == signal.SIGTERM
        dropped = sigint_deferred().hold()
        os.kill(os.getpid(), signal.SIGINT)
        assert dropped.drop() == signal.SIGINT  # handed back, not raised


def test_a_module_that_loads_holds_the_signal_until_it_has_loaded(default_signals, tmp_path) -> None:
    (tmp_path / "signalled_while_loading.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\nLOADED = True\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        with ctrl_c_guarded(), pytest.raises(KeyboardInterrupt):
            import signalled_while_loading  # noqa: F401
        assert sys.modules["signalled_while_loading"].LOADED  # whole, not half-loaded
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("signalled_while_loading", None)


def test_the_guard_restores_all_it_installs_and_leaves_ignored_signals_ignored(default_signals) -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup starts a command
    before = (
        [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)],
        builtins.__import__,
        sys.unraisablehook,
    )
    with ctrl_c_guarded():
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
        with ctrl_c_guarded():  # a guard inside a guard changes nothing
            pass
        assert builtins.__import__ is not before[1]
    after = (
        [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)],
        builtins.__import__,
        sys.unraisablehook,
    )
    assert after == before


@pytest.mark.parametrize(
    ("sig", "line"),
    [(signal.SIGINT, "pccbullet: interrupted"), (signal.SIGTERM, "pccbullet: interrupted by SIGTERM")],
    ids=["SIGINT", "SIGTERM"],
)
def test_the_command_line_ends_in_one_line_and_128_plus_the_signal(
    default_signals, monkeypatch, capsys, tmp_path, sig, line
) -> None:
    from pccbullet.teleop import cli, robot_commands

    def signalled(args: object) -> int:
        os.kill(os.getpid(), sig)
        return 0

    monkeypatch.setattr(robot_commands, "urdf_command", signalled)
    assert cli.main(["urdf", "ursula", "--out", str(tmp_path)]) == 128 + sig
    assert capsys.readouterr().err.strip() == line
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_the_installed_command_guards_before_its_slow_imports() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["pccbullet"] == "pccbullet.teleop.command:main"
    code = (
        "import sys\nimport pccbullet.teleop.command\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pybullet', 'pccbullet.teleop.cli') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
