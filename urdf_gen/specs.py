"""Robot descriptions: frozen dataclasses for the physical concepts of a PCC soft robot.

The TOML side (millimetres, degrees, field names that say so) lives in :mod:`pccbullet.urdf_gen.spec_loader`;
everything here is SI: metres, kilograms, radians, pascals.

A limb is a chain of segments, each a frustum (a linear taper from its ``radius_base`` to its
``radius_tip``): one taper over the whole limb cut at the segments, or a piecewise taper whose segments
step down (or up) where they meet, as built section by section (OctArm). Each segment is a
constant-curvature arc with parameters ``bend`` (total arc angle, rad),
``plane`` (bending-plane angle about the segment base z axis, from x, rad) and ``length`` (arc length, m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from pccbullet.core.types import FloatArray, Transform


@dataclass(frozen=True, slots=True)
class Material:
    """An isotropic elastomer.

    Attributes:
        name: identifier used by limbs, e.g. ``"ecoflex_00_30"``.
        density: mass density (kg/m^3).
        youngs_modulus: E (Pa).
        poisson_ratio: nu (-), in [0, 0.5].
        damping_ratio: modal damping ratio used by the dynamic models (-).
    """

    name: str
    density: float
    youngs_modulus: float
    poisson_ratio: float
    damping_ratio: float = 0.1

    @property
    def shear_modulus(self) -> float:
        """G = E / (2 (1 + nu)) (Pa)."""
        return self.youngs_modulus / (2.0 * (1.0 + self.poisson_ratio))


@dataclass(frozen=True, slots=True)
class SegmentSpec:
    """One independently actuated constant-curvature segment of a limb.

    Attributes:
        length: rest (nominal) arc length (m); the geometry is cut at this length.
        length_min: shortest arc length the actuators can reach (m).
        length_max: longest arc length (m).
        bend_max: largest |bend|, the total arc angle (rad). Seed 001's theta is the chord angle,
            bend / 2, so its limit theta <= pi/2 is bend_max = pi.
        plane_max: largest |plane| of the bending plane (rad).
        sections: N, the number of RRP sections the segment is discretized into.
        radius_base: frustum radius at the segment base (m).
        radius_tip: frustum radius at the segment tip (m).
    """

    length: float
    length_min: float
    length_max: float
    bend_max: float
    plane_max: float
    sections: int
    radius_base: float
    radius_tip: float

    @overload
    def radius_at(self, fraction: float) -> float: ...
    @overload
    def radius_at(self, fraction: FloatArray) -> FloatArray: ...
    def radius_at(self, fraction: float | FloatArray) -> float | FloatArray:
        """Frustum radius (m) at ``fraction`` (0 = base, 1 = tip; scalar or array) of the rest length."""
        return self.radius_base + (self.radius_tip - self.radius_base) * fraction

    @property
    def volume(self) -> float:
        """Volume of the frustum at rest length (m^3)."""
        r0, r1 = self.radius_base, self.radius_tip
        return math.pi * self.length / 3.0 * (r0 * r0 + r0 * r1 + r1 * r1)


@dataclass(frozen=True, slots=True)
class ActuatorSpec:
    """Actuators routed along a limb at a fixed distance from the backbone.

    Attributes:
        kind: ``"tendon"`` (pulls only, tension >= 0) or ``"chamber"`` (fluid pressure >= 0).
        count: number of actuators, evenly spaced around the backbone.
        offset: distance of tendon / chamber centroid from the backbone (m).
        first_angle: angle of actuator 0 about the segment base z axis, from x (rad).
        area: effective pressurized area of one chamber (m^2); 0 for tendons.
    """

    kind: str
    count: int
    offset: float
    first_angle: float = 0.0
    area: float = 0.0

    @property
    def angles(self) -> tuple[float, ...]:
        """Angles of the actuators about the backbone (rad), ``count`` values."""
        return tuple(self.first_angle + 2.0 * math.pi * i / self.count for i in range(self.count))


@dataclass(frozen=True, slots=True)
class TendonSpec:
    """One tendon of a limb, in a channel parallel to the backbone, pulled by an actuator in the head.

    The tendon runs from the limb base through every segment up to the end disk of segment
    ``anchor_segment``, where it is anchored (seed 001 sec. 2.2: "anchored to a rigid disk embedded into
    the limb at the tip and ... connected to electro-mechanical actuators at the other end").

    Attributes:
        name: tendon name, e.g. ``"grasper_s2_t0"`` (limb, anchor segment, index in its group).
        anchor_segment: 0-based index of the segment whose end disk anchors it.
        angle: angular position about the backbone in the limb's material cross-section, from its x
            axis (rad); pulling it bends the limb in the plane of that angle (towards the tendon).
        offset_base: distance from the backbone at the limb base (m).
        offset_tip: distance from the backbone at the limb tip (m); the offset is linear in between
            (``offset_base == offset_tip``: a constant offset).
        max_tension: the actuator's stall tension (N); it pulls with at most this.
        max_speed: the actuator's no-load speed (m/s): the tendon is reeled in no faster; the tension
            it can hold falls linearly from ``max_tension`` at rest to 0 at this speed (a DC motor's
            torque-speed line).
        pretension: the least tension the actuator keeps on it (N), so that it stays taut.
        spool_mass: the actuator's inertia seen at the tendon (kg): rotor and gears, ``J N^2 / r^2`` for a
            motor of rotor inertia ``J``, gear ratio ``N`` and spool radius ``r``; a taut tendon carries
            the motor's force plus this mass times the tendon's acceleration.
    """

    name: str
    anchor_segment: int
    angle: float
    offset_base: float
    offset_tip: float
    max_tension: float
    max_speed: float
    pretension: float = 0.0
    spool_mass: float = 0.0

    def offset_at(self, fraction: float) -> float:
        """Offset (m) at ``fraction`` of the limb's rest length (0 = base, 1 = tip)."""
        return self.offset_base + (self.offset_tip - self.offset_base) * fraction


@dataclass(frozen=True, slots=True)
class Payload:
    """A rigid device carried at a limb's tip (camera, spotlight, force sensor).

    Attributes:
        kind: ``"camera"``, ``"light"`` or ``"force_sensor"``.
        frame: URDF link name of the device frame, e.g. ``"camera_frame"``.
        mass: device mass (kg).
        offset: position of the device frame in the limb tip frame, ``(3,) float`` (m).
    """

    kind: str
    frame: str
    mass: float
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class LimbSpec:
    """A soft limb: a chain of PCC segments, each a tapered elastomer frustum, mounted on the head.

    Attributes:
        name: limb name, used as the prefix of its URDF links and joints.
        material: the limb's elastomer.
        segments: segments from base to tip.
        actuators: tendons or chambers of every segment, or ``None`` for a passive limb.
        mount_xyz: limb base position in the head frame, ``(3,) float`` (m).
        mount_rpy: limb base orientation in the head frame, roll-pitch-yaw (rad), URDF convention.
        payload: tip device or ``None``.
        tendons: the tendons that drive it in dynamic mode (:mod:`pccbullet.sim.limb.tendons`), base to tip by
            anchor segment; empty for a limb without them.
    """

    name: str
    material: Material
    segments: tuple[SegmentSpec, ...]
    actuators: ActuatorSpec | None
    mount_xyz: tuple[float, float, float]
    mount_rpy: tuple[float, float, float]
    payload: Payload | None = None
    tendons: tuple[TendonSpec, ...] = ()

    @property
    def rest_length(self) -> float:
        """Sum of the segments' rest lengths (m)."""
        return sum(s.length for s in self.segments)

    @property
    def mass(self) -> float:
        """Mass of the elastomer frustum (kg), payload excluded."""
        return self.material.density * sum(s.volume for s in self.segments)

    def T_head_base(self) -> Transform:
        """Pose of the limb base in the head frame, ``(4, 4) float``."""
        from pccbullet.urdf_gen.pcc import rpy_matrix

        T = np.eye(4)
        T[:3, :3] = rpy_matrix(*self.mount_rpy)
        T[:3, 3] = self.mount_xyz
        return T


BODY_SHAPES = ("cylinder", "box", "sphere", "mesh", "none")
"""The shapes a robot's body (its head) can take."""
BODY_BASES = ("fixed", "free")
"""How a robot file may hold its body (``"moved"`` needs a trajectory: ``World.load_robot`` only)."""


@dataclass(frozen=True, slots=True)
class HeadSpec:
    """The rigid body (head) the limbs are mounted on; its frame is the limbs' mount frame.

    Attributes:
        diameter: a cylinder's or a sphere's diameter (m); 0 for other shapes.
        length: a cylinder's length along the head's x axis (m); 0 for other shapes.
        mass: (kg).
        shape: one of :data:`BODY_SHAPES`: ``"cylinder"`` (along x), ``"box"`` (:attr:`size`), ``"sphere"``,
            ``"mesh"`` (:attr:`mesh`, scaled by :attr:`mesh_scale`) or ``"none"`` (no geometry: a point
            mass with the inertia of a sphere of :attr:`diameter`, or of 1 cm).
        size: a box's edge lengths along x, y, z (m).
        mesh: a mesh file (STL, OBJ, PLY) in the head frame.
        mesh_scale: metres per mesh unit (-).
        base: how the robot file holds the body, one of :data:`BODY_BASES` (a ``World.load_robot`` call
            overrides it).
    """

    diameter: float
    length: float
    mass: float
    shape: str = "cylinder"
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)
    mesh: Path | None = None
    mesh_scale: float = 1.0
    base: str = "fixed"

    @property
    def volume(self) -> float:
        """The body's displaced volume (m^3): 0 for ``"none"``."""
        from pccbullet.urdf_gen.body_shape import body_volume

        return body_volume(self)


@dataclass(frozen=True, slots=True)
class RobotSpec:
    """A whole robot: a head and its limbs.

    Attributes:
        name: robot name (URDF robot name and file stem).
        head: the rigid base.
        limbs: the soft limbs in file order.
        source: the TOML file the spec was read from.
        description: free text from the file.
        extra: top-level tables owned by model modules (e.g. ``hydraulic_drive``), unparsed.
    """

    name: str
    head: HeadSpec
    limbs: tuple[LimbSpec, ...]
    source: Path | None = None
    description: str = field(default="", compare=False)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def limb(self, name: str) -> LimbSpec:
        """The limb called ``name``; raises :class:`~pccbullet.core.errors.ConfigurationError` naming
        the names."""
        for limb in self.limbs:
            if limb.name == name:
                return limb
        from pccbullet.core.errors import ConfigurationError, cap

        names = ", ".join(limb.name for limb in self.limbs)
        raise ConfigurationError(f"robot '{self.name}' has no limb {cap(name)}; limbs: {names}")
