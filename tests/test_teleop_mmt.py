"""Model-mediated teleoperation of the dynamic soft squid over a 1 s acoustic link."""

from __future__ import annotations

import gc
from dataclasses import replace

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.environment import add_seabed, add_sphere, contact_forces
from pccbullet.sim.world import World
from pccbullet.teleop.channel import Bernoulli, acoustic_link
from pccbullet.teleop.demo.scene import demo_config
from pccbullet.teleop.demo.script import SESSION_S, scripted_operator
from pccbullet.teleop.devices.scripted import ScriptedDevice
from pccbullet.teleop.mmt.config import CONTACT_FORCE_N, MmtConfig
from pccbullet.teleop.mmt.packets import (
    CMD_HEADER,
    decode_configs,
    decode_shape,
    encode_configs,
    encode_shape,
)
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.slave import Slave
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot


@pytest.fixture(scope="module")
def demo_session():
    """The demo's scripted session and scene (URSULA at the file's N = 10, seawater, the grasper on its
    tendons, the bar on its posts), 20 s in lockstep; the bar's report sampled at 10 Hz."""
    frozen: list[int] = []
    bar: list[tuple[float, dict[str, object]]] = []
    device = scripted_operator()
    read = device.read

    def read_and_look(t: float):  # gc.get_freeze_count walks the frozen objects: a few ticks only
        if len(frozen) < 3:
            frozen.append(gc.get_freeze_count())
        return read(t)

    device.read = read_and_look  # type: ignore[method-assign]
    with MmtSession(load_robot("ursula"), demo_config("acoustic", "mixed")) as s:
        slave = s.slave
        assert isinstance(slave, Slave)

        def sample(k: int, t: float) -> None:
            if k % 5 == 0:
                bar.append((t, slave.object_report()["bar"]))

        stats = s.run(device, SESSION_S, on_visual=sample)
        assert gc.get_freeze_count() == 0
        yield s, stats, s.metrics(), frozen, bar


def test_the_slave_is_the_dynamic_squid_and_sags_as_the_dynamic_mode_alone() -> None:
    """Straight commands: the slave's limbs sag in seawater exactly as a dynamic World with the same
    seabed and rock does on its own (same numbers, bit for bit)."""
    cfg = MmtConfig()
    spec = load_robot("ursula", sections=3)
    slave = Slave(spec, cfg)
    with World(mode="dynamic", medium="seawater") as world:
        robot = world.load_robot(spec)
        add_seabed(world, cfg.seabed_z, half_extent=2.0)
        add_sphere(world, cfg.rock_true, cfg.rock_radius)
        for _ in range(1500):
            slave.tick(1e-3)
            world.step()
        for name in robot.bodies:
            np.testing.assert_array_equal(slave.robot.joints(name), robot.joints(name))
            sag = robot.tip_pose(name)[2, 3] - (robot.T_world_limbbase(name)[2, 3])
            assert sag < -0.15  # 0.6 m of Ecoflex under its net weight in seawater: tens of cm
    assert slave.world.mode == "dynamic" and slave.world.medium.name == "seawater"
    slave.close()


@pytest.mark.slow
def test_the_slave_force_comes_from_contact(demo_session) -> None:
    s, _, m, *_ = demo_session
    f = np.linalg.norm(s.log["f_s"], axis=1)
    assert f[:100].max() == 0.0  # straight limbs in free water at the start: nothing touched
    assert m["contact_time_s"] > 3.0 and f.max() > 0.05
    # the sensor's reading is PyBullet's contact force on the sensor link, low-passed: the session ends
    # pressing the rock, and a contact is there
    sensor = s.slave._sensor_body, s.slave._sensor_link
    assert np.linalg.norm(s.slave.force) > CONTACT_FORCE_N
    raw = contact_forces(s.slave.world, sensor[0]).get(sensor[1])
    assert raw is not None and np.linalg.norm(raw) > 0.0


