"""Generated URDFs: load in PyBullet, yourdfpy and MuJoCo; masses, inertias, limits, meshes."""

from __future__ import annotations

import logging
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import trimesh
from inertia_check import inertia_is_physical

from pccbullet.sim.bullet import pb
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.geometry import frustum_mass_properties, frustum_mesh
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.urdf_parts import FRAME_MASS
from pccbullet.urdf_gen.urdf_writer import limb_link_count, write_urdf

SPEC = load_robot("ursula")


@pytest.fixture(scope="module")
def urdfs(tmp_path_factory: pytest.TempPathFactory):
    return write_urdf(SPEC, tmp_path_factory.mktemp("urdf"))


def _links(urdf: Path) -> dict[str, dict[str, object]]:
    out = {}
    for link in ET.parse(urdf).getroot().iter("link"):
        inertial = link.find("inertial")
        i = inertial.find("inertia").attrib
        inertia = np.array(
            [[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]],
            dtype=float,
        )
        out[link.get("name")] = {"mass": float(inertial.find("mass").get("value")), "inertia": inertia}
    return out


def test_files_and_joint_counts(urdfs) -> None:
    assert sorted(urdfs.limbs) == ["camera", "grasper", "light", "palpation"]
    assert len(urdfs.meshes) == 30  # 10 distinct slices per segment shape: 2 x 300 mm + 1 x 600 mm
    counts = {}
    for name, path in urdfs.limbs.items():
        joints = ET.parse(path).getroot().findall("joint")
        counts[name] = sum(j.get("type") != "fixed" for j in joints)
    # 3 joints per section (plane, bend, chord) + 1 tip joint per segment
    assert counts == {"grasper": 62, "palpation": 62, "camera": 31, "light": 31}


@pytest.mark.parametrize("limb", SPEC.limbs, ids=[limb.name for limb in SPEC.limbs])
def test_limb_mass_equals_frustum_mass(urdfs, limb) -> None:
    links = _links(urdfs.limbs[limb.name])
    payload = {limb.payload.frame} if limb.payload else set()
    markers = {naming.base_link(limb.name), naming.tip_link(limb.name)}
    elastomer = sum(v["mass"] for k, v in links.items() if k not in markers | payload)
    r0, r1, length = 0.030, 0.010, 0.600
    analytic = 1070.0 * math.pi * length / 3 * (r0 * r0 + r0 * r1 + r1 * r1)
    assert elastomer == pytest.approx(analytic, rel=1e-9)
    assert analytic == pytest.approx(0.87399, rel=1e-4)
    assert FRAME_MASS == 0.0 and all(links[m]["mass"] == 0.0 for m in markers)  # frames, no matter
    if limb.payload:
        assert links[limb.payload.frame]["mass"] == pytest.approx(limb.payload.mass)


def test_every_inertia_is_physical(urdfs) -> None:
    for path in urdfs.urdfs:
        for name, link in _links(path).items():
            if name.endswith(("_base", "_tip")) and link["mass"] == 0.0:  # a frame: no matter at all
                assert not np.any(link["inertia"]), name
                continue
            assert link["mass"] > 0, name
            assert inertia_is_physical(link["inertia"]), name


def test_frustum_inertia_matches_mesh_within_polygon_error() -> None:
    """Analytic slice vs a 32-gon mesh: each cross-section's area shrinks by sin(2 pi/n) n / (2 pi)."""
    n = 32
    mp = frustum_mass_properties(0.03, 0.02, 0.03, 1070.0)
    mesh = frustum_mesh(0.03, 0.02, 0.03, sections=n)
    assert mesh.is_watertight
    ratio = n / (2 * math.pi) * math.sin(2 * math.pi / n)
    assert mesh.volume * 1070.0 == pytest.approx(mp.mass * ratio, rel=1e-9)
    mesh.density = 1070.0
    assert mesh.center_mass[2] == pytest.approx(mp.com[2], rel=1e-9)
    # inertia has r^4 terms: the polygon changes it by more than the area ratio, < 2 %
    np.testing.assert_allclose(np.diag(mesh.moment_inertia), np.diag(mp.inertia) * ratio, rtol=0.02)


