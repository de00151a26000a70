"""Frustum slices: exact mass properties and triangle meshes.

A slice is a solid truncated cone with radius ``r0`` at ``z = 0`` and ``r1`` at ``z = h``; the radius
varies linearly in between. Mass properties are integrated exactly (Gauss-Legendre with 3 nodes is
exact for the degree-4 polynomials involved); meshes approximate the round surface with a polygon, so
their volume is smaller by the polygon's area deficit (documented in the tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pccbullet.core.types import FloatArray

if TYPE_CHECKING:
    import trimesh

_GL_X, _GL_W = np.polynomial.legendre.leggauss(3)


@dataclass(frozen=True, slots=True)
class MassProperties:
    """Mass (kg), centre of mass ``(3,) float`` (m) and inertia about the centre of mass ``(3, 3) float``."""

    mass: float
    com: FloatArray
    inertia: FloatArray

    def scaled(self, factor: float) -> MassProperties:
        """The same body with mass and inertia multiplied by ``factor`` (density scaled)."""
        return MassProperties(self.mass * factor, self.com.copy(), self.inertia * factor)

    def shifted(self, dz: float) -> MassProperties:
        """The same body moved by ``dz`` along z."""
        return MassProperties(self.mass, self.com + np.array([0.0, 0.0, dz]), self.inertia.copy())


def frustum_mass_properties(r0: float, r1: float, h: float, density: float) -> MassProperties:
    """Exact mass properties of a solid frustum, base (radius ``r0``) at z = 0, top (``r1``) at z = h.

    Args:
        r0, r1: radii (m), > 0. h: height (m), > 0. density: (kg/m^3).

    Returns:
        mass, centre of mass on the z axis, inertia tensor about the centre of mass (diagonal).
    """
    z = 0.5 * h * (_GL_X + 1.0)
    w = 0.5 * h * _GL_W
    r = r0 + (r1 - r0) * z / h
    area = math.pi * r * r
    mass = density * float(w @ area)
    zc = density * float(w @ (z * area)) / mass
    # Disc of radius r and mass dm: Izz = dm r^2 / 2, Ixx about its own centre = dm r^2 / 4.
    izz = density * float(w @ (area * r * r)) / 2.0
    ixx_origin = density * float(w @ (area * (r * r / 4.0 + z * z)))
    ixx = ixx_origin - mass * zc * zc
    return MassProperties(mass, np.array([0.0, 0.0, zc]), np.diag([ixx, ixx, izz]))


def frustum_mesh(r0: float, r1: float, h: float, z0: float = 0.0, sections: int = 32) -> trimesh.Trimesh:
    """Watertight triangle mesh of a frustum from ``z0`` (radius ``r0``) to ``z0 + h`` (radius ``r1``)."""
    import trimesh  # half a second of imports: only where a mesh is made

    profile = np.array([[0.0, z0], [r0, z0], [r1, z0 + h], [0.0, z0 + h]])
    mesh = trimesh.creation.revolve(profile, sections=sections)
    if mesh.volume < 0:
        mesh.invert()
    return mesh
