"""mypy over the package as it is installed: ``api/`` as ``pccbullet/`` with its four homes (``sim``, ``teleop``,
``urdf_gen``, ``assets``) linked below it in a temporary folder, the layout that ``setup.py``'s package-dir
mapping gives the wheel (mypy cannot follow an editable install's import hook). Settings:
``[tool.mypy]`` in ``pyproject.toml``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOMES = ("sim", "teleop", "urdf_gen", "assets")  # setup.py's HOMES


def test_mypy_is_clean_on_the_installed_layout(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    tree = tmp_path / "pccbullet"
    tree.mkdir()
    for entry in (ROOT / "api").iterdir():
        if entry.name != "__pycache__":
            (tree / entry.name).symlink_to(entry)
    for home in HOMES:
        (tree / home).symlink_to(ROOT / home, target_is_directory=True)
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
    expected = sum(1 for home in HOMES for _ in (ROOT / home).rglob("*.py")) + 1  # + api/__init__.py
    # every module was seen (mypy also counts the asset folders as namespace packages)
    assert checked >= expected, result.stdout
