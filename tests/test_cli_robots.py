"""Every bundled robot works with ``urdf``, ``export`` and (PCC robots) ``pose``; ``robots`` lists them
with their kinds; ``-v`` / ``-vv`` log our own steps only; the compile notice appears on numba compiles."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time

import numba
import numpy as np
import pytest
import trimesh

from pccbullet.teleop.cli import COMPILE_NOTICE, _compile_notice, main
from pccbullet.urdf_gen.catalog import KINDS, bundled

ROBOTS = bundled()
IDS = [r.name for r in ROBOTS]


def test_robots_lists_every_toml_with_its_kind(capsys) -> None:
    assert main(["robots"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    names = sorted(p.stem for p in ROBOTS[0].path.parent.glob("*.toml"))
    assert [r[0] for r in rows] == names
    kinds = dict(rows)
    assert set(kinds.values()) == set(KINDS)
    assert kinds["ursula"] == "pcc" and kinds["snake003_exp"] == "rolling_snake"
    assert kinds["pneunet_4"] == "pneunet" and kinds["seed004_spatial"] == "three_actuator"


@pytest.mark.parametrize("robot", ROBOTS, ids=IDS)
def test_urdf_every_robot(robot, tmp_path, capsys) -> None:
    import pybullet

    args = ["urdf", robot.name, "--out", str(tmp_path)] + (["--sections", "2"] if robot.kind == "pcc" else [])
    assert main(args) == 0
    out = capsys.readouterr().out
    files = sorted(tmp_path.glob("*.urdf"))
    assert files and all(str(f) in out for f in files)
    cid = pybullet.connect(pybullet.DIRECT)
    try:
        for f in files:
            assert pybullet.loadURDF(str(f), physicsClientId=cid) >= 0
    finally:
        pybullet.disconnect(cid)


@pytest.mark.parametrize("robot", ROBOTS, ids=IDS)
def test_export_every_robot(robot, tmp_path, capsys) -> None:
    assert main(["export", robot.name, "--out", str(tmp_path), "--ring", "8"]) == 0
    mesh = trimesh.load_mesh(tmp_path / "rigid_0000.stl")
    assert len(mesh.faces) > 0
    extent = float(np.max(mesh.extents))
    assert 0.01 < extent < 2.0  # m: every bundled robot is between 1 cm and 2 m long
    if robot.kind == "pcc":
        assert (tmp_path / "skin_0000.stl").is_file()


@pytest.mark.parametrize("robot", ROBOTS, ids=IDS)
def test_pose_pcc_robots_refuse_others(robot, capsys) -> None:
    if robot.kind == "pcc":
        from pccbullet.urdf_gen.spec_loader import load_robot

        limb = load_robot(robot.name).limbs[0].name
        assert main(["pose", robot.name, "--limb", limb, "--bend", "40", "--plane", "10", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["pybullet_tip_error_m"] < 1e-6
    else:
        assert main(["pose", robot.name, "--limb", "x", "--bend", "40", "--plane", "10"]) == 2
        err = capsys.readouterr().err
        assert f"'pose' takes a PCC robot; '{robot.name}' is a {robot.kind} robot" in err


def test_gif_of_a_robot_animates_the_bend(tmp_path) -> None:
    import imageio.v2 as imageio

    assert main(["export", "ursula", "--out", str(tmp_path), "--gif", "--ring", "8"]) == 0
    frames = imageio.mimread(tmp_path / "skin.gif")
    assert len(frames) >= 20
    moved = [np.mean(np.any(f != frames[0], axis=-1)) for f in frames]
    assert max(moved) > 0.02  # at full bend over 2 % of the pixels differ from the straight frame


def test_gif_refused_for_other_kinds(tmp_path, capsys) -> None:
    assert main(["export", "snake003_exp", "--out", str(tmp_path), "--gif"]) == 2
    assert "--gif is invalid for 'snake003_exp', a rolling_snake robot; allowed: PCC robots" in (
        capsys.readouterr().err
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from pccbullet.teleop.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)


@pytest.mark.slow
def test_verbose_logs_our_steps_only(tmp_path) -> None:
    quiet = _cli("urdf", "ursula", "--sections", "2", "--out", str(tmp_path / "a"))
    assert "pccbullet: wrote" not in quiet.stderr
    one = _cli("-v", "urdf", "ursula", "--sections", "2", "--out", str(tmp_path / "b"))
    assert one.stderr.count("pccbullet: wrote ") == 5
    two = _cli("-vv", "export", "ursula", "--out", str(tmp_path / "c"), "--ring", "8", "--render")
    lines = [line for line in two.stderr.splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith("pccbullet: ")]
    assert ours and all(line.startswith("pccbullet: sim.") for line in ours)
    # what is not ours: PyBullet's build banner and VTK's offscreen warning, no logging records
    others = [line for line in lines if line not in ours]
    assert all("pybullet build time" in line or "vtk" in line.lower() for line in others), others


def test_cli_restores_logger_levels() -> None:
    before = [(logging.getLogger(n).level, logging.getLogger(n).propagate) for n in ("sim", "pccbullet")]
    assert main(["-vv", "robots"]) == 0
    after = [(logging.getLogger(n).level, logging.getLogger(n).propagate) for n in ("sim", "pccbullet")]
    assert after == before


def test_compile_notice_on_a_numba_compile_only(capsys) -> None:
    @numba.njit
    def twice(x):  # type: ignore[no-untyped-def]
        return 2 * x

    with _compile_notice():
        assert twice(3) == 6  # compiles: notice
        assert twice(4) == 8  # compiled: nothing more
    assert capsys.readouterr().err.count(COMPILE_NOTICE) == 1
    with _compile_notice():
        assert twice(5) == 10
    assert COMPILE_NOTICE not in capsys.readouterr().err


def test_compile_notice_again_after_a_pause(capsys) -> None:
    @numba.njit
    def one(x):  # type: ignore[no-untyped-def]
        return x + 1

    @numba.njit
    def two(x):  # type: ignore[no-untyped-def]
        return x + 2

    with _compile_notice(gap=0.05):
        assert one(1) == 2
        time.sleep(0.1)  # the bench's model kernels compile after its progress bar ends
        assert two(1) == 3
    assert capsys.readouterr().err.count(COMPILE_NOTICE) == 2
