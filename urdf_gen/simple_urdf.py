"""The URDF builder of the PneuNet and three-actuator robots, over :mod:`pccbullet.urdf_gen.urdf_xml` (their
TOML fields are read by :class:`pccbullet.core.fields.Fields`, like every other TOML).

The URDF builder uses :mod:`xml.etree.ElementTree` and primitive geometry only (box, cylinder, sphere), so
the files load in PyBullet, yourdfpy and MuJoCo's URDF compiler alike (MuJoCo strips mesh paths). Every
link gets a positive mass and a physically valid diagonal inertia (triangle inequality holds).
"""

from __future__ import annotations

import copy
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from pccbullet.core.errors import ConfigurationError
from pccbullet.urdf_gen import urdf_xml as ux

__all__ = [
    "Box",
    "Cylinder",
    "Sphere",
    "Geometry",
    "UrdfRobot",
    "box_inertia",
    "cylinder_inertia",
    "sphere_inertia",
]

# ----------------------------------------------------------------------------------------------- geometry


@dataclass(frozen=True, slots=True)
class Box:
    """Box with edge lengths ``size`` = (x, y, z) in m, centred on its origin."""

    size: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Cylinder:
    """Cylinder along its local z axis, ``radius`` and ``length`` in m, centred on its origin."""

    radius: float
    length: float


@dataclass(frozen=True, slots=True)
class Sphere:
    """Sphere of ``radius`` m centred on its origin."""

    radius: float


Geometry = Box | Cylinder | Sphere


def box_inertia(mass: float, size: tuple[float, float, float]) -> tuple[float, float, float]:
    """Principal inertias ``(ixx, iyy, izz)`` in kg m^2 of a solid box of ``mass`` kg and edges ``size`` m."""
    x, y, z = size
    return (mass * (y * y + z * z) / 12.0, mass * (x * x + z * z) / 12.0, mass * (x * x + y * y) / 12.0)


def cylinder_inertia(mass: float, radius: float, length: float) -> tuple[float, float, float]:
    """Principal inertias ``(ixx, iyy, izz)`` in kg m^2 of a solid cylinder along z."""
    i_xy = mass * (3.0 * radius * radius + length * length) / 12.0
    return (i_xy, i_xy, 0.5 * mass * radius * radius)


def sphere_inertia(mass: float, radius: float) -> tuple[float, float, float]:
    """Principal inertias ``(ixx, iyy, izz)`` in kg m^2 of a solid sphere."""
    i = 0.4 * mass * radius * radius
    return (i, i, i)


_DIGITS = 9  # significant digits of the numbers in these URDFs


class UrdfRobot:
    """Builds one ``<robot>`` element link by link, joint by joint; :meth:`write` saves it.

    Args:
        name: the robot name written into the URDF.
    """

    def __init__(self, name: str) -> None:
        self.root = ux.robot(name)
        self._materials: set[str] = set()
        self._links: set[str] = set()

    def add_material(self, name: str, rgba: tuple[float, float, float, float]) -> None:
        """Declare a colour once at the top level (``rgba`` in [0, 1])."""
        if name in self._materials:
            return
        ux.material(self.root, name, rgba, _DIGITS)
        self._materials.add(name)

    def add_link(
        self,
        name: str,
        mass: float,
        inertia: tuple[float, float, float],
        geometry: Geometry | None = None,
        xyz: tuple[float, float, float] = (0.0, 0.0, 0.0),
        rpy: tuple[float, float, float] = (0.0, 0.0, 0.0),
        material: str | None = None,
        collision: bool = True,
    ) -> None:
        """Add a link whose centre of mass and (optional) geometry sit at ``xyz``/``rpy`` in the link frame.

        Args:
            name: unique link name.
            mass: kg, > 0.
            inertia: principal inertias (kg m^2) about the centre of mass, axes of ``rpy``.
            geometry: visual (and collision, when ``collision``) shape; ``None`` for none.
            xyz: centre of mass and geometry origin in the link frame (m).
            rpy: roll, pitch, yaw of the geometry and inertia axes (rad).
            material: name declared with :meth:`add_material`.
            collision: also write the geometry as collision shape.

        Raises:
            ConfigurationError: duplicate name, non-positive mass, or an inertia that is not positive or
                violates the triangle inequality.
        """
        if name in self._links:
            raise ConfigurationError(f"duplicate URDF link name {name!r}")
        ixx, iyy, izz = inertia
        if not (mass > 0.0 and math.isfinite(mass)):
            raise ConfigurationError(f"link {name!r}: mass must be > 0 kg; got {mass!r}")
        tol = 1e-12 * (ixx + iyy + izz)
        if min(inertia) <= 0.0 or ixx + iyy < izz - tol or ixx + izz < iyy - tol or iyy + izz < ixx - tol:
            raise ConfigurationError(f"link {name!r}: inertia {inertia!r} is not a valid rigid-body inertia")
        self._links.add(name)
        link = ux.link(self.root, name)
        ux.inertial(link, mass, inertia, xyz, rpy, _DIGITS)
        if geometry is None:
            return
        if isinstance(geometry, Box):
            shape = ux.box(geometry.size, _DIGITS)
        elif isinstance(geometry, Cylinder):
            shape = ux.cylinder(geometry.radius, geometry.length, _DIGITS)
        else:
            shape = ux.sphere(geometry.radius, _DIGITS)
        ux.shape(link, "visual", shape, xyz, rpy, material_name=material, digits=_DIGITS)
        if collision:
            ux.shape(link, "collision", copy.copy(shape), xyz, rpy, digits=_DIGITS)

    def add_joint(
        self,
        name: str,
        kind: str,
        parent: str,
        child: str,
        xyz: tuple[float, float, float] = (0.0, 0.0, 0.0),
        rpy: tuple[float, float, float] = (0.0, 0.0, 0.0),
        axis: tuple[float, float, float] = (0.0, 0.0, 1.0),
        limits: tuple[float, float] | None = None,
        effort: float = 100.0,
        velocity: float = 10.0,
        damping: float | None = None,
        stiffness_note: str | None = None,
    ) -> None:
        """Add a ``fixed``, ``revolute`` or ``prismatic`` joint: ``child`` at ``xyz``/``rpy`` in ``parent``.

        Args:
            limits: ``(lower, upper)`` in rad or m; required for revolute and prismatic joints.
            effort: N or N m; velocity: rad/s or m/s; damping: N s/m or N m s/rad.
            stiffness_note: free text written as an XML comment (URDF has no joint stiffness field).
        """
        if kind not in ("fixed", "revolute", "prismatic"):
            raise ConfigurationError(
                f"joint {name!r}: kind {kind!r} not in ('fixed', 'revolute', 'prismatic')"
            )
        if kind != "fixed" and (limits is None or not limits[0] < limits[1]):
            raise ConfigurationError(f"joint {name!r}: needs limits (lower < upper); got {limits!r}")
        if stiffness_note:
            self.root.append(ET.Comment(f" {stiffness_note} "))
        ux.joint(
            self.root,
            name,
            kind,
            parent,
            child,
            xyz=xyz,
            rpy=rpy,
            axis=None if kind == "fixed" else axis,
            limit=None if limits is None or kind == "fixed" else (*limits, effort, velocity),
            damping=None if kind == "fixed" else damping,
            origin_first=False,
            digits=_DIGITS,
        )

    def write(self, out_dir: str | Path, filename: str) -> Path:
        """Write the URDF to ``out_dir / filename`` (``out_dir`` created if missing); return the path."""
        return ux.write_tree(self.root, Path(out_dir) / filename, short_declaration=True)