def test_written_meshes_are_watertight_slices(urdfs) -> None:
    mesh = trimesh.load(urdfs.meshes[0])
    assert mesh.is_watertight
    assert mesh.bounds[1][2] == pytest.approx(0.0, abs=1e-12)  # slice ends at the body frame origin


def test_joint_limits_follow_the_spec(urdfs) -> None:
    root = ET.parse(urdfs.limbs["camera"]).getroot()
    limits = {
        j.get("name"): (float(j.find("limit").get("lower")), float(j.find("limit").get("upper")))
        for j in root.findall("joint")
        if j.get("type") != "fixed"
    }
    assert limits["camera_s1_k1_plane"] == pytest.approx((-2 * math.pi, 2 * math.pi))
    assert limits["camera_s1_k1_bend"] == pytest.approx((-math.pi / 20, math.pi / 20))
    assert limits["camera_s1_k5_bend"] == pytest.approx((-math.pi / 10, math.pi / 10))
    assert limits["camera_s1_tip_bend"] == pytest.approx((-math.pi / 20, math.pi / 20))
    lo, hi = limits["camera_s1_k3_chord"]
    assert hi == pytest.approx(0.060)
    assert lo == pytest.approx(0.058 * math.sin(math.pi / 20) / (math.pi / 20))


def test_loads_in_pybullet_with_named_tip_frames(urdfs) -> None:
    cid = pb.connect(pb.DIRECT)
    try:
        names = set()
        for limb in SPEC.limbs:
            body = pb.loadURDF(str(urdfs.limbs[limb.name]), useFixedBase=True, physicsClientId=cid)
            n = pb.getNumJoints(body, physicsClientId=cid)
            assert n == limb_link_count(limb)
            names |= {pb.getJointInfo(body, j, physicsClientId=cid)[12].decode() for j in range(n)}
            pb.getLinkState(body, n - 1, physicsClientId=cid)  # state readback works for every link
        assert {"camera_frame", "spotlight_frame", "force_sensor_frame", "grasper_tip"} <= names
        assert pb.loadURDF(str(urdfs.head), useFixedBase=True, physicsClientId=cid) >= 0
    finally:
        pb.disconnect(cid)


def test_loads_in_yourdfpy_without_warnings(urdfs, caplog) -> None:
    yourdfpy = pytest.importorskip("yourdfpy")
    caplog.set_level(logging.WARNING)
    for path in urdfs.urdfs:
        robot = yourdfpy.URDF.load(str(path), build_scene_graph=True, load_meshes=True)
        assert robot.validate()
    assert [r.getMessage() for r in caplog.records] == []
    camera = yourdfpy.URDF.load(str(urdfs.limbs["camera"]))
    assert len(camera.actuated_joint_names) == 31


def test_compiles_in_mujoco_without_log(urdfs, tmp_path, monkeypatch) -> None:
    mujoco = pytest.importorskip("mujoco")
    monkeypatch.chdir(tmp_path)
    njnt = {}
    for name, path in urdfs.limbs.items():
        model = mujoco.MjModel.from_xml_path(str(path))
        njnt[name] = model.njnt
        data = mujoco.MjData(model)
        model.opt.timestep = 1e-3
        mujoco.mj_step(model, data, nstep=100)
        assert np.all(np.isfinite(data.qpos))
    mujoco.MjModel.from_xml_path(str(urdfs.head))
    assert njnt == {"grasper": 62, "palpation": 62, "camera": 31, "light": 31}
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_urdfs_larger_than_a_pybullet_body_are_written(tmp_path) -> None:
    """PyBullet's per-body state is not the URDF's business: the files are whole at any N (a world loads
    such limbs in parts, pccbullet.sim.limb.parts)."""
    urdfs = write_urdf(load_robot("ursula", sections=40), tmp_path)
    root = ET.parse(urdfs.limbs["grasper"]).getroot()
    assert len([j for j in root.findall("joint") if j.get("type") != "fixed"]) == 2 * (3 * 40 + 1)


def test_output_goes_only_where_asked(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = write_urdf(load_robot("ursula", sections=2), tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert out.head.parent == (tmp_path / "out").resolve()
