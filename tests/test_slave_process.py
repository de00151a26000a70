"""Real-time teleoperation with the slave in its own process (teleop.slave_process)."""

from __future__ import annotations

import numpy as np

from teleop.devices import ScriptedDevice
from teleop.mmt import MmtConfig, MmtSession
from teleop.predict import segment_ends


def test_slave_in_its_own_process_tracks_the_commands_and_reports() -> None:
    device = ScriptedDevice(
        waypoints=[(0.0, (0.55, 0.06, -0.40)), (1.0, (0.50, 0.06, -0.45))],
        presses=[(0.0, "select:palpation")],
    )
    with MmtSession(MmtConfig(sections=3), slave="process") as s:
        stats = s.run(device, 3.0, realtime=True)
        metrics = s.metrics()
    slave = stats["slave"]
    assert slave["physics_steps"] > 2000 and slave["sections"] == 3  # the robot ran on its own clock
    assert metrics["state_updates"] >= 8  # state packets came back over the emulated link
    tip_s = s.log["tip_s"]
    assert np.isfinite(tip_s[-1]).all() and tip_s[-1][2] < -0.15  # observed: the robot's limb sagged
    assert 0.5 < slave["real_time_factor"] < 1.5  # paced to the wall clock, not run as fast as possible


def test_compiled_segment_ends_equal_the_model_kinematics() -> None:
    from sim.models.newton_euler import LimbModel
    from urdf_gen.spec_loader import load_robot

    m = LimbModel(load_robot("ursula", sections=10).limb("palpation"), 10)
    rng = np.random.default_rng(0)
    for k in range(100):
        q = rng.normal(0, 3, m.dof) * np.tile([0.02, 1, 1, 0.5], m.n) * (1e-3 if k % 3 == 0 else 1.0)
        out = np.empty((2, 3))
        segment_ends(q, m.l0, np.array([9, 19]), out)
        np.testing.assert_allclose(out, m.segment_tip_positions(q), atol=1e-14)
