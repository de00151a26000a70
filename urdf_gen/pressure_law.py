"""Pressure-to-length laws of extending fluidic actuators, and the tip of a three-actuator robot they give.

A law maps an actuator's gauge pressure to its length, ``l(P) = l0 + a P + b P^2`` (``l0`` the unactuated
length): :class:`PressureLengthLaw`. A three-actuator robot TOML (``kind = "three_actuator"``) may carry
one as an optional table, read by :func:`load_pressure_law`::

    [pressure_law]
    length_per_bar_mm = 36.01      # a (mm/bar)
    length_per_bar2_mm = 9.633     # b (mm/bar^2)

:func:`fit_pressure_law` is the least-squares fit of ``a`` and ``b`` to measured (pressure, length) pairs
with ``l(0) = l0`` held. Seed 004 (Akbari et al.) gives no law for its experimental robot; the bundled
``seed004_experimental.toml`` holds the fit to its Table 5 (three actuators at equal pressure, where the
straight robot's tip height is the actuators' length) and says so. :func:`tip_from_pressures` maps three
pressures to the constant-curvature tip (eqs. 6, 10, 16 and 17 of seed 004) through the law.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.fields import Fields, read_toml
from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen.three_actuator import ThreeActuatorSpec, shape_from_lengths, tip_transform

__all__ = ["BAR", "PressureLengthLaw", "fit_pressure_law", "load_pressure_law", "tip_from_pressures"]

BAR = 1e5  # Pa per bar


@dataclass(frozen=True, slots=True)
class PressureLengthLaw:
    """``l(P) = initial_length + linear P + quadratic P^2``, SI.

    Attributes:
        initial_length: ``l0``, the unactuated length (m).
        linear: ``a`` (m/Pa). quadratic: ``b`` (m/Pa^2).
    """

    initial_length: float
    linear: float
    quadratic: float

    def length(self, pressure: float | FloatArray) -> FloatArray:
        """Actuator length(s) (m) at gauge pressure(s) (Pa), same shape as ``pressure``."""
        p = np.asarray(pressure, dtype=float)
        return self.initial_length + self.linear * p + self.quadratic * p * p


def fit_pressure_law(
    pressures: Sequence[float] | FloatArray, lengths: Sequence[float] | FloatArray, initial_length: float
) -> PressureLengthLaw:
    """Least-squares ``a``, ``b`` of ``l(P) - l0 = a P + b P^2`` over ``(pressures (Pa), lengths (m))``.

    Raises:
        ConfigurationError: fewer than two pairs, or pressures and lengths of different sizes.
    """
    p = np.asarray(pressures, dtype=float).ravel()
    lengths = np.asarray(lengths, dtype=float).ravel()
    if p.size != lengths.size or p.size < 2 or not np.all(np.isfinite(p)) or not np.all(np.isfinite(lengths)):
        raise ConfigurationError(
            f"pressures ({p.size}) and lengths ({lengths.size}) are invalid; "
            "allowed: two or more finite pairs"
        )
    (a, b), *_ = np.linalg.lstsq(np.column_stack([p, p * p]), lengths - initial_length, rcond=None)
    return PressureLengthLaw(float(initial_length), float(a), float(b))


def load_pressure_law(path: str | Path, spec: ThreeActuatorSpec) -> PressureLengthLaw:
    """The ``[pressure_law]`` table of the robot TOML ``path`` (coefficients in mm/bar and mm/bar^2), with
    ``spec.initial_length_m`` as ``l0``.

    Raises:
        SpecError: no such table, an unknown key, or a non-finite coefficient (file, field, value, allowed).
    """
    path = Path(path)
    f = Fields(read_toml(path), path)
    law = f.sub("pressure_law")
    a = law.number("length_per_bar_mm", -1e6, 1e6)
    b = law.number("length_per_bar2_mm", -1e6, 1e6)
    law.finish()
    return PressureLengthLaw(spec.initial_length_m, a * 1e-3 / BAR, b * 1e-3 / BAR**2)


def tip_from_pressures(
    spec: ThreeActuatorSpec, law: PressureLengthLaw, pressures: Sequence[float]
) -> FloatArray:
    """Constant-curvature tip ``(3,) float`` (m, base frame) for actuator pressures ``(P1, P2, P3)`` (Pa):
    each actuator at ``law.length(P_i)``, then seed 004's forward map (eqs. 6, 10, 16) and eq. 17."""
    lengths = law.length(np.asarray(pressures, dtype=float).reshape(3))
    shape = shape_from_lengths(lengths, spec.distance_m)
    return tip_transform(shape.bend, shape.plane, shape.length)[:3, 3]
