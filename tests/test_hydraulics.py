"""Seed 000 water-hydraulic drive and the virtual experiments of sec. 3.2."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from sim.models.actuators import ChamberActuation
from sim.models.hydraulics import (
    HydraulicDrive,
    load_hydraulic_drive,
    overshoot,
    run_seed000,
    settling_time,
)
from sim.models.newton_euler import VACUUM, LimbModel
from urdf_gen.errors import SpecError
from urdf_gen.spec_loader import load_robot


@pytest.fixture(scope="module")
def robot():
    return load_robot("hydraulic_arm")


def test_bundled_arm_loads(robot):
    limb = robot.limbs[0]
    assert len(limb.segments) == 2 and limb.actuators.kind == "chamber" and limb.actuators.count == 3
    assert [s.length for s in limb.segments] == [0.25, 0.25]


def test_static_pressure_matches_torque(robot):
    p = load_hydraulic_drive(robot)
    assert p.steady_pressure(2.5) == pytest.approx(1.0e6, rel=1e-3)
    drive = HydraulicDrive(p, 2)
    for _ in range(1500):
        drive.step(np.array([1.5, 2.5]), 1e-3)
    np.testing.assert_allclose(drive.chamber_pressure, p.steady_pressure(np.array([1.5, 2.5])), rtol=2e-3)


def test_pressure_lags_torque_then_settles(robot):
    drive = HydraulicDrive(load_hydraulic_drive(robot), 1)
    pressures = [float(drive.step(np.array([2.5]), 1e-3)[0]) for _ in range(400)]
    assert pressures[0] < 0.2e6  # pipe and piston delay
    assert pressures[-1] == pytest.approx(1e6, rel=0.01)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("efficiency", 1.5, r"hydraulic_drive\.efficiency' = 1\.5 is invalid; allowed: a number in \(0"),
        ("pipe_diameter_mm", -4.0, r"hydraulic_drive\.pipe_diameter_mm' = -4\.0 is invalid"),
        ("bulk_modulus_pa", "hard", r"hydraulic_drive\.bulk_modulus_pa' = 'hard' is invalid"),
        ("typo_field", 1.0, r"hydraulic_drive\.typo_field"),
    ],
    ids=["efficiency", "pipe", "bulk-type", "unknown"],
)
def test_bad_values_raise_spec_error(robot, field, value, match):
    extra = copy.deepcopy(robot.extra)
    extra["hydraulic_drive"][field] = value
    bad = type(robot)(name=robot.name, head=robot.head, limbs=robot.limbs, source=robot.source, extra=extra)
    with pytest.raises(SpecError, match=match):
        load_hydraulic_drive(bad)


def test_missing_table(robot):
    bare = type(robot)(name=robot.name, head=robot.head, limbs=robot.limbs, source=robot.source, extra={})
    with pytest.raises(SpecError, match=r"field 'hydraulic_drive' = None is invalid"):
        load_hydraulic_drive(bare)


def test_bending_limit_p2_p3_1mpa(robot):
    """Paper sec. 3.1: P2 = P3 = 1 MPa, P1 = 0 bends a section 165.7 deg at 0.401 m arc length."""
    model = LimbModel(robot.limbs[0], 4, gravity=np.zeros(3), medium=VACUUM)
    act = ChamberActuation(model)
    tau = act.tau(np.array([0.0, 1e6, 1e6, 0.0, 0.0, 0.0]))
    q = tau / model.K  # no gravity: K q = tau exactly
    seg0 = model.segment == 0
    qs = q.reshape(model.n, 4)[seg0]
    bend = math.degrees(float(np.sum(model.l0[seg0] * np.hypot(qs[:, 1], qs[:, 2]))))
    length = float(np.sum(model.l0[seg0] * (1 + qs[:, 0])))
    assert bend == pytest.approx(165.7, abs=0.5)
    assert length == pytest.approx(0.401, abs=0.002)
    assert model.segment_tip_positions(q)[0][0] > 0.0  # towards +x, away from chambers 2 and 3


@pytest.fixture(scope="module")
def runs():
    return {p: run_seed000(p, duration=10.0, pieces=3) for p in ("step_uni", "step_bi", "ramp")}


def test_steady_state_times(runs):
    uni, bi = runs["step_uni"], runs["step_bi"]
    # 5 % band of the section-tip displacement; paper: 1 s (uni), 1.5 s (bi). Our uni step settles in
    # ~1.07 s with the assumed damping ratio 0.8, hence the 10 % margin.
    assert settling_time(uni["t"], uni["tips"], 2.0, 5.99) <= 1.1
    assert settling_time(bi["t"], bi["tips"], 2.0, 5.99) <= 1.5
    assert settling_time(bi["t"], bi["tips"], 6.0, 10.0) <= 1.5


def test_unidirectional_and_bidirectional_shapes(runs):
    uni, bi = runs["step_uni"]["tips"][-1], runs["step_bi"]["tips"][-1]
    # same direction: both section tips on -x; opposite: distal section comes back towards the axis
    assert uni[0][0] < 0 and uni[1][0] < uni[0][0]
    assert abs(bi[1][0] - bi[0][0]) < 0.05
    np.testing.assert_allclose(uni[:, 1], 0.0, atol=1e-9)  # planar motion (XOZ)


def test_ramp_overshoots_less_than_step(runs):
    step, ramp = runs["step_uni"], runs["ramp"]
    for t0, t1 in ((2.0, 5.99), (6.0, 10.0)):
        os_step = overshoot(step["t"], step["tips"][:, 1, 0], t0, t1)
        os_ramp = overshoot(ramp["t"], ramp["tips"][:, 1, 0], t0, t1)
        assert os_ramp < os_step
    np.testing.assert_allclose(ramp["tips"][-1], step["tips"][-1], atol=2e-3)
