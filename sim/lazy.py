"""Package attributes resolved on first use (PEP 562), so that importing a package stays cheap."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_attributes(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``names[name]`` (a module path) on first use
    of ``name`` and keeps the value in the package's namespace."""

    def __getattr__(name: str) -> Any:
        if name in names:
            value = getattr(import_module(names[name]), name)
            setattr(import_module(package), name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
