"""URDFs for ROS: ``--mesh-uri package://...`` and ``file://`` mesh references, ``check_urdf`` (urdfdom) on
every file, and Pinocchio honouring ``<mimic>`` joints."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from pccbullet.teleop.cli import main
from pccbullet.urdf_gen.catalog import write_robot_urdf

PACKAGE = "package://ursula_description/meshes"


def _meshes(path: Path) -> list[str]:
    return [m.get("filename", "") for m in ET.parse(path).getroot().iter("mesh")]


@pytest.fixture(scope="module")
def package_files(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("ros")
    assert main(["urdf", "ursula", "--out", str(out), "--combined", "--mesh-uri", PACKAGE + "/"]) == 0
    return sorted(out.glob("*.urdf"))


def test_package_uris_name_the_written_meshes(package_files) -> None:
    assert len(package_files) == 6
    names = [n for path in package_files for n in _meshes(path)]
    assert len(names) > 100 and all(n.startswith(PACKAGE + "/slice_") for n in names)
    folder = package_files[0].parent / "meshes"
    assert {n.rsplit("/", 1)[1] for n in names} == {p.name for p in folder.glob("*.stl")}


def test_check_urdf_passes_on_every_file(package_files) -> None:
    """urdfdom's parser (Debian: liburdfdom-tools; .ci/run installs it)."""
    tool = shutil.which("check_urdf")
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("check_urdf is missing: .ci/run installs liburdfdom-tools")
        pytest.skip("check_urdf is not installed (apt-get install liburdfdom-tools)")
    for path in package_files:
        proc = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "Successfully Parsed XML" in proc.stdout, (path, proc.stderr[-500:])
        assert "robot name is: ursula" in proc.stdout


def test_mujoco_reads_package_uris(package_files) -> None:
    """The ``<mujoco>`` hint strips the folder part of every mesh reference: package URIs load too."""
    mujoco = pytest.importorskip("mujoco")
    (combined,) = [p for p in package_files if p.name == "ursula.urdf"]
    model = mujoco.MjModel.from_xml_path(str(combined))
    assert model.nmesh == 0  # discardvisual: the slice meshes are visual only
    assert model.nbody > 100


def test_file_uris_are_absolute_paths_that_exist(tmp_path) -> None:
    written = write_robot_urdf("ursula", tmp_path / "a", sections=2, mesh_uri="file://")
    names = [n for path in written for n in _meshes(path)]
    assert names and all(n.startswith(f"file://{(tmp_path / 'a' / 'meshes').as_posix()}/") for n in names)
    assert all(Path(n.removeprefix("file://")).is_file() for n in names)
    elsewhere = write_robot_urdf("ursula", tmp_path / "b", sections=2, mesh_uri="file:///opt/ursula/meshes")
    assert all(n.startswith("file:///opt/ursula/meshes/slice_") for p in elsewhere for n in _meshes(p))
    default = write_robot_urdf("ursula", tmp_path / "c", sections=2)
    assert all(n.startswith("meshes/slice_") for p in default for n in _meshes(p))


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["urdf", "ursula", "--mesh-uri", "package://Ursula/meshes"],
            "pccbullet: error: argument --mesh-uri: 'package://Ursula/meshes' is invalid; allowed: "
            "package://PACKAGE[/PATH] (a ROS package name: lower case, digits, '_'), file:// (the written "
            "meshes' absolute paths) or file:///ABSOLUTE/FOLDER (see 'pccbullet urdf --help')",
        ),
        (
            ["urdf", "snake003_exp", "--mesh-uri", "file://"],
            "pccbullet: error: <argument>: field 'mesh_uri' = 'file://' is invalid; allowed: not given: "
            "'snake003_exp' is a rolling_snake robot (no meshes)",
        ),
    ],
    ids=["package-name", "no-meshes"],
)
def test_bad_mesh_uri_is_one_line(capsys, tmp_path, argv, line) -> None:
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("pccbullet")] == [line]
    assert not any((tmp_path / "o").glob("*.urdf"))


def test_pinocchio_honours_mimic_joints(tmp_path) -> None:
    """``buildModelFromUrdf(path, mimic=True)``: the rolling snake's 11 ``roll_k_b`` joints follow their
    ``roll_k_a`` (nq 11, not 22) and its tip is yourdfpy's (which applies ``<mimic>`` too)."""
    pin = pytest.importorskip("pinocchio")
    yourdfpy = pytest.importorskip("yourdfpy")
    (path,) = write_robot_urdf("snake003_exp", tmp_path)
    assert pin.buildModelFromUrdf(str(path)).nq == 22  # without mimic=True: independent joints
    model = pin.buildModelFromUrdf(str(path), mimic=True)
    assert model.nq == model.nv == 11
    u = yourdfpy.URDF.load(str(path), load_meshes=False, build_collision_scene_graph=False)
    assert len(u.actuated_joint_names) == 11
    rng = np.random.default_rng(3)
    a = {name: float(rng.uniform(-0.3, 0.3)) for name in u.actuated_joint_names}
    u.update_cfg(a)
    q, data = pin.neutral(model), model.createData()
    for name, value in a.items():
        q[model.joints[model.getJointId(name)].idx_q] = value
    pin.framesForwardKinematics(model, data, q)
    T_pin = data.oMf[model.getFrameId("tip")].homogeneous
    np.testing.assert_allclose(T_pin, u.get_transform("tip", "snake_base"), rtol=0, atol=1e-12)
    assert np.linalg.norm(T_pin[:3, 3] - [0.0, 0.0, T_pin[2, 3]]) > 0.01  # bent: the test sees the mimic
