"""PyBullet world: kinematic reset and position control put the limbs where PCC says."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig, chain_frames, limb_transform, rotation_angle


def _random_configs(robot, limb: str, rng: np.random.Generator) -> list[PccConfig]:
    return [
        PccConfig(
            rng.uniform(-seg.bend_max, seg.bend_max),
            rng.uniform(-seg.plane_max, seg.plane_max),
            rng.uniform(seg.length_min, seg.length_max),
        )
        for seg in robot.limb(limb).segments
    ]


@pytest.fixture(scope="module")
def robot():
    with World(mode="kinematic") as world:
        yield world.load_robot("ursula")


@pytest.mark.parametrize("limb", ["grasper", "palpation", "camera", "light"])
def test_kinematic_reset_tip_equals_pcc_tip(robot, limb: str) -> None:
    rng = np.random.default_rng(7)
    worst_pos = worst_rot = 0.0
    for _ in range(25):
        configs = _random_configs(robot, limb, rng)
        robot.set_pcc(limb, configs)
        expected = robot.T_world_limbbase(limb) @ limb_transform(configs)
        actual = robot.tip_pose(limb)
        worst_pos = max(worst_pos, float(np.linalg.norm(actual[:3, 3] - expected[:3, 3])))
        worst_rot = max(worst_rot, rotation_angle(actual[:3, :3].T @ expected[:3, :3]))
    assert worst_pos < 1e-6  # PyBullet stores link poses in single precision
    assert worst_rot < 1e-5
    np.testing.assert_allclose(robot.joints(limb), robot.pcc_joints(limb, configs), atol=1e-12)


def test_section_bodies_sit_at_chain_frames(robot) -> None:
    configs = [PccConfig(math.radians(90), math.radians(30), 0.59)]
    robot.set_pcc("camera", configs)
    q = robot.pcc_joints("camera", configs)
    expected = robot.T_world_limbbase("camera") @ chain_frames(q)[:-1]
    np.testing.assert_allclose(robot.section_poses("camera"), expected, atol=1e-6)


def test_payload_frame_is_offset_along_tip_z(robot) -> None:
    robot.set_pcc("camera", [PccConfig(1.0, 0.2, 0.6)])
    T_tip = robot.tip_pose("camera")
    T_cam = robot.link_pose("camera_frame")
    np.testing.assert_allclose(T_cam[:3, 3], T_tip[:3, 3] + 0.005 * T_tip[:3, 2], atol=1e-6)


def test_limits_and_bad_arguments_raise(robot) -> None:
    with pytest.raises(
        ConfigurationError,
        match=r"limb 'camera' segment 1: bend = 200 deg is out of range; allowed: \[-180, 180\] deg",
    ):
        robot.set_pcc("camera", [PccConfig(math.radians(200), 0.0, 0.6)])
    with pytest.raises(
        ConfigurationError,
        match=r"limb 'grasper' segment 2: length = 0.31 m is out of range; allowed: \[0.29, 0.3\] m",
    ):
        robot.set_pcc("grasper", [PccConfig(0, 0, 0.3), PccConfig(0, 0, 0.31)])
    with pytest.raises(
        ConfigurationError, match=r"limb 'grasper' has 2 segment\(s\); 1 configuration\(s\) given"
    ):
        robot.set_pcc("grasper", [PccConfig(0, 0, 0.3)])
    with pytest.raises(
        ConfigurationError,
        match=r"robot 'ursula' has no limb 'tail'; limbs: grasper, palpation, camera, light",
    ):
        robot.tip_pose("tail")
    with pytest.raises(
        ConfigurationError, match=r"mode = 'teleport' is invalid; allowed: 'reset', 'position'"
    ):
        robot.set_pcc("camera", [PccConfig(0, 0, 0.6)], mode="teleport")
    with pytest.raises(
        ConfigurationError, match=r"mode = 'magic' is invalid; allowed: 'kinematic', 'dynamic'"
    ):
        World(mode="magic")


def test_position_control_without_gravity_reaches_pcc_tip() -> None:
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot("ursula", sections=5)
        configs = [PccConfig(math.radians(60), math.radians(45), 0.59)]
        robot.set_pcc("camera", configs, mode="position")
        world.step(1000)
        expected = robot.T_world_limbbase("camera") @ limb_transform(configs)
        error = np.linalg.norm(robot.tip_pose("camera")[:3, 3] - expected[:3, 3])
        assert world.time == pytest.approx(1.0)
    assert error < 1e-3


def test_kinematic_step_keeps_pose_and_advances_time(robot) -> None:
    configs = [PccConfig(1.2, -0.4, 0.6)]
    robot.set_pcc("light", configs)
    before = robot.tip_pose("light")
    t0 = robot.world.time
    robot.world.step(20)
    np.testing.assert_allclose(robot.tip_pose("light"), before, atol=1e-12)
    assert robot.world.time == pytest.approx(t0 + 0.020)


def test_temporary_urdfs_are_removed_on_close() -> None:
    world = World()
    robot = world.load_robot("ursula", sections=2)
    folder = robot.urdfs.head.parent
    assert folder.is_dir()
    world.close()
    assert not folder.exists()


def test_robot_starts_straight_at_rest_length() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=4)
        T = robot.tip_pose("camera")
        base = robot.T_world_limbbase("camera")
    np.testing.assert_allclose(T[:3, 3], base[:3, 3] + 0.6 * base[:3, 2], atol=1e-6)


def test_nan_configurations_are_refused(robot) -> None:
    with pytest.raises(ConfigurationError, match=r"limb 'camera' segment 1: bend = nan deg is out of range"):
        robot.set_pcc("camera", [PccConfig(math.nan, 0.0, 0.6)])
    with pytest.raises(ConfigurationError, match=r"limb 'camera' segment 1: plane = nan deg is out of range"):
        robot.set_pcc("camera", [PccConfig(0.5, math.nan, 0.6)])
    with pytest.raises(ConfigurationError, match=r"limb 'camera' segment 1: length = nan m is out of range"):
        robot.set_pcc("camera", [PccConfig(0.0, 0.0, math.nan)])
