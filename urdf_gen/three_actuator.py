"""Spatial soft robot of three extending actuators (seed 004, Akbari, Ghafarirad & Zareinejad).

Three fluidic actuators run parallel to the backbone at distance ``d`` from it; under constant curvature
(no twist) their lengths ``(l1, l2, l3)`` fix the shape ``(length, plane, curvature)``:

* eq. (6)  ``length = (l1 + l2 + l3) / 3``
* eq. (10) ``plane = atan2(sqrt(3) (l2 + l3 - 2 l1), 3 (l2 - l3))`` (the paper writes ``tan^-1`` of the
  ratio; ``atan2`` keeps the quadrant)
* eq. (16) ``curvature = 2 sqrt(l1^2 + l2^2 + l3^2 - l1 l2 - l1 l3 - l2 l3) / (d (l1 + l2 + l3))``
* eq. (29) inverse: ``l1 = theta (r - d sin(phi))``, ``l2 = theta (r + d cos(phi - 30 deg))``,
  ``l3 = theta (r - d cos(phi + 30 deg))`` with ``theta = bend``, ``r = 1 / curvature``, ``phi = plane``.

Eq. (29) places actuators 1, 2, 3 at 90, 210 and 330 degrees about the base z axis from x (see
:func:`pccbullet.urdf_gen.actuator_space.three_actuator_chambers`); the general layer gives the same maps.
Names: the paper's ``theta`` is pccbullet's ``bend`` (total arc angle), ``phi`` is ``plane``, ``r`` is the
radius of curvature.

The tip pose is eq. (17), identical to pccbullet's ``Rz(plane) [Ry(bend), p]`` convention. The paper's
4-DoF serial equivalent (Table 3, modified DH: R(phi - 90 deg), P(r), R(theta), P(r)) reproduces it; its
velocity Jacobian (eqs. 30-33) relates ``(phi_dot, theta_dot, r_dot)`` to the tip twist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.core.fields import Fields, read_toml
from pccbullet.core.types import FloatArray, Transform
from pccbullet.urdf_gen.actuator_space import ActuatorLayout, three_actuator_chambers
from pccbullet.urdf_gen.simple_urdf import Cylinder, UrdfRobot, cylinder_inertia, sphere_inertia
from pccbullet.urdf_gen.spec_loader import robots_dir

__all__ = [
    "ThreeActuatorSpec",
    "Shape",
    "Workspace",
    "load_three_actuator",
    "load_bundled_three_actuator",
    "layout",
    "shape_from_lengths",
    "lengths_from_shape",
    "tip_transform",
    "tip_jacobian",
    "serial_dh_table",
    "serial_frames",
    "serial_jacobian",
    "sample_workspace",
    "urdf_joint_positions",
    "write_three_actuator_urdf",
]


@dataclass(frozen=True, slots=True)
class ThreeActuatorSpec:
    """A three-actuator spatial soft robot, SI units.

    Attributes:
        name: robot name.
        initial_length_m: unactuated length ``l0`` (m).
        distance_m: distance ``d`` of each actuator from the backbone (m).
        length_min_m, length_max_m: actuator length limits, eq. (34) (m); defaults ``l0/2`` and ``3 l0/2``.
        body_radius_m: radius of the cylinders drawn in the URDF (m).
        mass_kg: total mass (kg).
        n_sections: rigid sections of the URDF chain.
    """

    name: str
    initial_length_m: float
    distance_m: float
    length_min_m: float
    length_max_m: float
    body_radius_m: float
    mass_kg: float
    n_sections: int


@dataclass(frozen=True, slots=True)
class Shape:
    """Constant-curvature shape: ``length`` (m), ``plane`` (rad), ``curvature`` (1/m, >= 0)."""

    length: float
    plane: float
    curvature: float

    @property
    def bend(self) -> float:
        """Total arc angle (rad), the paper's ``theta``."""
        return self.curvature * self.length

    @property
    def radius(self) -> float:
        """Radius of curvature (m), the paper's ``r``; ``inf`` when straight."""
        return math.inf if self.curvature == 0.0 else 1.0 / self.curvature


@dataclass(frozen=True, slots=True)
class Workspace:
    """Seeded workspace samples: ``lengths`` ``(n, 3)`` (m), ``bend``/``plane``/``length`` ``(n,)`` (rad, rad,
    m), ``tips`` ``(n, 3)`` tip positions in the base frame (m)."""

    lengths: FloatArray
    bend: FloatArray
    plane: FloatArray
    length: FloatArray
    tips: FloatArray


# ------------------------------------------------------------------------------------------- loading


