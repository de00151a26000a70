"""Strict reading of TOML tables: every value checked, every unknown key reported.

:class:`Fields` wraps one TOML table. Each getter names the field it reads; at the end
:meth:`Fields.finish` rejects keys nobody asked for, so a typo like ``lenght_mm`` is an error, not a
silently ignored line. All errors are :class:`~urdf_gen.errors.SpecError` naming file, field, value and
what is allowed.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any, overload

from urdf_gen.errors import SpecError

_MISSING = object()


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse ``path`` as TOML; unreadable or malformed files raise :class:`SpecError` naming the file."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(path, "<file>", str(exc), "valid TOML syntax") from exc
    except OSError as exc:
        raise SpecError(path, "<file>", str(exc), "a readable TOML file") from exc


class Fields:
    """A TOML table being read field by field.

    Args:
        table: the parsed table.
        source: file the table came from (for messages).
        prefix: dotted path of the table in the file, e.g. ``"limbs[0]"`` ("" for the top level).
    """

    def __init__(self, table: Any, source: Path, prefix: str = "") -> None:
        self.source = source
        self.prefix = prefix
        if not isinstance(table, dict):
            raise SpecError(source, prefix or "<top>", table, "a table")
        self.table: dict[str, Any] = table
        self.used: set[str] = set()

    def path(self, key: str) -> str:
        """Dotted path of ``key`` inside this table."""
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, key: str, value: Any, allowed: str) -> SpecError:
        """A :class:`SpecError` for ``key`` of this table."""
        return SpecError(self.source, self.path(key), value, allowed)

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        """The value of ``key`` unchecked; missing without default raises."""
        self.used.add(key)
        if key in self.table:
            return self.table[key]
        if default is _MISSING:
            raise self.error(key, None, "a value (the field is required)")
        return default

    def has(self, key: str) -> bool:
        """Whether the table sets ``key``."""
        return key in self.table

    def number(
        self,
        key: str,
        lo: float = -math.inf,
        hi: float = math.inf,
        *,
        default: Any = _MISSING,
        lo_open: bool = False,
    ) -> float:
        """A finite real in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
        value = self.raw(key, default)
        allowed = f"a number in {'(' if lo_open else '['}{lo:g}, {hi:g}]"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, value, allowed)
        x = float(value)
        below = x <= lo if lo_open else x < lo
        if not math.isfinite(x) or below or x > hi:
            raise self.error(key, value, allowed)
        return x

    def integer(self, key: str, lo: int, hi: int, *, default: Any = _MISSING) -> int:
        """An integer in ``[lo, hi]``."""
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.error(key, value, f"an integer in [{lo}, {hi}]")
        return int(value)

    def string(self, key: str, *, choices: tuple[str, ...] | None = None, default: Any = _MISSING) -> str:
        """A non-empty string, optionally one of ``choices``."""
        value = self.raw(key, default)
        if choices is not None and value not in choices:
            raise self.error(key, value, "one of " + ", ".join(repr(c) for c in choices))
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, value, "a non-empty string")
        return value

    def identifier(self, key: str, *, default: Any = _MISSING) -> str:
        """A string usable in URDF link names: letters, digits and underscores, starting with a letter."""
        value = self.string(key, default=default)
        if not (value[0].isalpha() and value.replace("_", "").isalnum() and value.isascii()):
            raise self.error(key, value, "letters, digits and '_', starting with a letter")
        return value

    def vector(self, key: str, n: int, *, default: Any = _MISSING) -> tuple[float, ...]:
        """A list of ``n`` finite numbers."""
        value = self.raw(key, default)
        allowed = f"a list of {n} finite numbers"
        if not isinstance(value, list | tuple) or len(value) != n:
            raise self.error(key, value, allowed)
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise self.error(key, value, allowed)
            out.append(float(v))
        return tuple(out)

    def table_list(self, key: str) -> list[Fields]:
        """A non-empty array of tables, each wrapped as :class:`Fields`."""
        value = self.raw(key)
        if not isinstance(value, list) or not value:
            raise self.error(key, value, "a non-empty array of tables ([[...]])")
        return [Fields(item, self.source, f"{self.path(key)}[{i}]") for i, item in enumerate(value)]

    @overload
    def sub(self, key: str) -> Fields: ...
    @overload
    def sub(self, key: str, *, default: Any) -> Fields | None: ...
    def sub(self, key: str, *, default: Any = _MISSING) -> Fields | None:
        """A sub-table wrapped as :class:`Fields`; ``None`` if absent and ``default`` is ``None``."""
        value = self.raw(key, default)
        if value is None:
            return None
        return Fields(value, self.source, self.path(key))

    def finish(self) -> None:
        """Raise on any key of the table that no getter read."""
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            known = ", ".join(sorted(self.used)) or "none"
            raise self.error(unknown[0], self.table[unknown[0]], f"a known key ({known})")
