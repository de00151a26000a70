"""The documentation site builds with ``mkdocs build --strict`` (a warning fails it: a broken link, a
docstring griffe cannot parse, a reference to a module that moved) and its API reference, generated from
the docstrings at build time, has a page for every module and the public names of ``pccbullet``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import layout
import pytest

pytestmark = pytest.mark.slow  # every test reads the one site the module builds

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    out = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=out.parent,  # not the checkout: nothing may depend on the working directory
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def page(site: Path, module: str) -> str:
    return (site / "reference" / Path(*module.split(".")) / "index.html").read_text()


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("pccbullet.sim.world", "World"),
        ("pccbullet.urdf_gen.pcc", "PccConfig"),
        ("pccbullet.sim.experiments.runner", "run_experiment"),
        ("pccbullet.teleop.cli", "main"),
        ("pccbullet.sim.medium", "Medium"),
    ],
    ids=lambda value: value,
)
def test_module_pages_document_their_objects(site: Path, module: str, name: str) -> None:
    assert f'id="{module}.{name}"' in page(site, module)


@pytest.mark.parametrize("name", ["World", "Robot", "PccConfig", "run_experiment", "write_mesh", "SpecError"])
def test_public_api_page_lists_public_names(site: Path, name: str) -> None:
    html = page(site, "pccbullet")
    assert f'id="pccbullet.{name}"' in html
    assert "Public API" in html


def test_every_module_has_a_reference_page(site: Path) -> None:
    missing = []
    for name in layout.modules():
        parts = name.split(".")[1:]
        if not parts or any(part.startswith("_") for part in parts):
            continue
        target = site / "reference" / "pccbullet" / Path(*parts) / "index.html"
        if not target.is_file():
            missing.append(name)
    assert not missing, missing


def test_guide_pages_and_pictures_are_in_the_site(site: Path) -> None:
    for doc in (ROOT / "docs").rglob("*.md"):
        rel = doc.relative_to(ROOT / "docs").with_suffix("")
        built = site / (rel.parent if rel.name == "index" else rel) / "index.html"
        assert built.is_file(), doc
    for picture in (ROOT / "docs" / "images").glob("*.png"):
        assert (site / "images" / picture.name).is_file(), picture
