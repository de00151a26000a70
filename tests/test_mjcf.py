"""The MJCF export with the material (pccbullet.sim.mjcf): the same chain as a dynamic World's, in MuJoCo.

The camera tentacle (URSULA, rod chain, N = 10) against the World's rod chain: the sag in air within 2 % of
L (measured 0.95 mm with the chords' shear; without it on both sides, the same tip to 1e-6 m), the first
frequency within 3 % (measured -0.5 %), the twist under a tip torque as the World's; the joint parameters
equal to the World's numbers; tendons that pull the right way; the command's files and errors.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from pccbullet.sim.mjcf.peer import MujocoRobot  # noqa: E402
from pccbullet.sim.mjcf.writer import build_mjcf, joint_vector_names, qpos_addresses, write_mjcf  # noqa: E402
from pccbullet.sim.world import PHYSICS_DT, World  # noqa: E402
from pccbullet.teleop.cli import main  # noqa: E402
from pccbullet.urdf_gen.pcc import PccConfig  # noqa: E402
from pccbullet.urdf_gen.spec_loader import load_robot  # noqa: E402
from tests.test_rod_chain import CAMERA, LENGTH, _camera_only, _frequency, rod_static  # noqa: E402

SETTLE_M = 1e-6  # m: settled when the tip moved less in a simulated second


def _settle(robot: MujocoRobot, seconds: int = 60) -> np.ndarray:
    """Step until the camera tip rests; its position in the limb base frame ``(3,)``."""
    T_base_world = np.linalg.inv(robot.T_world_limbbase(CAMERA))
    tip = np.full(3, np.inf)
    for _ in range(seconds):
        robot.step(1000)
        now = (T_base_world @ robot.tip_pose(CAMERA))[:3, 3]
        if np.linalg.norm(now - tip) < SETTLE_M:
            return now
        tip = now
    raise AssertionError(f"the MuJoCo camera limb did not settle in {seconds} s")


def _mujoco_frequency(n: int, medium: str = "air", shear: bool = True) -> float:
    """First bending frequency (Hz), as tests/test_rod_chain.py's ``_frequency``: no gravity, no material
    damping, released from a 5 mm PCC bend to straight; zero crossings of the tip's x over 3 periods."""
    spec = _camera_only(n, damping_ratio=0.0)
    with MujocoRobot(spec, medium=medium, gravity=(0.0, 0.0, 0.0), shear=shear) as robot:
        robot.set_pcc(CAMERA, [PccConfig(2 * 0.005 / LENGTH, 0.0, LENGTH)], mode="reset")
        robot.set_pcc(CAMERA, [PccConfig(0.0, 0.0, LENGTH)])
        T_base_world = np.linalg.inv(robot.T_world_limbbase(CAMERA))
        steps = int(3.2 / 0.22 / PHYSICS_DT)
        x = np.empty(steps)
        for k in range(steps):
            robot.step()
            x[k] = (T_base_world @ robot.tip_pose(CAMERA))[0, 3]
    i = np.flatnonzero(np.sign(x[:-1]) * np.sign(x[1:]) < 0)
    crossings = (i - x[i] / (x[i + 1] - x[i])) * PHYSICS_DT
    return 1.0 / float(np.mean(np.diff(crossings[::2])))


def test_joint_parameters_are_the_worlds() -> None:
    """Per entry of the joint vector: MuJoCo's stiffness is the World's ``K``, its damping ``C + dt K``
    (the implicit step's), its spring reference and ``qpos0`` the PCC rest shape; every limb of URSULA."""
    spec = load_robot("ursula", sections=4)
    with World(chain="rod", medium="water") as world, MujocoRobot(spec, medium="water") as peer:
        robot = world.load_robot(spec)
        model = peer.model
        for limb in spec.limbs:
            compliant = robot.compliant[limb.name]
            at = qpos_addresses(model, joint_vector_names(limb))
            ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_vector_names(limb)]
            dofs = model.jnt_dofadr[ids]
            assert np.array_equal(model.jnt_stiffness[ids], compliant.K)
            np.testing.assert_allclose(
                model.dof_damping[dofs], compliant.C + PHYSICS_DT * compliant.K, rtol=1e-11
            )
            np.testing.assert_allclose(model.qpos_spring[at], compliant.target, atol=1e-12)
            np.testing.assert_allclose(model.qpos0[at], compliant.target, atol=1e-12)
            assert not model.dof_armature.any()


