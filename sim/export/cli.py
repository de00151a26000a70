"""``pccbullet export``: meshes of a robot at rest or of every frame of a recorded run.

``ROBOT_OR_RUN`` is a bundled robot name / robot TOML (one frame at rest) or a run folder written by
``pccbullet run`` (``run.npz`` + ``metadata.json``: one frame per recorded sample, ``--every`` to thin).
Per frame it writes the smooth skin (``skin_NNNN``) and the rigid sections (``rigid_NNNN``; from the
recorded section poses for runs, from the PCC chain for robots) in the chosen format. Robots of the
other kinds (rolling snakes, PneuNets, the seed-004 arm) have no PCC skin: their URDF's visuals at rest
are written as ``rigid_0000``. ``--gif`` of a PCC robot animates a bend sweep of every limb
(:func:`sweep_frames`); other kinds refuse it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import trimesh

from pccbullet.core.atomic import atomic_path
from pccbullet.core.errors import ConfigurationError, PccBulletError, UsageError
from pccbullet.sim.export.formats import write_series
from pccbullet.sim.export.rigid import body_mesh, limb_base_pose, rigid_mesh, section_poses
from pccbullet.sim.export.skin import skin_mesh
from pccbullet.urdf_gen.catalog import robot_kind
from pccbullet.urdf_gen.pcc import PccConfig, rest_configs
from pccbullet.urdf_gen.pose_file import PoseFile, load_pose_file
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import RobotSpec

PCC_COLUMNS = ("bend_rad", "plane_rad", "length_m")  # run.npz column suffixes, in PccConfig's order

log = logging.getLogger(__name__)

GIF_FRAMES = 24  # frames of a robot's bend-sweep GIF


def _concat(meshes: list[trimesh.Trimesh]) -> trimesh.Trimesh:
    return cast(trimesh.Trimesh, trimesh.util.concatenate(meshes))


def _with_body(body: trimesh.Trimesh | None, frames: tuple[trimesh.Trimesh, ...]) -> list[trimesh.Trimesh]:
    """The frames to draw: each with the robot's body (at the world origin), if it has a shape."""
    return [f if body is None else _concat([f, body]) for f in frames]


@dataclass(frozen=True, slots=True)
class Frames:
    """Per-frame meshes: ``skin[i]`` and ``rigid[i]`` hold all limbs of frame i; ``times`` (s)."""

    times: tuple[float, ...]
    skin: tuple[trimesh.Trimesh, ...]
    rigid: tuple[trimesh.Trimesh, ...]


def robot_frames(robot: str | Path | RobotSpec, *, ring: int = 32, pose: PoseFile | None = None) -> Frames:
    """One frame of a robot (head at the world origin), every limb straight at rest length, or posed as
    ``pose`` says (a :class:`~pccbullet.urdf_gen.pose_file.PoseFile` of this robot)."""
    spec = robot if isinstance(robot, RobotSpec) else load_robot(robot)
    skins, rigids = [], []
    for limb in spec.limbs:
        configs = rest_configs(limb.segments) if pose is None else pose.limb_configs(limb.name)
        T = limb_base_pose(spec, limb.name)
        skins.append(skin_mesh(limb, configs, T, ring=ring))
        rigids.append(rigid_mesh(limb, section_poses(limb, configs, T), ring=ring))
    return Frames((0.0,), (_concat(skins),), (_concat(rigids),))


def sweep_frames(
    robot: str | Path | RobotSpec, *, frames: int = GIF_FRAMES, fraction: float = 0.8, ring: int = 32
) -> Frames:
    """Skin frames of every limb's first segment bending from straight to ``fraction`` of its
    ``bend_max`` and back (plane 0, rest lengths), ``frames`` frames at 0.1 s."""
    spec = robot if isinstance(robot, RobotSpec) else load_robot(robot)
    skins = []
    for i in range(frames):
        amount = fraction * np.sin(np.pi * i / (frames - 1))
        sk = []
        for limb in spec.limbs:
            configs = rest_configs(limb.segments)
            first = limb.segments[0]
            configs[0] = PccConfig(float(amount * first.bend_max), 0.0, first.length)
            sk.append(skin_mesh(limb, configs, limb_base_pose(spec, limb.name), ring=ring))
        skins.append(_concat(sk))
    return Frames(tuple(0.1 * i for i in range(frames)), tuple(skins), ())


