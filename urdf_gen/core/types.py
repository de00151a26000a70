"""Types shared across pccbullet: array aliases used in signatures (shapes are given in docstrings) and
:class:`Choice`, the base of the typed choices a user names (chain topology, drive, world mode)."""

from __future__ import annotations

from enum import StrEnum
from numbers import Integral, Real
from typing import Self

import numpy as np
import numpy.typing as npt

from pccbullet.core.errors import ConfigurationError

FloatArray = npt.NDArray[np.float64]
"""Any float64 array; the docstring of the function using it states the shape, e.g. ``(4, 4) float``."""

Transform = npt.NDArray[np.float64]
"""A homogeneous transform, ``(4, 4) float``, named ``T_to_from`` in code."""


def is_real(value: object) -> bool:
    """A real number (``numbers.Real``: int, float, numpy scalars), not a bool. A plain function: an
    ``isinstance`` on ``numbers`` ABCs would make mypy take the code after it for unreachable."""
    return isinstance(value, Real) and not isinstance(value, bool)


def is_integer(value: object) -> bool:
    """An integer (``numbers.Integral``: int, numpy integers), not a bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)


class Choice(StrEnum):
    """A user's choice among named options as a typed value (a ``str``: it prints, formats and serializes as
    its name). Subclasses list the options as members and name the field the user writes the choice in
    (:meth:`field`); :meth:`of` parses a user's value once, at the edge (a TOML field, a CLI flag, an
    argument), so that code inside compares members, never strings."""

    @classmethod
    def field(cls) -> str:
        """The name users give the choice in files, flags and arguments (``chain``, ``drive``, ...)."""
        return cls.__name__.lower()

    @classmethod
    def of(cls, name: object) -> Self:
        """The member named ``name`` (its name as a string, or the member itself); else a one-line
        :class:`~pccbullet.core.errors.ConfigurationError` naming the field, the value and the names
        allowed."""
        if isinstance(name, cls):
            return name
        if isinstance(name, str) and name in {m.value for m in cls}:
            return cls(name)
        allowed = ", ".join(repr(m.value) for m in cls)
        raise ConfigurationError(f"{cls.field()} = {repr(name)[:80]} is invalid; allowed: {allowed}")
