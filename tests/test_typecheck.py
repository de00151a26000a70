"""mypy over the package as it is installed: the homes linked into the installed layout in a temporary folder
(:func:`layout.link_layout`, the layout that ``setup.py``'s package-dir mapping gives the wheel; mypy cannot
follow an editable install's import hook). Settings: ``[tool.mypy]`` in ``pyproject.toml``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import layout
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_is_clean_on_the_installed_layout(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    layout.link_layout(tmp_path)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "-p",
            "pccbullet",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found in" in result.stdout
    checked = int(result.stdout.split("no issues found in ")[1].split()[0])
    expected = len(layout.source_files())
    # every module was seen (mypy also counts the asset folders as namespace packages)
    assert checked >= expected, result.stdout
