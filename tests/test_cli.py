"""The pccbullet command: pose, urdf, robots, demo, errors and exit codes."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

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


def test_pose_of_another_robot_speaks_pccbullet_s_terms(capsys) -> None:
    """Seed 001's theta belongs to URSULA's reports only; another robot's are bend, plane and length."""
    robot = str(Path(__file__).parent / "data" / "stepped_rod.toml")
    assert main(["pose", robot, "--limb", "rod", "--bend", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["robot"] == "stepped_rod"
    assert out["segments"][0] == {
        "bend_deg": pytest.approx(30.0),
        "plane_deg": 0.0,
        "length_m": pytest.approx(0.15),
        "sections": 20,
    }
    assert main(["pose", robot, "--limb", "rod", "--bend", "30"]) == 0
    text = capsys.readouterr().out
    assert "segment 1: bend 30.000 deg, plane 0.000 deg" in text and "theta" not in text
    assert main(["pose", "ursula", "--limb", "camera", "--bend", "30"]) == 0
    assert "segment 1: bend 30.000 deg (seed 001 theta 15.000), plane" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["pose", "STEPPED", "--limb", "arm", "--bend", "30"],
            "pccbullet: error: robot 'stepped_rod' has no limb 'arm'; limbs: rod",
        ),
        (
            ["pose", "missing.toml", "--limb", "rod", "--bend", "30"],
            "pccbullet: error: robot file 'missing.toml' does not exist",
        ),
    ],
)
def test_pose_of_a_bad_limb_or_file_is_one_line(argv, message, capsys) -> None:
    argv = [str(Path(__file__).parent / "data" / "stepped_rod.toml") if a == "STEPPED" else a for a in argv]
    assert main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pccbullet")]
    assert err == [message]


def test_pose_plane_defaults_to_0_as_the_help_says(capsys) -> None:
    """``--plane`` is optional in ``--help`` ("default 0"); without it the segment bends in its base x-z
    plane, as with ``--plane 0``."""
    argv = ["pose", "ursula", "--limb", "grasper", "--bend", "60", "--segment", "2", "--json"]
    assert main(argv) == 0
    without = json.loads(capsys.readouterr().out)
    assert main([*argv, "--plane", "0"]) == 0
    assert without == json.loads(capsys.readouterr().out)
    assert without["segments"][1]["plane_deg"] == 0.0
    assert without["segments"][1]["bend_deg"] == pytest.approx(60.0)
    with pytest.raises(SystemExit):
        main(["pose", "--help"])
    assert "(deg); default 0:" in " ".join(capsys.readouterr().out.split())


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


