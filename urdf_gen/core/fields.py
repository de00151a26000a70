"""Strict reading of TOML tables: every value checked, every unknown key reported.

:class:`Fields` wraps one TOML table. Each getter names the field it reads; at the end
:meth:`Fields.finish` rejects keys nobody asked for, so a typo like ``lenght_mm`` is an error, not a
silently ignored line; a missing required key or an unknown key names the closest key of the other kind
(``did you mean 'length_mm'?``, by :mod:`difflib`). All errors are
:class:`~pccbullet.core.errors.SpecError` naming file, field, value (capped at 80 characters) and what is
allowed.

Limits on files, so that no file makes a load slow or huge: a TOML file must be a regular file of at most
:data:`MAX_TOML_BYTES` (1 MB) of UTF-8, with tables and arrays nested at most :data:`MAX_DEPTH` (32) deep.
"""

from __future__ import annotations

import difflib
import math
import os
import stat
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, overload

from pccbullet.core.errors import SpecError

_MISSING = object()
MAX_TOML_BYTES = 1_000_000  # bytes, largest TOML file read
MAX_DEPTH = 32  # deepest nesting of tables and arrays in a TOML file
MAX_NAME = 64  # characters of an identifier (robot, limb, frame, experiment names)


def read_limited(
    path: str | Path, max_bytes: int, what: str, *, source: str | Path | None = None, field: str = "<file>"
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else raises :class:`SpecError`.

    Special files (``/dev/zero``, FIFOs, folders) are refused before reading, and at most
    ``max_bytes + 1`` bytes are ever read (a file that grows while being read is refused too).

    Args:
        path: the file. max_bytes: size cap (bytes). what: the kind of file, for messages ("TOML file").
        source, field: where the path came from, for messages (default: the file itself, ``<file>``).
    """
    src = path if source is None else source
    try:
        path = Path(path)
        st = path.stat()
    except (OSError, ValueError) as exc:  # missing, unreadable, name too long, embedded NUL
        raise SpecError(
            src, field, str(path), f"a readable {what} ({exc.__class__.__name__}: {exc})"
        ) from exc
    if not stat.S_ISREG(st.st_mode):
        raise SpecError(src, field, str(path), f"a regular {what} (not a folder or special file)")
    if st.st_size > max_bytes:
        raise SpecError(src, field, str(path), f"a {what} of at most {max_bytes} bytes ({st.st_size} bytes)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise SpecError(
            src, field, str(path), f"a readable {what} ({exc.__class__.__name__}: {exc})"
        ) from exc
    if len(data) > max_bytes:
        raise SpecError(src, field, str(path), f"a {what} of at most {max_bytes} bytes")
    return data


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse ``path`` as TOML; unreadable, oversized, non-UTF-8, too deeply nested or malformed files raise
    :class:`SpecError` naming the file."""
    path = Path(path) if isinstance(path, str) else path
    data = read_limited(path, MAX_TOML_BYTES, "TOML file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(path, "<file>", f"byte {exc.start}", "UTF-8 text") from exc
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(path, "<file>", str(exc), "valid TOML syntax") from exc
    except RecursionError as exc:
        raise SpecError(
            path, "<file>", "<nesting>", f"tables and arrays nested at most {MAX_DEPTH} deep"
        ) from exc
    depth = nesting_depth(table)
    if depth > MAX_DEPTH:
        raise SpecError(
            path, "<file>", f"nesting depth {depth}", f"tables and arrays nested at most {MAX_DEPTH} deep"
        )
    return table


def nesting_depth(value: Any) -> int:
    """Deepest nesting of dicts and lists in ``value`` (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((c, depth + 1) for c in children)
    return deepest


def as_finite(value: Any) -> float | None:
    """``float(value)`` for a finite int or float (not bool), else ``None`` (huge ints included)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        x = float(value)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def _suggest(word: str, candidates: Any) -> str:
    """The closest of ``candidates`` to ``word`` by :mod:`difflib`, or ""."""
    match = difflib.get_close_matches(word, [str(c) for c in candidates], n=1, cutoff=0.6)
    return match[0] if match else ""


def _typo_of(word: str, candidates: Any) -> str:
    """A candidate within a few edits (swaps, insertions, deletions, substitutions) of ``word``, or "".

    Stricter than :func:`_suggest`: the candidates are keys not read yet, which include legitimate keys
    read later (``length_min_mm`` is not a typo of ``length_mm``), so only near-identical keys qualify.
    """
    limit = max(1, len(word) // 4)
    best, best_d = "", limit + 1
    for cand in map(str, candidates):
        if abs(len(cand) - len(word)) <= limit and (d := _edits(word, cand)) < best_d:
            best, best_d = cand, d
    return best


def _edits(a: str, b: str) -> int:
    """Optimal-string-alignment distance: edits with adjacent swaps counted as one."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


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

    def error(self, key: str, value: Any, allowed: str, hint: str = "") -> SpecError:
        """A :class:`SpecError` for ``key`` of this table."""
        return SpecError(self.source, self.path(key), value, allowed, hint=hint)

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        """The value of ``key`` unchecked; missing without default raises (naming a likely typo)."""
        self.used.add(key)
        if key in self.table:
            return self.table[key]
        if default is _MISSING:
            typo = _typo_of(
                key, [k for k in self.table if k not in self.used and len(str(k)) <= 4 * MAX_NAME]
            )
            hint = f"found '{self.path(typo)}': did you mean '{key}'?" if typo else ""
            raise self.error(key, None, "a value (the field is required)", hint)
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
        left = "(" if lo_open or lo == -math.inf else "["
        right = "]" if hi < math.inf else ")"
        allowed = f"a number in {left}{lo:g}, {hi:g}{right}"
        x = as_finite(value)
        if x is None or (x <= lo if lo_open else x < lo) or x > hi:
            raise self.error(key, value, allowed)
        return x

    def constant(self, key: str, expected: str) -> str:
        """The string ``expected`` and nothing else (e.g. ``kind = "pneunet"``)."""
        value = self.raw(key)
        if value != expected:
            raise self.error(key, value, repr(expected))
        return expected

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
        """A string usable in URDF link and file names: ASCII letters, digits and underscores, starting with
        a letter, at most :data:`MAX_NAME` characters."""
        value = self.string(key, default=default)
        ok = value[0].isalpha() and value.replace("_", "").isalnum() and value.isascii()
        if not ok or len(value) > MAX_NAME:
            raise self.error(
                key, value, f"letters, digits and '_', starting with a letter, <= {MAX_NAME} characters"
            )
        return value

    def vector(
        self,
        key: str,
        n: int,
        lo: float = -math.inf,
        hi: float = math.inf,
        *,
        default: Any = _MISSING,
        unit: str = "",
    ) -> tuple[float, ...]:
        """A list of ``n`` finite numbers, each in ``[lo, hi]``; ``unit`` (e.g. ``"mm"``) is named in
        messages."""
        value = self.raw(key, default)
        allowed = (
            f"a list of {n} finite numbers"
            + (f" in [{lo:g}, {hi:g}]" if math.isfinite(lo - hi) else "")
            + (f" ({unit})" if unit else "")
        )
        if not isinstance(value, list | tuple) or len(value) != n:
            raise self.error(key, value, allowed)
        out = []
        for v in value:
            x = as_finite(v)
            if x is None or not lo <= x <= hi:
                raise self.error(key, value, allowed)
            out.append(x)
        return tuple(out)

    def table_list(self, key: str, *, max_items: int | None = None) -> list[Fields]:
        """A non-empty array of tables, each wrapped as :class:`Fields`, at most ``max_items`` of them
        (checked after the items; the message says ``at most {max_items} {key}``, e.g. "at most 32 limbs")."""
        value = self.raw(key)
        if not isinstance(value, list) or not value:
            raise self.error(key, value, "a non-empty array of tables ([[...]])")
        tables = [Fields(item, self.source, f"{self.path(key)}[{i}]") for i, item in enumerate(value)]
        if max_items is not None and len(tables) > max_items:
            raise self.error(key, value, f"at most {max_items} {key}")
        return tables

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
            typo = _suggest(unknown[0], self.used) if len(unknown[0]) <= 4 * MAX_NAME else ""
            hint = f"did you mean '{typo}'?" if typo else ""
            raise self.error(unknown[0], self.table[unknown[0]], f"a known key ({known})", hint)