@pytest.mark.slow
def test_force_agreement_and_bound_in_steady_contact(demo_session) -> None:
    """Issue 15 item 3: once the rock is located, over the last second of steady contact the operator's
    force and the slave's measured force agree to 0.3 N; the slave never exceeds 1.2 x the 3 N peak."""
    s, _, m, *_ = demo_session
    # the rock lies out of the arm's resting plane; the arm touches its shoulder: located within 15 mm
    # (11 mm in the demo's session)
    assert m["rock_located"] and m["rock_error_m"] < 0.015
    assert m["force_error_contact_max_n"] <= 0.3
    assert m["slave_force_max_n"] <= 1.2 * s.haptics.params.peak_force
    assert m["operator_force_contact_mean_n"] > 0.02  # the operator does feel the contact
    assert m["max_force_n"] <= s.haptics.params.peak_force


@pytest.mark.slow
def test_the_master_predicts_the_sag(demo_session) -> None:
    """The master's model includes the Newton-Euler sag: in free water (first second, before any
    command) its tip follows the slave's far closer than the commanded (straight) shape would."""
    s, *_ = demo_session
    lg = s.log
    k = 1000  # t = 1 s: both have sagged for 1 s; the slave's first report is only now arriving
    straight = np.array([0.725, 0.06, -0.06])  # the palpation tip of the straight command
    err_model = np.linalg.norm(lg["tip_m"][k] - lg["tip_s"][k])
    err_command = np.linalg.norm(straight - lg["tip_s"][k])
    assert err_command > 0.25 and err_model < 0.5 * err_command


@pytest.mark.slow
def test_the_scripted_session_grasps_the_bar_lifts_it_and_holds_it(demo_session) -> None:
    """Issue 27 item 3: the grasper coils round the bar on its posts (the grasp closed at 0.5 s), lifts it
    (from 6 s) and holds it to the end: it rises 10 cm or more above where it was placed and stays held
    (off its posts, only limbs touching it, more than 1 cm up) for the last 2 s and more; it never touched
    the seabed, and the grasper is what holds it."""
    s, *_, bar = demo_session
    t = np.array([t for t, _ in bar])
    rise = np.array([r["lifted_height_m"] for _, r in bar])
    held = np.array([r["held"] for _, r in bar])
    assert rise[-1] >= 0.10 and rise.min() > -0.05, rise.min()
    first_of_last_run = t[np.flatnonzero(~held)[-1] + 1] if (~held).any() else t[0]
    assert t[-1] - first_of_last_run >= 2.0 and held[-1]
    forces = bar[-1][1]["limb_contact_force_n"]
    assert max(forces, key=forces.get) == "grasper" and bar[-1][1]["support_force_n"] == 0.0  # type: ignore[arg-type]
    assert s.tendon_report()["objects"]["bar"]["held"] is True  # type: ignore[index]


@pytest.mark.slow
def test_the_masters_model_shows_the_bar_where_the_robot_reports_it(demo_session) -> None:
    """The state reports carry the free bar's pose (14 bytes: a report of 118 bytes with the grasper's
    tendons): at the end of the session, with the bar held still, the master's model shows it within
    1 mm of where the robot's world has it, lifted; the posts (fixed) stay where they were placed."""
    s, *_ = demo_session
    cid = s.world.client
    assert len(s.shown_bodies) == 2 and s.transport.report_size == 95 + 9 + 14
    shown = np.array(pb.getBasePositionAndOrientation(s.shown_bodies[1], physicsClientId=cid)[0])
    assert np.linalg.norm(shown - s.slave.objects[0].position()) < 0.001
    assert shown[2] - s.cfg.objects[0].position[2] > 0.10
    posts = [
        np.array(pb.getBasePositionAndOrientation(o.body, physicsClientId=cid)[0]) for o in s.objects[1:]
    ]
    np.testing.assert_allclose(posts, [o.position for o in s.cfg.objects[1:]], atol=1e-9)


