"""The installed package: one namespace, a lazily loaded public API listed once, bundled files by name."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import pccbullet
from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.experiments.spec import experiments_dir, load_experiment, resolve_experiment_path
from pccbullet.teleop.cli import main

API_FILE = Path(pccbullet.__file__)


@pytest.mark.parametrize("name", sorted(pccbullet._API), ids=str)
def test_every_public_name_resolves_to_its_home(name: str) -> None:
    value = getattr(pccbullet, name)
    home = pccbullet._API[name]
    assert value is getattr(sys.modules[home], name)
    if isinstance(value, type) or callable(value):
        assert value.__module__ == home, f"{name} is defined in {value.__module__}, listed under {home}"


def test_the_type_checking_imports_mirror_the_lazy_list() -> None:
    tree = ast.parse(API_FILE.read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    imported = {
        alias.name: f"{node.module}"
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == pccbullet._API
    assert set(pccbullet.__all__) == {"__version__", *pccbullet._API}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'pccbullet' has no attribute 'Wrold'"):
        pccbullet.Wrold  # noqa: B018


def test_import_pccbullet_is_cheap() -> None:
    code = (
        "import sys, pccbullet; heavy = [m for m in ('pybullet', 'numba', 'matplotlib', 'scipy', 'pyvista') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


def test_bundled_experiments_are_found_by_name() -> None:
    names = sorted(p.stem for p in experiments_dir().glob("*.toml"))
    assert "camera_sweep" in names and "sweep_camera_bend" in names
    assert resolve_experiment_path("camera_sweep") == experiments_dir() / "camera_sweep.toml"
    assert load_experiment("camera_sweep").name == "camera_sweep"
    # a path is taken as given, bundled or not
    assert resolve_experiment_path("mine.toml") == Path("mine.toml")
    with pytest.raises(
        ConfigurationError, match=r"unknown experiment 'nope': not a TOML file and not bundled \("
    ):
        resolve_experiment_path("nope")


def test_run_with_an_unknown_experiment_name_exits_2_with_one_line(tmp_path, capsys) -> None:
    assert main(["run", "camera_swep", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("pccbullet: error: unknown experiment 'camera_swep'")
    assert "camera_sweep" in err[-1] and "Traceback" not in "\n".join(err)
