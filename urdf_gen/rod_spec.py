"""A rod without a robot file: one call makes the spec of a uniform or tapered rod on a small fixed head.

:func:`rod` returns a :class:`~pccbullet.urdf_gen.specs.RobotSpec` with one limb, ``"rod"``, of one
segment, that :meth:`pccbullet.sim.world.World.load_robot` loads like any robot; its ends are then held
and loaded with the robot's calls (``pin_base``, ``hold_end``, ``add_load``: ``docs/guide/rods.md``)::

    import pccbullet as pcb

    with pcb.World(medium="vacuum") as world:
        robot = world.load_robot(pcb.rod(0.4, 0.003, youngs_modulus=2e6, mount="down"))
        robot.pin_base("rod")
        robot.add_load("rod", "tip", force=(0.01, 0.0, 0.0))
        world.step(1000)
"""

from __future__ import annotations

import math

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.fields import MAX_NAME
from pccbullet.urdf_gen.specs import HeadSpec, LimbSpec, Material, RobotSpec, SegmentSpec

MOUNTS = {  # the rod's direction from the head: mount position (in head lengths) and roll-pitch-yaw (rad)
    "horizontal": ((0.5, 0.0, 0.0), (0.0, 0.5 * math.pi, 0.0)),  # along world +x
    "down": ((0.0, 0.0, -0.5), (0.0, math.pi, 0.0)),  # along world -z
    "up": ((0.0, 0.0, 0.5), (0.0, 0.0, 0.0)),  # along world +z
}
MAX_SECTIONS = 200


def _positive(name: str, value: object, hi: float, unit: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0.0 < value <= hi):
        raise ConfigurationError(f"{name} = {value!r} is invalid; allowed: a number in (0, {hi:g}] {unit}")
    return float(value)


def rod(
    length: float,
    radius: float,
    *,
    tip_radius: float | None = None,
    density: float = 1100.0,
    youngs_modulus: float = 1e6,
    poisson_ratio: float = 0.45,
    damping_ratio: float = 0.1,
    sections: int = 20,
    mount: str = "horizontal",
    name: str = "rod",
) -> RobotSpec:
    """The spec of a rod clamped to a fixed head (a robot with one limb, ``"rod"``, of one segment).

    Args:
        length: rest length (m).
        radius: radius at the base (m); ``tip_radius`` at the tip (default: the same, a uniform rod).
        density: kg/m^3. youngs_modulus: E (Pa). poisson_ratio: nu (-, [0, 0.5]). damping_ratio: the
            first mode's (-; 0: none).
        sections: N, rigid sections along it.
        mount: the rod's direction from the head: ``"horizontal"`` (world +x), ``"down"`` or ``"up"``.
        name: the robot's name.

    Raises:
        ConfigurationError: a value out of range, naming it.
    """
    length = _positive("length", length, 1e3, "m")
    r0 = _positive("radius", radius, 10.0, "m")
    r1 = r0 if tip_radius is None else _positive("tip_radius", tip_radius, 10.0, "m")
    if isinstance(sections, bool) or not isinstance(sections, int) or not 1 <= sections <= MAX_SECTIONS:
        raise ConfigurationError(
            f"sections = {sections!r} is invalid; allowed: an integer in [1, {MAX_SECTIONS}]"
        )
    ok = isinstance(name, str) and name[:1].isalpha() and name.replace("_", "").isalnum() and name.isascii()
    if not ok or len(name) > MAX_NAME:
        raise ConfigurationError(
            f"name = {name!r} is invalid; allowed: letters, digits and '_', starting with a letter, "
            f"<= {MAX_NAME} characters"
        )
    if mount not in MOUNTS:
        raise ConfigurationError(f"mount = {mount!r} is invalid; allowed: " + ", ".join(map(repr, MOUNTS)))
    if not (isinstance(poisson_ratio, int | float) and 0.0 <= poisson_ratio <= 0.5):
        raise ConfigurationError(
            f"poisson_ratio = {poisson_ratio!r} is invalid; allowed: a number in [0, 0.5]"
        )
    if not (isinstance(damping_ratio, int | float) and 0.0 <= damping_ratio <= 10.0):
        raise ConfigurationError(
            f"damping_ratio = {damping_ratio!r} is invalid; allowed: a number in [0, 10]"
        )
    material = Material(
        name="rod",
        density=_positive("density", density, 1e5, "kg/m^3"),
        youngs_modulus=_positive("youngs_modulus", youngs_modulus, 1e12, "Pa"),
        poisson_ratio=float(poisson_ratio),
        damping_ratio=float(damping_ratio),
    )
    segment = SegmentSpec(
        length=length, length_min=length, length_max=length, bend_max=2.0 * math.pi, plane_max=2.0 * math.pi,
        sections=sections, radius_base=r0, radius_tip=r1,
    )  # fmt: skip
    head = HeadSpec(diameter=4.0 * max(r0, r1), length=2.0 * max(r0, r1), mass=1.0)
    at, rpy = MOUNTS[mount]
    limb = LimbSpec(
        name="rod", material=material, segments=(segment,), actuators=None,
        mount_xyz=(at[0] * head.length, at[1] * head.length, at[2] * head.length), mount_rpy=rpy,
    )  # fmt: skip
    return RobotSpec(name=name, head=head, limbs=(limb,), description=f"a {length:g} m rod ({mount})")