@pytest.mark.slow
def test_session_runs_with_the_objects_alive_at_its_start_out_of_the_collectors_scans(demo_session) -> None:
    frozen = demo_session[3]
    assert len(frozen) == 3 and min(frozen) > 1000


def test_lockstep_reruns_are_bit_identical() -> None:
    link = acoustic_link(distance=1500.0, bandwidth=10e3, jitter=0.01, loss=Bernoulli(0.2))
    logs = []
    for _ in range(2):
        cfg = MmtConfig(downlink=link, uplink=link, seed=4)
        device = ScriptedDevice(
            waypoints=[(0.0, (0.725, 0.06, -0.06)), (1.0, (0.5, 0.06, -0.4))],
            presses=[(0.0, "select:palpation")],
        )
        with MmtSession(load_robot("ursula", sections=3), cfg) as s:
            s.run(device, 1.5)
            logs.append({k: s.log[k].copy() for k in ("tip_m", "tip_s", "f_m", "f_s")})
    for key in logs[0]:
        np.testing.assert_array_equal(logs[0][key], logs[1][key])


def test_lockstep_reruns_of_the_grasp_are_bit_identical() -> None:
    """The demo's scene (the tendon-driven grasper estimating its contacts, the bar on its posts) over a
    lossy link: two reruns of the grasp's first 3 s give the same logs, bar pose and tensions."""
    link = acoustic_link(distance=1500.0, bandwidth=10e3, jitter=0.01, loss=Bernoulli(0.2))
    runs = []
    for _ in range(2):
        cfg = replace(demo_config("acoustic", "mixed"), downlink=link, uplink=link, seed=4)
        with MmtSession(load_robot("ursula", sections=3), cfg) as s:
            s.run(scripted_operator(), 3.0)
            slave = s.slave
            assert isinstance(slave, Slave)
            drive = slave.robot.compliant["grasper"].tendons
            assert drive is not None and drive.held == (1,)  # the grasp closed on the robot
            runs.append(
                {k: s.log[k].copy() for k in ("tip_m", "tip_s", "f_m", "f_s")}
                | {"bar": slave.objects[0].pose(), "tensions": drive.tensions.copy()}
            )
    for key in runs[0]:
        np.testing.assert_array_equal(runs[0][key], runs[1][key])


def test_codecs_round_trip_and_range() -> None:
    configs = {
        "a": [PccConfig(1.2345, -3.0, 0.29876)],
        "b": [PccConfig(-3.1, 6.2, 0.6), PccConfig(0, 0, 0.3)],
    }
    data = encode_configs(configs, ["a", "b"])
    assert len(data) + CMD_HEADER.size == 33  # 15 header bytes (the grasp bits), 6 a segment
    out = decode_configs(data, [("a", 1), ("b", 2)])
    np.testing.assert_allclose(
        [out["b"][0].bend, out["b"][0].plane, out["b"][0].length], [-3.1, 6.2, 0.6], atol=1e-4
    )
    with pytest.raises(ConfigurationError, match="cannot be encoded"):
        encode_configs({"a": [PccConfig(4.0, 0.0, 0.3)]}, ["a"])
    shape = decode_shape(encode_shape({"a": [PccConfig(2.0, 0.5, 0.3)]}, ["a"]), [("a", 1)])
    np.testing.assert_allclose(shape["a"][0], [2.0 * np.cos(0.5), 2.0 * np.sin(0.5), 0.3], atol=2e-4)
    with pytest.raises(ConfigurationError, match="blend_time = 0.05 s"):
        MmtConfig(blend_time=0.05)
    with pytest.raises(ConfigurationError, match="command_force = 5 N, force_limit = 3.0 N"):
        MmtConfig(command_force=5)


