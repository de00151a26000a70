"""The package as installed, read from the checkout: which folder is which installed package
(``[tool.pccbullet.homes]`` of pyproject.toml), every module's installed name and source file, and a
folder that links the checkout into the installed layout (for tools that cannot follow an editable
install's import hook: mypy, the docs' griffe). Used by the tests, the docs hook and .ci/wheel_check.py."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "pccbullet"


def homes() -> dict[str, Path]:
    """Installed package -> its folder in the checkout, the table of pyproject.toml in its order."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pccbullet"]["homes"]
    return {name: ROOT / folder for name, folder in table.items()}


def _owner(path: Path, table: dict[str, Path]) -> tuple[str, Path]:
    """The home a file belongs to: the one whose folder holds it most closely."""
    best = max(
        (folder for folder in table.values() if path.is_relative_to(folder)), key=lambda f: len(f.parts)
    )
    return next(name for name, folder in table.items() if folder == best), best


def installed_name(path: Path) -> str:
    """The installed module name of a source file (``sim/world.py`` -> ``pccbullet.sim.world``)."""
    name, folder = _owner(path.resolve(), homes())
    parts = list(path.resolve().relative_to(folder).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join([name, *parts])


def installed_path(path: Path) -> str:
    """Where a file of a home lands in the wheel (``urdf_gen/core/errors.py`` -> ``pccbullet/core/errors.py``)."""
    name, folder = _owner(path.resolve(), homes())
    return "/".join([*name.split("."), *path.resolve().relative_to(folder).parts])


def source_files(suffixes: tuple[str, ...] = (".py",)) -> list[Path]:
    """Every file of the package's homes with one of ``suffixes`` (caches left out), each once."""
    found: set[Path] = set()
    for folder in homes().values():
        found |= {
            p
            for p in folder.rglob("*")
            if p.suffix in suffixes and p.is_file() and "__pycache__" not in p.parts
        }
    return sorted(found)


def modules() -> dict[str, Path]:
    """Installed module name -> source file, for every module of the package."""
    return {installed_name(path): path for path in source_files()}


def link_layout(root: Path) -> Path:
    """Build ``root/pccbullet/`` as installed, from links into the checkout; returns ``root``. A home's
    folder is linked whole unless another home lies inside it; then its entries are linked one by one."""
    table = homes()
    for name, folder in sorted(table.items(), key=lambda item: len(item[0])):
        target = root.joinpath(*name.split("."))
        inner = {f for f in table.values() if f != folder and f.is_relative_to(folder)}
        if name == PACKAGE or inner:
            target.mkdir(parents=True, exist_ok=True)
            for entry in folder.iterdir():
                if entry.name != "__pycache__" and entry not in inner:
                    (target / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        else:
            target.symlink_to(folder, target_is_directory=True)
    return root
