"""Actuator space of one PCC segment: tendons or fluid chambers routed parallel to the backbone.

A routing ``i`` runs parallel to the backbone at distance ``radius_m`` from it, at angle ``angles_rad[i]``
about the segment base z axis, measured from the base x axis (the same reference as the PCC ``plane``).
Under piecewise constant curvature its length is::

    l_i = length - bend * radius * cos(plane - angle_i)                          (1)

with ``bend`` the total arc angle (rad, >= 0), ``plane`` the bending-plane angle (rad) and ``length`` the
backbone arc length (m), as everywhere in pccbullet.

Sign conventions:
  * A routing on the side the segment bends towards (``angle_i == plane``) is the *shortest* one; the one
    opposite (``angle_i == plane + pi``) is the longest. So pulling tendon ``i`` (shortening it) bends the
    segment towards ``angle_i``, and pressurising chamber ``i`` (lengthening it) bends it away from
    ``angle_i``.
  * ``bend`` is never negative: a negative bend is the same shape as ``-bend`` in the plane ``plane + pi``.
    :func:`pcc_from_lengths` returns ``bend >= 0`` and ``plane`` in ``(-pi, pi]``; at ``bend == 0`` the plane
    is undefined and returned as 0.

Equation (1) is linear in ``(length, u, v)`` with ``u = bend cos(plane)``, ``v = bend sin(plane)``::

    l_i = length - radius * (cos(angle_i) * u + sin(angle_i) * v)

so the inverse map is an (exact for 3 routings, least-squares for more) linear solve, with no division by
the curvature anywhere: it is well defined at ``bend == 0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray

__all__ = [
    "ActuatorLayout",
    "PccParams",
    "lengths_from_pcc",
    "pcc_from_lengths",
    "lengths_jacobian",
    "ursula_tendons",
    "hydraulic_arm_chambers",
    "three_actuator_chambers",
]


class PccParams(NamedTuple):
    """PCC parameters of one segment: ``bend`` (rad, total arc angle), ``plane`` (rad), ``length`` (m)."""

    bend: float
    plane: float
    length: float


@dataclass(frozen=True, slots=True)
class ActuatorLayout:
    """Where the tendons or chambers of one segment run.

    Args:
        angles_rad: ``(k,)`` angle of each routing about the segment base z axis, from x (rad), k >= 3.
        radius_m: distance of every routing from the backbone (m), > 0.

    Raises:
        ConfigurationError: fewer than 3 routings, a non-positive or non-finite radius, or angles that do
            not determine the bending plane (e.g. all routings on one line through the backbone).
    """

    angles_rad: tuple[float, ...]
    radius_m: float

    def __post_init__(self) -> None:
        angles = tuple(float(a) for a in self.angles_rad)
        object.__setattr__(self, "angles_rad", angles)
        if len(angles) < 3:
            raise ConfigurationError(
                "ActuatorLayout needs at least 3 routings to determine (bend, plane, length); "
                f"got {len(angles)}"
            )
        if not all(math.isfinite(a) for a in angles):
            raise ConfigurationError(f"ActuatorLayout angles_rad must be finite; got {angles!r}")
        if not (math.isfinite(self.radius_m) and self.radius_m > 0.0):
            raise ConfigurationError(
                f"ActuatorLayout radius_m must be a finite number > 0; got {self.radius_m!r}"
            )
        if np.linalg.matrix_rank(_design_matrix(angles, 1.0), tol=1e-9) < 3:
            raise ConfigurationError(
                f"ActuatorLayout angles_rad {angles!r} do not determine the bending plane; "
                "allowed: at least 3 routings not all on one line through the backbone"
            )

    @property
    def count(self) -> int:
        """Number of routings ``k``."""
        return len(self.angles_rad)


def _design_matrix(angles: tuple[float, ...], radius: float) -> FloatArray:
    """``(k, 3) float`` matrix A with ``l = A @ (length, u, v)``, see the module docstring."""
    a = np.asarray(angles, dtype=float)
    return np.column_stack([np.ones_like(a), -radius * np.cos(a), -radius * np.sin(a)])


def lengths_from_pcc(layout: ActuatorLayout, bend: float, plane: float, length: float) -> FloatArray:
    """Routing lengths of a PCC segment, equation (1) of the module docstring.

    Args:
        layout: the routings.
        bend: total arc angle (rad); may be 0.
        plane: bending-plane angle about the base z axis from x (rad).
        length: backbone arc length (m).

    Returns:
        ``(k,) float`` lengths (m), in the order of ``layout.angles_rad``.
    """
    a = np.asarray(layout.angles_rad, dtype=float)
    return length - bend * layout.radius_m * np.cos(plane - a)


def pcc_from_lengths(layout: ActuatorLayout, lengths: FloatArray) -> PccParams:
    """PCC parameters from routing lengths: exact for 3 routings, least squares for more.

    Args:
        layout: the routings.
        lengths: ``(k,) float`` routing lengths (m).

    Returns:
        ``PccParams(bend, plane, length)`` with ``bend >= 0`` (rad), ``plane`` in ``(-pi, pi]`` (rad, 0 when
        ``bend == 0``) and ``length`` (m). For k > 3 inconsistent lengths (e.g. slack tendons) give the
        least-squares fit of equation (1).

    Raises:
        ConfigurationError: ``lengths`` does not have shape ``(k,)`` or is not finite.
    """
    lengths = np.asarray(lengths, dtype=float)
    if lengths.shape != (layout.count,) or not np.all(np.isfinite(lengths)):
        raise ConfigurationError(
            f"lengths must be {layout.count} finite numbers (one per routing); got {lengths!r}"
        )
    design = _design_matrix(layout.angles_rad, layout.radius_m)
    # Solve for the deviations from the mean length, so that equal lengths give exactly bend = 0.
    mean = float(np.mean(lengths))
    if layout.count == 3:
        d_length, u, v = np.linalg.solve(design, lengths - mean)
    else:
        d_length, u, v = np.linalg.lstsq(design, lengths - mean, rcond=None)[0]
    length = mean + d_length
    bend = math.hypot(u, v)
    plane = math.atan2(v, u) if bend > 0.0 else 0.0
    return PccParams(bend=bend, plane=plane, length=float(length))


def lengths_jacobian(layout: ActuatorLayout, bend: float, plane: float, length: float) -> FloatArray:
    """Jacobian of the routing lengths with respect to ``(bend, plane, length)``.

    Args:
        layout: the routings.
        bend: total arc angle (rad); 0 is fine (the ``plane`` column is then zero).
        plane: bending-plane angle (rad).
        length: backbone arc length (m); the lengths do not depend on it nonlinearly.

    Returns:
        ``(k, 3) float``: column 0 ``dl/dbend`` (m/rad), column 1 ``dl/dplane`` (m/rad), column 2
        ``dl/dlength`` (1).
    """
    del length  # equation (1) is affine in length
    a = np.asarray(layout.angles_rad, dtype=float)
    d = layout.radius_m
    return np.column_stack([-d * np.cos(plane - a), bend * d * np.sin(plane - a), np.ones_like(a)])


def ursula_tendons(radius_m: float) -> ActuatorLayout:
    """URSULA's four tendons (seed 001) at 0, 90, 180 and 270 degrees, at ``radius_m`` (m)."""
    return ActuatorLayout(tuple(k * math.pi / 2.0 for k in range(4)), radius_m)


def hydraulic_arm_chambers(radius_m: float) -> ActuatorLayout:
    """Seed 000's three water-hydraulic chambers, evenly spaced at 0, 120 and 240 degrees.

    Chamber 1 sits on +x: pressurised alone it bends the segment towards -x, as in the paper's Fig. 5b.
    """
    return ActuatorLayout((0.0, 2.0 * math.pi / 3.0, 4.0 * math.pi / 3.0), radius_m)


def three_actuator_chambers(radius_m: float) -> ActuatorLayout:
    """Seed 004's three pneumatic actuators, at 90, 210 and 330 degrees (actuators 1, 2, 3).

    These angles follow from the paper's eq. (29): ``l1 = theta (r - d sin(phi))`` puts actuator 1 at
    90 degrees, ``l2 = theta (r + d cos(phi - 30 deg))`` at 210 degrees and ``l3 = theta (r - d cos(phi +
    30 deg))`` at -30 = 330 degrees.
    """
    return ActuatorLayout((math.pi / 2.0, 7.0 * math.pi / 6.0, -math.pi / 6.0), radius_m)
