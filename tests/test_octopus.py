"""The bundled eight-arm octopus (``octopus8``): a free body that stands on its arms in water and walks on
them with :class:`~pccbullet.sim.body.gait.CrawlGait` (examples/80_octopus_crawl.py, docs/guide/octopus.md).
Simulated time only; the run is deterministic (lockstep PyBullet, fixed gait), so its distance is pinned
to a range around the measured value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.body.gait import CrawlGait
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.environment import add_seabed
from pccbullet.sim.world import World
from pccbullet.urdf_gen.spec_loader import load_robot

SETTLE_STEPS = 1000  # 1 s on its arms
EVERY = 10  # steps between tension updates


def _walk(seconds: float, gait: CrawlGait) -> tuple[np.ndarray, float, float]:
    """The body's displacement ``(3,)`` (m) after ``seconds`` of ``gait``, its lowest height while walking
    (m) and the robot's weight in water (N)."""
    with World(medium="water") as world:
        seabed = add_seabed(world, z=0.0)
        pb.changeDynamics(seabed, -1, lateralFriction=1.0, physicsClientId=world.client)
        robot = world.load_robot("octopus8", drive="tendons", position=(0.0, 0.0, 0.3))
        world.step(SETTLE_STEPS)
        start = robot.head_pose()[:3, 3].copy()
        lowest = math.inf
        for k in range(round(seconds / world.dt / EVERY)):
            for name, tensions in gait.tensions(robot.spec, k * EVERY * world.dt).items():
                robot.compliant[name].tendons.set_tensions(tensions)
            world.step(EVERY)
            lowest = min(lowest, float(robot.head_pose()[2, 3]))
        spec = robot.spec
        volume = spec.head.volume + sum(limb.mass / limb.material.density for limb in spec.limbs)
        mass = spec.head.mass + sum(limb.mass for limb in spec.limbs)
        return robot.head_pose()[:3, 3] - start, lowest, (mass - 1000.0 * volume) * 9.80665


def test_the_octopus_walks_ahead_on_its_arms() -> None:
    """3 s of the default gait (1.5 cycles after 1 s standing): the body goes 9.8 cm ahead (measured, about
    3 cm/s; the run is deterministic, the range allows for another platform's floating point), 2 mm
    sideways at most, and never touches the seabed (its sphere's 70 mm radius: it walks on its arms'
    tips). The robot is near neutral in water, as the OCTOPUS robot (1.5 N net weight for 3.35 kg)."""
    moved, lowest, weight = _walk(3.0, CrawlGait())
    assert 0.085 < moved[0] < 0.11
    assert abs(moved[1]) < 0.005
    assert lowest > 0.2
    assert weight == pytest.approx(1.49, abs=0.01)


def test_the_gait_turned_round_walks_back() -> None:
    """The sweep half a cycle ahead of the press (``lead = pi``) walks the body backwards as far."""
    moved, _, _ = _walk(3.0, CrawlGait(lead=math.pi))
    assert -0.11 < moved[0] < -0.085


def test_the_gait_finds_each_arms_tendons_from_its_mount() -> None:
    """Front arm (along the heading): presses and lifts, no sweep; left arm: presses, lifts and sweeps with
    its 90 and 270 degree tendons (its material y axis points along the body's -x). The two groups are half
    a cycle apart."""
    spec = load_robot("octopus8")
    gait = CrawlGait(period=2.0, press=8.0, sweep=6.0, lift=10.0, hold=0.0)
    quarter = gait.tensions(spec, 0.5)  # sin = 1: press and sweep back at full tension
    assert quarter["front"] == pytest.approx([8.0, 0.0, 0.0, 0.0])
    assert quarter["left"] == pytest.approx([8.0, 6.0, 0.0, 0.0])
    assert quarter["front_left"] == pytest.approx([0.0, 0.0, 10.0, 6.0])  # the other group: lift and swing
    assert gait.tensions(spec, 1.5)["left"] == pytest.approx([0.0, 0.0, 10.0, 6.0])


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("period", 0.0, r"period = 0.0 is invalid"), ("press", -1.0, r"press = -1.0 is invalid")],
)
def test_a_bad_gait_is_refused(field: str, value: float, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        CrawlGait(**{field: value})
