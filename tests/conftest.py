"""Shared fixtures: bundled robot text for bad-input variants, temporary output folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from urdf_gen.spec_loader import robots_dir


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
