"""Bad command-line arguments: one line ``pccbullet: error: ...`` on stderr and exit status 2, never a
traceback. Every case runs the real ``main(argv)`` and fails before any simulation starts."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pccbullet.teleop.cli import main

EXP = str(Path(__file__).resolve().parent.parent / "assets" / "experiments" / "camera_sweep.toml")
SWEEP = str(Path(__file__).resolve().parent.parent / "assets" / "experiments" / "sweep_camera_bend.toml")


def _fails(capsys, argv: list[str], message: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("pccbullet")]
    assert len(lines) == 1 and lines[0].startswith("pccbullet: error: "), err
    assert "Traceback" not in err
    assert message in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "afile"
    path.write_text("x")
    return path


OUT_COMMANDS = {
    "run": ["run", EXP],
    "demo": ["demo", "--headless"],
    "urdf": ["urdf", "ursula"],
    "mjcf": ["mjcf", "ursula"],
    "export": ["export", "ursula"],
    "sweep": ["sweep", SWEEP],
}


@pytest.mark.parametrize("command", list(OUT_COMMANDS))
def test_out_naming_a_file(capsys, a_file: Path, command: str) -> None:
    line = _fails(
        capsys, [*OUT_COMMANDS[command], "--out", str(a_file)], f"argument --out: '{a_file}' is a file"
    )
    assert line.endswith(f"allowed: a folder path (see 'pccbullet {command} --help')")


@pytest.mark.parametrize("command", list(OUT_COMMANDS))
def test_out_below_a_file_or_unwritable(capsys, a_file: Path, command: str) -> None:
    _fails(capsys, [*OUT_COMMANDS[command], "--out", str(a_file / "x")], f"lies below the file '{a_file}'")
    _fails(
        capsys,
        [*OUT_COMMANDS[command], "--out", "/proc/nope/x"],
        "argument --out: '/proc/nope/x' is not a writable folder",
    )
    assert not (a_file.parent / "x").exists()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "1e9", "six"])
def test_demo_duration(capsys, tmp_path: Path, value: str) -> None:
    line = _fails(
        capsys, ["demo", "--headless", "--out", str(tmp_path), f"--duration={value}"], "--duration: "
    )
    assert line.endswith("allowed: a finite number in (0, 86400] (see 'pccbullet demo --help')")


def test_demo_duration_message(capsys, tmp_path: Path) -> None:
    line = _fails(capsys, ["demo", "--duration", "nan"], "argument --duration: 'nan' is out of range")
    assert "allowed: a finite number in (0, 86400]" in line


@pytest.mark.parametrize("value", ["70000", "-1", "65536", "x"])
def test_udp_port_out_of_range(capsys, value: str) -> None:
    _fails(
        capsys,
        ["demo", "--udp-port", value],
        f"argument --udp-port: '{value}' is invalid; allowed: an integer in [0, 65535]",
    )


def test_udp_port_in_use(capsys, tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        _fails(
            capsys,
            ["demo", "--headless", "--device", "udp", "--udp-port", str(port), "--out", str(tmp_path / "d")],
            f"argument --udp-port: UDP port {port} on 127.0.0.1 is not available",
        )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pose", "ursula", "--limb", "camera", "--bend", "nan", "--plane", "0"], "argument --bend: 'nan' is out"),
        (["pose", "ursula", "--limb", "camera", "--bend", "0", "--plane", "inf"], "argument --plane: 'inf' is out"),
        (["pose", "ursula", "--limb", "camera", "--bend", "0", "--plane", "0", "--length", "nan"], "--length: 'nan'"),
        (["bench", "--seconds", "nan"], "argument --seconds: 'nan' is out of range; allowed: a finite number in (0, 3600]"),
        (["bench", "--sections", "0"], "argument --sections: '0' is invalid; allowed: an integer in [1, 200]"),
        (["urdf", "ursula", "--out", "OUT", "--sections", "201"], "--sections: '201' is invalid; allowed: an integer in [1, 200]"),
        (["export", "ursula", "--out", "OUT", "--ring", "2"], "argument --ring: '2' is invalid; allowed: an integer in [3, 1024]"),
        (["sweep", SWEEP, "--out", "OUT", "--workers", "0"], "argument --workers: '0' is invalid; allowed: an integer in [1, 256]"),
        (["run", EXP, "--out", "OUT", "--seed", "-1"], "argument --seed: '-1' is invalid"),
        (["run", "/dev/zero", "--out", "OUT"], "/dev/zero: field '<file>' = '/dev/zero' is invalid; allowed: a regular TOML file"),
        (["nosuch"], "argument command: invalid choice: 'nosuch'"),
        (["urdf", "ursula"], "the following arguments are required: --out"),
        (["demo", "--headless", "--out", "OUT", "--drive", "bogus"],
         "argument --drive: invalid choice: 'bogus' (choose from 'mixed', 'joints', 'tendons')"),
    ],
    ids=["bend-nan", "plane-inf", "length-nan", "seconds-nan", "bench-sections", "sections-201",
         "ring", "workers", "seed", "dev-zero", "command", "missing-out", "demo-drive"],
)  # fmt: skip
def test_bad_arguments(capsys, tmp_path: Path, argv: list[str], message: str) -> None:
    _fails(capsys, [str(tmp_path / "out") if a == "OUT" else a for a in argv], message)


def test_not_utf8_experiment_file(capsys, tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_bytes(b'name = "\xff"\n')
    _fails(
        capsys,
        ["run", str(path), "--out", str(tmp_path / "o")],
        "field '<file>' = 'byte 8' is invalid; allowed: UTF-8 text",
    )


def test_keyboard_interrupt_exits_130(capsys, monkeypatch, tmp_path: Path) -> None:
    import pccbullet.teleop.robot_commands as robot_commands

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(robot_commands, "urdf_command", interrupted)
    assert main(["urdf", "ursula", "--out", str(tmp_path)]) == 130
    assert capsys.readouterr().err.strip() == "pccbullet: interrupted"


def test_os_error_during_a_command_is_one_line(capsys, monkeypatch, tmp_path: Path) -> None:
    import pccbullet.teleop.robot_commands as robot_commands

    def disk_full(args: object) -> int:
        raise OSError(28, "No space left on device", str(tmp_path / "head.urdf"))

    monkeypatch.setattr(robot_commands, "urdf_command", disk_full)
    _fails(
        capsys,
        ["urdf", "ursula", "--out", str(tmp_path)],
        f"No space left on device '{tmp_path / 'head.urdf'}'",
    )


def test_export_of_a_run_with_broken_metadata(capsys, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.npz").write_bytes(b"not an npz")
    (run / "metadata.json").write_text("{")
    _fails(
        capsys,
        ["export", str(run), "--out", str(tmp_path / "o")],
        "metadata.json is not a run's metadata file",
    )
    (run / "metadata.json").write_text('{"robot_path": "ursula", "limbs": ["camera"]}')
    _fails(
        capsys, ["export", str(run), "--out", str(tmp_path / "o")], "run.npz is not a readable run archive"
    )


def test_a_huge_limb_name_is_echoed_capped(capsys) -> None:
    line = _fails(
        capsys,
        ["pose", "ursula", "--limb", "c" * 100_000, "--bend", "0", "--plane", "0"],
        "robot 'ursula' has no limb 'cccc",
    )
    assert "... (100000 characters); limbs: grasper, palpation, camera, light" in line and len(line) < 200


def test_many_sections_write_whole_urdfs(tmp_path: Path) -> None:
    """N = 100 is beyond what one PyBullet body holds, not beyond a URDF: the files are written (a world
    loads such limbs in parts)."""
    from pccbullet.teleop.cli import main

    out = tmp_path / "u"
    assert main(["urdf", "ursula", "--out", str(out), "--sections", "100"]) == 0
    assert (out / "ursula_grasper.urdf").read_text().count('type="prismatic"') == 200
