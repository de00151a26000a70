"""Bullet's process-wide tuning doubles (broadphase margin, contact-breaking threshold), written in place.

Writes two ``double`` globals inside PyBullet's extension, found by :mod:`.symbols`. With
``PCCBULLET_SAFE=1`` nothing is found, so nothing is read or written here.
"""

from __future__ import annotations

import ctypes
import logging
import math
from collections.abc import Mapping

from pccbullet.sim.bullet_internals.symbols import double_address

log = logging.getLogger(__name__)


# --- Bullet's broadphase margin -------------------------------------------------------------------
# Bullet's dynamic AABB tree keeps each collider in a box fattened by the global ``gDbvtMargin``
# (Bullet's default 0.05 m) and re-inserts a collider only when it leaves that box. PyBullet sets the
# margin to 0 on every ``connect``, so every moving collider (and the empty collider PyBullet makes
# for every link without a collision shape) is removed from the tree, re-inserted and re-tested
# against both trees on every step. PyBullet has no API for it; the variable is a plain ``double`` in
# the extension module, found here by its symbol in the module's ELF symbol table.

BROADPHASE_SYMBOL = "gDbvtMargin"


def _sane(value: float) -> bool:
    return math.isfinite(value) and 0.0 <= value <= 1.0


def bullet_global(symbol: str) -> float | None:
    """The current value of Bullet's process-wide double ``symbol`` (:data:`BROADPHASE_SYMBOL`,
    :data:`CONTACT_BREAKING_SYMBOL`; m), or ``None`` where it cannot be found (or is not looked for:
    ``PCCBULLET_SAFE=1``)."""
    address = double_address(symbol)
    return None if address is None else float(ctypes.c_double.from_address(address).value)


def set_bullet_global(symbol: str, value: float) -> bool:
    """Set Bullet's process-wide double ``symbol`` (m) for all PyBullet clients of this process;
    ``False`` if unavailable.

    Process-wide and left in place: :class:`pccbullet.sim.world.World` does not call this (it swaps its values
    in for its own calls only, :class:`BulletGlobals`). A wrong or unusual build (no symbol table, a
    value outside [0, 1] m already there) is left alone.
    """
    if not _sane(value):
        raise ValueError(f"{symbol} = {value!r} m is invalid; allowed: [0, 1] m")
    address = double_address(symbol)
    if address is None:
        return False
    cell = ctypes.c_double.from_address(address)
    if not _sane(cell.value):
        return False
    cell.value = value
    return True


def broadphase_margin() -> float | None:
    """PyBullet's current broadphase margin (m), or ``None`` where it cannot be found."""
    return bullet_global(BROADPHASE_SYMBOL)


def set_broadphase_margin(margin: float) -> bool:
    """Set Bullet's broadphase margin (m) for all PyBullet clients of this process, left in place
    (PyBullet resets it to 0 on every ``connect``); ``False`` if unavailable (:func:`set_bullet_global`)."""
    if not _sane(margin):
        raise ValueError(f"broadphase margin = {margin!r} m is invalid; allowed: [0, 1] m")
    return set_bullet_global(BROADPHASE_SYMBOL, margin)


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
    another platform, a value outside [0, 1] m there, ``PCCBULLET_SAFE=1``) are listed in
    :attr:`missing` and left alone: with all missing, :meth:`enter` and :meth:`leave` write nothing.
    :attr:`foreign_changes` counts the times the value found before a call differed from the one put
    back after the previous call (someone else connected or wrote it in between; logged at debug level).
    Holds nest (a joint reset inside robot loading): an inner :meth:`enter` finds this world's own
    values and is not counted.
    """

    def __init__(self, values: Mapping[str, float]) -> None:
        cells, missing = [], []
        for symbol, value in values.items():
            if not _sane(value):
                raise ValueError(f"{symbol} = {value!r} m is invalid; allowed: [0, 1] m")
            address = double_address(symbol)
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
        self._depth = 0  # holds open now

    def held(self, symbol: str) -> float | None:
        """The value held for ``symbol`` during this world's physics calls, ``None`` if not held."""
        return self.values.get(symbol)

    def enter(self) -> tuple[float, ...]:
        """Put this world's values in place; returns the values found, for :meth:`leave`."""
        cells = self._cells
        found = tuple(c.value for c, _ in cells)
        self._depth += 1
        if found != self._last and self._depth == 1:
            self.foreign_changes += 1
            log.debug("Bullet globals changed outside this world: %s -> %s", self._last, found)
        for cell, value in cells:
            cell.value = value
        return found

    def leave(self, found: tuple[float, ...]) -> None:
        """Put back the values :meth:`enter` found."""
        for (cell, _), value in zip(self._cells, found, strict=True):
            cell.value = value
        self._depth -= 1
        if self._depth == 0:
            self._last = found
