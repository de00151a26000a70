"""API misuse of a World and its robots is refused with one clear error."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.sim.world import World
from pccbullet.urdf_gen.errors import ConfigurationError, WorldClosedError
from pccbullet.urdf_gen.pcc import PccConfig

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dt": NAN}, r"dt = nan is invalid; allowed: a time step in \(0, 0\.1\] s"),
        ({"dt": INF}, r"dt = inf is invalid"),
        ({"dt": -1e-3}, r"dt = -0\.001 is invalid"),
        (
            {"gravity": (0.0, 0.0, NAN)},
            r"gravity = \(0\.0, 0\.0, nan\) is invalid; allowed: 3 finite numbers",
        ),
        ({"gravity": (0.0, 9.8)}, r"gravity = \(0\.0, 9\.8\) is invalid"),
    ],
)
def test_bad_world_settings_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        World(mode="kinematic", **kwargs)


def test_bad_steps_and_joints_are_refused_and_a_closed_world_says_so() -> None:
    world = World(mode="kinematic")
    robot = world.load_robot("ursula", sections=2)
    n = len(robot.joint_indices("camera"))
    for bad in (-5, 2.5, True):
        with pytest.raises(ConfigurationError, match=r"n = .* steps is invalid; allowed: an integer >= 0"):
            world.step(bad)  # type: ignore[arg-type]
    world.step(np.int64(2))
    assert world.time == pytest.approx(2e-3)
    for value in (NAN, INF):
        q = np.zeros(n)
        q[3] = value
        with pytest.raises(ConfigurationError, match=rf"joint value 3 = {value} is invalid; allowed: finite"):
            robot.set_joints("camera", q)
    with pytest.raises(ConfigurationError, match=r"bend = nan deg is out of range"):
        robot.set_pcc("camera", [PccConfig(NAN, 0.0, 0.6)])
    world.close()
    world.close()  # again: nothing
    assert world.closed
    uses = [
        world.step,
        lambda: world.load_robot("ursula", sections=2),
        lambda: robot.set_pcc("camera", [PccConfig(0.0, 0.0, 0.6)]),
        lambda: robot.set_joints("camera", np.zeros(n)),
        lambda: robot.joints("camera"),
        lambda: robot.tip_pose("camera"),
    ]
    for use in uses:
        with pytest.raises(
            WorldClosedError, match=r"World (of this Robot )?is closed; allowed: a World before close"
        ):
            use()
