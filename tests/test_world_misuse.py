"""API misuse of a World and its robots is refused with one clear error."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError, WorldClosedError
from pccbullet.sim.world import World
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


def test_a_diverged_world_says_which_limb_and_when_and_the_demo_exits_with_one_line(
    tmp_path, monkeypatch, capsys
) -> None:
    """A NaN in a compliant limb's state (what a diverged contact estimate leaves) is a
    :class:`SimulationDivergedError` naming the limb and the time, not numba's ``LinAlgError`` from deep
    inside the step (it was a traceback, exit 1); the demo, in lockstep, stops with that one line, exit
    status 1 (the run failed; not bad input: 2), and its summary says ``failed`` with the reason."""
    import json

    import pccbullet.teleop.demo.run as demo_run
    from pccbullet.core.errors import SimulationDivergedError
    from pccbullet.sim.bullet import pb
    from pccbullet.teleop.cli import main

    with World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", limbs=["grasper"], sections=3)
        world.step(10)
        body = robot.limb_joints("grasper").bodies[0]
        j = int(robot.joint_indices("grasper")[2])
        n = len(pb.getJointStateMultiDof(body, j, physicsClientId=world.client)[0])
        pb.resetJointStateMultiDof(body, j, [float("nan")] * n, physicsClientId=world.client)
        with pytest.raises(
            SimulationDivergedError, match=r"diverged at t = 0\.010 s: limb 'grasper' has a non"
        ):
            world.step()

    original = demo_run.MmtSession

    class Diverging(original):  # type: ignore[misc, valid-type]
        """The demo's session whose robot's grasper gets a NaN at its 300th tick."""

        def tick(self, device, **kw):  # type: ignore[no-untyped-def]
            if self._k == 300:
                r = self.slave.robot
                b, j = r.limb_joints("grasper").bodies[0], int(r.joint_indices("grasper")[2])
                k = len(pb.getJointStateMultiDof(b, j, physicsClientId=r.world.client)[0])
                pb.resetJointStateMultiDof(b, j, [float("nan")] * k, physicsClientId=r.world.client)
            return super().tick(device, **kw)

    monkeypatch.setattr(demo_run, "MmtSession", Diverging)
    code = main(["demo", "--headless", "--out", str(tmp_path), "--duration", "1", "--no-gif"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and err[-1].startswith("pccbullet: error: the simulation diverged at t = 0.30")
    assert "Traceback" not in "\n".join(err)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "failed" and "limb 'grasper'" in summary["error"]
