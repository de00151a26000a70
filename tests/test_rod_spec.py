"""``pcb.rod``: a rod's spec without a robot file is the robot file's rod, and bad input names its field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import pccbullet as pcb
from pccbullet.core.errors import ConfigurationError
from pccbullet.urdf_gen.spec_loader import load_robot

ROD = Path(__file__).parent / "data" / "stiff_rod.toml"


def test_rod_is_the_robot_files_rod() -> None:
    """The limb of tests/data/stiff_rod.toml, field for field, and the same tip under the same load."""
    spec = pcb.rod(0.3, 0.03, youngs_modulus=1e7, density=1070.0, poisson_ratio=0.49, damping_ratio=0.5)
    from_file = load_robot(ROD).limbs[0]
    limb = spec.limbs[0]
    assert dataclasses.replace(limb.material, name="stiff") == from_file.material
    seg, ref = limb.segments[0], from_file.segments[0]
    assert (seg.length, seg.sections, seg.radius_base, seg.radius_tip) == pytest.approx(
        (ref.length, ref.sections, ref.radius_base, ref.radius_tip)
    )
    moved = []
    for robot_spec in (spec, load_robot(ROD)):
        with pcb.World(gravity=(0.0, 0.0, 0.0)) as world:
            robot = world.load_robot(robot_spec)
            start = robot.tip_pose("rod")[:3, 3]
            robot.add_load("rod", "tip", force=(0.0, 2.0, 0.0))
            world.step(300)
            moved.append(robot.tip_pose("rod")[:3, 3] - start)
    np.testing.assert_allclose(moved[0], moved[1], rtol=0, atol=1e-7)  # link poses: float32 near 0.3 m


def test_tapered_rod_and_mounts() -> None:
    spec = pcb.rod(0.5, 0.02, tip_radius=0.005, sections=7, mount="down", name="whip")
    seg = spec.limbs[0].segments[0]
    assert (seg.radius_base, seg.radius_tip, seg.sections, spec.name) == (0.02, 0.005, 7, "whip")
    with pcb.World(mode="kinematic") as world:
        robot = world.load_robot(spec)
        base, tip = robot.T_world_limbbase("rod")[:3, 3], robot.tip_pose("rod")[:3, 3]
        np.testing.assert_allclose(tip - base, [0.0, 0.0, -0.5], atol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"length": -1.0}, r"length = -1.0 is invalid; allowed: a number in \(0, 1000\] m"),
        ({"radius": 0.0}, r"radius = 0.0 is invalid"),
        ({"sections": 0}, r"sections = 0 is invalid; allowed: an integer in \[1, 200\]"),
        ({"mount": "sideways"}, r"mount = 'sideways' is invalid; allowed: 'horizontal', 'down', 'up'"),
        ({"poisson_ratio": 0.7}, r"poisson_ratio = 0.7 is invalid"),
        ({"name": "2rod"}, r"name = '2rod' is invalid; allowed: letters"),
    ],
)
def test_bad_rods_name_the_field(kwargs: dict, message: str) -> None:
    args = {"length": 0.3, "radius": 0.01, **kwargs}
    with pytest.raises(ConfigurationError, match=message):
        pcb.rod(**args)