def load_three_actuator(path: str | Path) -> ThreeActuatorSpec:
    """Load a ``kind = "three_actuator"`` TOML (lengths in mm) into SI units.

    Raises:
        SpecError: unknown or missing field, wrong kind, non-numeric or out-of-range value, or length
            limits that do not satisfy ``0 < length_min <= initial_length <= length_max``.
    """
    f = Fields(read_toml(path), Path(path))
    f.constant("kind", "three_actuator")
    name = f.identifier("name")
    l0_mm = f.number("initial_length_mm", 1e-3, 1e5)
    lmin_mm = f.number("length_min_mm", 1e-3, l0_mm, default=l0_mm / 2)
    lmax_mm = f.number("length_max_mm", l0_mm, 1e5, default=1.5 * l0_mm)
    spec = ThreeActuatorSpec(
        name=name,
        initial_length_m=l0_mm * 1e-3,
        distance_m=f.number("actuator_distance_mm", 1e-3, 1e5) * 1e-3,
        length_min_m=lmin_mm * 1e-3,
        length_max_m=lmax_mm * 1e-3,
        body_radius_m=f.number("body_radius_mm", 1e-3, 1e5) * 1e-3,
        mass_kg=f.number("mass_g", 1e-3, 1e7) * 1e-3,
        n_sections=f.integer("n_sections", 1, 100),
    )
    f.raw("pressure_law", None)  # optional; read by pccbullet.urdf_gen.pressure_law.load_pressure_law
    f.finish()
    return spec


def load_bundled_three_actuator(name: str = "seed004_spatial") -> ThreeActuatorSpec:
    """Load a bundled three-actuator robot from ``assets/robots`` by name."""
    path = robots_dir() / f"{name}.toml"
    if not path.is_file():
        raise SpecError(
            "<bundled robots>", "name", name, "a bundled three-actuator robot, e.g. 'seed004_spatial'"
        )
    return load_three_actuator(path)


def layout(spec: ThreeActuatorSpec) -> ActuatorLayout:
    """The robot's actuators in the general layer: 90, 210, 330 degrees at ``spec.distance_m``."""
    return three_actuator_chambers(spec.distance_m)


# ------------------------------------------------------------------------------------------- kinematics


def shape_from_lengths(lengths: FloatArray, distance_m: float) -> Shape:
    """Forward map, eqs. (6), (10), (16): actuator lengths ``(3,)`` (m) to the shape.

    Equal lengths give ``curvature = 0`` and ``plane = 0`` (no NaN).
    """
    l1, l2, l3 = (float(v) for v in np.asarray(lengths, dtype=float).reshape(3))
    total = l1 + l2 + l3
    if not (distance_m > 0.0 and total > 0.0):
        raise ConfigurationError(
            f"need distance_m > 0 and positive total length; got {distance_m!r}, {lengths!r}"
        )
    # l1^2 + l2^2 + l3^2 - l1 l2 - l1 l3 - l2 l3, written as half the sum of squared differences
    q = 0.5 * ((l1 - l2) ** 2 + (l1 - l3) ** 2 + (l2 - l3) ** 2)
    curvature = 2.0 * math.sqrt(q) / (distance_m * total)
    plane = math.atan2(math.sqrt(3.0) * (l2 + l3 - 2.0 * l1), 3.0 * (l2 - l3)) if q > 0.0 else 0.0
    return Shape(length=total / 3.0, plane=plane, curvature=curvature)


def lengths_from_shape(shape: Shape, distance_m: float) -> FloatArray:
    """Inverse map, eq. (29), multiplied out (``theta r = length``) so it holds at zero curvature.

    Returns:
        ``(3,) float`` actuator lengths ``(l1, l2, l3)`` (m).
    """
    theta, r_theta, phi, d = shape.bend, shape.length, shape.plane, distance_m
    return np.array(
        [
            r_theta - theta * d * math.sin(phi),
            r_theta + theta * d * math.cos(phi - math.pi / 6.0),
            r_theta - theta * d * math.cos(phi + math.pi / 6.0),
        ]
    )


def _arc_factors(bend: float) -> tuple[float, float]:
    """``((1 - cos b) / b, sin b / b)``, with Taylor series near ``b = 0``."""
    if abs(bend) < 1e-4:
        b2 = bend * bend
        return bend / 2.0 - bend * b2 / 24.0, 1.0 - b2 / 6.0
    return (1.0 - math.cos(bend)) / bend, math.sin(bend) / bend


