"""Strict JSON: every JSON text pccbullet writes, and every one it reads from a peer, is standard JSON.

Python's :mod:`json` writes ``NaN``, ``Infinity`` and ``-Infinity`` by default, which no other JSON parser
reads (a browser's ``JSON.parse``, ``jq``, most languages' libraries), and reads them back. pccbullet's
choice for what it writes: a float that is not finite is **mapped to** ``null`` (a figure that could not be
computed, e.g. the p99 of no samples, is unknown, not an error that should lose the rest of a summary),
and the text is then produced with ``allow_nan=False`` as a second guard. :func:`to_plain` does the
mapping (and turns tuples into lists, numpy scalars and arrays into numbers and lists, mapping keys into
strings); :func:`dumps` is :func:`json.dumps` of it. For what it reads from a peer (a browser page, a
network packet), :func:`loads` **refuses** ``NaN`` and the infinities with :class:`ValueError`: input is
validated at the boundary, never mapped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any


def to_plain(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None``, tuples (and numpy arrays) as lists,
    numpy scalars as Python numbers and mapping keys as strings; other values as they are."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays, without importing numpy
    if callable(tolist) and hasattr(value, "dtype"):
        return to_plain(tolist())
    return value


def dumps(
    value: Any,
    *,
    indent: int | None = None,
    compact: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """Standard JSON of ``value`` (:func:`to_plain`: non-finite floats written as ``null``).

    Args:
        value: what to write. indent: as :func:`json.dumps`'s. compact: no spaces after separators.
        default: for objects JSON cannot hold, as :func:`json.dumps`'s (its result is mapped too).

    Raises:
        TypeError: an object JSON cannot hold and no ``default``. ValueError: never for floats (mapped).
    """
    hook = None if default is None else (lambda obj: to_plain(default(obj)))
    separators = (",", ":") if compact else None
    return json.dumps(to_plain(value), indent=indent, separators=separators, default=hook, allow_nan=False)


def _refuse(name: str) -> Any:
    raise ValueError(f"JSON number {name} is invalid; allowed: finite numbers only")


def loads(text: str | bytes) -> Any:
    """Parse standard JSON; ``NaN``, ``Infinity`` and ``-Infinity`` raise :class:`ValueError` (as does
    any text that is not JSON: :class:`json.JSONDecodeError` is a ``ValueError``)."""
    return json.loads(text, parse_constant=_refuse)
