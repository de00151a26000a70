"""Shared fixtures: bundled robot text for bad-input variants, temporary output folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from pccbullet.urdf_gen.spec_loader import robots_dir


@pytest.fixture
def ursula_text() -> str:
    """The bundled ursula.toml as text, to derive broken variants from."""
    return (robots_dir() / "ursula.toml").read_text()


@pytest.fixture
def write_toml(tmp_path: Path):
    """Write TOML text to ``tmp_path/robot.toml`` and return the path."""

    def _write(text: str, name: str = "robot.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write


class FakeTime:
    """``perf_counter`` and ``sleep`` on a simulated clock for :mod:`pccbullet.sim.loop`: each reading advances it by
    1 us (so that the loop's spin-wait ends); ``sleep`` and ``now +=`` advance it by durations."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        self.now += 1e-6
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def loop_clock(monkeypatch) -> FakeTime:
    """A :class:`FakeTime` that ``pccbullet.sim.loop`` reads instead of the wall clock (for this test only)."""
    import pccbullet.sim.loop

    fake = FakeTime()
    monkeypatch.setattr(pccbullet.sim.loop, "time", fake)
    return fake
