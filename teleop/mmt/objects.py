"""The teleoperation scene's bodies, in the robot's world and in the master's model: the seabed and the rock
(:func:`add_environment`) and the placed objects.

:attr:`~pccbullet.teleop.mmt.config.MmtConfig.objects` lists them as
:class:`~pccbullet.sim.objects.spec.ObjectSpec` (the ``[[objects]]`` tables of a grasp experiment:
shape, size, mass or density, material, position, orientation, fixed). The robot's world places each as it is
(:func:`pccbullet.sim.objects.place.place_sphere` and its siblings: a free object sinks or floats, the limbs
touch it with the material's friction); the master's model shows each where it was placed, fixed (the master
world has no contacts and no medium: it only shows), as it shows the rock and the seabed, and moves each free
one (:func:`is_free`) where the robot's reports put it. ``pccbullet demo --objects FILE`` reads them from a
TOML file of ``[[objects]]`` tables (:func:`load_objects`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pccbullet.core.fields import Fields, read_toml
from pccbullet.sim.objects.environment import add_seabed, add_sphere
from pccbullet.sim.objects.friction import MATERIALS
from pccbullet.sim.objects.place import place_box, place_cylinder, place_sphere
from pccbullet.sim.objects.placed import PlacedObject
from pccbullet.sim.objects.spec import MAX_OBJECTS, ObjectSpec, object_from_fields

if TYPE_CHECKING:
    from pccbullet.sim.world import World


def add_environment(
    world: World, rock: tuple[float, float, float], radius: float, seabed_z: float
) -> tuple[int, int]:
    """A seabed plane at ``seabed_z`` (m) and a rock sphere of ``radius`` (m) centred at ``rock`` (m, world)
    in ``world``; returns their body ids."""
    return add_seabed(world, seabed_z, half_extent=2.0), add_sphere(world, rock, radius)


def place_objects(world: Any, objects: Sequence[ObjectSpec], *, fixed: bool = False) -> list[PlacedObject]:
    """Place ``objects`` in ``world`` (a :class:`~pccbullet.sim.world.World`); ``fixed``: each static
    where it was placed (the master's model), else as its spec says."""
    out = []
    for o in objects:
        common: dict[str, Any] = {
            "mass": o.mass, "density": o.density, "position": o.position, "orientation": o.orientation,
            "material": o.material, "fixed": o.fixed or fixed,
        }  # fmt: skip
        if o.shape == "sphere":
            out.append(place_sphere(world, o.size[0], **common))
        elif o.shape == "cylinder":
            out.append(place_cylinder(world, o.size[0], o.size[1], **common))
        else:
            out.append(place_box(world, o.size, **common))
    return out


def is_free(o: ObjectSpec) -> bool:
    """Whether the robot's world lets ``o`` move (not ``fixed``, not of mass 0): the robot reports where
    such an object is, and the master's model moves it there."""
    return not o.fixed and o.mass != 0.0


def load_objects(path: str | Path, *, others: bool = False) -> tuple[ObjectSpec, ...]:
    """The ``[[objects]]`` tables of TOML file ``path`` (the fields of a grasp experiment's objects: ``name``,
    ``shape``, ``radius_mm`` / ``length_mm`` / ``size_mm``, ``mass_kg`` or ``density_kg_m3``,
    ``material``, ``position_mm``, ``orientation_xyzw``, ``fixed``); nothing else may be in the file, or,
    with ``others``, whatever else it holds is left unread (a grasp experiment's robot and phases).
    Raises :class:`~pccbullet.core.errors.SpecError` naming the file, the field and what is allowed."""
    path = Path(path)
    f = Fields(read_toml(path), path)
    tables = f.table_list("objects", max_items=MAX_OBJECTS)
    objects = tuple(object_from_fields(o) for o in tables)
    for table, o in zip(tables, objects, strict=True):
        if o.material not in MATERIALS:
            raise table.error("material", o.material, ", ".join(map(repr, MATERIALS)))
    names = [o.name for o in objects]
    if len(set(names)) != len(names):
        raise f.error("objects", names, "distinct object names")
    if not others:
        f.finish()
    return objects