def test_a_missed_deadline_fault_clears_after_a_second_on_time_and_the_force_ramps_back() -> None:
    """The renderer latches a fault on missed deadlines (0 N); the session clears it once the loop has met
    1000 deadlines in a row, and the force ramps back in instead of jumping."""
    from pccbullet.teleop.mmt.session import RECOVER_TICKS

    device = ScriptedDevice(waypoints=[(0.0, (0.40, 0.18, -0.50))], presses=[(0.0, "select:palpation")])
    with MmtSession(load_robot("ursula", sections=3)) as s:
        for _ in range(4000):  # the model's tip goes into the modelled rock: a force is felt
            f_before = s.tick(device)
        assert np.linalg.norm(f_before) > 0.01
        for _ in range(3):
            s.tick(device, deadline_met=False)
        assert s.haptics.fault is not None and np.linalg.norm(s.tick(device)) == 0.0
        forces = [float(np.linalg.norm(s.tick(device))) for _ in range(RECOVER_TICKS + 600)]
        assert max(forces[: RECOVER_TICKS - 2]) == 0.0 and s.haptic_recoveries == 1
        assert 0.0 < forces[RECOVER_TICKS + 50] < forces[RECOVER_TICKS + 400]  # ramping back in
        assert s.metrics()["haptic_faults_latched"] == 1


def test_the_rendered_contact_is_the_posed_limbs_deepest_contact() -> None:
    """The master renders the sensor ball's penetration from the model's pose (no PyBullet pose of the
    haptic limb per tick): it equals PyBullet's deepest contact of the whole posed limb with the
    modelled rock and seabed (getClosestPoints over every link), in and out of contact."""
    from pccbullet.teleop.penetration import penetration
    from pccbullet.teleop.session_log import SessionLog

    device = ScriptedDevice(
        waypoints=[(0.0, (0.725, 0.06, -0.06)), (1.0, (0.40, 0.18, -0.50))],  # into the modelled rock
        presses=[(0.0, "select:palpation")],
    )
    with MmtSession(load_robot("ursula", sections=3)) as s:
        s.log = SessionLog(3000)
        name = s.cfg.haptic_limb
        checked = touching = 0
        for k in range(3000):
            s.tick(device)
            if k % 25:
                continue
            s.robot.set_joints(name, s.robot.pcc_joints(name, s.model.configs[name], check_limits=False))
            d = penetration(s.world.client, s.robot.bodies[name], s.env)
            # PyBullet's link frames carry ~1e-9 m of round-off (docs/measurements/validation.md)
            assert abs(np.linalg.norm(d) - s.log["depth_m"][k]) < 5e-9
            checked += 1
            touching += s.log["depth_m"][k] > 1e-3
    assert checked == 120 and touching > 20


def test_stalls_of_a_few_ms_in_real_time_latch_no_haptic_fault(loop_clock) -> None:
    """The VM preempts the real-time loop for ~4 ms about once a second. Each such stall is followed by
    ticks that end > 1 ms late while the loop catches up; counted as missed deadlines they latched a
    fault (3 in a row) at every stall and the operator felt 0 N most of the session. On a simulated
    clock: 0.2 ms ticks, a 4.5 ms stall every 300 ticks: no fault, and the force is felt throughout."""
    device = ScriptedDevice(waypoints=[(0.0, (0.40, 0.18, -0.50))], presses=[(0.0, "select:palpation")])
    with MmtSession(load_robot("ursula", sections=3)) as s:
        tick = s.tick
        forces: list[float] = []

        def timed_tick(dev, *, deadline_met: bool = True) -> np.ndarray:
            f = tick(dev, deadline_met=deadline_met)
            loop_clock.now += 4.5e-3 if s._k % 300 == 299 else 2e-4
            forces.append(float(np.linalg.norm(f)))
            return f

        s.tick = timed_tick  # type: ignore[method-assign]
        stats = s.run(device, 4.0, realtime=True)
    assert stats["overruns"] >= 3 * 12  # 13 stalls, each followed by late ticks catching up
    assert s.haptics.faults_latched == 0
    assert min(forces[3000:]) > 0.01  # in contact from 3 s on: felt at every tick