def tip_transform(bend: float, plane: float, length: float) -> Transform:
    """Eq. (17): ``T_base_tip = Rz(plane) [Ry(bend), (r (1 - cos bend), 0, r sin bend)]``, ``(4, 4) float``.

    Takes ``bend`` (total arc angle, rad), ``plane`` (rad), ``length`` (arc length, m); exact when straight.
    """
    f1, f2 = _arc_factors(bend)
    cp, sp, cb, sb = math.cos(plane), math.sin(plane), math.cos(bend), math.sin(bend)
    T = np.eye(4)
    T[:3, :3] = [[cp * cb, -sp, cp * sb], [sp * cb, cp, sp * sb], [-sb, 0.0, cb]]
    T[:3, 3] = [length * f1 * cp, length * f1 * sp, length * f2]
    return T


def tip_jacobian(plane: float, bend: float, radius: float) -> FloatArray:
    """Velocity Jacobian, eqs. (30)/(32): ``(6, 3) float``, ``(v; omega) = J (phi_dot, theta_dot, r_dot)``.

    Args:
        plane: the paper's ``phi`` (rad).
        bend: the paper's ``theta`` (rad).
        radius: the paper's ``r`` (m), finite (the parametrisation is singular when straight).

    Rows 0-2 are the linear tip velocity in the base frame (m/s), rows 3-5 the angular velocity (rad/s).
    """
    sp, cp, sb, cb = math.sin(plane), math.cos(plane), math.sin(bend), math.cos(bend)
    r = radius
    return np.array(
        [
            [-r * sp * (1 - cb), r * cp * sb, cp * (1 - cb)],
            [r * cp * (1 - cb), r * sp * sb, sp * (1 - cb)],
            [0.0, r * cb, sb],
            [0.0, -sp, 0.0],
            [0.0, cp, 0.0],
            [1.0, 0.0, 0.0],
        ]
    )


def serial_dh_table(plane: float, bend: float, radius: float) -> FloatArray:
    """Table 3 (modified DH, Craig): ``(5, 4) float`` rows ``(alpha_{i-1}, a_{i-1}, d_i, theta_i)``.

    Joints 1 (revolute, ``phi - 90 deg``), 2 (prismatic, ``r``), 3 (revolute, ``theta``), 4 (prismatic,
    ``r``, coupled to joint 2); row 5 is the fixed tool frame.
    """
    h = math.pi / 2.0
    return np.array(
        [
            [0.0, 0.0, 0.0, plane - h],
            [-h, 0.0, radius, -h],
            [h, 0.0, 0.0, bend],
            [h, 0.0, radius, -h],
            [-h, 0.0, 0.0, h],
        ]
    )


