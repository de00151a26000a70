"""Objects dropped in sea water settle on the seabed: their settled heights against where they should rest.

A steel ball, a PLA cylinder lying on its side, a rock block, a glass marble and a barely dense PLA sphere
are released 0.3 m above the seabed and stepped for 4 s; each ends at seabed + its radius (or half its
height), less the contact's penetration. The light sphere weighs 2 % of its weight in the water and sinks
slowly, yet lands within the 4 s. Prints one row per object.

python examples/71_objects_on_seabed.py
"""

import math

import numpy as np

import pccbullet as pcb

SEABED_Z = -0.6  # m
DROP = 0.3  # m above the seabed

with pcb.World(medium="seawater") as world:
    pcb.add_seabed(world, SEABED_Z)
    lying = (math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4))  # axis along world y
    start = SEABED_Z + DROP
    at = [(x, 0.0, start) for x in (0.0, 0.15, 0.3, 0.45, 0.6)]
    objects = [  # name, object, the height of its centre above the seabed at rest (m)
        (
            "steel ball r 20 mm",
            pcb.place_sphere(world, 0.02, density=7850.0, material="steel", position=at[0]),
            0.02,
        ),
        (
            "PLA cylinder r 25 mm, 120 mm, lying",
            pcb.place_cylinder(world, 0.025, 0.12, density=1240.0, position=at[1], orientation=lying),
            0.025,
        ),
        (
            "rock block 80 x 60 x 40 mm",
            pcb.place_box(world, (0.08, 0.06, 0.04), density=2650.0, material="rock", position=at[2]),
            0.02,
        ),
        (
            "glass marble r 8 mm",
            pcb.place_sphere(world, 0.008, density=2500.0, material="glass", position=at[3]),
            0.008,
        ),
        (
            "PLA sphere r 30 mm, 1045 kg/m^3",
            pcb.place_sphere(world, 0.03, density=1045.0, position=at[4]),
            0.03,
        ),
    ]
    world.step(4000)
    columns = (
        ("mass kg", 8),
        ("mu", 5),
        ("settled z m", 12),
        ("expected m", 11),
        ("off mm", 7),
        ("speed m/s", 10),
    )
    print(f"{'object':<38} " + " ".join(f"{title:>{width}}" for title, width in columns))
    for name, obj, rest in objects:
        z = obj.position()[2]
        speed = float(np.linalg.norm(obj.linear_velocity()))
        off = 1e3 * (z - SEABED_Z - rest)  # mm
        expected = SEABED_Z + rest
        row = f"{obj.mass:8.4f} {obj.friction:5.2f} {z:12.5f} {expected:11.5f} {off:7.3f} {speed:10.2e}"
        print(f"{name:<38} {row}")
