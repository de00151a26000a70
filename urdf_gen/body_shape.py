"""A robot body's shape as mass properties: its volume, centre of mass and inertia, per
:attr:`~pccbullet.urdf_gen.specs.HeadSpec.shape`.

Solids of uniform density: a cylinder along the head's x axis (``I_x = m r^2 / 2``, ``I_y = I_z = m (3 r^2 +
L^2) / 12``), a box (``I_x = m (y^2 + z^2) / 12``, ...), a sphere (``2 m r^2 / 5``), a mesh (trimesh's
volume integrals of the closed surface, scaled to the mass), or ``"none"``: no geometry, a point mass given
the inertia of a sphere of the head's diameter (1 cm if none), so that a free body stays well posed.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray

NO_SHAPE_DIAMETER = 0.01  # m, the sphere whose inertia a body without a shape gets


class HeadSpec(Protocol):
    """What the shape's mass properties read of a body (:class:`pccbullet.urdf_gen.specs.HeadSpec`)."""

    @property
    def shape(self) -> str:
        """``"cylinder"``, ``"box"``, ``"sphere"``, ``"mesh"`` or ``"none"``."""
        ...

    @property
    def diameter(self) -> float:
        """A cylinder's or sphere's diameter (m)."""
        ...

    @property
    def length(self) -> float:
        """A cylinder's length along x (m)."""
        ...

    @property
    def mass(self) -> float:
        """(kg)."""
        ...

    @property
    def size(self) -> tuple[float, float, float]:
        """A box's edges (m)."""
        ...

    @property
    def mesh(self) -> Path | None:
        """A mesh file."""
        ...

    @property
    def mesh_scale(self) -> float:
        """Metres per mesh unit."""
        ...


@lru_cache(maxsize=16)
def _mesh(path: Path, scale: float) -> Any:
    """The mesh at ``path`` scaled by ``scale`` (a ``trimesh.Trimesh``); refuses one that encloses no
    volume."""
    import trimesh

    try:
        mesh: Any = trimesh.load(str(path), force="mesh")
    except (OSError, ValueError) as exc:
        message = f"head.mesh = {str(path)!r} is unreadable ({exc}); allowed: STL, OBJ, PLY"
        raise ConfigurationError(message) from exc
    mesh.apply_scale(scale)
    if not mesh.is_volume:
        raise ConfigurationError(
            f"head.mesh = {str(path)!r} is invalid; allowed: a closed (watertight) surface with a volume"
        )
    return mesh


def mesh_extents(head: HeadSpec) -> FloatArray:
    """The axis-aligned size ``(3,)`` of a mesh body (m), for its fluid's drag areas."""
    if head.mesh is None:
        raise ConfigurationError("head.mesh is missing; allowed: a mesh file for shape = 'mesh'")
    return np.asarray(_mesh(head.mesh, head.mesh_scale).extents, dtype=float)


def body_volume(head: HeadSpec) -> float:
    """The body's displaced volume (m^3): 0 without a shape."""
    if head.shape == "cylinder":
        return math.pi * 0.25 * head.diameter**2 * head.length
    if head.shape == "sphere":
        return math.pi / 6.0 * head.diameter**3
    if head.shape == "box":
        return float(np.prod(head.size))
    if head.shape == "mesh" and head.mesh is not None:
        return float(_mesh(head.mesh, head.mesh_scale).volume)
    return 0.0


def body_inertia(head: HeadSpec) -> tuple[FloatArray, FloatArray]:
    """The body's centre of mass ``(3,)`` (m, head frame) and inertia about it ``(3, 3)`` (kg m^2, head
    axes), for its :attr:`~pccbullet.urdf_gen.specs.HeadSpec.mass` spread uniformly over its shape."""
    m = head.mass
    com = np.zeros(3)
    if head.shape == "cylinder":
        r, length = 0.5 * head.diameter, head.length
        iyz = m * (3 * r * r + length * length) / 12.0
        return com, np.diag([0.5 * m * r * r, iyz, iyz])
    if head.shape == "box":
        x, y, z = head.size
        return com, np.diag([m * (y * y + z * z), m * (x * x + z * z), m * (x * x + y * y)]) / 12.0
    if head.shape == "mesh" and head.mesh is not None:
        mesh = _mesh(head.mesh, head.mesh_scale)
        inertia = np.asarray(mesh.moment_inertia, dtype=float) * (m / mesh.mass)  # trimesh: density 1
        return np.asarray(mesh.center_mass, dtype=float), inertia
    d = head.diameter if head.shape == "sphere" or head.diameter > 0 else NO_SHAPE_DIAMETER
    return com, np.eye(3) * (0.1 * m * d * d)  # 2/5 m r^2
