"""The project's exceptions: one root, specific subclasses, messages that name what was wrong.

Every exception raised for bad input derives from :class:`PccBulletError`, so callers can catch one type.
Messages carry the bad value, where it came from (file and field) and what is allowed.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Any

MAX_ECHO = 80  # characters of a bad value echoed in a message


def clip(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``...`` and the full length when cut."""
    if len(text) <= limit:
        return text
    tail = f"... ({len(text)} characters)"
    return text[: max(limit - len(tail), 8)] + tail


def cap(value: Any, limit: int = MAX_ECHO) -> str:
    """``repr(value)`` cut to at most ``limit`` characters (see :func:`clip`).

    Messages echo the offending value; a 10 MB string in a file must not become a 10 MB message, and a
    huge list or a deeply nested table is summarized instead of formatted whole.
    """
    if isinstance(value, PurePath):  # a path keeps its end: the file name says most
        text = str(value)
        return repr(text) if len(text) + 2 <= limit else repr("..." + text[-max(limit - 5, 8) :])
    if isinstance(value, str) and len(value) > limit:
        return repr(value[: max(limit - 32, 8)]) + f"... ({len(value)} characters)"
    if isinstance(value, int) and value.bit_length() > 200:
        return f"<int of {value.bit_length()} bits>"
    if isinstance(value, list | tuple | dict | set) and len(value) > limit:
        return f"<{type(value).__name__} of {len(value)} items>"
    try:
        return clip(repr(value), limit)
    except (RecursionError, ValueError):  # deeply nested values, ints with more than 4300 digits
        return f"<{type(value).__name__}>"


class PccBulletError(Exception):
    """Root of every error pccbullet raises on purpose."""


class SpecError(PccBulletError, ValueError):
    """A robot or experiment description is invalid.

    Args:
        source: the file (or other origin) the value came from.
        field: dotted path of the offending field, e.g. ``limbs.camera.segments[0].length_mm``.
        value: the offending value (``None`` for a missing field).
        allowed: what would have been accepted, in words, e.g. ``"a number in [290, 300]"``.
        hint: optional extra sentence, e.g. a typo suggestion ``"did you mean 'length_mm'?"``.

    The value is echoed capped at :data:`MAX_ECHO` characters (see :func:`cap`).
    """

    def __init__(self, source: str | Path, field: str, value: Any, allowed: str, *, hint: str = "") -> None:
        self.source = clip(str(source), 200)
        self.field = clip(field)
        self.value = value
        self.allowed = allowed
        self.hint = hint
        extra = f"; {hint}" if hint else ""
        super().__init__(
            f"{self.source}: field '{self.field}' = {cap(value)} is invalid; allowed: {allowed}{extra}"
        )


class ConfigurationError(PccBulletError, ValueError):
    """A PCC configuration, joint vector or run-time setting is out of range or inconsistent."""


class SimulationDivergedError(PccBulletError, RuntimeError):
    """A dynamic world's state stopped being finite (a NaN or an infinity in a compliant limb): the
    simulation diverged. The world cannot go on; the message names the limb and the time."""

    def __init__(self, limb: str, time: float) -> None:
        super().__init__(
            f"the simulation diverged at t = {time:.3f} s: limb {limb!r} has a non-finite state (NaN); "
            "allowed: a finite state (what diverges: contacts estimated between two limbs pressing on each "
            "other, a stiffness or a load far out of the material's range)"
        )


class WorldClosedError(PccBulletError, RuntimeError):
    """A :class:`~pccbullet.sim.world.World` (or a robot in it) used after its ``close()``."""

    def __init__(self, what: str = "World") -> None:
        subject = "the World is closed" if what == "World" else f"the World of this {what} is closed"
        super().__init__(f"{subject}; allowed: a World before close() (make a new World)")


class RobotNotFoundError(PccBulletError, LookupError):
    """A robot name is neither a bundled robot nor an existing TOML file."""


class UsageError(PccBulletError, ValueError):
    """A command-line argument is invalid (the CLI prints it as one line and exits with status 2)."""
