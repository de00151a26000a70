"""The switch, and data objects of PyBullet's extension found by their ELF symbols.

:func:`elf_symbol` reads a symbol out of the extension file's ELF64 symbol table; :func:`load_bias`
and :func:`mapped_rw` read ``/proc/self/maps`` to place it in this process and check that it is
writable. :func:`double_address` combines them for an 8-byte ``double``. Nothing here writes.
"""

from __future__ import annotations

import os
import struct
import sys

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb

SAFE_ENV = "PCCBULLET_SAFE"  # "1": PyBullet's public API only (no symbol lookup, no global, no C API)


def enabled() -> bool:
    """Whether the private internals may be used: ``False`` when ``PCCBULLET_SAFE=1`` is set.

    Read on every call (worlds and limbs read it when they are built, never per step).

    Raises:
        ConfigurationError: ``PCCBULLET_SAFE`` holds anything but ``0``, ``1`` or nothing.
    """
    value = os.environ.get(SAFE_ENV, "").strip()
    if value not in ("", "0", "1"):
        raise ConfigurationError(f"{SAFE_ENV} = {value[:80]!r} is invalid; allowed: 0, 1 or unset")
    return value != "1"


def elf_symbol(path: str, name: str) -> tuple[int, int] | None:
    """``(st_value, st_size)`` of data object ``name`` in a little-endian ELF64 file, or ``None``."""
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


def load_bias(path: str) -> int | None:
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


def mapped_rw(address: int, size: int) -> bool:
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


def extension_object(symbol: str) -> tuple[int, int] | None:
    """``(address, size)`` of data object ``symbol`` of PyBullet's extension in this process, if it is
    found and writable; ``None`` on other platforms, without a symbol table, or with the switch set."""
    path = pb.__file__
    if not (enabled() and sys.platform.startswith("linux") and path and sys.maxsize > 2**32):
        return None
    found = elf_symbol(path, symbol)
    bias = load_bias(path)
    if found is None or bias is None or not mapped_rw(bias + found[0], found[1]):
        return None
    return bias + found[0], found[1]


_addresses: dict[str, int | None] = {}


def double_address(symbol: str) -> int | None:
    """Address of the 8-byte data object ``symbol`` of PyBullet's extension (writable), or ``None``
    (not found, or ``PCCBULLET_SAFE=1``)."""
    if not enabled():
        return None
    if symbol not in _addresses:
        found = extension_object(symbol)
        _addresses[symbol] = found[0] if found is not None and found[1] == 8 else None
    return _addresses[symbol]
