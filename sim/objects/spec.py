"""A placed object as a file describes it: :class:`ObjectSpec` and its ``[[objects]]`` table.

A grasp experiment (:mod:`pccbullet.sim.experiments.grasp_spec`) and the demo's scene
(:mod:`pccbullet.teleop.mmt.objects`) read their objects with :func:`object_from_fields`; the world places
them with :mod:`pccbullet.sim.objects.place`. Fields of one table::

    name = "can"
    shape = "cylinder"               # sphere | cylinder | box
    radius_mm = 45                   # sphere, cylinder
    length_mm = 100                  # cylinder (along its body z)
    size_mm = [40, 40, 300]          # box edges
    density_kg_m3 = 1100             # or mass_kg (0: static); exactly one
    material = "pla"                 # friction against the limbs (pccbullet.sim.objects.friction)
    position_mm = [500, -150, -110]
    orientation_xyzw = [0, 0, 0, 1]  # optional
    fixed = false                    # optional
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pccbullet.core.fields import Fields

SHAPES = ("sphere", "cylinder", "box")
MAX_OBJECTS = 32  # objects in one file


@dataclass(frozen=True, slots=True)
class ObjectSpec:
    """One placed object (SI units).

    Attributes:
        name: its name. shape: sphere | cylinder | box. size: ``(radius,)``, ``(radius, length)`` or the
        box edges (m). mass: kg or ``None``. density: kg/m^3 or ``None`` (exactly one is set).
        material: friction material. position: m. orientation: quaternion x, y, z, w. fixed: static.
    """

    name: str
    shape: str
    size: tuple[float, ...]
    mass: float | None
    density: float | None
    material: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    fixed: bool


def object_from_fields(f: Fields) -> ObjectSpec:
    """One ``[[objects]]`` table (millimetres at this edge) -> :class:`ObjectSpec`; bad values raise
    :class:`~pccbullet.core.errors.SpecError` naming the field."""
    name = f.identifier("name")
    shape = f.string("shape", choices=SHAPES)
    if shape == "box":
        size = tuple(v * 1e-3 for v in f.vector("size_mm", 3, 5.0, 10_000.0, unit="mm"))
    else:
        size = (f.number("radius_mm", 5.0, 10_000.0) * 1e-3,)
        if shape == "cylinder":
            size += (f.number("length_mm", 5.0, 10_000.0) * 1e-3,)
    if f.has("mass_kg") == f.has("density_kg_m3"):
        raise f.error("mass_kg", f.table.get("mass_kg"), "exactly one of mass_kg and density_kg_m3")
    mass = f.number("mass_kg", 0.0, 10_000.0) if f.has("mass_kg") else None
    density = f.number("density_kg_m3", 0.0, 25_000.0, lo_open=True) if f.has("density_kg_m3") else None
    material = f.string("material", default="pla")
    position = f.vector("position_mm", 3, -100_000.0, 100_000.0, unit="mm")
    qx, qy, qz, qw = f.vector("orientation_xyzw", 4, -1.0, 1.0, default=[0.0, 0.0, 0.0, 1.0])
    orientation = (qx, qy, qz, qw)
    if math.hypot(*orientation) < 1e-6:
        raise f.error("orientation_xyzw", list(orientation), "a non-zero quaternion x, y, z, w")
    fixed = f.raw("fixed", False)
    if not isinstance(fixed, bool):
        raise f.error("fixed", fixed, "true or false")
    f.finish()
    pos = tuple(v * 1e-3 for v in position)
    return ObjectSpec(
        name,
        shape,
        size,
        mass,
        density,
        material,
        (pos[0], pos[1], pos[2]),
        orientation,
        fixed,
    )
