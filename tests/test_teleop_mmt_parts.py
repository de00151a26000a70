"""The parts of the model-mediated teleoperation master, each on its own: the contact model, the
corrections, the transport, the master model and the metrics (the session wiring them is
tests/test_teleop_mmt.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.sim.world import World
from pccbullet.teleop.channel import Channel, LinkSpec
from pccbullet.teleop.mmt.config import K_ENV_RANGE, RING_TICKS, MmtConfig
from pccbullet.teleop.mmt.contact import DEPTH_MAX, K_RENDER_TAU, ContactModel
from pccbullet.teleop.mmt.corrections import Corrections, blend_ramp
from pccbullet.teleop.mmt.metrics import SessionValues, session_metrics
from pccbullet.teleop.mmt.model import IK_OFFSET_TAU, SHOW_EVERY, MasterModel
from pccbullet.teleop.mmt.packets import STATE_HEADER, STATE_TAIL, decode_configs, encode_shape
from pccbullet.teleop.mmt.transport import StateReport, Transport
from pccbullet.teleop.session_log import SessionLog
from pccbullet.urdf_gen.pcc import PccConfig, rest_configs
from pccbullet.urdf_gen.pcc_fit import add_offset, canonical_limb
from pccbullet.urdf_gen.spec_loader import load_robot

DT = 1e-3
SHAPE = [("grasper", 2), ("palpation", 2), ("camera", 1), ("light", 1)]  # URSULA's limbs and segments
LINK = LinkSpec(distance=0.0, speed=1500.0, bandwidth=1e9)  # no delay worth a tick, no loss


@pytest.fixture(scope="module")
def spec():
    return load_robot("ursula", sections=3)


def _report(tick: int | None, force=(0.0, 0.0, 0.0), rock=(math.nan,) * 3, settled=0b1111, measured=None):
    measured = measured or {n: np.zeros((s, 3)) for n, s in SHAPE}
    force_v, rock_v = np.array(force, dtype=float), np.array(rock, dtype=float)
    return StateReport(measured, force_v, rock_v, settled, tick, np.zeros(3), 0.0)


# ---------------------------------------------------------------------------------------------- contact
def test_contact_penetration_of_the_sensor_ball_for_known_poses(spec) -> None:
    """Straight palpation arm along the base z axis: tip at the total length, the sensor ball (radius of
    the tip, 5 mm beyond it along the tip's z) 10 mm into a rock beside it is pushed out along -x. Bent
    90 deg in its first segment (plane 0): the arc ends at (2 l1 / pi, 0, 2 l1 / pi) looking along +x, the
    second segment and the sensor continue along +x; the seabed just below pushes it up by 3 mm."""
    limb = spec.limb("palpation")
    l1, l2 = (seg.length for seg in limb.segments)
    r = limb.segments[-1].radius_tip
    R = 0.06
    sensor = np.array([0.0, 0.0, l1 + l2 + 0.005])
    cfg = MmtConfig(rock_estimate=tuple(sensor + [R + r - 0.01, 0.0, 0.0]), rock_radius=R, seabed_z=-5.0)
    contact = ContactModel(spec, cfg, np.eye(4))
    assert contact.radius == r
    tip, d = contact.penetration(rest_configs(limb.segments))
    np.testing.assert_allclose(tip, [0.0, 0.0, l1 + l2], atol=1e-12)
    np.testing.assert_allclose(d, [-0.01, 0.0, 0.0], atol=1e-12)

    bent = [PccConfig(math.pi / 2, 0.0, l1), PccConfig(0.0, 0.0, l2)]
    a = 2 * l1 / math.pi
    T_base = np.eye(4)
    T_base[:3, 3] = [0.1, 0.2, 0.3]  # the limb's base in the world
    cfg = MmtConfig(rock_estimate=(5.0, 5.0, 5.0), seabed_z=0.3 + a - r + 0.003)
    tip, d = ContactModel(spec, cfg, T_base).penetration(bent)
    np.testing.assert_allclose(tip, [0.1 + a + l2, 0.2, 0.3 + a], atol=1e-12)
    np.testing.assert_allclose(d, [0.0, 0.0, 0.003], atol=1e-12)
    cfg = MmtConfig(rock_estimate=(5.0, 5.0, 5.0), seabed_z=-5.0)
    np.testing.assert_array_equal(ContactModel(spec, cfg, T_base).penetration(bent)[1], np.zeros(3))


def test_contact_force_aware_target_stays_at_most_command_force_over_k_deep(spec) -> None:
    cfg = MmtConfig()  # 0.6 N at the prior 20 N/m: 3 cm
    contact = ContactModel(spec, cfg, np.eye(4))
    depth_max = min(cfg.command_force / cfg.k_env_prior, DEPTH_MAX)
    centre = np.asarray(cfg.rock_estimate)
    inside = centre + [0.0, 0.0, 0.01]
    moved = contact.limit_target("palpation", inside)
    assert np.linalg.norm(moved - centre) == pytest.approx(cfg.rock_radius + contact.radius - depth_max)
    assert moved[2] > centre[2]  # pushed out the way it came in
    np.testing.assert_array_equal(contact.limit_target("grasper", inside), inside)  # other limbs: as asked
    below = np.array([0.0, 0.0, cfg.seabed_z - 0.1])
    assert contact.limit_target("palpation", below)[2] == pytest.approx(
        cfg.seabed_z + contact.radius - depth_max
    )
    far = np.array([0.0, 0.0, 0.0])
    np.testing.assert_array_equal(contact.limit_target("palpation", far), far)


def test_contact_learns_the_stiffness_and_renders_it_smoothly(spec) -> None:
    cfg = MmtConfig(k_env_prior=20.0)
    contact = ContactModel(spec, cfg, np.eye(4))
    assert contact.record(7, np.array([0.0, 0.0, 0.01])) == pytest.approx(0.01)
    assert contact.depth_at(7) == pytest.approx(0.01) and contact.depth_at(None) == 0.0
    contact.learn(_report(7, force=(0.0, 0.0, 1.0)), 1.0)  # 1 N at 1 cm: 100 N/m, learned half-way
    assert contact.k_env == pytest.approx(60.0)
    contact.learn(_report(None, force=(0.0, 0.0, 1.0)), 1.0)  # no tick: nothing to divide by
    contact.learn(_report(7, force=(0.0, 0.0, 0.01)), 1.0)  # no contact reported
    assert contact.k_env == pytest.approx(60.0)
    for _ in range(30):
        contact.learn(_report(7, force=(0.0, 0.0, 100.0)), 1.0)  # 10 kN/m: bounded
    assert contact.k_env == K_ENV_RANGE[1]
    before = contact.k_render
    rendered = contact.render_stiffness(DT)
    step = contact.k_render - before
    assert step == pytest.approx(DT / K_RENDER_TAU * (K_ENV_RANGE[1] - before))  # one tick of the low-pass
    assert rendered == contact.k_render


def test_contact_blends_the_modelled_rock_to_the_located_one(spec) -> None:
    cfg = MmtConfig(blend_time=0.2)
    moved: list[np.ndarray] = []
    contact = ContactModel(spec, cfg, np.eye(4), on_rock_moved=moved.append)
    start = contact.rock.copy()
    assert contact.advance(0.0) is False and moved == []  # nothing to blend
    located = start + [0.02, 0.0, 0.0]
    contact.learn(_report(None, rock=(math.nan,) * 3, force=(0.0, 0.0, 1.0)), 1.0)  # not located yet
    assert not contact.rock_located
    contact.learn(_report(None, rock=located, force=(0.0, 0.0, 1.0)), 1.0)
    assert contact.rock_located
    assert contact.advance(1.1) is True  # half-way: the cosine ramp is at 0.5
    np.testing.assert_allclose(contact.rock, start + [0.01, 0.0, 0.0], atol=1e-12)
    assert contact.advance(1.25) is False
    np.testing.assert_allclose(contact.rock, located, atol=1e-15)
    assert len(moved) == 2 and moved[-1] is contact.rock  # the rock the world shows moved with it


# ------------------------------------------------------------------------------------------ corrections
def test_blend_ramp() -> None:
    assert (
        blend_ramp(-1.0) == 0.0 and blend_ramp(0.0) == 0.0 and blend_ramp(1.0) == 1.0 and blend_ramp(7) == 1
    )
    assert blend_ramp(0.5) == pytest.approx(0.5)
    u = [blend_ramp(x) for x in np.linspace(0, 1, 101)]
    assert all(b >= a for a, b in zip(u, u[1:], strict=False))


def test_corrections_learn_a_residual_of_a_settled_limb_and_blend_it_in() -> None:
    corr = Corrections(SHAPE, blend_time=0.2, haptic_limb="palpation")
    n = sum(s for _, s in SHAPE)
    command_u, prediction = np.full((n, 3), 0.1), np.full((n, 3), 0.02)
    corr.record(40, command_u, prediction, rest=0b1111)
    assert corr.advance(0.0) is False
    measured = {name: np.full((s, 3), 0.125) for name, s in SHAPE}  # 5 mrad (or mm) off the prediction
    corr.learn(_report(40, measured=measured, settled=0b1110), 1.0, haptic_depth=0.0)  # grasper swings
    assert corr.advance(1.1) is True
    np.testing.assert_allclose(corr.residual["camera"], 0.0025, atol=1e-15)  # half-way
    np.testing.assert_array_equal(corr.residual["grasper"], 0.0)  # not settled: not learned
    assert corr.advance(1.25) is False
    np.testing.assert_allclose(corr.residual["light"], 0.005, atol=1e-15)
    np.testing.assert_allclose(corr.residual["palpation"], 0.005, atol=1e-15)
    assert corr.residual["camera"].base is corr.residuals  # views of the stacked rows


def test_corrections_learn_the_haptic_limb_in_free_space_only() -> None:
    corr = Corrections(SHAPE, blend_time=0.2, haptic_limb="palpation")
    n = sum(s for _, s in SHAPE)
    corr.record(3, np.zeros((n, 3)), np.zeros((n, 3)), rest=0b1111)
    measured = {name: np.full((s, 3), 0.01) for name, s in SHAPE}
    corr.learn(_report(3, measured=measured), 1.0, haptic_depth=0.002)  # the model touched then
    corr.learn(_report(3, measured=measured, force=(0.0, 0.0, 0.5)), 1.0, haptic_depth=0.0)  # the robot did
    corr.advance(2.0)
    np.testing.assert_array_equal(corr.residual["palpation"], 0.0)
    np.testing.assert_allclose(corr.residual["camera"], 0.01)
    corr.learn(_report(None, measured={k: v + 1 for k, v in measured.items()}), 3.0, haptic_depth=0.0)
    assert corr.advance(3.1) is False  # a report that answers no known tick changes nothing


# -------------------------------------------------------------------------------------------- transport
def test_transport_numbers_commands_and_matches_reports_to_the_tick_they_answer(spec) -> None:
    cfg = MmtConfig(downlink=LINK, uplink=LINK, cmd_rate=10.0)
    transport = Transport(cfg, SHAPE, DT)
    cmd = {limb.name: rest_configs(limb.segments) for limb in spec.limbs}
    for k in range(250):
        transport.send_command(k, k * DT, cmd)
    packets = transport.commands_arrived(1.0)
    assert transport.down.sent == 3 and len(packets) == 3  # ticks 0, 100, 200
    assert decode_configs(packets[1][15:], SHAPE)["camera"][0].length == pytest.approx(
        cmd["camera"][0].length
    )
    shapes = {n: [PccConfig(0.5, 0.25, 0.3)] * s for n, s in SHAPE}

    def state(seq: int, cmd_seq: int, age: float, force=(0.0, 0.0, 0.0)) -> bytes:
        head = STATE_HEADER.pack(1, 2, seq, 0.0, cmd_seq, age, 0b0101)
        return head + encode_shape(shapes, [n for n, _ in SHAPE]) + STATE_TAIL.pack(*force, 1, 2, 3, 0, 0, 0)

    for packet in (state(1, 2, 0.030), state(1, 3, 0.0), state(2, 9, 0.0), b"short", state(3, 1, 9.0)):
        transport.up.send(0.3, packet)
    reports = transport.reports(300, 0.31)
    assert [r.tick for r in reports] == [100 + 30, None, None]  # the 2nd seq 1 is dropped as not newer
    assert transport.updates == 3
    r = reports[0]
    assert r.settled == 0b0101 and not r.contact
    np.testing.assert_allclose(
        r.measured["grasper"][0], [0.5 * math.cos(0.25), 0.5 * math.sin(0.25), 0.3], atol=2e-4
    )
    np.testing.assert_array_equal(r.rock, [1, 2, 3])
    transport.up.send(0.4, state(4, 1, (RING_TICKS - 1) * DT, force=(0.0, 0.3, 0.4)))
    (late,) = transport.reports(RING_TICKS, 0.41)
    assert late.tick == RING_TICKS - 1 and late.contact and late.force_magnitude == pytest.approx(0.5)


def test_the_command_delay_is_the_downlinks_delay_for_the_command_packets_it_sends(spec) -> None:
    """A command carries 6 bytes a segment (6 segments: 51 bytes with the header and its grasp byte, not the
    39 of 6 bytes a limb, 10.7 ms less over the 9 kbit/s acoustic link): the metrics align the robot's log
    by it."""
    cfg = MmtConfig()
    transport = Transport(cfg, SHAPE, DT)
    transport.send_command(0, 0.0, {limb.name: rest_configs(limb.segments) for limb in spec.limbs})
    size = transport.down.bytes_sent
    assert size == 15 + 6 * sum(s for _, s in SHAPE) == 51
    assert transport.command_delay() == pytest.approx(cfg.downlink.expected_delay(size), rel=1e-12)


# ----------------------------------------------------------------------------------------- master model
def test_master_model_is_the_command_plus_offsets_and_shows_limbs_in_turns(spec) -> None:
    cfg = MmtConfig(predict=False)
    with World(mode="kinematic") as world:
        robot = world.load_robot(spec)
        T_base = {limb.name: robot.T_world_limbbase(limb.name) for limb in spec.limbs}
        model = MasterModel(robot, cfg, T_base)
        assert model.predictor is None and model.rest_mask() == 0b1111
        cmd = {limb.name: [PccConfig(0.4, 0.3, seg.length) for seg in limb.segments] for limb in spec.limbs}
        residuals = np.zeros((6, 3))
        residuals[:, 0] = 0.05  # bend vector x
        camera_joints = robot.joints("camera").copy()
        model.update(0, DT, cmd, residuals)
        np.testing.assert_allclose(model.ik_offset["palpation"], DT / IK_OFFSET_TAU * residuals[2:4])
        expected = [
            add_offset(c, o) for c, o in zip(canonical_limb(cmd["palpation"]), residuals[2:4], strict=True)
        ]
        assert model.configs["palpation"] == expected  # the haptic limb: every tick
        assert model.configs["camera"] == rest_configs(spec.limb("camera").segments)  # not its turn yet
        np.testing.assert_array_equal(robot.joints("camera"), camera_joints)
        for k in range(1, SHOW_EVERY):
            model.update(k, DT, cmd, residuals)
            if not np.array_equal(robot.joints("camera"), camera_joints):
                break
        assert k % 4 == 3  # the limbs are posed on ticks when the predictor steps none of the others
        assert model.configs["camera"] == [add_offset(canonical_limb(cmd["camera"])[0], residuals[4])]
        np.testing.assert_allclose(
            robot.joints("camera"), robot.pcc_joints("camera", model.configs["camera"], check_limits=False)
        )


# ---------------------------------------------------------------------------------------------- metrics
def test_session_metrics_from_a_log_the_channels_and_the_values() -> None:
    log = SessionLog(1000)
    for k in range(1000):
        t = k * DT
        contact = k >= 500
        log.add(
            t=t,
            tip_m=[0.0, 0.0, 0.0],
            tip_s=[0.003, 0.0, 0.004],
            f_m=[0.0, 0.0, 0.1 if contact else 0.0],
            f_s=[0.0, 0.0, 0.3 if contact else 0.0],
            blending=0.0,
            depth_m=0.0,
            k_env=20.0,
        )
    down, up = Channel(LINK), Channel(LINK)
    for k in range(10):
        down.send(k * 0.1, bytes(50))
    values = SessionValues(33.0, True, 0.004, 2, 5, 1, 0, 0)
    m = session_metrics(log, DT, 0.0, down, up, values)
    assert m["tip_error_rms_m"] == pytest.approx(0.005) and m["tip_error_final_m"] == pytest.approx(0.005)
    assert m["contact_time_s"] == pytest.approx(0.5) and m["slave_force_max_n"] == pytest.approx(0.3)
    assert m["force_error_contact_max_n"] == pytest.approx(0.2) and m["max_force_step_n"] == pytest.approx(
        0.1
    )
    assert m["down_packets_per_s"] == pytest.approx(10.0) and m["down_bytes_per_s"] == pytest.approx(500.0)
    assert m["up_packets_per_s"] == 0.0 and m["down_loss_rate"] == 0.0
    assert (m["k_env_n_per_m"], m["rock_located"], m["rock_error_m"], m["slave_reflex_ticks"]) == (
        33.0,
        True,
        0.004,
        2,
    )
    assert (
        m["state_updates"],
        m["ticks_over_budget"],
        m["haptic_faults_latched"],
        m["haptic_recoveries"],
    ) == (5, 1, 0, 0)