def test_camera_sag_in_air_is_the_worlds() -> None:
    """The camera tentacle settled under gravity (critical damping), limb base frame: within 2 % of L of the
    World's rod chain; measured 0.95 mm (both with the chords' shear: ours quasi-static, MuJoCo's two
    slides a chord)."""
    world_tip, _ = rod_static(10, "air")
    with MujocoRobot(_camera_only(10, damping_ratio=1.0)) as robot:
        tip = _settle(robot)
    error = float(np.linalg.norm(tip - world_tip))
    assert error < 0.02 * LENGTH
    assert error == pytest.approx(0.95e-3, abs=0.1e-3)


def test_without_shear_the_export_is_the_worlds_chain_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the chords' shear on both sides the settled tips agree within the World's settling tolerance
    (10 um in a second): the same bodies, joints, stiffness and static equilibrium."""
    import pccbullet.sim.limb.dynamics as dynamics

    original = dynamics.CompliantLimb.__init__

    def unsheared(self, robot, limb, medium_, *, shear=True, **options):
        original(self, robot, limb, medium_, shear=False, **options)

    monkeypatch.setattr(dynamics.CompliantLimb, "__init__", unsheared)
    rod_static.cache_clear()
    try:
        world_tip, _ = rod_static(10, "air")
    finally:
        rod_static.cache_clear()
    with MujocoRobot(_camera_only(10, damping_ratio=1.0), shear=False) as robot:
        tip = _settle(robot)
    assert np.abs(tip - world_tip).max() < 1e-5


def test_first_frequency_is_the_worlds() -> None:
    """Within 3 % of the World's rod chain: measured -0.13 % with the shear slides (MuJoCo's shear has
    the slices' inertia, ours is quasi-static), +0.22 % without; in water -0.48 % (the added mass in the
    slices' bodies). With a 0.1 g marker body on the tip frame (no longer written: frames have no mass)
    MuJoCo's figure in air was -0.54 %."""
    ours = _frequency(10, "air")
    theirs = _mujoco_frequency(10)
    assert abs(theirs / ours - 1.0) < 0.03
    assert theirs / ours - 1.0 == pytest.approx(-0.0013, abs=0.001)


def test_twist_under_a_tip_torque_is_the_worlds() -> None:
    """A 2 mN m torque about the straight tentacle's tip tangent (MuJoCo's ``xfrc_applied``, ramped in),
    no gravity: 29.90 deg, the World's (tests/test_rod_chain.py) and within 1.5 % of Saint-Venant; the
    hinges carry the torsion stiffness ``G J / l`` (a ball joint's one stiffness gives 20.1 deg)."""
    spec = _camera_only(10, damping_ratio=1.0)
    with MujocoRobot(spec, gravity=(0.0, 0.0, 0.0)) as robot:
        tip = mujoco.mj_name2id(robot.model, mujoco.mjtObj.mjOBJ_BODY, "camera_tip")
        R_base = robot.T_world_limbbase(CAMERA)[:3, :3]
        for k in range(20000):
            x = min(k * PHYSICS_DT / 2.0, 1.0)
            robot.data.xfrc_applied[tip, 3:] = R_base @ np.array([0.0, 0.0, 2e-3]) * x * x * (3.0 - 2.0 * x)
            robot.step()
        R = R_base.T @ robot.tip_pose(CAMERA)[:3, :3]
    twist = math.degrees(math.atan2(R[1, 0] - R[0, 1], R[0, 0] + R[1, 1]))
    assert twist == pytest.approx(29.90, abs=0.02)