def _mdh(alpha: float, a: float, d: float, theta: float) -> Transform:
    """Modified DH link transform ``Rx(alpha) Tx(a) Rz(theta) Tz(d)``, ``(4, 4) float``."""
    ca, sa, ct, st = math.cos(alpha), math.sin(alpha), math.cos(theta), math.sin(theta)
    return np.array(
        [
            [ct, -st, 0.0, a],
            [st * ca, ct * ca, -sa, -sa * d],
            [st * sa, ct * sa, ca, ca * d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def serial_frames(plane: float, bend: float, radius: float) -> FloatArray:
    """Frames of the 4-DoF serial equivalent, ``(6, 4, 4) float``: base, frames 1..5 (5 = tip, eq. (21))."""
    frames = np.empty((6, 4, 4))
    frames[0] = np.eye(4)
    for i, row in enumerate(serial_dh_table(plane, bend, radius)):
        frames[i + 1] = frames[i] @ _mdh(*row)
    return frames


def serial_jacobian(plane: float, bend: float, radius: float) -> FloatArray:
    """Eq. (31) on the serial equivalent: ``[z1 x (o5 - o1), z3 x (o5 - o3), z2 + z4; z1, z3, 0]``.

    The paper's Persian eq. (31) prints ``o3 - o1`` in the first column; the English summary's ``o_s - o_1``
    (tip minus joint 1) is the one that reproduces eq. (30), so that is used. Returns ``(6, 3) float``.
    """
    f = serial_frames(plane, bend, radius)
    z = f[:, :3, 2]
    o = f[:, :3, 3]
    J = np.zeros((6, 3))
    J[:3, 0] = np.cross(z[1], o[5] - o[1])
    J[:3, 1] = np.cross(z[3], o[5] - o[3])
    J[:3, 2] = z[2] + z[4]
    J[3:, 0] = z[1]
    J[3:, 1] = z[3]
    return J


def sample_workspace(spec: ThreeActuatorSpec, n_samples: int, seed: int = 0) -> Workspace:
    """Sample actuator lengths uniformly within eq. (34)'s limits and map them to shapes and tips.

    Every length triple inside the limits is a valid constant-curvature shape, so no sample is rejected
    (the paper's Fig. 9a algorithm reduces to this). ``seed`` feeds ``numpy.random.default_rng``.
    """
    if n_samples < 1:
        raise ConfigurationError(f"n_samples must be >= 1; got {n_samples!r}")
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(spec.length_min_m, spec.length_max_m, size=(n_samples, 3))
    bend, plane, length = np.empty(n_samples), np.empty(n_samples), np.empty(n_samples)
    tips = np.empty((n_samples, 3))
    for i, triple in enumerate(lengths):
        shape = shape_from_lengths(triple, spec.distance_m)
        bend[i], plane[i], length[i] = shape.bend, shape.plane, shape.length
        tips[i] = tip_transform(shape.bend, shape.plane, shape.length)[:3, 3]
    return Workspace(lengths, bend, plane, length, tips)


# ------------------------------------------------------------------------------------------- URDF


def urdf_joint_positions(
    spec: ThreeActuatorSpec, bend: float, plane: float, length: float
) -> dict[str, float]:
    """Joint values of the URDF chain of :func:`write_three_actuator_urdf` for a PCC shape.

    The arc is split into ``N = spec.n_sections`` equal sub-arcs of angle ``b = bend / N``; each is
    ``Ry(b/2) Tz(chord) Ry(b/2)`` with ``chord = 2 (length / bend) sin(b / 2)``, so the chain reproduces
    :func:`tip_transform` exactly at the tip. Returns ``{joint name: value}`` (rad or m).
    """
    n = spec.n_sections
    b = bend / n
    _, f2 = _arc_factors(b / 2.0)
    chord = (length / n) * f2  # = 2 (length / bend) sin(b / 2)
    q = {"plane": plane}
    for k in range(1, n + 1):
        q[f"bend_{k}"] = b / 2.0 if k == 1 else b
        q[f"chord_{k}"] = chord
    q["tip_bend"] = b / 2.0
    return q


def write_three_actuator_urdf(
    spec: ThreeActuatorSpec, out_dir: str | Path, filename: str | None = None
) -> Path:
    """Write the robot as ``base_link`` - R(z) ``plane`` - N x [R(y) ``bend_k``, P(z) ``chord_k``] - R(y)
    ``tip_bend`` - ``tip``; section links carry cylinders, intermediate links are light. ``out_dir`` is
    required (created if missing); returns the written path.
    """
    robot = UrdfRobot(spec.name)
    robot.add_material("silicone", (0.85, 0.55, 0.35, 1.0))
    robot.add_material("base", (0.2, 0.2, 0.2, 1.0))
    n, rad = spec.n_sections, spec.body_radius_m
    light = 1e-3 * spec.mass_kg  # intermediate links: small but valid mass (kg)
    light_inertia = sphere_inertia(light, rad)
    base_h = 0.1 * rad + 0.005
    robot.add_link(
        "base_link",
        spec.mass_kg,
        cylinder_inertia(spec.mass_kg, 1.5 * rad, base_h),
        Cylinder(1.5 * rad, base_h),
        xyz=(0.0, 0.0, -base_h / 2.0),
        material="base",
    )
    robot.add_link("plane_link", light, light_inertia)
    robot.add_joint("plane", "revolute", "base_link", "plane_link", limits=(-1.01 * math.pi, 1.01 * math.pi))
    bend_max = 2.0 * (spec.length_max_m - spec.length_min_m) / (3.0 * spec.distance_m)  # eq. (16) extreme
    b_lim = min(math.pi, bend_max / n + 0.1)
    seg_len, seg_mass = spec.initial_length_m / n, spec.mass_kg / n
    parent = "plane_link"
    for k in range(1, n + 1):
        robot.add_link(f"bend_link_{k}", light, light_inertia)
        robot.add_joint(
            f"bend_{k}", "revolute", parent, f"bend_link_{k}", axis=(0, 1, 0), limits=(-b_lim, b_lim)
        )
        robot.add_link(
            f"section_{k}",
            seg_mass,
            cylinder_inertia(seg_mass, rad, seg_len),
            Cylinder(rad, seg_len),
            xyz=(0.0, 0.0, -seg_len / 2.0),
            material="silicone",
        )
        robot.add_joint(
            f"chord_{k}",
            "prismatic",
            f"bend_link_{k}",
            f"section_{k}",
            axis=(0, 0, 1),
            limits=(0.0, 1.05 * spec.length_max_m / n),
        )
        parent = f"section_{k}"
    robot.add_link("tip", light, light_inertia)
    robot.add_joint("tip_bend", "revolute", parent, "tip", axis=(0, 1, 0), limits=(-b_lim, b_lim))
    return robot.write(out_dir, filename or f"{spec.name}.urdf")
