"""``pccbullet demo --robot FILE``: another robot than URSULA with the interactive devices, in a scene fitted
to its haptic limb; the scripted session stays URSULA's and says so."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.cli import main
from pccbullet.teleop.demo.scene import (
    FITTED_SENSOR_MASS,
    demo_config,
    demo_robot,
    fitted_scene,
    haptic_limb,
)
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.spec_loader import load_robot


def test_ursula_s_scene_is_unchanged_when_her_spec_is_given() -> None:
    ursula = demo_robot(load_robot("ursula"))
    assert ursula == load_robot("ursula")  # she carries her force sensor: nothing fitted
    for drive in ("mixed", "joints", "tendons"):
        assert demo_config("acoustic", drive, None, ursula) == demo_config("acoustic", drive)
    assert haptic_limb(ursula).name == "palpation"


def test_a_robot_without_a_sensor_gets_one_and_a_rock_its_limb_reaches() -> None:
    """The OctArm-class arm: a force sensor at its tip, the rock ahead of the tip bent a quarter turn
    down (its three sections 30 deg each), resting on the seabed, no bar, no folded tentacles."""
    spec = demo_robot(load_robot("octarm"))
    arm = spec.limb("arm")
    assert arm.payload is not None and arm.payload.kind == "force_sensor"
    assert arm.payload.mass == FITTED_SENSOR_MASS and arm.payload.frame == "arm_force_sensor"
    cfg = demo_config("acoustic", "mixed", None, spec)
    assert cfg.haptic_limb == "arm" and cfg.objects == () and cfg.start == () and cfg.tendon_limbs == ()
    configs = [PccConfig(math.radians(30), 0.0, s.length) for s in arm.segments]
    T = arm.T_head_base() @ limb_transform(configs)
    rock = np.array(cfg.rock_true)
    assert cfg.rock_radius == pytest.approx(0.086)
    assert float(np.linalg.norm(rock - T[:3, 3])) == pytest.approx(cfg.rock_radius + 0.005)
    assert cfg.seabed_z == pytest.approx(rock[2] - cfg.rock_radius)
    assert fitted_scene(arm)["rock_estimate"] != cfg.rock_true  # the model's rock is off, as URSULA's


def test_a_robot_with_no_limb_free_for_a_sensor_is_one_line() -> None:
    ursula = load_robot("ursula")
    payload = ursula.limb("camera").payload
    limbs = tuple(dataclasses.replace(limb, payload=payload) for limb in ursula.limbs)
    crowded = dataclasses.replace(ursula, name="crowded", limbs=limbs)
    with pytest.raises(ConfigurationError, match="robot 'crowded' is invalid for the demo"):
        demo_robot(crowded)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["demo", "--robot", "octarm", "--headless", "--out", "D"],
            "pccbullet: error: robot 'octarm' with device = 'scripted' is invalid; the scripted session is "
            "URSULA's",
        ),
        (
            ["demo", "--robot", "missing.toml", "--device", "terminal", "--headless", "--out", "D"],
            "pccbullet: error: robot file 'missing.toml' does not exist",
        ),
    ],
    ids=["scripted_is_ursula_s", "missing_file"],
)
def test_bad_demo_robots_end_in_one_line(argv, message, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    argv = [str(tmp_path / "out") if a == "D" else a for a in argv]
    assert main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pccbullet")]
    assert len(err) == 1 and err[0].startswith(message), err
    assert not (tmp_path / "out" / "summary.json").exists()


def test_help_keys_name_the_robot_s_limbs(capsys) -> None:
    assert main(["demo", "--robot", "octarm", "--help-keys"]) == 0
    assert "1-1: select a limb (arm)" in capsys.readouterr().out
    assert main(["demo", "--help-keys"]) == 0
    assert "1-4: select a limb (grasper, palpation, camera, light)" in capsys.readouterr().out


@pytest.mark.slow
def test_the_arm_runs_in_the_demo_with_the_udp_bridge(tmp_path, monkeypatch) -> None:
    """The OctArm-class arm driven over the UDP bridge in real time (its robot in its own process): the
    session completes, the poses arrive, the robot reports, the summary gives the arm's tips, and the GIF
    is drawn without a lamp on the robot (lit from above the rock) and the camera image says no frame
    came (it has no camera)."""
    import socket
    import threading
    import time

    from pccbullet.teleop.demo.run import run_demo
    from pccbullet.teleop.udp.client import UdpBridgeClient
    from pccbullet.teleop.udp.keys import resolve_key

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("PCCBULLET_UDP_KEY_FILE", raising=False)
    key, _ = resolve_key()
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    stop = threading.Event()

    def sender() -> None:
        out = UdpBridgeClient(("127.0.0.1", port), key=key)
        while not stop.is_set():
            out.send_pose((0.05, 0.0, 0.0))
            time.sleep(0.005)
        out.close()

    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    try:
        summary = run_demo(tmp_path / "out", duration=1.0, device="udp", udp_port=port, robot="octarm")
    finally:
        stop.set()
        thread.join()
    assert summary["status"] == "complete" and summary["device"] == "udp"
    assert summary["udp"]["accepted"] > 20
    assert summary["robot"]["process_exit_code"] == 0  # its reports need 1 s over the acoustic link
    assert sorted(summary["final_tip_positions_m"]) == ["arm"]
    assert sorted(summary["slave_final_tip_positions_m"]) == ["arm"]
    names = sorted(Path(f).name for f in summary["files"])
    assert names == ["camera_tip.png", "demo.gif", "metrics.png", "summary.json", "tips.png"]
