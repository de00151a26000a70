"""PneuNets bending actuators with n air chambers as planar chains of n links and n - 1 revolute joints.

Model of seed 002 (Thien & Phuong, "Forward kinematics based prediction for bending motion of soft
pneumatic actuators with various air chambers"):

* every joint sits between two neighbouring chambers and bends by the same angle (the paper's assumption
  for more than two chambers, Section 5);
* that angle follows the fitted pressure law, eq. (2)/(9)::

      phi(P) = c2 * P**2 + c1 * P,    c2 = -0.0036 deg/kPa^2, c1 = 0.6916 deg/kPa   (fit over 0..80 kPa)

  stored in SI inside (rad/Pa^2, rad/Pa), so 0 Pa gives a straight actuator;
* forward kinematics by standard DH (eq. 5) with Table 1 (``theta_i``, ``alpha = 0``, ``r = L_{i+1}``,
  ``d = 0``) after a fixed offset ``L1`` along x from the base to the first joint; for equal angles the tip is
  eqs. (7)-(8): ``X = L1 + sum_k L_{k+1} cos(k theta)``, ``Y = sum_k L_{k+1} sin(k theta)``.

Frames: the base frame has x along the straight actuator and z along the joint axes, so the actuator
bends in the base xy plane towards +y for positive angles (the paper's Fig. 11/12 convention, not the
z-along-limb convention of PCC segments).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.core.fields import Fields, read_toml
from pccbullet.core.types import FloatArray, Transform
from pccbullet.urdf_gen.simple_urdf import Box, Sphere, UrdfRobot, box_inertia, sphere_inertia
from pccbullet.urdf_gen.spec_loader import robots_dir

__all__ = [
    "PNEUNET_NAMES",
    "PneuNetSpec",
    "PneuNetPose",
    "load_pneunet",
    "load_bundled_pneunet",
    "bending_angle_rad",
    "dh_transform",
    "dh_table",
    "forward_kinematics",
    "tip_position_closed_form",
    "pressure_to_pose",
    "write_pneunet_urdf",
]

PNEUNET_NAMES = ("pneunet_2", "pneunet_4", "pneunet_6")
_DEG = math.pi / 180.0  # rad per degree
_KPA = 1e3  # Pa per kPa


@dataclass(frozen=True, slots=True)
class PneuNetSpec:
    """A PneuNets bending actuator, SI units.

    Attributes:
        name: robot name.
        link_lengths_m: ``(n,)`` link lengths L1..Ln (m): L1 from the base to the first joint, L_{i+1} from
            joint i to joint i+1 (or to the tip). ``n`` = number of air chambers.
        width_m: actuator width along the joint axes (z) (m).
        height_m: actuator height in the bending plane (y) (m).
        mass_kg: total mass (kg), shared among links in proportion to their length.
        pressure_max_pa: largest pressure the model accepts (Pa).
        angle_coeff_linear_rad_per_pa: c1 of eq. (9) (rad/Pa).
        angle_coeff_quadratic_rad_per_pa2: c2 of eq. (9) (rad/Pa^2).
        youngs_modulus_pa: silicone Young's modulus (Pa); informative. Default 1.16 MPa, the value the
            text states for Shore A 30 (its eq. (1) as printed gives 0.942 MPa).
        poisson_ratio: silicone Poisson ratio; informative.
    """

    name: str
    link_lengths_m: tuple[float, ...]
    width_m: float
    height_m: float
    mass_kg: float
    pressure_max_pa: float
    angle_coeff_linear_rad_per_pa: float
    angle_coeff_quadratic_rad_per_pa2: float
    youngs_modulus_pa: float = 1.16e6
    poisson_ratio: float = 0.49

    @property
    def n_chambers(self) -> int:
        """Number of air chambers = number of links."""
        return len(self.link_lengths_m)

    @property
    def n_joints(self) -> int:
        """Number of revolute joints, ``n_chambers - 1``."""
        return len(self.link_lengths_m) - 1


@dataclass(frozen=True, slots=True)
class PneuNetPose:
    """Result of :func:`pressure_to_pose`.

    Attributes:
        pressure_pa: input pressure (Pa).
        joint_angles_rad: ``(n - 1,) float`` joint angles (rad), all equal.
        frames: ``(n + 1, 4, 4) float`` poses ``T_base_k``: the base, the n - 1 joint frames, the tip.
        tip_position_m: ``(3,) float`` tip position in the base frame (m); z is 0.
    """

    pressure_pa: float
    joint_angles_rad: FloatArray
    frames: FloatArray
    tip_position_m: FloatArray


# ------------------------------------------------------------------------------------------- loading


def load_pneunet(path: str | Path) -> PneuNetSpec:
    """Load a PneuNet actuator TOML (lengths in mm, pressures in kPa, angles in degrees) into SI units.

    Links: L1 = base_length + chamber_length, L2..L(n-1) = chamber_length, Ln = chamber_length +
    tip_length (joints sit midway between neighbouring chambers, as in the paper's Fig. 7).

    Raises:
        SpecError: unreadable file, unknown or missing field, wrong ``kind``, non-numeric or out-of-range
            value; the message names the file, the field, the value and what is allowed.
    """
    f = Fields(read_toml(path), Path(path))
    f.constant("kind", "pneunet")
    name = f.identifier("name")
    n = f.integer("n_chambers", 2, 64)
    chamber = f.number("chamber_length_mm", 1e-3, 1e5) * 1e-3
    base = f.number("base_length_mm", 0.0, 1e5) * 1e-3
    tip = f.number("tip_length_mm", 0.0, 1e5) * 1e-3
    lengths = [chamber] * n
    lengths[0] += base
    lengths[-1] += tip
    spec = PneuNetSpec(
        name=name,
        link_lengths_m=tuple(lengths),
        width_m=f.number("width_mm", 1e-3, 1e5) * 1e-3,
        height_m=f.number("height_mm", 1e-3, 1e5) * 1e-3,
        mass_kg=f.number("mass_g", 1e-3, 1e7) * 1e-3,
        pressure_max_pa=f.number("pressure_max_kpa", 1e-3, 1000.0) * _KPA,
        angle_coeff_linear_rad_per_pa=f.number("angle_coeff_linear_deg_per_kpa", -1e3, 1e3) * _DEG / _KPA,
        angle_coeff_quadratic_rad_per_pa2=(
            f.number("angle_coeff_quadratic_deg_per_kpa2", -1e3, 1e3) * _DEG / _KPA**2
        ),
        youngs_modulus_pa=f.number("youngs_modulus_mpa", 1e-6, 1e6, default=1.16) * 1e6,
        poisson_ratio=f.number("poisson_ratio", 0.0, 0.5, default=0.49),
    )
    f.finish()
    return spec


def load_bundled_pneunet(name: str) -> PneuNetSpec:
    """Load one of :data:`PNEUNET_NAMES` from ``assets/robots``.

    Raises:
        SpecError: ``name`` is not a bundled PneuNet actuator.
    """
    if name not in PNEUNET_NAMES:
        raise SpecError("<bundled robots>", "name", name, "one of " + ", ".join(PNEUNET_NAMES))
    return load_pneunet(robots_dir() / f"{name}.toml")


# ------------------------------------------------------------------------------------------- kinematics


def bending_angle_rad(spec: PneuNetSpec, pressure_pa: float | FloatArray) -> float | FloatArray:
    """Joint bending angle (rad) from pressure (Pa), eq. (9); no range check, vectorised over pressure."""
    p = np.asarray(pressure_pa, dtype=float)
    angle = spec.angle_coeff_quadratic_rad_per_pa2 * p * p + spec.angle_coeff_linear_rad_per_pa * p
    return float(angle) if angle.ndim == 0 else angle


def dh_transform(theta: float, alpha: float, r: float, d: float) -> Transform:
    """Standard DH homogeneous transform of eq. (5): ``Rz(theta) Tz(d) Tx(r) Rx(alpha)``, ``(4, 4) float``."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array(
        [
            [ct, -st * ca, st * sa, r * ct],
            [st, ct * ca, -ct * sa, r * st],
            [0.0, sa, ca, d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def dh_table(spec: PneuNetSpec, joint_angles_rad: FloatArray) -> FloatArray:
    """Table 1 of the paper: ``(n - 1, 4) float`` rows ``(theta_i, alpha_i = 0, r_i = L_{i+1}, d_i = 0)``."""
    q = _check_joints(spec, joint_angles_rad)
    rows = np.zeros((spec.n_joints, 4))
    rows[:, 0] = q
    rows[:, 2] = spec.link_lengths_m[1:]
    return rows


def forward_kinematics(spec: PneuNetSpec, joint_angles_rad: FloatArray) -> FloatArray:
    """Poses along the chain by DH products.

    Args:
        spec: the actuator.
        joint_angles_rad: ``(n - 1,) float`` joint angles (rad), any values (not necessarily equal).

    Returns:
        ``(n + 1, 4, 4) float`` poses ``T_base_k``: index 0 the base (identity), index 1 the first joint
        (``Tx(L1)``), index i + 1 = index i times the DH transform of joint i, the last one is the tip.
    """
    table = dh_table(spec, joint_angles_rad)
    frames = np.empty((spec.n_chambers + 1, 4, 4))
    frames[0] = np.eye(4)
    frames[1] = np.eye(4)
    frames[1][0, 3] = spec.link_lengths_m[0]
    for i, (theta, alpha, r, d) in enumerate(table):
        frames[i + 2] = frames[i + 1] @ dh_transform(theta, alpha, r, d)
    return frames


def tip_position_closed_form(spec: PneuNetSpec, theta_rad: float) -> FloatArray:
    """Tip position (m) for equal joint angles ``theta_rad``, eqs. (7)-(8) (eqs. (3)-(4) when n = 2).

    Returns:
        ``(3,) float`` ``(X_n, Y_n, 0)`` in the base frame.
    """
    lengths = np.asarray(spec.link_lengths_m)
    k = np.arange(1, spec.n_chambers)
    x = lengths[0] + np.sum(lengths[1:] * np.cos(k * theta_rad))
    y = np.sum(lengths[1:] * np.sin(k * theta_rad))
    return np.array([x, y, 0.0])


def pressure_to_pose(spec: PneuNetSpec, pressure_pa: float) -> PneuNetPose:
    """Joint angles, frames and tip position at a chamber pressure.

    Args:
        spec: the actuator.
        pressure_pa: gauge pressure (Pa) in ``[0, spec.pressure_max_pa]``.

    Raises:
        ConfigurationError: pressure outside that range or not finite.
    """
    if not (math.isfinite(pressure_pa) and 0.0 <= pressure_pa <= spec.pressure_max_pa):
        raise ConfigurationError(
            f"{spec.name}: pressure {pressure_pa!r} Pa outside the allowed range "
            f"[0, {spec.pressure_max_pa:g}] Pa"
        )
    q = np.full(spec.n_joints, bending_angle_rad(spec, pressure_pa))
    frames = forward_kinematics(spec, q)
    return PneuNetPose(float(pressure_pa), q, frames, frames[-1][:3, 3].copy())


def _check_joints(spec: PneuNetSpec, joint_angles_rad: FloatArray) -> FloatArray:
    q = np.asarray(joint_angles_rad, dtype=float).reshape(-1)
    if q.shape != (spec.n_joints,):
        raise ConfigurationError(f"{spec.name}: expected {spec.n_joints} joint angles, got shape {q.shape}")
    return q


# ------------------------------------------------------------------------------------------- URDF


def write_pneunet_urdf(spec: PneuNetSpec, out_dir: str | Path, filename: str | None = None) -> Path:
    """Write the actuator as a URDF of boxes: ``base_link`` -> ``link_1`` .. ``link_n`` -> ``tip``.

    ``link_k`` spans ``[0, L_k]`` along its x axis; revolute ``joint_k`` (about z, at ``x = L_k`` of
    ``link_k``) carries ``link_{k+1}``; the fixed ``tip_joint`` puts the small ``tip`` sphere at the end.
    Joint limits cover the angles of eq. (9) over ``[0, pressure_max]`` with a 0.2 rad margin on each side.

    Args:
        spec: the actuator.
        out_dir: folder to write into (created if missing); required, never implicitly the cwd.
        filename: defaults to ``<spec.name>.urdf``.

    Returns:
        Path of the written file.
    """
    robot = UrdfRobot(spec.name)
    robot.add_material("silicone", (0.9, 0.9, 0.85, 1.0))
    robot.add_material("connector", (0.2, 0.2, 0.2, 1.0))
    connector = (0.01, 1.5 * spec.height_m, 1.5 * spec.width_m)
    connector_mass = 0.2 * spec.mass_kg
    robot.add_link(
        "base_link",
        connector_mass,
        box_inertia(connector_mass, connector),
        Box(connector),
        xyz=(-connector[0] / 2.0, 0.0, 0.0),
        material="connector",
    )
    total = sum(spec.link_lengths_m)
    for k, length in enumerate(spec.link_lengths_m, start=1):
        mass = spec.mass_kg * length / total
        size = (length, spec.height_m, spec.width_m)
        robot.add_link(
            f"link_{k}",
            mass,
            box_inertia(mass, size),
            Box(size),
            xyz=(length / 2.0, 0.0, 0.0),
            material="silicone",
        )
    robot.add_joint("base_joint", "fixed", "base_link", "link_1")
    pressures = np.linspace(0.0, spec.pressure_max_pa, 201)
    angles = bending_angle_rad(spec, pressures)
    limits = (float(np.min(angles)) - 0.2, float(np.max(angles)) + 0.2)
    for k in range(1, spec.n_chambers):
        robot.add_joint(
            f"joint_{k}",
            "revolute",
            f"link_{k}",
            f"link_{k + 1}",
            xyz=(spec.link_lengths_m[k - 1], 0.0, 0.0),
            axis=(0.0, 0.0, 1.0),
            limits=limits,
            effort=1.0,
            velocity=10.0,
        )
    tip_radius = 0.25 * min(spec.width_m, spec.height_m)
    tip_mass = 1e-3 * spec.mass_kg
    robot.add_link("tip", tip_mass, sphere_inertia(tip_mass, tip_radius), Sphere(tip_radius), collision=False)
    robot.add_joint(
        "tip_joint", "fixed", f"link_{spec.n_chambers}", "tip", xyz=(spec.link_lengths_m[-1], 0.0, 0.0)
    )
    return robot.write(out_dir, filename or f"{spec.name}.urdf")
