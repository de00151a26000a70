"""Haptic renderer: peak and continuous clamps, ramp-in, zero force on missed deadlines or device error."""

from __future__ import annotations

import numpy as np
import pytest

from teleop.devices import ScriptedDevice
from teleop.haptics import HapticParams, HapticRenderer, passivity_margin
from urdf_gen.errors import ConfigurationError

DEEP = np.array([0.0, 0.0, 0.02])  # 20 mm penetration: 8 N raw at 400 N/m


def test_ramp_in_over_half_a_second_and_peak_clamp() -> None:
    r = HapticRenderer(HapticParams(stiffness=400.0, damping=2.0))
    small = np.array([0.0, 0.0, 0.001])  # 0.4 N raw, below every clamp
    f = np.array([r.tick(small)[2] for _ in range(600)])
    assert f[249] == pytest.approx(0.4 * 250 / 500, rel=1e-6)  # linear ramp, half way at 0.25 s
    assert f[499:].min() == pytest.approx(0.4, rel=1e-6)
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    forces = [np.linalg.norm(r.tick(DEEP)) for _ in range(700)]
    assert forces[0] == pytest.approx(3.0, abs=1e-9) and max(forces) <= 3.0 + 1e-12


def test_continuous_force_limited_to_088_rms_without_steps() -> None:
    r = HapticRenderer()
    forces = np.array([np.linalg.norm(r.tick(DEEP)) for _ in range(10_000)])  # 10 s of hard pressing
    assert forces.max() <= 3.0 + 1e-12
    assert r.rms <= 0.88 + 1e-3
    assert forces[-1000:].mean() == pytest.approx(0.88, abs=1e-3)
    assert np.abs(np.diff(forces)).max() < 0.05  # the thermal limit slides, it does not step


def test_zero_force_after_three_missed_deadlines_and_on_device_error() -> None:
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    d = np.array([0.0, 0.0, 0.001])
    assert np.linalg.norm(r.tick(d)) > 0
    r.tick(d, deadline_met=False)
    r.tick(d, deadline_met=False)
    assert np.linalg.norm(r.last_force) > 0  # two misses are tolerated
    assert not r.tick(d, deadline_met=False).any()
    assert r.fault == "3 missed deadlines"
    assert not r.tick(d).any()  # latched until reset
    r.reset()
    assert r.tick(d).any()
    device = ScriptedDevice(fail_at=0.005)
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    out = [r.tick(d, device_ok=device.read(k * 1e-3).ok) for k in range(10)]
    assert all(f.any() for f in out[:5]) and not any(f.any() for f in out[5:])
    assert r.fault == "device error"


def test_passivity_check() -> None:
    assert passivity_margin(400.0, 2.0, 2.5, 1e-3) == pytest.approx(0.3)
    with pytest.raises(ConfigurationError, match=r"not passive .* allowed: b > K T/2 \+ \|B\| = 3.2"):
        HapticParams(stiffness=400.0, damping=3.0, device_damping=2.5)
    HapticParams(stiffness=500.0, damping=3.0, device_damping=3.5)


def test_penetration_needs_no_contact_refresh_and_matches_the_contact_points() -> None:
    from sim.bullet import pb
    from sim.world import World
    from teleop.haptics import penetration

    with World(mode="kinematic") as world:
        cid = world.client
        robot = world.load_robot("ursula", sections=3)
        body = robot.bodies["camera"]
        tip = robot.tip_pose("camera")
        shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.05, physicsClientId=cid)
        centre = tip[:3, 3] + 0.04 * tip[:3, 2]  # 40 mm beyond the tip along its axis: overlapping
        ball = pb.createMultiBody(0, shape, -1, centre.tolist(), physicsClientId=cid)
        far = pb.createMultiBody(0, shape, -1, (centre + [0.0, 0.0, 1.0]).tolist(), physicsClientId=cid)
        d = penetration(cid, body, [ball, far])  # no world.step(): nothing refreshed
        assert 1e-3 < np.linalg.norm(d) < 0.05
        assert np.dot(d, tip[:3, 2]) < 0  # pushes the tip back out of the ball
        world.step()  # the contact points the function read before
        deepest = min(pb.getContactPoints(bodyA=body, bodyB=ball, physicsClientId=cid), key=lambda c: c[8])
        np.testing.assert_allclose(d, -deepest[8] * np.asarray(deepest[7]), atol=1e-9)
        assert penetration(cid, body, [far]).tolist() == [0.0, 0.0, 0.0]