@pytest.mark.parametrize("tensions", [(1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.5, 0.5)])
def test_the_files_tendons_bend_it_as_the_kirchhoff_rod(tensions) -> None:
    """The camera tentacle's dynamic-mode tendons (``[[limbs.tendons]]``: four at 0.7 of the radius, tapering
    with it, anchored at the tip disk) pulled in MuJoCo (zero gravity, air) bend it where the Kirchhoff rod
    with the same tendons' moments and compression puts the tip (tests/test_tendons.py's independent
    reference), within 2 % of L (one tendon, and two pulling towards 225 deg): measured 6.3 and 3.8 mm
    (1.1 and 0.6 %; the World's chain 3.0 and 2.2 mm). MuJoCo's tendon runs straight between the slice ends."""
    from tests.test_tendons import kirchhoff_tip

    spec = _camera_only(10, damping_ratio=1.0)
    limb = spec.limb(CAMERA)
    with MujocoRobot(spec, gravity=(0.0, 0.0, 0.0)) as robot:
        assert [robot.model.actuator(j).name for j in range(4)] == [t.name for t in limb.tendons]
        robot.data.ctrl[:4] = tensions
        tip = _settle(robot)
    expected, _ = kirchhoff_tip(limb, tensions)
    assert np.linalg.norm(tip - expected) < 0.02 * LENGTH


def test_actuator_block_tendons_pull_towards_their_side() -> None:
    """A limb with only an actuator block of tendons (no ``[[limbs.tendons]]``) gets the Newton-Euler model's
    routing: each of the camera segment's four tendons (0, 90, 180, 270 deg at 7 mm) bends the tentacle
    towards its side; a 1 N pull puts the tip where the model's tendon statics put it (continuous fibres)
    within 2 % of L (measured 1.2 %: MuJoCo's tendon runs straight between the slice ends)."""
    import dataclasses

    from pccbullet.sim.models.actuators import TendonActuation
    from pccbullet.sim.models.newton_euler.model import LimbModel
    from pccbullet.sim.models.newton_euler.statics import static_equilibrium

    spec = _camera_only(10, damping_ratio=1.0)
    spec = dataclasses.replace(spec, limbs=(dataclasses.replace(spec.limb(CAMERA), tendons=()),))
    limb = spec.limb(CAMERA)
    model = LimbModel(limb, 10, gravity=np.zeros(3))
    for j, side in enumerate(([1, 0], [0, 1], [-1, 0], [0, -1])):
        with MujocoRobot(spec, gravity=(0.0, 0.0, 0.0)) as robot:
            assert robot.model.actuator(j).name == f"camera_s1_t{j + 1}"
            robot.data.ctrl[j] = 1.0
            tip = _settle(robot)
        assert np.dot(tip[:2], side) > 0.1 and abs(tip[0] * side[1] - tip[1] * side[0]) < 1e-9
        tensions = np.zeros(4)
        tensions[j] = 1.0
        expected = model.tip_position(static_equilibrium(model, TendonActuation(model).tau(tensions)))
        assert np.linalg.norm(tip - expected) < 0.02 * LENGTH


def test_a_robot_without_tendons_gets_none_and_the_file_loads(tmp_path) -> None:
    """The hydraulic arm's chambers are not tendons: no pull-only motor, one pushing chamber actuator on its
    fibre each (tests/test_pressure_drive.py); the model compiles and steps."""
    out = write_mjcf(load_robot("hydraulic_arm", sections=4), tmp_path)
    model = mujoco.MjModel.from_xml_path(str(out.path))
    assert model.ntendon == 6 and model.nu == 6 and model.njnt > 0
    assert all(model.actuator(i).name.startswith("arm_s") for i in range(model.nu))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, nstep=100)
    assert np.isfinite(data.qpos).all()


def test_rrp_chain_and_water_export() -> None:
    """The RRP chain exports too (hinges and slides of the URDF), and water puts buoyancy into ``gravcomp``
    and the added mass into the slices: the rod's bodies carry ``rho_w / rho`` of their weight."""
    spec = load_robot("ursula", sections=3)
    root, _ = build_mjcf(spec, chain="rrp", medium="water", tendons=False)
    kinds = {j.get("type") for j in root.iter("joint")}
    assert kinds == {"hinge", "slide"}
    root, _ = build_mjcf(spec, medium="water", tendons=False, shear=False)
    node = next(b for b in root.iter("body") if b.get("name") == "camera_s1_k2_a")
    assert float(node.get("gravcomp")) == pytest.approx(1000.0 / 1070.0, rel=1e-9)
    option = root.find("option")
    assert option.get("density") == "1000" and float(option.get("viscosity")) == pytest.approx(1.004e-3)


