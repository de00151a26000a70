"""The release's paperwork agrees with itself: the version is written once (``pccbullet.__version__``, which
the package metadata reads), the MIT licence is declared and shipped, the changelog has an entry for the
version, and the ``slow`` marker that splits the suite into a quick tier and the rest is registered and in use."""

from __future__ import annotations

import ast
import re
import tomllib
from importlib.metadata import metadata, version
from pathlib import Path

import layout

import pccbullet

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# The slow tests when the marks were set (a parametrized test counts once): a mark taken off lowers it on purpose.
MIN_SLOW = 42


def test_the_installed_metadata_carries_the_package_version() -> None:
    # an editable install's metadata is written when it is installed
    hint = "the metadata is older than api/__init__.py: pip install -e . --no-deps"
    assert version("pccbullet") == pccbullet.__version__, hint


def test_the_version_literal_is_written_once() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pccbullet.__version__"}
    packaging = [ROOT / "pyproject.toml", ROOT / "setup.py", *(ROOT / ".ci").iterdir()]
    packaging += layout.source_files((".py", ".toml"))
    literal = re.compile(rf"(?<![\w.]){re.escape(pccbullet.__version__)}(?![\w.])")
    holders = [
        path.relative_to(ROOT).as_posix()
        for path in packaging
        if path.is_file()
        for _ in literal.finditer(path.read_text(encoding="utf-8"))
    ]
    assert holders == ["api/__init__.py"]


def test_the_licence_is_mit_and_ships_with_the_package() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the pccbullet developers" in text
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    meta = metadata("pccbullet")
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]


def test_the_changelog_has_an_entry_for_the_version() -> None:
    headings = re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert headings[0] == "Unreleased"
    assert pccbullet.__version__ in headings


def _slow_tests() -> list[str]:
    """The test functions the ``slow`` marker reaches: every test of a module whose ``pytestmark`` names it,
    and each test decorated with it (a parametrized test counts once)."""

    def names_slow(node: ast.AST) -> bool:
        return "pytest.mark.slow" in ast.unparse(node)

    found = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        whole = any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            and names_slow(node.value)
            for node in tree.body
        )
        found += [
            f"{path.name}::{node.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test")
            and (whole or any(names_slow(d) for d in node.decorator_list))
        ]
    return found


def test_the_slow_marker_is_registered_strict_and_used() -> None:
    config = PYPROJECT["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in config["addopts"].split()
    assert any(line.startswith("slow:") for line in config["markers"])
    assert len(_slow_tests()) >= MIN_SLOW
