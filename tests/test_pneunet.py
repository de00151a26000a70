"""Seed 002: PneuNets bending actuators with 2, 4 and 6 air chambers."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pybullet as pb
import pytest
import yourdfpy

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.urdf_gen.pneunet import (
    PNEUNET_NAMES,
    bending_angle_rad,
    dh_transform,
    forward_kinematics,
    load_bundled_pneunet,
    load_pneunet,
    pressure_to_pose,
    tip_position_closed_form,
    write_pneunet_urdf,
)
from pccbullet.urdf_gen.spec_loader import robots_dir

SPECS = {name: load_bundled_pneunet(name) for name in PNEUNET_NAMES}
PRESSURES_PA = np.linspace(0.0, 80e3, 81)


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_bundled_spec_shape(name: str) -> None:
    spec = SPECS[name]
    assert spec.n_chambers == int(name.split("_")[1])
    assert spec.n_joints == spec.n_chambers - 1
    assert spec.pressure_max_pa == pytest.approx(80e3)
    assert all(length > 0 for length in spec.link_lengths_m)


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_dh_chain_matches_eqs_7_8(name: str) -> None:
    spec = SPECS[name]
    worst = 0.0
    for pressure in PRESSURES_PA:
        pose = pressure_to_pose(spec, pressure)
        closed = tip_position_closed_form(spec, pose.joint_angles_rad[0])
        worst = max(worst, float(np.max(np.abs(pose.tip_position_m - closed))))
    assert worst <= 1e-9


def test_two_chamber_dh_matches_eqs_3_4() -> None:
    spec = SPECS["pneunet_2"]
    L1, L2 = spec.link_lengths_m
    for pressure in PRESSURES_PA:
        theta = bending_angle_rad(spec, pressure)
        tip = pressure_to_pose(spec, pressure).tip_position_m
        assert tip[0] == pytest.approx(L1 + L2 * math.cos(theta), abs=1e-12)  # eq. (3)
        assert tip[1] == pytest.approx(L2 * math.sin(theta), abs=1e-12)  # eq. (4)


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_zero_pressure_is_straight(name: str) -> None:
    spec = SPECS[name]
    pose = pressure_to_pose(spec, 0.0)
    np.testing.assert_array_equal(pose.joint_angles_rad, 0.0)
    np.testing.assert_allclose(pose.tip_position_m, [sum(spec.link_lengths_m), 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(pose.frames[:, 1:3, 3], 0.0, atol=1e-15)  # every frame on the x axis
    np.testing.assert_allclose(pose.frames[-1][:3, :3], np.eye(3), atol=1e-15)


def test_pressure_law_eq9() -> None:
    spec = SPECS["pneunet_4"]
    for p_kpa in (10.0, 40.0, 80.0):
        expected = (-0.0036 * p_kpa**2 + 0.6916 * p_kpa) * math.pi / 180
        assert bending_angle_rad(spec, p_kpa * 1e3) == pytest.approx(expected, rel=1e-12)
    assert math.degrees(bending_angle_rad(spec, 80e3)) == pytest.approx(32.288, abs=1e-9)


def _gent_eq1_mpa(shore_a: float) -> float:
    """Seed 002 eq. (1) as printed: E (MPa) = 0.0981 (5 + 7.66 s) / (0.137505 (254 - 2.54 s))."""
    return 0.0981 * (5 + 7.66 * shore_a) / (0.137505 * (254 - 2.54 * shore_a))


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_youngs_modulus_is_the_stated_value_not_eq1(name: str) -> None:
    """Seed 002 sec. 3: "s = 30, Young's modulus of E = 1.16 MPa", but eq. (1) gives 0.942 MPa at s = 30
    (to 1e-3 MPa, the precision quoted). The bundled files keep the stated 1.16 MPa (the text's Ansys
    input); the choice is written in each file."""
    assert _gent_eq1_mpa(30.0) == pytest.approx(0.942, abs=1e-3)
    assert SPECS[name].youngs_modulus_pa == 1.16e6
    text = (robots_dir() / f"{name}.toml").read_text()
    assert "youngs_modulus_mpa = 1.16" in text and "0.942" in text


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_tip_orientation_is_sum_of_joint_angles(name: str) -> None:
    spec = SPECS[name]
    rng = np.random.default_rng(12)
    q = rng.uniform(-0.6, 0.6, spec.n_joints)  # unequal angles are fine for the DH chain
    R = forward_kinematics(spec, q)[-1][:3, :3]
    angle = math.atan2(R[1, 0], R[0, 0])
    assert angle == pytest.approx(float(np.sum(q)), abs=1e-12)


def test_dh_transform_eq5_is_rz_tz_tx_rx() -> None:
    theta, alpha, r, d = 0.3, -0.7, 0.02, 0.01
    c, s = math.cos, math.sin
    rz = np.array([[c(theta), -s(theta), 0, 0], [s(theta), c(theta), 0, 0], [0, 0, 1, d], [0, 0, 0, 1]])
    rx = np.array([[1, 0, 0, r], [0, c(alpha), -s(alpha), 0], [0, s(alpha), c(alpha), 0], [0, 0, 0, 1]])
    np.testing.assert_allclose(dh_transform(theta, alpha, r, d), rz @ rx, atol=1e-15)


@pytest.mark.parametrize("pressure", [-1.0, 80e3 + 1.0, math.nan], ids=["negative", "above_max", "nan"])
def test_pressure_out_of_range_raises(pressure: float) -> None:
    with pytest.raises(
        ConfigurationError, match=r"pneunet_2: pressure .* Pa outside the allowed range \[0, 80000\]"
    ):
        pressure_to_pose(SPECS["pneunet_2"], pressure)


# ------------------------------------------------------------------------------------------- URDF


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_urdf_loads_in_pybullet_and_matches_closed_form(name: str, tmp_path: Path) -> None:
    spec = SPECS[name]
    path = write_pneunet_urdf(spec, tmp_path)
    assert path.parent == tmp_path
    client = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(str(path), useFixedBase=True, physicsClientId=client)
        joints = [
            j
            for j in range(pb.getNumJoints(body, physicsClientId=client))
            if pb.getJointInfo(body, j, physicsClientId=client)[2] == pb.JOINT_REVOLUTE
        ]
        assert len(joints) == spec.n_joints
        tip = [
            j
            for j in range(pb.getNumJoints(body, physicsClientId=client))
            if pb.getJointInfo(body, j, physicsClientId=client)[12] == b"tip"
        ][0]
        for pressure in (0.0, 30e3, 80e3):
            theta = bending_angle_rad(spec, pressure)
            for j in joints:
                pb.resetJointState(body, j, theta, physicsClientId=client)
            state = pb.getLinkState(body, tip, computeForwardKinematics=True, physicsClientId=client)
            np.testing.assert_allclose(state[4], tip_position_closed_form(spec, theta), atol=1e-7)
    finally:
        pb.disconnect(client)


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_urdf_loads_in_yourdfpy(name: str, tmp_path: Path) -> None:
    spec = SPECS[name]
    robot = yourdfpy.URDF.load(str(write_pneunet_urdf(spec, tmp_path)))
    assert robot.num_actuated_joints == spec.n_joints
    theta = bending_angle_rad(spec, 55e3)
    robot.update_cfg(np.full(spec.n_joints, theta))
    T = robot.get_transform("tip", "link_1")
    np.testing.assert_allclose(T[:3, 3], tip_position_closed_form(spec, theta), atol=1e-12)
    masses = [link.inertial.mass for link in robot.robot.links]
    assert min(masses) > 0
    link_mass = sum(robot.link_map[f"link_{k}"].inertial.mass for k in range(1, spec.n_chambers + 1))
    assert link_mass == pytest.approx(spec.mass_kg)


@pytest.mark.parametrize("name", PNEUNET_NAMES, ids=PNEUNET_NAMES)
def test_urdf_loads_in_mujoco(name: str, tmp_path: Path) -> None:
    spec = SPECS[name]
    model = mujoco.MjModel.from_xml_path(str(write_pneunet_urdf(spec, tmp_path)))
    assert model.njnt == spec.n_joints
    assert np.all(model.body_mass[1:] > 0)


# ------------------------------------------------------------------------------------------- bad TOML

GOOD = (robots_dir() / "pneunet_4.toml").read_text()


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        (
            "n_chambers = 4",
            "n_chambers = 4\nchambers = 4",
            r"field 'chambers' = 4 is invalid; allowed: a known key",
        ),
        (
            "width_mm = 20.0",
            "",
            r"field 'width_mm' = None is invalid; allowed: a value \(the field is required\)",
        ),
        (
            "chamber_length_mm = 15.0",
            "chamber_length_mm = -15.0",
            r"field 'chamber_length_mm' = -15\.0 is invalid; allowed: a number in \[0\.001, 100000\]",
        ),
        (
            "base_length_mm = 10.0",
            "base_length_mm = -1.0",
            r"field 'base_length_mm' = -1\.0 is invalid; allowed: a number in \[0, 100000\]",
        ),
        (
            "height_mm = 18.0",
            'height_mm = "eighteen"',
            r"field 'height_mm' = 'eighteen' is invalid; allowed: a number",
        ),
        ("mass_g = 15.0", "mass_g = true", r"field 'mass_g' = True is invalid; allowed: a number"),
        (
            "n_chambers = 4",
            "n_chambers = 1",
            r"field 'n_chambers' = 1 is invalid; allowed: an integer in \[2, 64\]",
        ),
        ('kind = "pneunet"', 'kind = "tendon"', r"field 'kind' = 'tendon' is invalid; allowed: 'pneunet'"),
        (
            "pressure_max_kpa = 80.0",
            "pressure_max_kpa = 0.0",
            r"field 'pressure_max_kpa' = 0\.0 is invalid; allowed: a number in \[0\.001, 1000\]",
        ),
        (  # the name becomes the file name: a path in it was a FileNotFoundError traceback
            'name = "pneunet_4"',
            'name = "../x"',
            r"field 'name' = '\.\./x' is invalid; allowed: letters, digits and '_'",
        ),
    ],
    ids=[
        "unknown_key",
        "missing_field",
        "negative_length",
        "negative_cap",
        "non_numeric",
        "bool_number",
        "one_chamber",
        "wrong_kind",
        "zero_pressure",
        "path_in_name",
    ],
)
def test_bad_toml_raises_spec_error(tmp_path: Path, old: str, new: str, match: str) -> None:
    assert old in GOOD
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(SpecError, match=r"bad\.toml: " + match):
        load_pneunet(path)


def test_malformed_toml_raises_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("kind = pneunet\n")
    with pytest.raises(SpecError, match=r"broken\.toml: field '<file>' .* allowed: valid TOML syntax"):
        load_pneunet(path)


def test_unknown_bundled_name_raises() -> None:
    with pytest.raises(SpecError, match=r"field 'name' = 'pneunet_3' is invalid; allowed: one of pneunet_2"):
        load_bundled_pneunet("pneunet_3")
