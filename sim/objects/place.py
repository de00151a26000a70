"""Objects a user places in a world: spheres, cylinders, boxes of a material, free or fixed, in air or water.

:func:`place_sphere`, :func:`place_cylinder` and :func:`place_box` create a PyBullet body and return a
:class:`PlacedObject`: its size, volume, mass, material and friction, its pose and velocity, and the
contact force each limb of a robot exerts on it. Give its mass (kg) or its density (kg/m^3), exactly one;
``mass=0`` or ``fixed=True`` makes it static.

The medium (:class:`pccbullet.sim.medium.Medium` of the world) acts on free objects in dynamic mode,
every step (:meth:`PlacedObject.apply`, called by :meth:`pccbullet.sim.world.World.step` for every entry
of ``World.objects``):

* buoyancy ``-rho V g`` at the centre of volume (the objects are uniform: their centre of mass);
* quadratic drag per body axis (:mod:`pccbullet.sim.objects.fluid`: coefficients and references);
* added mass ``m_a = C_a rho V``, put into the PyBullet body's mass (``m + m_a``), with a constant force
  ``-m_a g`` so that gravity still acts on the true mass ``m`` only. The fluid's inertia then enters
  PyBullet's own implicit solve, contacts included (a limb pushing an object also pushes the water
  around it), and is stable for any ``m_a / m``: a force ``-m_a a`` from the last step's acceleration
  would be explicit and diverges once ``m_a > m`` (a light object in water). Steady states are exact:
  ``(m + m_a) g - m_a g - rho V g = (m - rho V) g``.

A sphere falling in water reaches ``sqrt(2 (m - rho V) g / (rho C_d A))``, following
``v_t tanh(g' t / v_t)`` with ``g' = (m - rho V) g / (m + m_a)`` on the way (``tests/test_objects.py``).

Friction: the object's material sets the silicone-on-material coefficient against the limbs, dry in air
and wet in water (:mod:`pccbullet.sim.objects.friction`: table, sources, PyBullet's product convention).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError, WorldClosedError, cap
from pccbullet.core.types import is_real
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.fluid import ShapeFluid, box_fluid, cylinder_fluid, sphere_fluid
from pccbullet.sim.objects.friction import MAX_FRICTION, ROLLING_RESISTANCE, bullet_coefficients, material
from pccbullet.sim.objects.placed import ObjectWorld, PlacedObject

MIN_SIZE = 0.005  # m, smallest radius, length or edge (the world's contact threshold is 5 mm)
MAX_SIZE = 10.0  # m, largest one
MAX_DENSITY = 25_000.0  # kg/m^3 (osmium: 22 590)
MAX_MASS = 10_000.0  # kg


def _finite(name: str, value: object, low: float, high: float, unit: str, *, low_open: bool = False) -> float:
    """``value`` as a float in ``[low, high]`` (``(low, high]`` if ``low_open``), else ConfigurationError."""
    ok = is_real(value) and math.isfinite(float(value))  # type: ignore[arg-type]
    if ok:
        x = float(value)  # type: ignore[arg-type]
        ok = (low < x if low_open else low <= x) and x <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise ConfigurationError(
            f"{name} = {cap(value)} is invalid; allowed: a number in {bracket}{low:g}, {high:g}] {unit}"
        )
    return float(value)  # type: ignore[arg-type]


def _vector(name: str, value: object, n: int, what: str) -> list[float]:
    """``value`` as ``n`` finite floats, else ConfigurationError."""
    try:
        items = list(value)  # type: ignore[call-overload]
    except TypeError:
        items = []
    if len(items) != n or not all(is_real(v) and math.isfinite(float(v)) for v in items):
        raise ConfigurationError(f"{name} = {cap(value)} is invalid; allowed: {n} finite numbers ({what})")
    return [float(v) for v in items]


def _place(
    world: ObjectWorld,
    kind: str,
    size: tuple[float, ...],
    volume: float,
    fluid: ShapeFluid,
    inertia_per_kg: tuple[float, float, float],
    shape: dict[str, object],
    *,
    mass: float | None,
    density: float | None,
    position: Sequence[float],
    orientation: Sequence[float],
    rgba: Sequence[float] | None,
    material_name: str,
    friction: float | None,
    fixed: bool,
) -> PlacedObject:
    """Validate the common arguments, create the body, register it with the world."""
    if world.closed:
        raise WorldClosedError()
    if (mass is None) == (density is None):
        raise ConfigurationError(
            f"mass = {cap(mass)} and density = {cap(density)} are invalid together; "
            "allowed: exactly one of mass (kg) and density (kg/m^3)"
        )
    if mass is not None:
        m = _finite("mass", mass, 0.0, MAX_MASS, "kg")
    else:
        m = _finite("density", density, 0.0, MAX_DENSITY, "kg/m^3", low_open=True) * volume
    if not isinstance(fixed, bool):
        raise ConfigurationError(f"fixed = {cap(fixed)} is invalid; allowed: True, False")
    fixed = fixed or m == 0.0
    mat = material(material_name)
    mu = (
        mat.coefficient(world.medium)
        if friction is None
        else _finite("friction", friction, 0.0, MAX_FRICTION, "(-)")
    )
    pos = _vector("position", position, 3, "m")
    quat = np.asarray(_vector("orientation", orientation, 4, "a quaternion x, y, z, w"))
    if not np.linalg.norm(quat) > 1e-9:
        raise ConfigurationError(
            f"orientation = {cap(orientation)} is invalid; allowed: a non-zero quaternion"
        )
    colour = list(mat.rgba) if rgba is None else _vector("rgba", rgba, 4, "red, green, blue, alpha in [0, 1]")
    if not all(0.0 <= c <= 1.0 for c in colour):
        raise ConfigurationError(f"rgba = {cap(rgba)} is invalid; allowed: 4 numbers in [0, 1]")
    radius = size[0] if kind in ("sphere", "cylinder") else 0.0
    lever = ROLLING_RESISTANCE * radius
    handle_friction = (mu, lever, lever)
    added = 0.0 if fixed else fluid.added_mass_mean * world.medium.density * volume
    cid = world.client
    geom = {"sphere": pb.GEOM_SPHERE, "cylinder": pb.GEOM_CYLINDER, "box": pb.GEOM_BOX}[kind]
    visual = dict(shape)
    if kind == "cylinder":  # the visual shape calls the cylinder's height "length"
        visual["length"] = visual.pop("height")
    with world.holding_globals():
        col = pb.createCollisionShape(geom, physicsClientId=cid, **shape)
        vis = pb.createVisualShape(geom, rgbaColor=colour, physicsClientId=cid, **visual)
        body = pb.createMultiBody(
            0.0 if fixed else m + added,
            col,
            vis,
            pos,
            (quat / np.linalg.norm(quat)).tolist(),
            physicsClientId=cid,
        )
    dynamics: dict[str, object] = {"linearDamping": 0.0, "angularDamping": 0.0}  # the fluid is the damping
    if not fixed:
        dynamics["localInertiaDiagonal"] = [
            m * i for i in inertia_per_kg
        ]  # the solid's own, no added inertia
    pb.changeDynamics(body, -1, physicsClientId=cid, **dynamics, **bullet_coefficients(*handle_friction))
    obj = PlacedObject(world, body, kind, size, volume, m, added, fixed, mat.name, handle_friction, fluid)
    world.objects.append(obj)
    world.mark_moved()
    return obj


def place_sphere(
    world: ObjectWorld,
    radius: float,
    *,
    mass: float | None = None,
    density: float | None = None,
    position: Sequence[float] = (0.0, 0.0, 0.0),
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
    rgba: Sequence[float] | None = None,
    material: str = "pla",
    friction: float | None = None,
    fixed: bool = False,
) -> PlacedObject:
    """A solid sphere of ``radius`` (m) in ``world``.

    Args:
        mass, density: exactly one: the mass (kg; 0 makes it static) or the density (kg/m^3).
        position: its centre (m); orientation: quaternion (x, y, z, w).
        rgba: colour; ``None``: the material's.
        material: a name of :data:`pccbullet.sim.objects.friction.MATERIALS`: the friction against the limbs.
        friction: the Coulomb coefficient against a limb (-) instead of the material's.
        fixed: static whatever its mass.

    Raises:
        ConfigurationError: a value out of range (the message names the field and what is allowed).
    """
    r = _finite("radius", radius, MIN_SIZE, MAX_SIZE, "m")
    return _place(
        world, "sphere", (r,), 4.0 / 3.0 * math.pi * r**3, sphere_fluid(r), (0.4 * r * r,) * 3, {"radius": r},
        mass=mass, density=density, position=position, orientation=orientation, rgba=rgba,
        material_name=material, friction=friction, fixed=fixed,
    )  # fmt: skip


def place_cylinder(
    world: ObjectWorld,
    radius: float,
    length: float,
    *,
    mass: float | None = None,
    density: float | None = None,
    position: Sequence[float] = (0.0, 0.0, 0.0),
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
    rgba: Sequence[float] | None = None,
    material: str = "pla",
    friction: float | None = None,
    fixed: bool = False,
) -> PlacedObject:
    """A solid circular cylinder of ``radius`` and ``length`` (m), its axis along its body z (``orientation``
    turns it; e.g. ``(0.7071068, 0, 0, 0.7071068)`` lays it along world y). The other arguments as in
    :func:`place_sphere`."""
    r = _finite("radius", radius, MIN_SIZE, MAX_SIZE, "m")
    h = _finite("length", length, MIN_SIZE, MAX_SIZE, "m")
    across = (3.0 * r * r + h * h) / 12.0
    return _place(
        world, "cylinder", (r, h), math.pi * r * r * h, cylinder_fluid(r, h), (across, across, 0.5 * r * r),
        {"radius": r, "height": h},
        mass=mass, density=density, position=position, orientation=orientation, rgba=rgba,
        material_name=material, friction=friction, fixed=fixed,
    )  # fmt: skip


def place_box(
    world: ObjectWorld,
    size: Sequence[float],
    *,
    mass: float | None = None,
    density: float | None = None,
    position: Sequence[float] = (0.0, 0.0, 0.0),
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
    rgba: Sequence[float] | None = None,
    material: str = "pla",
    friction: float | None = None,
    fixed: bool = False,
) -> PlacedObject:
    """A solid box of edge lengths ``size`` ``(3,)`` (m) along its body x, y, z. The other arguments as in
    :func:`place_sphere`."""
    edges = _vector("size", size, 3, "edge lengths in m")
    x, y, z = (_finite(f"size[{i}]", e, MIN_SIZE, MAX_SIZE, "m") for i, e in enumerate(edges))
    inertia = ((y * y + z * z) / 12.0, (x * x + z * z) / 12.0, (x * x + y * y) / 12.0)
    return _place(
        world, "box", (x, y, z), x * y * z, box_fluid((x, y, z)), inertia,
        {"halfExtents": [x / 2, y / 2, z / 2]},
        mass=mass, density=density, position=position, orientation=orientation, rgba=rgba,
        material_name=material, friction=friction, fixed=fixed,
    )  # fmt: skip
