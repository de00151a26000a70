"""The headless GIF's pyvista scenes: the light arm's lamp lights what it points at."""

from __future__ import annotations

import math
import sys

import numpy as np

from pccbullet.sim.world import World
from pccbullet.teleop.demo.outputs import EXTERNAL_VIEW
from pccbullet.teleop.demo.render import SpotlitRenderer
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.urdf_gen.pcc import PccConfig


def _vtk_modules() -> set[str]:
    return {name for name in sys.modules if name.startswith("vtkmodules.vtk")}


def test_the_lamp_lights_the_seabed_where_the_light_arm_points() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        lamp = SpotlitRenderer((320, 240), EXTERNAL_VIEW, -0.6, 0.06)
        built = _vtk_modules()
        try:
            robot.set_pcc("light", [PccConfig(math.radians(80), 0.0, 0.6)])  # bent down at the seabed
            down = lamp.render(robot, MmtConfig().rock_true).astype(float)
            robot.set_pcc("light", [PccConfig(math.radians(80), math.pi, 0.6)])  # bent up, at the open water
            up = lamp.render(robot, MmtConfig().rock_true).astype(float)
        finally:
            lamp.close()
    assert down.shape == (240, 320, 3)
    # every VTK module it needs is loaded while it is built (the demo holds Ctrl-C back meanwhile: a
    # KeyboardInterrupt inside a VTK module's loading breaks it), none while it renders
    assert len(built) > 20 and _vtk_modules() == built

    def pool(img: np.ndarray) -> int:  # bright, yellowish pixels in the lower half: lamp light on sand
        lower = img[120:]
        return int(((lower[..., 0] > 200) & (lower[..., 1] > 180)).sum())

    assert pool(down) > 500 and pool(up) < 50


def test_placed_objects_are_drawn_where_their_poses_put_them() -> None:
    from pccbullet.sim.objects.spec import ObjectSpec

    box = ObjectSpec("box", "box", (0.1, 0.1, 0.1), 0.0, None, "abs", (0.5, 0.0, -0.5), (0, 0, 0, 1), True)
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        lamp = SpotlitRenderer((320, 240), EXTERNAL_VIEW, -0.6, 0.06, objects=(box,))
        built = _vtk_modules()
        try:
            placed = lamp.render(robot, MmtConfig().rock_true).astype(float)
            away = np.eye(4)
            away[:3, 3] = (0.5, 0.0, 10.0)  # far above the view
            gone = lamp.render(robot, MmtConfig().rock_true, [away]).astype(float)
            away[:3, 3] = (0.5, 0.0, -0.5)  # where it was placed, again
            back = lamp.render(robot, MmtConfig().rock_true, [away]).astype(float)
        finally:
            lamp.close()
    assert _vtk_modules() == built  # built with the renderer, not while rendering

    def reddish(img: np.ndarray) -> int:  # ABS is drawn red (0.85, 0.25, 0.20)
        return int(((img[..., 0] > 1.8 * img[..., 1]) & (img[..., 0] > 40)).sum())

    assert reddish(placed) > 300 and reddish(gone) < 10 and reddish(back) == reddish(placed)
