"""Mesh export: skin volume and watertightness, rigid sections at PyBullet's poses, file round trips,
renders, workspaces and the export command."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.experiments.runner import run_experiment
from pccbullet.sim.experiments.spec import experiment_from_table
from pccbullet.sim.export.formats import FORMATS, load_mesh, read_pvd, write_series
from pccbullet.sim.export.register import register_export
from pccbullet.sim.export.render import render_png, write_gif, write_mp4
from pccbullet.sim.export.rigid import limb_base_pose, rigid_mesh, robot_rigid_meshes, section_poses
from pccbullet.sim.export.skin import backbone, frustum_volume, skin_mesh
from pccbullet.sim.export.workspace import workspace_hull, workspace_points
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot

URSULA = load_robot("ursula", sections=3)
POSES = {
    "straight": lambda seg: PccConfig(0.0, 0.0, seg.length),
    "bent": lambda seg: PccConfig(0.8 * math.pi, 0.6, seg.length),
    "bent_short": lambda seg: PccConfig(-1.7, -2.0, seg.length_min),
}


@pytest.mark.parametrize("limb", ["camera", "grasper"])
@pytest.mark.parametrize("pose", list(POSES))
def test_skin_is_watertight_with_the_frustum_volume(limb: str, pose: str) -> None:
    spec = URSULA.limb(limb)
    configs = [POSES[pose](seg) for seg in spec.segments]
    mesh = skin_mesh(spec, configs, limb_base_pose(URSULA, limb), ring=32, samples_per_segment=32)
    assert mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0
    error = abs(mesh.volume / frustum_volume(spec, configs) - 1.0)
    # Straight: the area-preserving polygons make the lofted frustum exact. Bent: O(h^2) sampling error.
    assert error < (1e-9 if pose == "straight" else 0.01)


def test_skin_backbone_follows_the_arc_without_twist() -> None:
    spec = URSULA.limb("grasper")
    configs = [PccConfig(1.2, 0.4, 0.3), PccConfig(-0.9, 1.0, 0.295)]
    bb = backbone(spec, configs, samples_per_segment=16)
    assert len(bb.points) == 33 and bb.s[-1] == pytest.approx(0.595)
    np.testing.assert_allclose(np.einsum("ij,ij->i", bb.normals, bb.tangents), 0.0, atol=1e-12)
    # Rotation-minimizing on a planar arc = rotation about the bending-plane normal a: n . a is constant.
    a = np.array([-math.sin(0.4), math.cos(0.4), 0.0])
    np.testing.assert_allclose(bb.normals[:17] @ a, bb.normals[0] @ a, atol=1e-12)
    assert abs(bb.normals[0] @ a) > 0.3  # a non-trivial check: the normal is not in the bending plane
    steps = np.linalg.norm(np.diff(bb.points, axis=0), axis=1)
    assert steps.sum() == pytest.approx(0.595, rel=1e-3)  # chords of an arc: slightly shorter


def test_rigid_sections_sit_at_pybullet_link_poses() -> None:
    configs = {
        "camera": [PccConfig(2.0, 0.5, 0.59)],
        "grasper": [PccConfig(1.0, -0.3, 0.3), PccConfig(-1.5, 0.8, 0.295)],
    }
    with World(mode="kinematic") as world:
        robot = world.load_robot(URSULA)
        for limb, c in configs.items():
            robot.set_pcc(limb, c)
        world.step()
        from_bullet = robot_rigid_meshes(robot)
        worst = 0.0
        for limb, c in configs.items():
            spec = URSULA.limb(limb)
            np.testing.assert_allclose(robot.T_world_limbbase(limb), limb_base_pose(URSULA, limb), atol=1e-6)
            poses = section_poses(spec, c, limb_base_pose(URSULA, limb))
            worst = max(worst, np.abs(poses - robot.section_poses(limb)).max())
            mesh = rigid_mesh(spec, poses)
            worst = max(worst, np.abs(mesh.vertices - from_bullet[limb].vertices).max())
    assert worst < 1e-6


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_loads_back_with_the_same_vertex_count(tmp_path: Path, fmt: str) -> None:
    spec = URSULA.limb("grasper")
    frames = [
        skin_mesh(spec, [PccConfig(b, 0.3, 0.3), PccConfig(-b, 0.0, 0.3)], ring=16, samples_per_segment=8)
        for b in (0.0, 1.0)
    ]
    paths = write_series(frames, tmp_path, "skin", fmt, times=[0.0, 0.5])
    for mesh, path in zip(frames, paths, strict=False):
        back = load_mesh(path)
        assert len(back.vertices) == len(mesh.vertices) == 16 * 17 + 2
        assert len(back.faces) == len(mesh.faces)
        assert back.volume == pytest.approx(mesh.volume, rel=1e-5)
    if fmt == "vtk":
        assert paths[-1].name == "skin.pvd"
        assert read_pvd(paths[-1]) == [(0.0, paths[0]), (0.5, paths[1])]


def test_render_png_gif_and_missing_mp4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = URSULA.limb("camera")
    frames = [
        skin_mesh(spec, [PccConfig(b, 0.0, 0.6)], ring=12, samples_per_segment=8) for b in (0.0, 1.0, 2.0)
    ]
    png = render_png(frames[-1], tmp_path / "skin.png", window=(160, 120))
    assert png.read_bytes()[:4] == b"\x89PNG"
    import imageio.v2 as imageio

    gif = write_gif(frames, tmp_path / "skin.gif")
    images = imageio.mimread(gif)
    assert len(images) == 3 and not np.array_equal(images[0], images[-1])
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    with pytest.raises(
        ConfigurationError, match="MP4 output needs imageio-ffmpeg: pip install imageio-ffmpeg"
    ):
        write_mp4(frames, tmp_path / "skin.mp4")


def test_workspace_cloud_and_hull() -> None:
    spec = URSULA.limb("camera")
    pts = workspace_points(spec, 400, seed=5)
    assert np.array_equal(pts, workspace_points(spec, 400, seed=5))
    assert np.linalg.norm(pts, axis=1).max() <= 0.6 + 1e-12  # a tip is never farther than the arc length
    hull = workspace_hull(pts)
    assert hull.is_watertight and hull.volume > 0
    assert np.all(hull.nearest.signed_distance(pts) >= -1e-9)  # every sample inside or on the hull


def test_export_command_on_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = {
        "robot": "ursula",
        "sections": 2,
        "duration_s": 0.1,
        "record_hz": 20,
        "limbs": ["grasper"],
        "inputs": {
            "b": {"target": "grasper.s1.bend_deg", "kind": "ramp", "t1_s": 0.1, "start": 0, "end": 60}
        },
    }
    run_experiment(
        experiment_from_table(table, "e.toml", base_dir=tmp_path), tmp_path / "run", progress=False
    )
    parser = argparse.ArgumentParser()
    register_export(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "export",
            str(tmp_path / "run"),
            "--out",
            str(tmp_path / "mesh"),
            "--format",
            "vtk",
            "--every",
            "2",
            "--gif",
            "--mp4",
            "--ring",
            "8",
        ]
    )
    assert args.handler(args) == 0
    out = tmp_path / "mesh"
    assert [t for t, _ in read_pvd(out / "skin.pvd")] == [0.0, 0.1]
    assert (out / "rigid.pvd").is_file() and (out / "skin.gif").is_file()
    if not (out / "skin.mp4").exists():
        assert "skipping MP4" in capsys.readouterr().err
    args = parser.parse_args(
        ["export", "ursula", "--out", str(tmp_path / "rest"), "--format", "glb", "--workspace", "50"]
    )
    assert args.handler(args) == 0
    rest = load_mesh(tmp_path / "rest" / "skin_0000.glb")
    assert len(rest.vertices) == 2 * (32 * 65 + 2) + 2 * (32 * 33 + 2)  # 2 two-segment + 2 one-segment limbs
    assert isinstance(trimesh.load(tmp_path / "rest" / "workspace_camera_points.ply"), trimesh.PointCloud)