def test_mjcf_command_writes_a_model_mujoco_loads(tmp_path, capsys) -> None:
    assert main(["mjcf", "ursula", "--out", str(tmp_path), "--sections", "3"]) == 0
    out = capsys.readouterr().out
    assert "tendons: 24 (grasper 8, palpation 8, camera 4, light 4), motors on them: 24" in out
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "ursula.xml"))
    # four tendons a segment: two segments for the grasper and the palpation arm, one for the tentacles
    assert model.ntendon == 24 and model.nu == 24 and len(list((tmp_path / "meshes").glob("*.stl"))) > 0


def test_mjcf_summary_counts_what_the_file_holds(tmp_path, capsys) -> None:
    """Tendons declared only as ``[[limbs.tendons]]`` (no ``[limbs.actuators]`` table) are written and
    counted; the chambers' pushing actuators are counted apart, and chambers that get no actuator (a
    pressure-to-bend law's) are named as not written."""
    text = (Path(__file__).parent / "data" / "stepped_rod.toml").read_text()
    text = text.replace(
        "[[limbs.segments]]\nlength_mm = 150\ndiameter_mm = [60, 60]",
        "[[limbs.tendons]]\nanchor_segment = 2\ncount = 3\noffset_mm = 15\nmax_tension_n = 10\n"
        "max_speed_mm_s = 50\n[[limbs.tendons]]\nanchor_segment = 1\ncount = 4\noffset_mm = 12\n"
        "max_tension_n = 10\nmax_speed_mm_s = 50\n[[limbs.segments]]\nlength_mm = 150\ndiameter_mm = [60, 60]",
    )
    robot = tmp_path / "tendon_rod.toml"
    robot.write_text(text)
    assert main(["mjcf", str(robot), "--out", str(tmp_path / "a"), "--sections", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "tendons: 7 (rod 7), motors on them: 7"
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "a" / "stepped_rod.xml"))
    assert model.ntendon == 7 and model.nu == 7
    assert main(["mjcf", str(robot), "--out", str(tmp_path / "b"), "--no-tendons"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "tendons: none"
    assert main(["mjcf", "hydraulic_arm", "--out", str(tmp_path / "c"), "--sections", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "tendons: none; chamber actuators: arm (6)"
    # chambers given by a law get no actuator (their forces are no gain on a control): named as not written
    assert main(["mjcf", "pneunet_chambers", "--out", str(tmp_path / "d"), "--sections", "2"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("not written (no actuator drives them)")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["mjcf", "pneunet_4", "--out", "D"],
            "pccbullet: error: 'mjcf' takes a PCC robot; 'pneunet_4' is a pneunet",
        ),
        (
            ["mjcf", "ursula", "--out", "D", "--medium", "mud"],
            "pccbullet: error: argument --medium: invalid choice",
        ),
        (["mjcf", "ursula", "--out", "D", "--sections", "0"], "pccbullet: error: argument --sections"),
        (["mjcf", "no_such_robot", "--out", "D"], "pccbullet: error:"),
    ],
)
def test_mjcf_command_refuses_bad_input_in_one_line(argv, message, tmp_path, capsys) -> None:
    argv = [str(tmp_path / "out") if a == "D" else a for a in argv]
    assert main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pccbullet")]
    assert len(err) == 1 and err[0].startswith(message), err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_bench_peer_runs_the_sprung_export() -> None:
    """``pccbullet bench --peer mujoco`` steps the export (six MuJoCo dofs a rod section: three hinges, two
    shear slides, the chord; three a tip node), its targets swept as the PyBullet rows' are, and stays
    finite; one peer row per dynamic row, in the table's ratio column."""
    from pccbullet.sim.bench import format_table, run_bench

    result = run_bench(modes=("dynamic",), sections=(3,), seconds=0.05, peer="mujoco", models=False)
    (row,) = result["peer"]
    assert row["dofs"] == 2 * (2 * (6 * 3 + 3)) + 2 * (6 * 3 + 3) and row["stable"]
    assert row["physics_rate_hz"] > 0.0 and row["medium"] == "water" and row["chain"] == "rod"
    assert "mujoco steps/s" in format_table(result)
