"""The mirror viewer runs in its own process and shows the physics world's joint states."""

from __future__ import annotations

import math

import pytest

from sim.viewer import ViewerProcess
from sim.world import World
from urdf_gen.pcc import PccConfig


def test_viewer_process_mirrors_the_last_published_joints() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        viewer = ViewerProcess(robot, gui=False)
        published = 0
        for k in range(40):
            robot.set_pcc("camera", [PccConfig(math.radians(k), math.radians(30), 0.6)])
            world.step()
            published += viewer.publish()
        robot.set_pcc("camera", [PccConfig(math.radians(45), math.radians(30), 0.6)])
        for _ in range(10_000):  # the final frame must get through; the viewer drains the queue
            if viewer.publish():
                break
        report = viewer.close()
    assert 1 <= report["applied"] == viewer.sent == published + 1
    camera = report["first_joints"]["camera"]  # plane, bend, chord of the first section
    assert camera[0] == pytest.approx(math.radians(30), abs=1e-6)
    assert camera[1] == pytest.approx(math.radians(45) / 6, abs=1e-6)  # bend / 2N at N = 3