def test_the_commands_version_loads_none_of_the_heavy_modules() -> None:
    """``pccbullet --version`` answers from the console script's own module: it imports neither the command
    line nor numpy, PyBullet, numba or trimesh (seconds of imports); the same version as ``--help``'s."""
    code = (
        "import sys; from pccbullet.teleop.command import main; code = main(['--version']); "
        "print(sorted(m for m in ('numpy', 'pybullet', 'numba', 'trimesh', 'pccbullet.teleop.cli') "
        "if m in sys.modules), code)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.splitlines() == [f"pccbullet {__version__}", "[] 0"]


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["mjcf", "--help"], ["export", "--help"]])
def test_help_loads_none_of_the_heavy_modules(argv: list[str]) -> None:
    """The command line's help is built without PyBullet, numba, trimesh, scipy, matplotlib, pyvista or
    MuJoCo (seconds of imports; numpy, a tenth of a second, is the one heavy module it loads)."""
    code = (
        "import sys; from pccbullet.teleop.command import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = ('pybullet', 'numba', 'trimesh', 'scipy', 'matplotlib', 'pyvista', 'mujoco', 'PIL')\n"
        "print(sorted(m for m in heavy if m in sys.modules), code, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "[] 0" and "usage: pccbullet" in out.stdout


@pytest.mark.slow
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


def test_demo_renders_recorded_scene_frames_as_they_were_live() -> None:
    """The headless demo renders its GIF after the run from frames recorded in the loop: a recorded frame,
    shown again after the limbs, the rock and the bar moved on, gives the live frame pixel for pixel."""

    import numpy as np

    from pccbullet.sim.bullet import pb
    from pccbullet.sim.views.scene import body_name, show_frame, world_frame
    from pccbullet.teleop.demo.outputs import render_view
    from pccbullet.teleop.demo.scene import demo_config
    from pccbullet.teleop.demo.script import scripted_operator
    from pccbullet.teleop.mmt.session import MmtSession
    from pccbullet.urdf_gen.spec_loader import load_robot

    with MmtSession(load_robot("ursula", sections=3), demo_config("acoustic", "mixed")) as s:
        proj = pb.computeProjectionMatrixFOV(60, 4 / 3, 0.01, 5.0)
        view = pb.computeViewMatrix([1.3, -1.3, 0.5], [0.5, 0.0, -0.3], [0, 0, 1])
        operator = scripted_operator()
        LIGHT = (0.3, -0.4, 1.0)
        s.run(operator, 1.0)  # the limbs sag, the grasp closes
        robot_bodies = [s.slave.rock, s.slave.objects[0].body]  # the rock and the bar
        for robot, bodies in ((s.robot, s.shown_bodies), (s.slave.robot, robot_bodies)):  # model and robot
            cid = robot.world.client
            # one light: the robot's camera frames in between set their lamp's direction in its renderer
            live, frame = render_view(cid, view, proj, LIGHT), world_frame(robot.world, bodies)
            s.run(operator, 1.0)  # the arms move on
            for body in bodies:
                pb.resetBasePositionAndOrientation(body, [0.3, 0.2, -0.5], [0, 0, 0, 1], physicsClientId=cid)
            assert np.abs(render_view(cid, view, proj, LIGHT).astype(int) - live).sum() > 10_000
            show_frame(robot.world, frame, bodies)
            np.testing.assert_array_equal(render_view(cid, view, proj, LIGHT), live)
            got = [pb.getBasePositionAndOrientation(b, physicsClientId=cid) for b in bodies]
            assert [(tuple(p), tuple(q)) for p, q in got] == [frame.bases[body_name(b)] for b in bodies]


def test_demo_device_errors_exit_2(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    assert main(["demo", "--out", str(tmp_path), "--device", "keyboard", "--duration", "0.1"]) == 2
    assert "device = 'keyboard' reads the GUI window's keys and needs a display" in capsys.readouterr().err
    # the haptic stylus SDK is not installed here: the message says how to install it
    assert main(["demo", "--out", str(tmp_path), "--device", "touch", "--duration", "0.1"]) == 2
    assert "pip install pyOpenHaptics" in capsys.readouterr().err
    from pccbullet.core.errors import ConfigurationError
    from pccbullet.teleop.demo.run import run_demo

    with pytest.raises(
        ConfigurationError, match=r"device = 'joystick' is invalid; allowed: auto, scripted, keyboard"
    ):
        run_demo(tmp_path, device="joystick")


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_pose_a_whole_configuration_from_sets_and_from_a_json_file(capsys, tmp_path) -> None:
    """``--set`` per segment, a JSON pose file, and the two together give the same reports."""
    from pccbullet.urdf_gen.pcc import PccConfig, limb_transform

    argv = ["pose", "ursula", "--set", "camera:1:90,30", "--set", "grasper:2:-30,15,0.295", "--json"]
    assert main(argv) == 0
    by_sets = {r["limb"]: r for r in json.loads(capsys.readouterr().out)["limbs"]}
    assert sorted(by_sets) == ["camera", "grasper"]
    camera = limb_transform([PccConfig(math.pi / 2, math.radians(30), 0.6)])[:3, 3]
    np.testing.assert_allclose(by_sets["camera"]["tip_in_limb_base"]["position_m"], camera, atol=1e-12)
    assert [s["bend_deg"] for s in by_sets["grasper"]["segments"]] == pytest.approx([0.0, -30.0])
    assert by_sets["grasper"]["segments"][1]["length_m"] == pytest.approx(0.295)
    pose = {
        "robot": "ursula",
        "limbs": {
            "camera": {"segments": [{"bend_deg": 90, "plane_deg": 30}]},
            "grasper": {"segments": [{"bend_deg": 0, "plane_deg": 0}, {"bend_deg": -30, "plane_deg": 15}]},
        },
    }
    path = tmp_path / "pose.json"
    path.write_text(json.dumps(pose))
    # the file's grasper segment 2 at rest length; --set replaces it with the 0.295 m one
    assert main(["pose", "--pose-file", str(path), "--set", "grasper:2:-30,15,0.295", "--json"]) == 0
    by_file = {r["limb"]: r for r in json.loads(capsys.readouterr().out)["limbs"]}
    assert sorted(by_file) == ["camera", "grasper", "light", "palpation"]  # a pose file poses every limb
    for name in ("camera", "grasper"):
        assert by_file[name]["tip_in_head"] == by_sets[name]["tip_in_head"]
        assert by_file[name]["joints"] == by_sets[name]["joints"]


BAD_POSES = {
    "single": (
        ["pose", "ursula", "--limb", "camera", "--bend", "9999", "--plane", "0"],
        "pccbullet: error: limb 'camera' segment 1: bend = 9999 deg is out of range; allowed: [-180, 180] deg",
    ),
    "set": (
        ["pose", "ursula", "--set", "light:1:10,0", "--set", "grasper:2:0,0,0.4"],
        "pccbullet: error: --set 'grasper:2:0,0,0.4': limb 'grasper' segment 2: length = 0.4 m is out of "
        "range; allowed: [0.29, 0.3] m",
    ),
    "set-limb": (
        ["pose", "ursula", "--set", "tail:1:10,0"],
        "pccbullet: error: --set 'tail:1:10,0': robot 'ursula' has no limb 'tail'; allowed: grasper, "
        "palpation, camera, light",
    ),
    "set-format": (
        ["pose", "ursula", "--set", "camera:1:90"],
        "pccbullet: error: argument --set: 'camera:1:90' is invalid; allowed: LIMB:SEG:BEND,PLANE[,LENGTH] in "
        "deg, deg, m (e.g. camera:1:90,30 or grasper:2:-30,15,0.295) (see 'pccbullet pose --help')",
    ),
    "set-no-robot": (
        ["pose", "--set", "camera:1:90,0"],
        "pccbullet: error: the following arguments are required with --set: ROBOT (see 'pccbullet pose --help')",
    ),
    "json-file": (
        ["pose", "--pose-file", "POSE"],
        "pccbullet: error: POSE: field 'limbs.camera.segments[0].bend_deg' = 270 is invalid; allowed: a "
        "number in [-180, 180] (limb 'camera' segment 1: bend_max_deg)",
    ),
}


@pytest.mark.parametrize("case", list(BAD_POSES))
def test_pose_rejects_bad_input_before_pybullet_is_loaded(tmp_path, case) -> None:
    """In a fresh process: one line, exit 2, and neither PyBullet nor the World imported (so no numba
    kernel compiled). Before: ``--bend 9999`` was refused only after the World's first compile (~40 s)."""
    import subprocess
    import sys

    argv, line = BAD_POSES[case]
    pose = tmp_path / "bad.json"
    pose.write_text(
        json.dumps(
            {"robot": "ursula", "limbs": {"camera": {"segments": [{"bend_deg": 270, "plane_deg": 0}]}}}
        )
    )
    argv = [str(pose) if a == "POSE" else a for a in argv]
    code = (
        "import sys\nfrom pccbullet.teleop.cli import main\nrc = main(sys.argv[1:])\n"
        "print(rc, 'pybullet' in sys.modules, 'pccbullet.sim.world' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=600)
    assert proc.stdout.split() == ["2", "False", "False"], proc.stderr[-2000:]
    assert [ln for ln in proc.stderr.splitlines() if ln.startswith("pccbullet")] == [
        line.replace("POSE", str(pose))
    ]


def test_bench_peer_mujoco_without_mujoco_says_so_before_running(capsys, monkeypatch) -> None:
    """Before: the whole PyBullet bench ran first, then the missing peer was reported."""
    import pccbullet.sim.bench as bench

    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco -> ImportError, installed or not
    ran = []
    monkeypatch.setattr(bench, "bench_world", lambda *a, **k: ran.append(a))
    argv = ["bench", "--peer", "mujoco", "--mode", "kinematic", "--sections", "5", "--no-models"]
    assert main(argv) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("pccbullet")]
    assert ran == []
    assert len(err) == 1 and err[0].startswith("pccbullet: error: --peer mujoco needs MuJoCo, which does not")
    assert err[0].endswith("pip install 'pccbullet[mujoco]'")


def test_the_demo_help_gives_the_scripted_sessions_length(capsys: pytest.CaptureFixture[str]) -> None:
    """``pccbullet demo --help`` names the scripted session's real length (it said 14 s for a 15 s script)."""
    from pccbullet.teleop.cli import DEMO_DRIVES
    from pccbullet.teleop.demo.scene import DRIVES
    from pccbullet.teleop.demo.script import SESSION_S

    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    assert f"(default: {SESSION_S:g} for the scripted operator;" in " ".join(capsys.readouterr().out.split())
    assert DEMO_DRIVES == DRIVES  # the demo's robot (URSULA) has tendons, no chambers
