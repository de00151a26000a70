"""Pose files (pccbullet.urdf_gen.pose_file): seed 001's Fig. 9 and Fig. 10 poses, the ``pose`` and
``export`` commands with ``--pose-file``, and one-line messages for bad files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.sim.export.rigid import section_poses
from pccbullet.teleop.cli import main
from pccbullet.urdf_gen.pcc import arc_transform, bend_from_paper_theta
from pccbullet.urdf_gen.pose_file import load_pose_file, poses_dir

# Seed 001 sec. 4.1, Fig. 10: (limb, segment) -> (theta deg, phi deg, l mm); the initial lengths of
# sec. 3.2 (300 mm per segment of a two-segment arm, 600 mm for the one-segment camera arm).
FIG10 = {
    ("camera", 0): (90.0, -5.0, 0.0),
    ("grasper", 0): (30.0, 10.0, 10.0),
    ("grasper", 1): (60.0, 30.0, 10.0),
    ("palpation", 0): (60.0, 20.0, 0.0),
    ("palpation", 1): (-30.0, 15.0, 0.0),
}
INITIAL_MM = {"camera": 600.0, "grasper": 300.0, "palpation": 300.0}


def _chord_angles(T: np.ndarray) -> tuple[float, float]:
    """Polar angle from z (deg, the paper's theta, Fig. 5b) and azimuth from x (deg) of a segment's chord."""
    x, y, z = T[:3, 3]
    return math.degrees(math.atan2(math.hypot(x, y), z)), math.degrees(math.atan2(y, x))


@pytest.mark.parametrize("key", list(FIG10), ids=[f"{limb}-s{k + 1}" for limb, k in FIG10])
def test_fig10_poses_are_the_papers_theta_phi_l(key: tuple[str, int]) -> None:
    """Each posed segment's chord makes the paper's theta with its base z axis and lies in the plane at
    phi (a negative theta bends towards phi + 180 deg); its length is the initial length minus l.
    Tolerance 1e-9 deg / 1e-12 m: the arc is closed-form, nothing is fitted."""
    theta, phi, shortening = FIG10[key]
    pose = load_pose_file("ursula_fig10")
    c = pose.configs[key[0]][key[1]]
    assert c.bend == pytest.approx(bend_from_paper_theta(math.radians(theta)), abs=1e-15)
    assert c.length == pytest.approx((INITIAL_MM[key[0]] - shortening) * 1e-3, abs=1e-15)
    polar, azimuth = _chord_angles(arc_transform(c.bend, c.plane, c.length))
    assert polar == pytest.approx(abs(theta), abs=1e-9)
    expected = phi if theta > 0 else phi - 180.0
    assert math.remainder(azimuth - expected, 360.0) == pytest.approx(0.0, abs=1e-9)


def test_fig10_leaves_the_light_tentacle_straight() -> None:
    pose = load_pose_file("ursula_fig10")
    assert set(pose.configs) == {"camera", "grasper", "palpation"}
    (light,) = pose.limb_configs("light")
    assert (light.bend, light.plane, light.length) == (0.0, 0.0, 0.6)


def test_fig9_is_a_quarter_circle_whose_sections_sit_on_the_arc() -> None:
    """Fig. 9: the camera arm at theta = 45 deg, phi = 30 deg, N = 10. The chord reading of theta makes
    it a 90 deg arc, "a quarter of a circle" (sec. 3.2); the section origins (Fig. 9's red points) are the
    11 equally spaced points of the curve (its blue circles), within 1e-12 m (closed-form chain)."""
    pose = load_pose_file("ursula_fig9")
    (c,) = pose.configs["camera"]
    assert math.degrees(c.bend) == pytest.approx(90.0)
    polar, azimuth = _chord_angles(arc_transform(c.bend, c.plane, c.length))
    assert (polar, azimuth) == pytest.approx((45.0, 30.0), abs=1e-9)
    limb = pose.robot.limb("camera")
    assert limb.segments[0].sections == 10
    origins = section_poses(limb, [c], np.eye(4))[:, :3, 3]
    r = c.length / c.bend
    s = np.linspace(0.0, c.length, 11)[1:]  # arc length of each section's far end
    radial, z = r * (1 - np.cos(s / r)), r * np.sin(s / r)
    on_arc = np.column_stack([radial * math.cos(c.plane), radial * math.sin(c.plane), z])
    np.testing.assert_allclose(origins, on_arc, atol=1e-12)  # each slice body sits at its section's end


def test_pose_command_reports_every_limb(capsys) -> None:
    assert main(["pose", "--pose-file", "ursula_fig10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["limb"] for r in out["limbs"]] == ["grasper", "palpation", "camera", "light"]
    camera = next(r for r in out["limbs"] if r["limb"] == "camera")
    assert camera["segments"][0]["paper_theta_deg"] == pytest.approx(90.0)
    # a half circle of 600 mm: the tip 2 r = 1.2 / pi m from the base, at z = 0
    tip = np.array(camera["tip_in_limb_base"]["position_m"])
    assert np.linalg.norm(tip) == pytest.approx(1.2 / math.pi) and tip[2] == pytest.approx(0.0, abs=1e-12)
    assert max(r["pybullet_tip_error_m"] for r in out["limbs"]) < 1e-6  # PyBullet's float32 frames
    assert main(["pose", "--pose-file", "ursula_fig10", "--limb", "grasper", "--json"]) == 0
    assert [r["limb"] for r in json.loads(capsys.readouterr().out)["limbs"]] == ["grasper"]


def test_export_renders_a_pose_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "fig10"
    args = ["export", "--pose-file", "ursula_fig10", "--out", str(out), "--ring", "8", "--render"]
    assert main([*args, "--view", "xz"]) == 0
    assert (out / "skin_pose.png").stat().st_size > 1000 and (out / "skin_0000.stl").is_file()
    # the posed camera arm's tip is in the exported skin: a half circle ends beside its base
    import trimesh

    skin = trimesh.load(out / "skin_0000.stl")
    assert skin.bounds[0][2] < -0.3  # m: the grasper and camera bend far below the head (plane 0 = -z)


def test_pose_file_with_another_robot_file(tmp_path: Path, capsys) -> None:
    """ROBOT on the command line replaces the file's robot; the limits checked are that robot's."""
    text = (poses_dir().parent / "robots" / "ursula.toml").read_text()
    small = tmp_path / "ursula_stiff.toml"
    small.write_text(text.replace("bend_max_deg = 180", "bend_max_deg = 90"))
    assert main(["pose", str(small), "--pose-file", "ursula_fig9", "--json"]) == 0
    capsys.readouterr()
    assert main(["pose", str(small), "--pose-file", "ursula_fig10"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "field 'limbs.camera.segments[0].bend_deg' = 180.0 is invalid; allowed: a number in [-90, 90] "
        "(limb 'camera' segment 1: bend_max_deg)"
    )


GOOD = """robot = "ursula"
[[limbs.camera.segments]]
bend_deg = 90.0
plane_deg = 30.0
length_mm = 600.0
"""

BAD = [
    ("bend_deg = 90.0", "bend_deg = 200", "'limbs.camera.segments[0].bend_deg' = 200", "[-180, 180]"),
    ("plane_deg = 30.0", "plane_deg = 400", "'limbs.camera.segments[0].plane_deg' = 400", "[-360, 360]"),
    ("length_mm = 600.0", "length_mm = 570", "'limbs.camera.segments[0].length_mm' = 570", "[580, 600]"),
    (
        "length_mm = 600.0",
        "length_mm = 'long'",
        "'limbs.camera.segments[0].length_mm' = 'long'",
        "[580, 600]",
    ),
    ("bend_deg = 90.0", "bend_deg = nan", "'limbs.camera.segments[0].bend_deg' = nan", "[-180, 180]"),
    (
        "bend_deg = 90.0",
        "bnd_deg = 90",
        "'limbs.camera.segments[0].bend_deg' = None",
        "did you mean 'bend_deg'",
    ),
    ("limbs.camera", "limbs.tail", "'limbs.tail' = ", "a limb of robot 'ursula' ('grasper', 'palpation'"),
    (
        "limbs.camera",
        "limbs.grasper",
        "'limbs.grasper.segments' = ",
        "2 segment tables (limb 'grasper' has 2",
    ),
    ('robot = "ursula"', 'robot = "octopus"', "'robot' = 'octopus'", "a bundled PCC robot name"),
    ('robot = "ursula"', 'robot = "snake003_exp"', "'robot' = 'snake003_exp'", "a bundled PCC robot name"),
    ('robot = "ursula"', 'robot = "ursula"\ncolour = "red"', "'colour' = 'red'", "a known key"),
]


@pytest.mark.parametrize(("old", "new", "field", "allowed"), BAD, ids=[b[1][:16] for b in BAD])
def test_bad_pose_files(tmp_path: Path, capsys, old: str, new: str, field: str, allowed: str) -> None:
    """One line naming the file, the field, the value and what is allowed; status 2, no traceback; from
    ``pose`` and ``export`` alike, and as a SpecError from Python."""
    path = tmp_path / "bad_pose.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(SpecError) as exc:
        load_pose_file(path)
    message = str(exc.value)
    assert message.startswith(f"{path}: field {field}") and allowed in message
    for argv in (
        ["pose", "--pose-file", str(path)],
        ["export", "--pose-file", str(path), "--out", str(tmp_path)],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        lines = [ln for ln in err.splitlines() if ln.startswith("pccbullet")]
        assert lines == [f"pccbullet: error: {message}"] and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["pose", "--pose-file", "ursula_fig10", "--bend", "10"],
            "--bend cannot be combined with --pose-file",
        ),
        (["pose", "ursula", "--limb", "camera"], "required without --pose-file: --bend ("),
        (
            ["pose", "--pose-file", "no_such_pose"],
            "unknown pose file 'no_such_pose': not a TOML file and not",
        ),
        (["pose", "snake003_exp", "--pose-file", "ursula_fig10"], "'pose' takes a PCC robot"),
        (["export", "--out", "OUT"], "export needs ROBOT_OR_RUN, or --pose-file"),
        (["export", "snake003_exp", "--pose-file", "ursula_fig9", "--out", "OUT"], "a rolling_snake robot"),
    ],
    ids=["conflict", "missing", "unknown", "pose-kind", "no-source", "export-kind"],
)
def test_pose_file_usage_errors(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    argv = [str(tmp_path) if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2


def test_unknown_bundled_pose_from_python() -> None:
    with pytest.raises(ConfigurationError, match=r"ursula_fig10, ursula_fig9"):
        load_pose_file("fig11")
