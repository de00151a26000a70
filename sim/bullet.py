"""Import PyBullet without its build banner on stdout (it would corrupt ``--json`` output).

PyBullet's C extension prints "pybullet build time: ..." to file descriptor 1 when imported; this
module sends that line to stderr instead. Use ``from sim.bullet import pb``.
"""

from __future__ import annotations

import os
import sys


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


_margin_address: int | None | bool = False  # False: not looked up yet


def _broadphase_margin_address() -> int | None:
    """Address of PyBullet's ``gDbvtMargin`` (a writable 8-byte double), or ``None`` if not found."""
    global _margin_address
    if _margin_address is False:
        _margin_address = None
        path = pb.__file__
        if sys.platform.startswith("linux") and path:
            symbol = _elf_symbol(path, BROADPHASE_SYMBOL)
            bias = _load_bias(path)
            if symbol is not None and symbol[1] == 8 and bias is not None and _mapped_rw(bias + symbol[0], 8):
                _margin_address = bias + symbol[0]
    return _margin_address  # type: ignore[return-value]


def broadphase_margin() -> float | None:
    """PyBullet's current broadphase margin (m), or ``None`` where it cannot be found."""
    import ctypes

    address = _broadphase_margin_address()
    return None if address is None else float(ctypes.c_double.from_address(address).value)


def set_broadphase_margin(margin: float) -> bool:
    """Set Bullet's broadphase margin (m) for all PyBullet clients of this process; ``False`` if unavailable.

    PyBullet resets it to 0 on every ``connect``: call this after connecting. A wrong or unusual
    build (no symbol table, a value outside [0, 1] m already there) is left alone.
    """
    import ctypes
    import math

    if not (math.isfinite(margin) and 0.0 <= margin <= 1.0):
        raise ValueError(f"broadphase margin = {margin!r} m is invalid; allowed: [0, 1] m")
    address = _broadphase_margin_address()
    if address is None:
        return False
    value = ctypes.c_double.from_address(address)
    if not (math.isfinite(value.value) and 0.0 <= value.value <= 1.0):
        return False
    value.value = margin
    return True