def pose_frames(pose: PoseFile, *, frames: int = GIF_FRAMES, ring: int = 32) -> Frames:
    """Skin frames of every limb moving from straight at rest length to ``pose`` and back (bend and
    length interpolated linearly, the plane kept), ``frames`` frames at 0.1 s."""
    spec = pose.robot
    skins = []
    for i in range(frames):
        amount = float(np.sin(np.pi * i / (frames - 1)))
        sk = []
        for limb in spec.limbs:
            configs = [
                PccConfig(amount * c.bend, c.plane, s.length + amount * (c.length - s.length))
                for c, s in zip(pose.limb_configs(limb.name), limb.segments, strict=True)
            ]
            sk.append(skin_mesh(limb, configs, limb_base_pose(spec, limb.name), ring=ring))
        skins.append(_concat(sk))
    return Frames(tuple(0.1 * i for i in range(frames)), tuple(skins), ())


def run_frames(run_dir: str | Path, *, every: int = 1, ring: int = 32) -> Frames:
    """Frames of a recorded run: skin from the recorded PCC, rigid sections at the recorded poses."""
    run_dir = Path(run_dir)
    if every < 1:
        raise ConfigurationError(f"every = {every} is invalid; allowed: an integer >= 1")
    meta = read_run_metadata(run_dir)
    spec = load_robot(meta["robot_path"], sections=meta.get("sections"))
    try:
        data = np.load(run_dir / "run.npz")
    except (OSError, ValueError) as exc:  # truncated or not an NPZ file
        raise ConfigurationError(f"{run_dir / 'run.npz'} is not a readable run archive ({exc})") from exc
    idx = range(0, len(data["time_s"]), every)
    skins, rigids = [], []
    for i in idx:
        sk, rg = [], []
        for name in meta["limbs"]:
            limb = spec.limb(name)
            configs = [
                PccConfig(*(float(data[f"{name}_s{s}_{p}"][i]) for p in PCC_COLUMNS))
                for s in range(1, len(limb.segments) + 1)
            ]
            sk.append(skin_mesh(limb, configs, limb_base_pose(spec, name), ring=ring))
            rg.append(rigid_mesh(limb, data[f"{name}_sections"][i], ring=ring))
        skins.append(_concat(sk))
        rigids.append(_concat(rg))
    times = tuple(float(data["time_s"][i]) for i in idx)
    return Frames(times, tuple(skins), tuple(rigids))


def read_run_metadata(run_dir: Path) -> dict[str, Any]:
    """``metadata.json`` of a run folder; a missing, malformed or incomplete file raises
    :class:`ConfigurationError` naming it."""
    path = run_dir / "metadata.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or not isinstance(meta.get("robot_path"), str):
            raise ValueError("no robot_path")
        if not isinstance(meta.get("limbs", []), list):
            raise ValueError("limbs is not a list")
    except (OSError, ValueError) as exc:
        raise ConfigurationError(
            f"{path} is not a run's metadata file ({exc.__class__.__name__}: {exc})"
        ) from exc
    return meta


def export_command(args: argparse.Namespace) -> int:
    """Handler of ``export``; prints the files written."""
    from pccbullet.sim.export import render

    if args.pose_file is not None:
        return _export_pose(args, render)
    if args.source is None:
        raise UsageError("export needs ROBOT_OR_RUN, or --pose-file (see 'pccbullet export --help')")
    src = Path(args.source)
    is_run = src.is_dir() and (src / "run.npz").is_file()
    kind = "pcc" if is_run else robot_kind(args.source)
    out: Path = args.out
    if kind != "pcc":
        return _export_other(args, kind, out)
    frames = (
        run_frames(src, every=args.every, ring=args.ring)
        if is_run
        else robot_frames(args.source, ring=args.ring)
    )
    written = write_series(frames.skin, out, "skin", args.format, frames.times)
    written += write_series(frames.rigid, out, "rigid", args.format, frames.times)
    spec = load_robot(read_run_metadata(src)["robot_path"] if is_run else args.source)
    body = body_mesh(spec.head, ring=args.ring)  # drawn with the limbs; the files hold the limbs
    if args.render:
        first, last = _with_body(body, (frames.skin[0], frames.skin[-1]))
        written.append(render.render_png(first, out / "skin_first.png", view=args.view))
        written.append(render.render_png(last, out / "skin_last.png", view=args.view))
    if args.gif:
        # one frame at rest would make a still GIF: a robot's GIF sweeps its limbs' bend instead
        anim = frames if is_run else sweep_frames(args.source, ring=args.ring)
        written.append(render.write_gif(_with_body(body, anim.skin), out / "skin.gif"))
    if args.mp4:
        try:
            written.append(render.write_mp4(_with_body(body, frames.skin), out / "skin.mp4"))
        except PccBulletError as exc:
            print(f"pccbullet: skipping MP4: {exc}", file=sys.stderr)  # noqa: T201
    if args.workspace:
        robot = read_run_metadata(src)["robot_path"] if is_run else args.source
        written += _workspace(load_robot(robot), args, out)
    for path in written:
        print(path)  # noqa: T201
        log.info("wrote %s", path)
    return 0


