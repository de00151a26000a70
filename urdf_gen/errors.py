"""The project's exceptions: one root, specific subclasses, messages that name what was wrong.

Every exception raised for bad input derives from :class:`PccBulletError`, so callers can catch one type.
Messages carry the bad value, where it came from (file and field) and what is allowed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class PccBulletError(Exception):
    """Root of every error pccbullet raises on purpose."""


class SpecError(PccBulletError, ValueError):
    """A robot or experiment description is invalid.

    Args:
        source: the file (or other origin) the value came from.
        field: dotted path of the offending field, e.g. ``limbs.camera.segments[0].length_mm``.
        value: the offending value (``None`` for a missing field).
        allowed: what would have been accepted, in words, e.g. ``"a number in [290, 300]"``.
    """

    def __init__(self, source: str | Path, field: str, value: Any, allowed: str) -> None:
        self.source = str(source)
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{self.source}: field '{field}' = {value!r} is invalid; allowed: {allowed}")


class ConfigurationError(PccBulletError, ValueError):
    """A PCC configuration, joint vector or run-time setting is out of range or inconsistent."""


class RobotNotFoundError(PccBulletError, LookupError):
    """A robot name is neither a bundled robot nor an existing TOML file."""
