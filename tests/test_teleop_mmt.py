"""Model-mediated teleoperation over a 1 s, 20 %-loss acoustic link: convergence, smooth corrections."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from teleop.channel import Bernoulli, acoustic_link
from teleop.devices import ScriptedDevice
from teleop.mmt import CMD_HEADER, MmtConfig, MmtSession, decode_configs, encode_configs
from urdf_gen.errors import ConfigurationError
from urdf_gen.pcc import PccConfig


@pytest.fixture(scope="module")
def session_result():
    link = acoustic_link(distance=1500.0, bandwidth=10e3, jitter=0.01, loss=Bernoulli(0.2))
    cfg = MmtConfig(downlink=link, uplink=link, sections=3, seed=4)
    device = ScriptedDevice(
        waypoints=[
            (0.0, (0.725, 0.06, -0.06)),
            (0.05, (0.725, 0.06, -0.06)),
            (0.8, (0.47, 0.02, -0.44)),
            (1.1, (0.47, 0.02, -0.487)),
        ],
        presses=[(0.0, "select:palpation")],
    )
    frozen: list[int] = []
    with MmtSession(cfg) as s:
        read = device.read

        def read_and_look(t: float):  # gc.get_freeze_count walks the frozen objects: a few ticks only
            if len(frozen) < 3:
                frozen.append(gc.get_freeze_count())
            return read(t)

        device.read = read_and_look  # type: ignore[method-assign]
        stats = s.run(device, 6.0)
        assert gc.get_freeze_count() == 0
        yield s, stats, s.metrics(), frozen


def test_slave_converges_to_the_final_command(session_result) -> None:
    s, stats, m, _ = session_result
    assert stats["physics_steps"] == 6000
    final = np.array([[c.bend, c.plane, c.length] for c in s.mapping.command["palpation"]])
    np.testing.assert_allclose(s.slave.setpoint["palpation"], final, atol=2e-4)  # quantization 1e-4 rad
    assert m["tip_error_final_m"] < 2e-3  # the replica, corrected by the residuals, matches the slave
    assert 0.05 < m["down_loss_rate"] < 0.35 and m["state_updates"] >= 8
    assert m["mean_down_delay_s"] == pytest.approx(1.0 + 8 * 50 / 10e3 + 0.01, rel=0.05)


def test_correction_blends_without_force_jumps(session_result) -> None:
    s, _, m, _ = session_result
    assert m["max_force_n"] > 0.5  # the operator is pressing on the rock during the correction
    assert np.any(s.log["blending"][2000:])  # rock correction while in contact
    np.testing.assert_allclose(s.rock_model, s.cfg.rock_true, atol=1e-6)
    assert m["max_force_step_during_correction_n"] <= 0.1
    f = np.linalg.norm(np.asarray(s.log["f_m"]), axis=1)
    assert f[np.asarray(s.log["blending"])].max() > 0.5  # blends happened while the force was felt


def test_command_codec_round_trip_and_range() -> None:
    configs = {
        "a": [PccConfig(1.2345, -3.0, 0.29876)],
        "b": [PccConfig(-3.1, 6.2, 0.6), PccConfig(0, 0, 0.3)],
    }
    data = encode_configs(configs, ["a", "b"])
    assert len(data) + CMD_HEADER.size == 32
    out = decode_configs(data, [("a", 1), ("b", 2)])
    np.testing.assert_allclose(out["b"][0], [-3.1, 6.2, 0.6], atol=1e-4)
    with pytest.raises(ConfigurationError, match="cannot be encoded"):
        encode_configs({"a": [PccConfig(4.0, 0.0, 0.3)]}, ["a"])
    with pytest.raises(ConfigurationError, match="blend_time = 0.05 s"):
        MmtConfig(blend_time=0.05)


def test_session_runs_with_the_objects_alive_at_its_start_out_of_the_collectors_scans(session_result) -> None:
    frozen = session_result[3]
    assert len(frozen) == 3 and min(frozen) > 1000
