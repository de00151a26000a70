"""The bundled OctArm-class arm (assets/robots/octarm.toml): three sections stepping down 51 -> 40 -> 30 mm,
three extensor chambers a section, through every tool: the loader, urdf, pose, a dynamic run on spring
targets, export --render, mjcf and an RL task."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from pccbullet.sim.bullet import pb
from pccbullet.sim.export.skin import frustum_volume, skin_mesh
from pccbullet.sim.world import World
from pccbullet.teleop.cli import main
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.pose_file import load_pose_file
from pccbullet.urdf_gen.spec_loader import bundled_robots, load_robot
from pccbullet.urdf_gen.urdf_writer import write_urdf

SPEC = load_robot("octarm")
LENGTHS = (0.33, 0.28, 0.25)  # m, the sections' rest lengths
DIAMETERS = (0.051, 0.040, 0.030)  # m


def _cylinders_mass() -> float:
    """The three sections as cylinders of their diameters (kg)."""
    return 500.0 * sum(math.pi * (d / 2) ** 2 * h for d, h in zip(DIAMETERS, LENGTHS, strict=True))


def test_the_file_declares_three_stepped_sections_of_three_chambers() -> None:
    assert "octarm" in bundled_robots()
    (limb,) = SPEC.limbs
    assert [s.length for s in limb.segments] == pytest.approx(LENGTHS)
    radii = [r for s in limb.segments for r in (s.radius_base, s.radius_tip)]
    assert radii == pytest.approx([0.0255, 0.0255, 0.020, 0.020, 0.015, 0.015])
    act = limb.actuators
    assert act is not None and (act.kind, act.count) == ("chamber", 3)
    assert act.offset == pytest.approx(0.008) and act.area == pytest.approx(95e-6)
    assert [math.degrees(a) for a in act.angles] == pytest.approx([0.0, 120.0, 240.0])
    assert all(s.length_min == s.length for s in limb.segments)  # extensors only lengthen
    assert limb.mass == pytest.approx(_cylinders_mass(), rel=1e-12)


def test_urdf_loads_in_pybullet_with_the_sections_masses(tmp_path) -> None:
    out = write_urdf(SPEC, tmp_path)
    cid = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(str(out.limbs["arm"]), useFixedBase=True, physicsClientId=cid)
        names = [
            pb.getJointInfo(body, j, physicsClientId=cid)[12].decode()
            for j in range(pb.getNumJoints(body, physicsClientId=cid))
        ]
        markers = {naming.base_link("arm"), naming.tip_link("arm")}
        mass = sum(
            pb.getDynamicsInfo(body, j, physicsClientId=cid)[0]
            for j, n in enumerate(names)
            if n not in markers
        )
    finally:
        pb.disconnect(cid)
    assert mass == pytest.approx(_cylinders_mass(), rel=1e-9)
    assert len(out.meshes) == 3  # one slice shape a section: the three diameters


def test_pose_reports_the_arc_tip_in_pccbullet_s_terms(capsys) -> None:
    """Section 2 bent 60 deg: the tip from the three arcs by hand (straight, circular, straight)."""
    assert main(["pose", "octarm", "--limb", "arm", "--bend", "60", "--segment", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "paper_theta_deg" not in out["segments"][1]
    theta, (l1, l2, l3) = math.radians(60.0), LENGTHS
    r = l2 / theta
    expected = [
        r * (1 - math.cos(theta)) + l3 * math.sin(theta),
        0.0,
        l1 + r * math.sin(theta) + l3 * math.cos(theta),
    ]
    np.testing.assert_allclose(out["tip_in_limb_base"]["position_m"], expected, atol=1e-12)
    assert out["pybullet_tip_error_m"] < 1e-6


def test_spring_targets_without_gravity_settle_to_the_pcc_tip() -> None:
    """A dynamic world with the rod chain: the material springs alone take the stepped chain to the PCC
    shape of their targets (measured error below 1 mm over a 0.9 m arm)."""
    spec = load_robot("octarm", sections=5)
    configs = [
        PccConfig(math.radians(50), 0.0, 0.40),
        PccConfig(math.radians(70), 1.2, 0.33),
        PccConfig(2.0, 0.0, 0.3),
    ]
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(spec)
        robot.set_pcc("arm", configs, mode="target")
        world.step(3000)
        expected = robot.T_world_limbbase("arm") @ limb_transform(configs)
        error = float(np.linalg.norm(robot.tip_pose("arm")[:3, 3] - expected[:3, 3]))
    assert error < 1e-3


def test_the_bundled_dynamic_experiment_runs(tmp_path) -> None:
    """``pccbullet run octarm_curl_dynamic``: spring targets ramped, gravity in air. The recorded command
    tip is the targets' PCC tip (checked against the arcs composed here); the arm's tip ends within a
    tenth of its length of it, below it (it sags)."""
    assert main(["run", "octarm_curl_dynamic", "--out", str(tmp_path / "run")]) == 0
    data = np.load(tmp_path / "run" / "run.npz")
    tip = np.array([data[f"arm_tip_{c}_m"][-1] for c in "xyz"])
    cmd = np.array([data[f"arm_cmd_tip_{c}_m"][-1] for c in "xyz"])
    configs = [
        PccConfig(math.radians(60), 0.0, 0.33),
        PccConfig(math.radians(90), 0.0, 0.33),
        PccConfig(math.radians(150), 0.0, 0.25),
    ]
    with World(mode="kinematic") as world:
        robot = world.load_robot(load_robot("octarm", sections=6))
        target = (robot.T_world_limbbase("arm") @ limb_transform(configs))[:3, 3]
    np.testing.assert_allclose(cmd, target, atol=1e-9)
    assert float(np.linalg.norm(tip - target)) < 0.1 * sum(LENGTHS)
    assert tip[2] < target[2]


def test_export_renders_the_stepped_skin(tmp_path) -> None:
    """``export --pose-file octarm_reach --render``: PNGs written; the skin's volume is the stepped
    frustums' at the pose's lengths (ring polygons and the taper's sampling: measured < 1e-3)."""
    assert main(["export", "--pose-file", "octarm_reach", "--out", str(tmp_path), "--render"]) == 0
    assert (tmp_path / "skin_pose.png").stat().st_size > 1000
    pose = load_pose_file("octarm_reach")
    limb = pose.robot.limb("arm")
    configs = pose.limb_configs("arm")
    skin = skin_mesh(limb, configs, ring=64)
    assert skin.is_watertight
    assert skin.volume == pytest.approx(frustum_volume(limb, configs), rel=1e-3)


def test_mjcf_writes_a_model_mujoco_loads_with_the_arm_s_mass(tmp_path, capsys) -> None:
    mujoco = pytest.importorskip("mujoco")
    assert main(["mjcf", "octarm", "--out", str(tmp_path), "--sections", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "tendons: none; chamber actuators: arm (9)"  # three chambers a section
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "octarm.xml"))
    # the arm's bodies carry the stepped sections' mass; the writer's marker and node bodies add 1.6 g
    arm = float(model.body_mass.sum()) - SPEC.head.mass
    assert arm == pytest.approx(_cylinders_mass(), rel=3e-3)


def test_reach_task_on_the_arm_in_both_modes() -> None:
    gym = pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    import pccbullet.sim.rl  # noqa: F401 -- registers the ids

    shapes = []
    for mode in ("kinematic", "dynamic"):
        env = gym.make("pccbullet/UrsulaReach-v1", robot="octarm", mode=mode, sections=3)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                check_env(env.unwrapped, skip_render_check=True)
            obs, _ = env.reset(seed=0)
            shapes.append(obs.shape)
            u = env.unwrapped
            assert u.limb == "arm" and obs.shape == (16 + 9 + 3 * 9,)
            if mode == "kinematic":  # a policy that knows the target's configuration reaches it
                for _ in range(200):
                    a = np.clip((u._target_pcc - u.pcc) / (u._rates * u.control_dt), -1, 1).astype(np.float32)
                    obs, _, terminated, _, info = env.step(a)
                    if terminated:
                        break
                assert info["is_success"] and info["distance_m"] < 0.01
        finally:
            env.close()
    assert shapes[0] == shapes[1]


def test_the_press_task_needs_a_force_sensor_the_arm_lacks() -> None:
    pytest.importorskip("gymnasium")
    from pccbullet.core.errors import ConfigurationError
    from pccbullet.sim.rl.press import UrsulaPressEnv

    with pytest.raises(
        ConfigurationError,
        match=r"limb = None is invalid for the press task on robot 'octarm'; allowed: the limbs with a force "
        r"sensor \(none: the robot has no force sensor\)",
    ):
        UrsulaPressEnv(robot="octarm")


def test_bad_limb_and_missing_file_are_one_line(capsys) -> None:
    assert main(["pose", "octarm", "--limb", "tentacle", "--bend", "30"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "pccbullet: error: robot 'octarm' has no limb 'tentacle'; limbs: arm"
    )
