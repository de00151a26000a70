"""mkdocs hook: let mkdocstrings (griffe) find ``pccbullet`` the way Python imports it.

The package is installed under one name, ``pccbullet``, from folders with other names (``api/`` is
``pccbullet``, ``sim/`` is ``pccbullet.sim``, ...: setup.py's package-dir mapping). A wheel install puts a
real ``pccbullet/`` folder into site-packages, which griffe reads as it is. An editable install maps the
names with an import hook that griffe cannot follow; for it this hook links the folders into the
installed layout in a temporary folder (``pccbullet/__init__.py`` -> ``api/__init__.py``,
``pccbullet/sim`` -> ``sim/``, ``pccbullet/core`` -> ``urdf_gen/core/``, ...: ``tests/layout.py`` over the
table ``[tool.pccbullet.homes]`` of pyproject.toml) and puts that folder first on ``sys.path``, where
mkdocstrings' Python handler and ``gen_ref_pages.py`` look.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

PACKAGE = "pccbullet"
_layout: Path | None = None


def _search_location(name: str) -> Path | None:
    spec = find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def layout_dir() -> Path:
    """The folder holding ``pccbullet/`` as installed (built once per process)."""
    global _layout
    if _layout is not None:
        return _layout
    top = _search_location(PACKAGE)
    if top is None:
        raise RuntimeError(f"{PACKAGE} is not installed: pip install -e '.[docs]'")
    if top.name == PACKAGE:  # a regular install: the folder is already the package
        _layout = top.parent
        return _layout
    sys.path.insert(0, str(top.parent / "tests"))  # tests/layout.py: the homes of pyproject.toml, linked
    try:
        import layout
    finally:
        sys.path.remove(str(top.parent / "tests"))
    root = Path(tempfile.mkdtemp(prefix="pccbullet-docs-"))
    atexit.register(shutil.rmtree, root, True)
    layout.link_layout(root)
    _layout = root
    return _layout


def on_startup(command, dirty):
    """Before any plugin reads its configuration: the installed layout goes first on ``sys.path``."""
    path = str(layout_dir())
    if path not in sys.path:
        sys.path.insert(0, path)
