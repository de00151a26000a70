"""The demo's grasp infrastructure: the grasp key and command, tendon tensions in the state reports, the
peak tensions in the summary, placed objects on both sides of the link (issue 27 item 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.spec import ObjectSpec
from pccbullet.sim.world import World
from pccbullet.teleop.channel import optical_link
from pccbullet.teleop.cli import main
from pccbullet.teleop.demo.hud import grip_line, hud_lines
from pccbullet.teleop.devices.keys import PRESS_KEYS, key_table
from pccbullet.teleop.devices.scripted import ScriptedDevice
from pccbullet.teleop.mapping import OperatorMapping
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.objects import load_objects
from pccbullet.teleop.mmt.packets import (
    CMD_HEADER,
    OBJECT_POSE,
    STATE_HEADER,
    STATE_TAIL,
    TENSION_STEP,
    decode_objects,
    decode_tensions,
    encode_objects,
    encode_tensions,
    tendon_block_size,
)
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.mmt.transport import Transport
from pccbullet.teleop.slave import GRIP_TENSION_N, grip_tensions
from pccbullet.urdf_gen.pcc import PccConfig, rest_configs
from pccbullet.urdf_gen.spec_loader import load_robot

SHAPE = [("grasper", 2), ("palpation", 2), ("camera", 1), ("light", 1)]
N_TENDONS = 24  # URSULA: 8 + 8 + 4 + 4
LINK = optical_link()  # commands reach the robot in 0.1 ms: short sessions
BALL = ObjectSpec(
    "ball", "sphere", (0.03,), None, 1240.0, "pla", (0.9, 0.0, -0.5), (0.0, 0.0, 0.0, 1.0), False
)


def test_the_one_key_table_has_the_grasp_key_and_help_keys_prints_it(capsys) -> None:
    from pccbullet.teleop.udp.packets import BUTTON_ACTIONS

    assert PRESS_KEYS["g"] == "grasp" and BUTTON_ACTIONS.index("grasp") == 3  # the UDP bridge's bit 3
    assert any("g: close / open the selected limb's grasp" in line for line in key_table())
    assert main(["demo", "--help-keys"]) == 0
    assert "g: close / open the selected limb's grasp (tendons)" in capsys.readouterr().out


def test_grasp_actions_toggle_close_and_open_a_limbs_bit_and_do_nothing_without_tendons() -> None:
    from pccbullet.teleop.devices.base import DeviceSample

    mapping = OperatorMapping(load_robot("ursula"))
    press = lambda *a: mapping.update(DeviceSample(0.0, pressed=a), 1e-3)  # noqa: E731
    press("grasp")  # the selected limb: the first, the grasper (bit 0)
    assert mapping.grips == 0b0001
    press("select:camera", "grasp", "grasp:close:palpation")
    assert mapping.grips == 0b0111
    press("grasp", "grasp:open:grasper", "grasp:close:nothing", "grasp:squeeze")
    assert mapping.grips == 0b0010
    press("grasp:close", "grasp:close")  # close is idempotent, toggle is not
    assert mapping.grips == 0b0110
    mapping.grasp_enabled = False
    press("grasp", "grasp:open")
    assert mapping.grips == 0b0110 and mapping.grasp_refused == 2


def test_tension_block_round_trips_in_steps_and_costs_one_byte_a_tendon() -> None:
    tensions = np.array([0.0, 0.2, 7.93, 30.0, 40.0, -1.0, np.nan])
    held, out = decode_tensions(encode_tensions(0b0101, tensions))
    assert held == 0b0101
    np.testing.assert_allclose(out, [0.0, 0.25, 7.875, 30.0, 31.875, 0.0, 0.0])
    assert np.abs(out[:4] - tensions[:4]).max() <= TENSION_STEP / 2
    assert tendon_block_size(N_TENDONS) == 25 and tendon_block_size(0) == 0
    cfg = MmtConfig(downlink=LINK, uplink=LINK)
    plain, tendons = Transport(cfg, SHAPE, 1e-3), Transport(cfg, SHAPE, 1e-3, N_TENDONS)
    assert plain.report_size == STATE_HEADER.size + 36 + STATE_TAIL.size == 95
    assert tendons.report_size == 120  # 25 bytes more: 1 kbit/s at 5 reports a second


def test_object_block_round_trips_to_half_a_millimetre_and_costs_14_bytes_an_object() -> None:
    rng = np.random.default_rng(3)
    q = rng.normal(size=(3, 4))
    poses = np.concatenate([rng.uniform(-2.0, 2.0, (3, 3)), q / np.linalg.norm(q, axis=1, keepdims=True)], 1)
    data = encode_objects(poses)
    out = decode_objects(data)
    assert len(data) == 3 * OBJECT_POSE.size == 42
    assert np.abs(out[:, :3] - poses[:, :3]).max() <= 0.0005
    assert np.abs(out[:, 3:] - poses[:, 3:]).max() < 1e-4
    np.testing.assert_allclose(np.linalg.norm(out[:, 3:], axis=1), 1.0, atol=1e-12)
    assert decode_objects(b"").shape == (0, 7)
    cfg = MmtConfig(downlink=LINK, uplink=LINK)
    assert Transport(cfg, SHAPE, 1e-3, N_TENDONS, 1).report_size == 134  # 14 bytes more an object


def test_every_command_carries_the_grasp_bits() -> None:
    spec = load_robot("ursula")
    transport = Transport(MmtConfig(downlink=LINK, uplink=LINK), SHAPE, 1e-3)
    cmd = {limb.name: rest_configs(limb.segments) for limb in spec.limbs}
    for k, grips in ((0, 0b0001), (100, 0b0001), (200, 0)):
        transport.send_command(k, k * 1e-3, cmd, grips)
    packets = transport.commands_arrived(1.0)
    assert [CMD_HEADER.unpack_from(p)[4] for p in packets] == [1, 1, 0]  # a lost one: the next says it


def test_the_grasp_key_reaches_the_tendon_driven_robot_which_holds_and_releases_its_grip() -> None:
    """In lockstep: ``g`` on the grasper closes its grasp, the next command carries it, the robot holds its
    distal set (TendonDrive.held) at the grip tension and reports it; ``grasp:open`` releases it."""
    cfg = MmtConfig(downlink=LINK, uplink=LINK, drive="tendons")
    device = ScriptedDevice(presses=[(0.0, "select:grasper"), (0.05, "grasp"), (1.05, "grasp:open")])
    with MmtSession(load_robot("ursula", sections=3), cfg) as s:
        drive = s.slave.robot.compliant["grasper"].tendons
        s.run(device, 0.9)
        assert s.mapping.grips == 0b0001 and drive.held == (1,)
        s.run(device, 0.1)  # reports at 5 Hz: one more after the grip closed
        report = s.last_report
        assert report is not None and report.held == 0b0001 and report.tensions.shape == (N_TENDONS,)
        # segment 2's set pulls on the side of its commanded plane (0: its tendon at 0 deg), the others are
        # slack; the grip tension is reached as the motors slow down (their torque-speed line)
        for tensions in (drive.tensions[4:], report.tensions[4:8]):
            assert tensions[0] > 0.3 and tensions[1:].max() == 0.0
        assert "grip (g) grasper: CLOSED, robot holds" in grip_line(s)
        assert hud_lines(s)[-1] == grip_line(s)
        s.run(device, 0.3)
        assert s.mapping.grips == 0 and drive.held == ()
        peaks = s.tendon_report()
    assert peaks["drive"] == "tendons" and len(peaks["peak_tension_n"]) == N_TENDONS  # type: ignore[arg-type]
    assert all(0 <= v <= 31 for v in peaks["peak_tension_n"].values())  # type: ignore[union-attr]
    assert peaks["peak_tension_n"]["grasper_s2_t0"] > 0.3  # type: ignore[index]


def test_a_closed_grasp_pulls_towards_the_distal_segments_commanded_plane() -> None:
    """The grasper's segment 2 commanded to plane 90 deg after segment 1's 180 deg: its frame is turned by
    180 deg, so the grip pulls the tendon at 270 deg (the grasp experiment's grip_n = [0, 0, 0, 8])."""
    with World(medium="water") as world:
        drive = world.load_robot("ursula", drive="tendons", sections=3).compliant["grasper"].tendons
        pcc = [PccConfig(0.05, math.pi, 0.3), PccConfig(1.0, math.pi / 2, 0.3)]
        np.testing.assert_allclose(grip_tensions(drive, pcc), [0, 0, 0, GRIP_TENSION_N], atol=1e-12)
        pcc[1] = PccConfig(1.0, -3 * math.pi / 4, 0.3)  # between the tendons at 0 and 90 deg: shared
        T = grip_tensions(drive, pcc)
        np.testing.assert_allclose(T, [GRIP_TENSION_N / math.sqrt(2)] * 2 + [0, 0], atol=1e-12)
        pcc[1] = PccConfig(-1.0, math.pi / 2, 0.3)  # a negative bend: the other side, the tendon at 90 deg
        np.testing.assert_allclose(grip_tensions(drive, pcc), [0, GRIP_TENSION_N, 0, 0], atol=1e-12)
        assert GRIP_TENSION_N <= min(t.max_tension for t in drive.specs)  # within every grip's stall


def test_with_joints_the_grasp_key_does_nothing_and_the_hud_says_why() -> None:
    cfg = MmtConfig(downlink=LINK, uplink=LINK)
    device = ScriptedDevice(presses=[(0.0, "grasp")])
    with MmtSession(load_robot("ursula", sections=3), cfg) as s:
        s.run(device, 0.3)
        assert s.mapping.grips == 0 and s.mapping.grasp_refused == 1
        assert s.slave.robot.compliant["grasper"].tendons.held == ()
        assert "driven by its joints (no tendons" in grip_line(s)
        assert s.last_report is not None and s.last_report.tensions.shape == (0,)
        assert s.tendon_report() == {"drive": "joints", "limbs": [], "peak_tension_n": {}, "objects": {}}


def test_placed_objects_exist_in_the_robots_world_and_in_the_masters_model() -> None:
    cfg = MmtConfig(downlink=LINK, uplink=LINK, objects=(BALL,))
    with MmtSession(load_robot("ursula", sections=3), cfg) as s:
        (robot_ball,), (model_ball,) = s.slave.objects, s.objects
        assert robot_ball.world is s.slave.world and model_ball.world is s.world
        assert robot_ball.kind == model_ball.kind == "sphere" and robot_ball.size == (0.03,)
        assert not robot_ball.fixed and model_ball.fixed  # the robot's sinks; the model shows it placed
        s.run(ScriptedDevice(), 0.2)
        assert robot_ball.position()[2] < -0.5  # PLA sinks in seawater
        np.testing.assert_allclose(model_ball.position(), BALL.position, atol=1e-9)
        shape = pb.getVisualShapeData(model_ball.body, physicsClientId=s.world.client)
        assert shape and math.isclose(shape[0][3][0], 0.03)  # a visual the viewers show


def test_objects_file_is_read_and_bad_ones_are_refused_naming_the_field(tmp_path, capsys) -> None:
    good = tmp_path / "scene.toml"
    good.write_text(
        '[[objects]]\nname = "ball"\nshape = "sphere"\nradius_mm = 30\ndensity_kg_m3 = 1240\n'
        "position_mm = [900, 0, -500]\n"
    )
    (ball,) = load_objects(good)
    assert (
        ball.size == (0.03,) and ball.position == pytest.approx((0.9, 0.0, -0.5)) and ball.material == "pla"
    )
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text() + 'material = "jelly"\n')
    with pytest.raises(SpecError, match=r"bad.toml.*objects\[0\]\.material.*'jelly'.*'pla'"):
        load_objects(bad)
    assert main(["demo", "--headless", "--out", str(tmp_path / "out"), "--objects", str(bad)]) == 2
    assert "objects[0].material" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_mixed_robot_grasps_with_its_tendon_driven_grasper_while_the_others_follow_spring_targets() -> None:
    """``tendon_limbs=("grasper",)`` with ``drive = "joints"``: the robot's grasper runs on its tendons (its
    8 tensions reported, the grasp key holds its distal set) while the palpation arm moves on spring targets
    towards the stylus' command (no tendons); the summary names the tendon-driven limb."""
    cfg = MmtConfig(downlink=LINK, uplink=LINK, tendon_limbs=("grasper",), objects=(BALL,))
    device = ScriptedDevice(
        waypoints=[(0.0, None), (0.5, None), (0.52, (0.475, 0.12, -0.41)), (1.2, (0.45, 0.15, -0.45))],
        presses=[(0.0, "select:grasper"), (0.05, "grasp"), (0.51, "select:palpation")],
    )
    with MmtSession(load_robot("ursula", sections=3), cfg) as s:
        drives = {n: c.drive for n, c in s.slave.robot.compliant.items()}
        assert drives == {"grasper": "tendons", "palpation": "joints", "camera": "joints", "light": "joints"}
        s.run(device, 1.2)
        assert s.slave.robot.compliant["grasper"].tendons.held == (1,)
        assert not any(c.external_loads for c in s.slave.robot.compliant.values())  # none listed
        assert s.last_report is not None and s.last_report.tensions.shape == (8,)
        rest = np.array([[0.0, 0.0, 0.3]] * 2)
        assert np.abs(s.slave.setpoint["palpation"] - rest).max() > 0.05  # moved on its spring targets
        report = s.tendon_report()
    assert report["drive"] == "joints" and report["limbs"] == ["grasper"]
    ball = report["objects"]["ball"]  # type: ignore[index]
    assert (
        ball["lifted_height_m"] < -0.05 and ball["held"] is False
    )  # it sank to the seabed and ball["support_force_n"] > 0.0
    assert sorted(report["peak_tension_n"]) == [f"grasper_s{g}_t{i}" for g in (1, 2) for i in range(4)]  # type: ignore[arg-type]