def _export_pose(args: argparse.Namespace, render: Any) -> int:
    """``export --pose-file``: the robot posed as the file says (``--gif``: straight to the pose and back)."""
    if args.source is not None:
        src = Path(args.source)
        if src.is_dir() and (src / "run.npz").is_file():
            raise UsageError(
                f"--pose-file poses a robot; {args.source!r} is a run folder (see 'pccbullet export --help')"
            )
        if (kind := robot_kind(args.source)) != "pcc":
            raise ConfigurationError(
                f"--pose-file is invalid for {args.source!r}, a {kind} robot; allowed: PCC robots"
            )
    pose = load_pose_file(args.pose_file, args.source)
    out: Path = args.out
    frames = robot_frames(pose.robot, ring=args.ring, pose=pose)
    written = write_series(frames.skin, out, "skin", args.format, frames.times)
    written += write_series(frames.rigid, out, "rigid", args.format, frames.times)
    body = body_mesh(pose.robot.head, ring=args.ring)
    if args.render:
        drawn = _with_body(body, frames.skin[:1])[0]
        written.append(render.render_png(drawn, out / "skin_pose.png", view=args.view))
    if args.gif:
        anim = _with_body(body, pose_frames(pose, ring=args.ring).skin)
        written.append(render.write_gif(anim, out / "skin.gif"))
    if args.mp4:
        try:
            anim = _with_body(body, pose_frames(pose, ring=args.ring).skin)
            written.append(render.write_mp4(anim, out / "skin.mp4"))
        except PccBulletError as exc:
            print(f"pccbullet: skipping MP4: {exc}", file=sys.stderr)  # noqa: T201
    if args.workspace:
        written += _workspace(pose.robot, args, out)
    for path in written:
        print(path)  # noqa: T201
        log.info("wrote %s", path)
    return 0


def _export_other(args: argparse.Namespace, kind: str, out: Path) -> int:
    """``export`` of a robot without PCC limbs: its URDF visuals at rest."""
    from pccbullet.sim.export import render
    from pccbullet.sim.export.urdf_meshes import robot_rest_mesh

    for flag in ("gif", "mp4", "workspace"):
        if getattr(args, flag):
            raise ConfigurationError(
                f"--{flag} is invalid for {args.source!r}, a {kind} robot; allowed: PCC robots "
                "(rest meshes and --render work for every robot)"
            )
    mesh = robot_rest_mesh(args.source, sections=args.ring)
    written = write_series([mesh], out, "rigid", args.format, (0.0,))
    if args.render:
        written.append(render.render_png(mesh, out / "rigid.png", view=args.view))
    for path in written:
        print(path)  # noqa: T201
        log.info("wrote %s", path)
    return 0


def _workspace(spec: RobotSpec, args: argparse.Namespace, out: Path) -> list[Path]:
    from pccbullet.sim.export.formats import write_mesh
    from pccbullet.sim.export.workspace import point_cloud, workspace_hull, workspace_points

    paths = []
    for limb in spec.limbs:
        pts = workspace_points(limb, args.workspace, seed=0, T_world_base=limb_base_pose(spec, limb.name))
        cloud = out / f"workspace_{limb.name}_points.ply"
        with atomic_path(cloud) as tmp:
            point_cloud(pts).export(tmp)
        paths += [
            cloud,
            write_mesh(
                workspace_hull(pts),
                out / f"workspace_{limb.name}_hull.{'vtp' if args.format == 'vtk' else args.format}",
            ),
        ]
    return paths
