"""Import PyBullet without its build banner on stdout (it would corrupt ``--json`` output).

PyBullet's C extension prints "pybullet build time: ..." to file descriptor 1 when imported; this
module sends that line to stderr instead. Use ``from sim.bullet import pb``.
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
import sys
from collections.abc import Mapping

log = logging.getLogger(__name__)


def _quiet_import():  # type: ignore[no-untyped-def]
    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        import pybullet
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return pybullet


pb = _quiet_import()


# --- Bullet's broadphase margin -------------------------------------------------------------------
# Bullet's dynamic AABB tree keeps each collider in a box fattened by the global ``gDbvtMargin``
# (Bullet's default 0.05 m) and re-inserts a collider only when it leaves that box. PyBullet sets the
# margin to 0 on every ``connect``, so every moving collider (and the empty collider PyBullet makes
# for every link without a collision shape) is removed from the tree, re-inserted and re-tested
# against both trees on every step. PyBullet has no API for it; the variable is a plain ``double`` in
# the extension module, found here by its symbol in the module's ELF symbol table.

BROADPHASE_SYMBOL = "gDbvtMargin"


def _elf_symbol(path: str, name: str) -> tuple[int, int] | None:
    """``(st_value, st_size)`` of data object ``name`` in a little-endian ELF64 file, or ``None``."""
    import struct

    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:  # ELF64, little endian
            return None
        (shoff,) = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", head, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        wanted = name.encode()
        for sh in sections:
            if sh[1] != 2:  # SHT_SYMTAB
                continue
            strtab = sections[sh[6]]
            f.seek(strtab[4])
            strings = f.read(strtab[5])
            f.seek(sh[4])
            symbols = f.read(sh[5])
            for off in range(0, len(symbols), 24):
                st_name, st_info, _, _, st_value, st_size = struct.unpack_from("<IBBHQQ", symbols, off)
                if st_info & 0xF != 1:  # STT_OBJECT
                    continue
                end = strings.find(b"\0", st_name)
                if strings[st_name:end] == wanted:
                    return st_value, st_size
    return None


def _load_bias(path: str) -> int | None:
    """Load address of ``path`` in this process (start of its offset-0 mapping), or ``None``."""
    real = os.path.realpath(path)
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and int(parts[2], 16) == 0 and os.path.realpath(parts[5]) == real:
                    return int(parts[0].split("-")[0], 16)
    except (OSError, ValueError):
        return None
    return None


def _mapped_rw(address: int, size: int) -> bool:
    """Whether ``[address, address + size)`` lies in one readable and writable mapping of this process
    (file-backed ``.data`` or the anonymous ``.bss`` mapping after the module's file mappings)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                span, perms = line.split(maxsplit=2)[:2]
                lo, hi = (int(x, 16) for x in span.split("-"))
                if lo <= address and address + size <= hi:
                    return perms.startswith("rw")
    except (OSError, ValueError):
        return False
    return False


_addresses: dict[str, int | None] = {}


def _double_address(symbol: str) -> int | None:
    """Address of the 8-byte data object ``symbol`` of PyBullet's extension (writable), or ``None``."""
    if symbol not in _addresses:
        address = None
        path = pb.__file__
        if sys.platform.startswith("linux") and path:
            found = _elf_symbol(path, symbol)
            bias = _load_bias(path)
            if found is not None and found[1] == 8 and bias is not None and _mapped_rw(bias + found[0], 8):
                address = bias + found[0]
        _addresses[symbol] = address
    return _addresses[symbol]


def _broadphase_margin_address() -> int | None:
    """Address of PyBullet's ``gDbvtMargin`` (a writable 8-byte double), or ``None`` if not found."""
    return _double_address(BROADPHASE_SYMBOL)


def _sane(value: float) -> bool:
    return math.isfinite(value) and 0.0 <= value <= 1.0


def broadphase_margin() -> float | None:
    """PyBullet's current broadphase margin (m), or ``None`` where it cannot be found."""
    address = _broadphase_margin_address()
    return None if address is None else float(ctypes.c_double.from_address(address).value)


def set_broadphase_margin(margin: float) -> bool:
    """Set Bullet's broadphase margin (m) for all PyBullet clients of this process; ``False`` if unavailable.

    Process-wide and left in place: :class:`sim.world.World` does not call this (it swaps the value in
    for its own steps only, :class:`BulletGlobals`). PyBullet resets it to 0 on every ``connect``. A
    wrong or unusual build (no symbol table, a value outside [0, 1] m already there) is left alone.
    """
    if not _sane(margin):
        raise ValueError(f"broadphase margin = {margin!r} m is invalid; allowed: [0, 1] m")
    address = _broadphase_margin_address()
    if address is None:
        return False
    value = ctypes.c_double.from_address(address)
    if not _sane(value.value):
        return False
    value.value = margin
    return True


# --- process-wide doubles held only during a world's own steps ------------------------------------
# Bullet keeps two tuning values of ours in process-wide globals: ``gDbvtMargin`` (above; PyBullet
# sets it to 0 on every connect) and ``gContactBreakingThreshold`` (what
# ``setPhysicsEngineParameter(contactBreakingThreshold=...)`` writes, for every client, and what no
# connect resets). Bullet reads both only while it updates bounding boxes and creates contact
# manifolds, i.e. inside ``stepSimulation`` / ``performCollisionDetection``. A world therefore puts its
# values in place just before its own physics call and puts back what it found right after: other
# PyBullet code in the process (a user's scene, before, during or after a world) never sees them, and a
# ``connect`` elsewhere cannot change a world's physics mid-run.

CONTACT_BREAKING_SYMBOL = "gContactBreakingThreshold"


class BulletGlobals:
    """Bullet's process-wide doubles that one world needs during its own physics calls only.

    ``values`` maps a symbol (:data:`BROADPHASE_SYMBOL`, :data:`CONTACT_BREAKING_SYMBOL`) to the value
    (m) to hold during :meth:`enter` ... :meth:`leave`. Symbols that cannot be found (no symbol table,
    another platform, a value outside [0, 1] m there) are listed in :attr:`missing` and left alone.
    :attr:`foreign_changes` counts the times the value found before a call differed from the one put
    back after the previous call (someone else connected or wrote it in between; logged at debug level).
    """

    def __init__(self, values: Mapping[str, float]) -> None:
        cells, missing = [], []
        for symbol, value in values.items():
            if not _sane(value):
                raise ValueError(f"{symbol} = {value!r} m is invalid; allowed: [0, 1] m")
            address = _double_address(symbol)
            cell = None if address is None else ctypes.c_double.from_address(address)
            if cell is None or not _sane(cell.value):
                missing.append(symbol)
            else:
                cells.append((cell, float(value)))
        self._cells = tuple(cells)
        self.values = {s: v for s, v in values.items() if s not in missing}
        self.missing = tuple(missing)
        self.foreign_changes = 0
        self._last = tuple(c.value for c, _ in self._cells)

    def held(self, symbol: str) -> float | None:
        """The value held for ``symbol`` during this world's physics calls, ``None`` if not held."""
        return self.values.get(symbol)

    def enter(self) -> tuple[float, ...]:
        """Put this world's values in place; returns the values found, for :meth:`leave`."""
        cells = self._cells
        found = tuple(c.value for c, _ in cells)
        if found != self._last:
            self.foreign_changes += 1
            log.debug("Bullet globals changed outside this world: %s -> %s", self._last, found)
        for cell, value in cells:
            cell.value = value
        return found

    def leave(self, found: tuple[float, ...]) -> None:
        """Put back the values :meth:`enter` found."""
        for (cell, _), value in zip(self._cells, found, strict=True):
            cell.value = value
        self._last = found