def test_the_start_pose_is_the_masters_command_and_the_robots_pose_and_bad_ones_are_refused() -> None:
    """``MmtConfig.start``: the folded tentacles of the demo (:data:`FOLDED`) are the master's command and
    model at t = 0 and the robot's pose (its measured arcs at once); the limbs that estimate their contacts
    are the listed ones; a start naming no limb of the robot, or the wrong number of segments, is refused
    with one line."""
    from pccbullet.teleop.demo.scene import FOLDED, demo_config

    cfg = demo_config("optical", "mixed", objects=())
    spec = load_robot("ursula", sections=3)
    with pytest.raises(
        ConfigurationError, match=r"start = 'tail' with 1 segments is invalid; allowed: a limb"
    ):
        MmtConfig(start=(("tail", ((0.0, 0.0, 0.6),)),)).start_configs(spec)
    with pytest.raises(ConfigurationError, match=r"start = 'grasper' with 1 segments .* per segment \(2\)"):
        MmtConfig(start=(("grasper", ((0.0, 0.0, 0.3),)),)).start_configs(spec)
    with MmtSession(spec, cfg) as s:
        for name, rows in FOLDED:
            want = [PccConfig(*r) for r in rows]
            assert s.mapping.command[name] == want and s.model.configs[name] == want
            got = s.slave.robot.measured_pcc(name)[0]
            assert abs(got.bend - want[0].bend) < 1e-6 and abs(got.plane - want[0].plane) < 1e-6
            model = s.model.predictor.shape(name)[0]  # the sag prediction starts there too
            assert abs(model.bend - want[0].bend) < 1e-6 and abs(model.plane - want[0].plane) < 1e-6
            tip = s.robot.tip_pose(name)[:3, 3]  # the master's world shows it there
            assert np.linalg.norm(tip - s.slave.robot.tip_pose(name)[:3, 3]) < 1e-6
        assert s.mapping.command["grasper"] == rest_configs(spec.limb("grasper").segments)
        estimating = {n for n, c in s.slave.robot.compliant.items() if c.external_loads}
        assert estimating == {"grasper"}
