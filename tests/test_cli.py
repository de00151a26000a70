"""The pccbullet command: pose, urdf, robots, demo, errors and exit codes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pccbullet import __version__
from pccbullet.teleop.cli import main


def test_pose_json_camera_90_30(capsys) -> None:
    assert main(["pose", "ursula", "--limb", "camera", "--bend", "90", "--plane", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["joints"]) == 31
    assert out["segments"][0]["paper_theta_deg"] == pytest.approx(45.0)
    r = 0.6 / (math.pi / 2)
    p_star = r  # r (1 - cos 90 deg)
    np.testing.assert_allclose(
        out["tip_in_limb_base"]["position_m"],
        [p_star * math.cos(math.radians(30)), p_star * math.sin(math.radians(30)), r],
        atol=1e-12,
    )
    assert out["pybullet_tip_error_m"] < 1e-6
    assert out["joints"][0] == {
        "name": "camera_s1_k1_plane",
        "value": pytest.approx(math.radians(30)),
        "unit": "rad",
    }
    assert out["joints"][2]["unit"] == "m"


def test_pose_second_segment_and_length(capsys) -> None:
    argv = [
        "pose",
        "ursula",
        "--limb",
        "grasper",
        "--bend",
        "-30",
        "--plane",
        "15",
        "--segment",
        "2",
        "--length",
        "0.295",
        "--json",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["bend_deg"] for s in out["segments"]] == pytest.approx([0.0, -30.0])
    assert out["segments"][1]["length_m"] == pytest.approx(0.295)
    assert len(out["joints"]) == 62


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["pose", "ursula", "--limb", "tail", "--bend", "0", "--plane", "0"],
            "robot 'ursula' has no limb 'tail'",
        ),
        (
            ["pose", "ursula", "--limb", "camera", "--bend", "190", "--plane", "0"],
            r"bend = 190 deg is out of range; allowed: [-180, 180] deg",
        ),
        (
            ["pose", "ursula", "--limb", "camera", "--bend", "10", "--plane", "0", "--segment", "2"],
            "--segment 2 is invalid for limb 'camera'; allowed: 1..1",
        ),
        (["pose", "octopus", "--limb", "camera", "--bend", "10", "--plane", "0"], "unknown robot 'octopus'"),
        (["urdf", "ursula", "--out", "/tmp/x", "--sections", "0"], "argument --sections: '0' is invalid"),
    ],
    ids=["unknown-limb", "bend-over-limit", "segment-out-of-range", "unknown-robot", "zero-sections"],
)
def test_bad_input_exits_2_with_message(capsys, argv, message) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("pccbullet: error: ")
    assert message in err


def test_urdf_writes_files(tmp_path, capsys) -> None:
    assert main(["urdf", "ursula", "--out", str(tmp_path / "u"), "--sections", "3"]) == 0
    assert "wrote 5 URDF files and 9 meshes" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "u").glob("*.urdf")) == [
        "ursula_camera.urdf",
        "ursula_grasper.urdf",
        "ursula_head.urdf",
        "ursula_light.urdf",
        "ursula_palpation.urdf",
    ]


def test_robots_and_version(capsys) -> None:
    assert main(["robots"]) == 0
    assert "ursula" in capsys.readouterr().out.split()
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"pccbullet {__version__}"


def test_headless_demo_writes_its_files(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    assert main(["demo", "--out", str(tmp_path), "--duration", "0.5"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["mode"] == "headless"
    assert summary["slave"]["mode"] == "dynamic" and summary["slave"]["medium"] == "seawater"
    assert summary["loop"]["physics_steps"] == 500 and summary["loop"]["real_time_factor"] > 0
    for key in ("slave_force_max_n", "force_error_contact_rms_n", "tip_error_final_m"):
        assert key in summary["metrics"]
    assert summary["gif_frames"] == 5  # 25 visual frames at 50 Hz, every 5th into the GIF
    import imageio.v3 as iio

    assert iio.imread(tmp_path / "camera_tip.png").shape == (480, 640, 3)
    gif = iio.imread(tmp_path / "demo.gif", index=None)
    assert gif.shape[1:3] == (480, 1280) and gif.shape[0] >= 1  # the robot beside the operator's model
    assert gif.std() > 10  # the scene (head, limbs, seabed) is visible, not a blank frame
    assert (tmp_path / "tips.png").stat().st_size > 10_000


def test_demo_renders_recorded_scene_poses_as_they_were_live() -> None:
    """The headless demo renders its GIF after the run from poses recorded in the loop: a recorded pose,
    shown again after the limbs and the rock moved on, gives the live frame pixel for pixel."""
    import numpy as np

    from pccbullet.sim.bullet import pb
    from pccbullet.teleop.demo.outputs import render_view, scene_pose, show_scene
    from pccbullet.teleop.demo.run import scripted_operator
    from pccbullet.teleop.mmt.config import MmtConfig
    from pccbullet.teleop.mmt.session import MmtSession

    with MmtSession(MmtConfig(sections=3)) as s:
        proj = pb.computeProjectionMatrixFOV(60, 4 / 3, 0.01, 5.0)
        view = pb.computeViewMatrix([1.3, -1.3, 0.5], [0.5, 0.0, -0.3], [0, 0, 1])
        operator = scripted_operator()
        s.run(operator, 1.0)  # the limbs sag, the grasper reaches out
        for robot, rock in ((s.robot, s.rock), (s.slave.robot, s.slave.rock)):  # model and robot
            cid = robot.world.client
            live, pose = render_view(cid, view, proj), scene_pose(robot, rock)
            s.run(operator, 1.0)  # the arms move on
            pb.resetBasePositionAndOrientation(rock, [0.3, 0.2, -0.5], [0, 0, 0, 1], physicsClientId=cid)
            assert np.abs(render_view(cid, view, proj).astype(int) - live).sum() > 10_000
            show_scene(robot, rock, pose)
            np.testing.assert_array_equal(render_view(cid, view, proj), live)
            assert pb.getBasePositionAndOrientation(rock, physicsClientId=cid)[0] == pose[1][0]


def test_demo_device_errors_exit_2(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    assert main(["demo", "--out", str(tmp_path), "--device", "keyboard", "--duration", "0.1"]) == 2
    assert "device = 'keyboard' reads the GUI window's keys and needs a display" in capsys.readouterr().err
    # the haptic stylus SDK is not installed here: the message says how to install it
    assert main(["demo", "--out", str(tmp_path), "--device", "touch", "--duration", "0.1"]) == 2
    assert "pip install pyOpenHaptics" in capsys.readouterr().err
    from pccbullet.teleop.demo.run import run_demo
    from pccbullet.urdf_gen.errors import ConfigurationError

    with pytest.raises(
        ConfigurationError, match=r"device = 'joystick' is invalid; allowed: auto, scripted, keyboard"
    ):
        run_demo(tmp_path, device="joystick")


def test_demo_with_the_terminal_keyboard_moves_the_selected_limb(tmp_path, monkeypatch) -> None:
    """Keys typed into stdin (here a pipe) drive the master replica in real time."""
    import os

    from pccbullet.teleop.demo.run import run_demo

    monkeypatch.delenv("DISPLAY", raising=False)

    def run(keys: bytes, out: str) -> dict:
        read_fd, write_fd = os.pipe()
        os.write(write_fd, keys)
        os.close(write_fd)
        with os.fdopen(read_fd) as stream:
            monkeypatch.setattr("sys.stdin", stream)
            return run_demo(tmp_path / out, duration=0.4, device="terminal")

    moved = run(b"1" + b"w" * 40, "keys")  # select the grasper, bend its segment
    still = run(b"", "none")
    assert moved["device"] == "terminal"
    assert moved["loop"]["wall_time_s"] >= 0.4  # paced to real time
    tip = np.array(moved["final_tip_positions_m"]["grasper"])
    rest = np.array(still["final_tip_positions_m"]["grasper"])
    assert np.linalg.norm(tip - rest) > 1e-3
    others = ("palpation", "camera", "light")
    assert all(moved["final_tip_positions_m"][k] == still["final_tip_positions_m"][k] for k in others)


def test_demo_with_the_udp_bridge_counts_the_packets(tmp_path, monkeypatch) -> None:
    import socket
    import threading
    import time

    from pccbullet.teleop.demo.run import run_demo
    from pccbullet.teleop.udp.client import UdpBridgeClient
    from pccbullet.teleop.udp.keys import default_key_file, resolve_key

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("PCCBULLET_UDP_KEY_FILE", raising=False)
    key, path = resolve_key()  # created on first use, as the demo would
    assert path == default_key_file() and path.stat().st_mode & 0o077 == 0
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    stop = threading.Event()

    def sender() -> None:  # the device process: handshake, then poses (and garbage)
        out = UdpBridgeClient(("127.0.0.1", port), key=key)
        while not stop.is_set():
            out.send_pose((0.05, 0.0, 0.0))
            out.send_raw(b"garbage")
            time.sleep(0.005)
        out.close()

    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    try:
        summary = run_demo(tmp_path, duration=1.0, device="udp", udp_port=port)
    finally:
        stop.set()
        thread.join()
    assert summary["device"] == "udp"
    assert summary["udp"]["accepted"] > 20
    assert summary["udp"]["dropped"]["size"] > 20
