"""URDF of a rolling-joint snake robot (seed 003) and the map from static-model angles to joint values.

Every rolling joint ``k`` (between link ``k`` and link ``k + 1``) becomes two revolute joints about the
same axis ``a_k = Rz(psi_k) y`` (``psi_k = 0`` for odd ``k``, ``-alpha`` for even ``k``, the paper's
orientation, see :mod:`pccbullet.urdf_gen.rolling_snake.spec`): ``roll_k_a`` at
the axis of link ``k``'s contact cylinder and ``roll_k_b`` at the axis of link ``k + 1``'s cylinder,
``2 R`` further along. Both carry half the bending angle (``roll_k_b`` mimics ``roll_k_a``), which
reproduces the rolling transform ``T(h0 z) Ra(theta/2) T(2R z) Ra(theta/2) T(h0 z)`` exactly
(``h0 = L/2 - R``). A massless-looking but positive-mass ``roll_k_mid`` link sits between them.

Frames: ``snake_base`` is the world frame of the static model (the paper's WCS, z along the straight
robot). ``link_1`` is fixed to it with its origin at the link centre, at ``d_1``; ``link_i`` for
``i >= 2`` has its origin on the axis of its lower contact cylinder, its centre (and inertial frame) at
``(0, 0, h0)``. ``tip`` is fixed at the tip point ``P_n^tip`` (default the centre of the distal link's
free end). Geometry uses primitives
only (cylinders, spheres), so MuJoCo's URDF compiler needs no mesh paths.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.rolling_snake.spec import RollingSnakeSpec

__all__ = [
    "rolling_snake_joint_names",
    "rolling_snake_joint_values",
    "rolling_snake_urdf_tree",
    "write_rolling_snake_urdf",
]

_MIN_MASS = 1e-6  # kg, floor so that every link has a positive mass
_VIRTUAL_FRACTION = 1e-3  # mass of a roll_k_mid link relative to a real link
_ROLL_LIMIT = (-0.5 * math.pi, 0.5 * math.pi, "100", "10")  # rad, rad, N m, rad/s of every roll joint


def _sphere_link(robot: ET.Element, name: str, mass: float, radius: float) -> None:
    inertia = 0.4 * mass * radius * radius
    ux.inertial(ux.link(robot, name), mass, (inertia, inertia, inertia))


def _body_link(robot: ET.Element, name: str, spec: RollingSnakeSpec, centre_z: float) -> None:
    mass = max(spec.link_mass, _MIN_MASS)
    rho = spec.body_radius_or_default
    length = spec.link_length
    ixx = mass * (3.0 * rho * rho + length * length) / 12.0
    link = ux.link(robot, name)
    centre = (0.0, 0.0, centre_z)
    ux.inertial(link, mass, (ixx, ixx, 0.5 * mass * rho * rho), centre)
    ux.shape(link, "visual", ux.cylinder(rho, length), centre, material_name="snake_link")
    # collision: a shortened core, so that neighbouring links do not touch when the joint bends
    ux.shape(link, "collision", ux.cylinder(rho, 0.5 * length), centre)


def rolling_snake_joint_names(spec: RollingSnakeSpec) -> list[str]:
    """Names of the revolute joints in chain order: ``roll_1_a, roll_1_b, ..., roll_{n-1}_b``."""
    return [f"roll_{k}_{s}" for k in range(1, spec.n_links) for s in ("a", "b")]


def rolling_snake_urdf_tree(spec: RollingSnakeSpec) -> ET.ElementTree:
    """The URDF of ``spec`` as an element tree (SI units, primitives only)."""
    robot = ux.robot(spec.name)
    ux.material(robot, "snake_link", "0.75 0.75 0.8 1")
    half = 0.5 * spec.link_length
    big_r = spec.contact_radius
    h0 = half - big_r
    small = max(_VIRTUAL_FRACTION * spec.link_mass, _MIN_MASS)

    _sphere_link(robot, "snake_base", small, 0.25 * big_r)
    _body_link(robot, "link_1", spec, 0.0)
    ux.joint(robot, "base_to_link_1", "fixed", "snake_base", "link_1", xyz=spec.d1)
    for k in range(1, spec.n_links):
        psi = spec.joint_plane(k)
        axis = (-math.sin(psi), math.cos(psi), 0.0)
        parent = f"link_{k}"
        start = h0 if k == 1 else 2.0 * h0  # lower cylinder axis in the parent link's frame
        mid = f"roll_{k}_mid"
        _sphere_link(robot, mid, small, 0.25 * big_r)
        ux.joint(
            robot, f"roll_{k}_a", "revolute", parent, mid, xyz=(0.0, 0.0, start), axis=axis, limit=_ROLL_LIMIT
        )
        _body_link(robot, f"link_{k + 1}", spec, h0)
        ux.joint(
            robot,
            f"roll_{k}_b",
            "revolute",
            mid,
            f"link_{k + 1}",
            xyz=(0.0, 0.0, 2.0 * big_r),
            axis=axis,
            limit=_ROLL_LIMIT,
            mimic=f"roll_{k}_a",
        )
    _sphere_link(robot, "tip", small, 0.25 * big_r)
    off = spec.tip_offset()
    ux.joint(robot, "tip_joint", "fixed", f"link_{spec.n_links}", "tip", xyz=(off[0], off[1], h0 + off[2]))
    return ET.ElementTree(robot)


def write_rolling_snake_urdf(spec: RollingSnakeSpec, out_dir: str | Path) -> Path:
    """Write ``<out_dir>/<spec.name>.urdf`` and return its path (``out_dir`` is created if missing)."""
    return ux.write_tree(rolling_snake_urdf_tree(spec), Path(out_dir) / f"{spec.name}.urdf")


def rolling_snake_joint_values(
    spec: RollingSnakeSpec, angles: Sequence[float] | FloatArray
) -> dict[str, float]:
    """URDF joint values (rad) that pose the robot in the static model's shape.

    Args:
        spec: the robot.
        angles: bending angles of rolling joints 1..n-1 (rad), ``(n - 1,)``, e.g.
            ``RollingSnakeResult.angles``.

    Returns:
        ``{"roll_k_a": theta_k / 2, "roll_k_b": theta_k / 2, ...}`` for every joint.
    """
    values = np.asarray(angles, dtype=float).ravel()
    if values.shape != (spec.n_links - 1,) or not np.all(np.isfinite(values)):
        raise ConfigurationError(
            f"angles has shape {values.shape}; allowed: ({spec.n_links - 1},) finite values in rad"
        )
    out: dict[str, float] = {}
    for k, theta in enumerate(values, start=1):
        out[f"roll_{k}_a"] = 0.5 * float(theta)
        out[f"roll_{k}_b"] = 0.5 * float(theta)
    return out
