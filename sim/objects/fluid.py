"""How a fluid acts on a rigid object of a simple shape: drag coefficients and areas per axis, added mass.

Drag (quadratic, the body's own axes ``i``): ``F_i = -1/2 rho C_d,i A_i |v| v_i`` with ``v`` the centre's
velocity in the body frame and ``A_i`` the area projected on the plane normal to axis ``i``. For a sphere
it is the textbook ``-1/2 rho C_d pi r^2 |v| v``. Coefficients, subcritical Reynolds numbers (about 1e3 to
2e5: a 2-20 cm object at 1 cm/s - 1 m/s in water), after Hoerner (*Fluid-Dynamic Drag*, 1965, ch. 3) as
tabulated by White (*Fluid Mechanics*, tables 7.2 and 7.3):

* sphere: ``C_d = 0.47`` (laminar boundary layer), ``A = pi r^2``;
* cylinder (axis z, length ``L``, diameter ``D``) across its axis, ``A = D L``: 0.64, 0.68, 0.72, 0.74,
  0.82, 0.91, 0.98 at ``L/D`` = 1, 2, 3, 5, 10, 20, 40 and 1.20 for an infinite one (interpolated, held
  below 1, linear in ``D/L`` towards 1.20 beyond 40); along its axis (flat end first), ``A = pi D^2 / 4``:
  1.15, 0.90, 0.85, 0.87, 0.99 at ``L/D`` = 0.5, 1, 2, 4, 8 (held outside);
* box, each face: ``C_d = 1.05``, the cube's (a long bar or a thin plate has more, up to ~2).

Added mass (potential flow): per body axis ``C_a,i rho V`` from the ellipsoid of the same proportions
(semi-axes: the radius and half the length, or the half edges), Lamb's coefficients ``C_a,i =
alpha_i / (2 - alpha_i)`` with ``alpha_i = a b c * integral_0^inf dl / ((a_i^2 + l) D(l))``,
``D = sqrt((a^2 + l)(b^2 + l)(c^2 + l))`` (Lamb, *Hydrodynamics*, 6th ed., 1932, sec. 114 and 373): exact
for a sphere (0.5 on every axis), 0.76 across a spheroid of ``L/D = 2.5`` (tables for a cylinder of that
ratio give about 0.78); an edged body (a box) has somewhat more than its ellipsoid. PyBullet takes one mass
per body, so :class:`pccbullet.sim.objects.place.PlacedObject` uses the mean of the three (the
direction-averaged kinetic energy of ``v^T M_a v`` is ``tr(M_a) / 3 |v|^2``) and no added rotary inertia (none
for a sphere).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import quad

SPHERE_DRAG = 0.47  # -, sphere, subcritical
BOX_DRAG = 1.05  # -, cube, face on
# cylinder across its axis: (L/D, C_d), Hoerner via White table 7.2; the infinite cylinder's 1.20 beyond
CYLINDER_CROSS_DRAG = (
    (1.0, 0.64),
    (2.0, 0.68),
    (3.0, 0.72),
    (5.0, 0.74),
    (10.0, 0.82),
    (20.0, 0.91),
    (40.0, 0.98),
)
CYLINDER_CROSS_DRAG_INFINITE = 1.20  # -, long circular cylinder, the dynamic mode's limbs' value too
# cylinder along its axis, flat end first: (L/D, C_d), Hoerner via White table 7.3
CYLINDER_AXIAL_DRAG = ((0.5, 1.15), (1.0, 0.90), (2.0, 0.85), (4.0, 0.87), (8.0, 0.99))


@dataclass(frozen=True, slots=True)
class ShapeFluid:
    """The fluid-dynamic constants of one rigid shape, per body axis (x, y, z).

    Attributes:
        drag: drag coefficients ``C_d,i`` (-).
        area: areas ``A_i`` projected normal to each axis (m^2).
        added_mass: added-mass coefficients ``C_a,i`` (-, per displaced volume).
    """

    drag: tuple[float, float, float]
    area: tuple[float, float, float]
    added_mass: tuple[float, float, float]

    @property
    def added_mass_mean(self) -> float:
        """The mean of :attr:`added_mass` (-): the isotropic coefficient an object is given."""
        return sum(self.added_mass) / 3.0


def _interpolate(table: tuple[tuple[float, float], ...], x: float) -> float:
    """Piecewise-linear in ``table``'s (x, y) rows, held at the ends."""
    xs, ys = zip(*table, strict=True)
    return float(np.interp(x, xs, ys))


def ellipsoid_added_mass(a: float, b: float, c: float) -> tuple[float, float, float]:
    """Lamb's added-mass coefficients ``(C_a,x, C_a,y, C_a,z)`` (-, per displaced volume) of an ellipsoid
    of semi-axes ``a``, ``b``, ``c`` (m) translating along each of its axes in an ideal fluid."""
    axes = (a, b, c)
    alphas = []
    for ai in axes:

        def integrand(lam: float, ai: float = ai) -> float:
            return 1.0 / ((ai * ai + lam) * math.sqrt(math.prod(s * s + lam for s in axes)))

        value, _ = quad(integrand, 0.0, math.inf, epsabs=1e-13, epsrel=1e-11, limit=200)
        alphas.append(a * b * c * value)
    k = [al / (2.0 - al) for al in alphas]
    return (k[0], k[1], k[2])


def sphere_fluid(radius: float) -> ShapeFluid:
    """A sphere of ``radius`` (m)."""
    area = math.pi * radius * radius
    return ShapeFluid((SPHERE_DRAG,) * 3, (area,) * 3, (0.5, 0.5, 0.5))


def cylinder_fluid(radius: float, length: float) -> ShapeFluid:
    """A solid circular cylinder of ``radius`` and ``length`` (m), axis along body z."""
    ratio = length / (2.0 * radius)
    cross = _interpolate(CYLINDER_CROSS_DRAG, ratio)
    last_ratio, last = CYLINDER_CROSS_DRAG[-1]
    if ratio > last_ratio:  # towards the infinite cylinder's value, linear in D / L
        cross = CYLINDER_CROSS_DRAG_INFINITE + (last - CYLINDER_CROSS_DRAG_INFINITE) * last_ratio / ratio
    axial = _interpolate(CYLINDER_AXIAL_DRAG, ratio)
    side, end = 2.0 * radius * length, math.pi * radius * radius
    return ShapeFluid(
        (cross, cross, axial), (side, side, end), ellipsoid_added_mass(radius, radius, length / 2)
    )


def box_fluid(size: tuple[float, float, float]) -> ShapeFluid:
    """A box of edge lengths ``size`` ``(3,)`` (m) along body x, y, z."""
    x, y, z = size
    return ShapeFluid((BOX_DRAG,) * 3, (y * z, x * z, x * y), ellipsoid_added_mass(x / 2, y / 2, z / 2))
