"""``pccbullet robots``, ``urdf`` and ``pose``: the robot-file subcommands, registered on the CLI's
subparsers (:mod:`pccbullet.teleop.cli`).

Units at this edge: degrees (``--bend``, ``--plane``) and metres (``--length``, ``--set``'s third value, see
:mod:`pccbullet.teleop.pose_args`); pose files (``--pose-file``, TOML or JSON,
:mod:`pccbullet.urdf_gen.pose_file`) in degrees and millimetres; SI inside. Every configuration is checked
against the robot's limits before PyBullet is loaded (and the first run's compile starts). Handlers return
an exit status (0); bad input raises :class:`~pccbullet.core.errors.PccBulletError`, which the
top-level CLI turns into status 2.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from pccbullet.core import strict_json
from pccbullet.core.atomic import removed_on_failure
from pccbullet.core.cli_args import integer, out_dir, real
from pccbullet.core.errors import ConfigurationError, PccBulletError, UsageError, clip
from pccbullet.teleop.pose_args import apply_sets, check_limits, parse_set
from pccbullet.urdf_gen.catalog import bundled, robot_kind, write_robot_urdf
from pccbullet.urdf_gen.pcc import PccConfig, limb_joints, limb_transform, paper_theta_from_bend, rest_configs
from pccbullet.urdf_gen.pose_file import load_pose_file
from pccbullet.urdf_gen.spec_loader import bundled_robots, load_robot
from pccbullet.urdf_gen.specs import RobotSpec, SegmentSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_parts import MESH_URI_FORMS, check_mesh_uri

PAPER_ROBOT = "ursula"  # the robot of seed 001, whose paper's terms (theta) pose reports add
SECTIONS = integer(1, 200)  # --sections: N per segment (the robot files' limit; PyBullet's may be lower)


def register_robots(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``robots`` (list the bundled robots and their kinds)."""
    p = subparsers.add_parser("robots", help="list bundled robots and their kinds")
    p.set_defaults(handler=robots_command)
    return p


def register_urdf(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``urdf ROBOT --out DIR [--sections N] [--combined] [--mesh-uri URI]``."""
    u = subparsers.add_parser("urdf", help="write URDFs (PCC robots: head + one per limb, meshes) of a robot")
    u.add_argument("robot", help="bundled robot name (e.g. ursula) or path to a robot TOML")
    u.add_argument("--out", required=True, type=out_dir, help="output folder (created if missing)")
    u.add_argument(
        "--sections", type=SECTIONS, default=None, help="sections per segment N (default: the file's)"
    )
    u.add_argument(
        "--combined",
        action="store_true",
        help="also write ROBOT.urdf, the whole robot in one file (for ROS, Pinocchio, MuJoCo)",
    )
    u.add_argument(
        "--mesh-uri",
        type=_mesh_uri,
        default=None,
        metavar="URI",
        help="mesh references for ROS: package://PACKAGE/meshes (RViz, robot_state_publisher), or file:// "
        "(absolute paths of the written meshes); default: meshes/NAME.stl beside the URDF",
    )
    u.set_defaults(handler=urdf_command)
    return u


def _mesh_uri(text: str) -> str:
    """``--mesh-uri``'s ``type=``: one of :data:`~pccbullet.urdf_gen.urdf_parts.MESH_URI_FORMS`."""
    try:
        return check_mesh_uri(text)
    except ConfigurationError:
        message = f"{clip(repr(text))} is invalid; allowed: {MESH_URI_FORMS}"
        raise argparse.ArgumentTypeError(message) from None


def register_pose(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``pose ROBOT --limb L --bend DEG [--plane DEG] [--length M] [--segment K] [--sections N]
    [--json]``, ``pose ROBOT --set LIMB:SEG:BEND,PLANE[,LENGTH] [--set ...]`` and ``pose [ROBOT]
    --pose-file FILE [--set ...] [--limb L] [--sections N] [--json]``."""
    q = subparsers.add_parser("pose", help="section joints and tip pose of a limb for a PCC configuration")
    q.add_argument(
        "robot",
        nargs="?",
        default=None,
        help="bundled robot name or path to a robot TOML (with "
        "--pose-file: optional, replaces the file's robot)",
    )
    q.add_argument("--limb", default=None, help="limb name, e.g. camera (with --pose-file: only this limb)")
    q.add_argument("--bend", type=real(), default=None, help="total arc angle of the segment (deg)")
    q.add_argument(
        "--plane",
        type=real(),
        default=None,
        help="bending-plane angle about the segment base z (deg); default 0: bending towards the base x",
    )
    q.add_argument(
        "--length",
        type=real(0.0, 1e3, lo_open=True),
        default=None,
        help="arc length (m); default: the segment's rest length",
    )
    q.add_argument(
        "--segment",
        type=integer(1, 1000),
        default=None,
        help="segment to pose, 1-based; others stay straight (default 1)",
    )
    q.add_argument(
        "--pose-file",
        default=None,
        help="pose file (TOML or JSON, or a bundled name such as ursula_fig10): every limb's segments in "
        "deg/mm",
    )
    q.add_argument(
        "--set",
        dest="sets",
        action="append",
        type=parse_set,
        default=[],
        metavar="LIMB:SEG:BEND,PLANE[,LENGTH]",
        help="pose one segment (deg, deg, m; repeat for a whole configuration; with --pose-file: "
        "replaces that segment of the file's)",
    )
    q.add_argument(
        "--sections", type=SECTIONS, default=None, help="sections per segment N (default: the file's)"
    )
    q.add_argument("--json", action="store_true", help="print JSON instead of a table")
    q.set_defaults(handler=pose_command)
    return q


def _pcc_only(robot: str, command: str) -> None:
    """Raise :class:`~pccbullet.core.errors.PccBulletError` unless ``robot`` is a PCC robot."""
    kind = robot_kind(robot)
    if kind != "pcc":
        raise PccBulletError(
            f"'{command}' takes a PCC robot; {robot!r} is a {kind} robot "
            "(PCC robots: " + ", ".join(bundled_robots()) + ")"
        )


def pose_command(args: argparse.Namespace) -> int:
    """Handler of ``pose``: section joints and tip pose of one limb for one segment's PCC configuration
    (``--bend``/``--plane`` in degrees, ``--length`` in metres), or of the limbs of a pose file
    (``--pose-file``); prints a table or JSON, returns 0."""
    if args.pose_file is not None or args.sets:
        return _pose_file_command(args)
    missing = [
        flag
        for flag, v in (
            ("ROBOT", args.robot),
            ("--limb", args.limb),
            ("--bend", args.bend),
        )
        if v is None
    ]
    if missing:
        raise UsageError(
            f"the following arguments are required without --pose-file: {', '.join(missing)} "
            "(see 'pccbullet pose --help')"
        )
    _pcc_only(args.robot, "pose")
    spec = load_robot(args.robot, sections=args.sections)
    limb = spec.limb(args.limb)
    segment = 1 if args.segment is None else args.segment
    if not 1 <= segment <= len(limb.segments):
        raise PccBulletError(
            f"--segment {segment} is invalid for limb '{limb.name}'; allowed: 1..{len(limb.segments)}"
        )
    configs = rest_configs(limb.segments)
    seg = limb.segments[segment - 1]
    length = seg.length if args.length is None else args.length
    plane = 0.0 if args.plane is None else args.plane  # None, not 0, in the parser: --pose-file rejects it
    configs[segment - 1] = PccConfig(math.radians(args.bend), math.radians(plane), length)
    check_limits(spec, {limb.name: configs})  # before PyBullet and the first (slow) compile
    (out,) = _limb_reports(spec, {limb.name: configs})
    _print_report(out, args.json)
    return 0


def _pose_file_command(args: argparse.Namespace) -> int:
    """``pose --pose-file`` and/or ``--set``: a report per posed limb (every limb of a pose file's robot,
    or ``--limb`` alone), each configuration checked before PyBullet is loaded."""
    given = [
        flag
        for flag, v in (
            ("--bend", args.bend),
            ("--plane", args.plane),
            ("--length", args.length),
            ("--segment", args.segment),
        )
        if v is not None
    ]
    if given:
        with_what = "--pose-file" if args.pose_file is not None else "--set"
        raise UsageError(
            f"{', '.join(given)} cannot be combined with {with_what} (see 'pccbullet pose --help')"
        )
    if args.robot is not None:
        _pcc_only(args.robot, "pose")
    elif args.pose_file is None:
        raise UsageError(
            "the following arguments are required with --set: ROBOT (see 'pccbullet pose --help')"
        )
    if args.pose_file is not None:
        pose = load_pose_file(args.pose_file, args.robot, sections=args.sections)
        spec, source, description = pose.robot, str(pose.source), pose.description
        poses = {limb.name: pose.limb_configs(limb.name) for limb in spec.limbs}
    else:
        spec = load_robot(args.robot, sections=args.sections)
        source, description, poses = "--set", "segments from the command line", {}
    poses = apply_sets(spec, poses, args.sets)  # each entry checked, before PyBullet is loaded
    names = [spec.limb(args.limb).name] if args.limb is not None else list(poses)
    reports = _limb_reports(
        spec, {name: poses.get(name) or rest_configs(spec.limb(name).segments) for name in names}
    )
    if args.json:
        print(strict_json.dumps({"pose_file": source, "limbs": reports}, indent=2))  # noqa: T201
        return 0
    print(f"{source}: {description}")  # noqa: T201
    for out in reports:
        _print_report(out, False, joints=False)
    return 0


def _limb_reports(spec: RobotSpec, poses: dict[str, list[PccConfig]]) -> list[dict[str, Any]]:
    """Per limb: its segments, joints, tip in the limb base and head frames, and the PyBullet check (the
    PCC chain loaded and posed in a kinematic :class:`~pccbullet.sim.world.World`)."""
    from pccbullet.sim.world import World  # PyBullet is the check, not only the arithmetic

    reports = []
    with World(mode="kinematic") as world:
        robot = world.load_robot(spec)
        for name, configs in poses.items():
            limb = spec.limb(name)
            robot.set_joints(limb.name, robot.pcc_joints(limb.name, configs))
            T_world_base = robot.T_world_limbbase(limb.name)
            T_world_tip = robot.tip_pose(limb.name)
            T_base_tip = limb_transform(configs)
            T_head_tip = limb.T_head_base() @ T_base_tip
            error = float(np.linalg.norm((T_world_base @ T_base_tip)[:3, 3] - T_world_tip[:3, 3]))
            names = Topology.RRP.joint_names(limb)
            values = limb_joints(configs, [s.sections for s in limb.segments])
            reports.append(
                {
                    "robot": spec.name,
                    "limb": limb.name,
                    "segments": [
                        _segment_report(spec, c, s) for c, s in zip(configs, limb.segments, strict=True)
                    ],
                    "joints": [
                        {"name": n, "value": float(v), "unit": "m" if n.endswith("_chord") else "rad"}
                        for n, v in zip(names, values, strict=True)
                    ],
                    "tip_in_limb_base": {
                        "position_m": T_base_tip[:3, 3].tolist(),
                        "rotation": T_base_tip[:3, :3].tolist(),
                    },
                    "tip_in_head": {
                        "position_m": T_head_tip[:3, 3].tolist(),
                        "rotation": T_head_tip[:3, :3].tolist(),
                    },
                    "pybullet_tip_error_m": error,
                }
            )
    return reports


def _segment_report(spec: RobotSpec, c: PccConfig, seg: SegmentSpec) -> dict[str, Any]:
    """One segment's row of a pose report, in pccbullet's PCC terms (bend, plane, length); for URSULA
    (:data:`PAPER_ROBOT`) also seed 001's theta, the chord angle ``bend / 2``."""
    row: dict[str, Any] = {"bend_deg": math.degrees(c.bend)}
    if spec.name == PAPER_ROBOT:
        row["paper_theta_deg"] = math.degrees(paper_theta_from_bend(c.bend))
    row.update(plane_deg=math.degrees(c.plane), length_m=c.length, sections=seg.sections)
    return row


def _print_report(out: dict[str, Any], as_json: bool, *, joints: bool = True) -> None:
    """Print one limb's report as JSON or as a table (the joints only with ``joints``)."""
    if as_json:
        print(strict_json.dumps(out, indent=2))  # noqa: T201
        return
    print(f"{out['robot']} / {out['limb']}: {len(out['joints'])} joints")  # noqa: T201
    if joints:
        for j in out["joints"]:
            print(f"  {j['name']:<28} {j['value']: .9f} {j['unit']}")  # noqa: T201
    for k, s in enumerate(out["segments"], start=1):
        theta = f" (seed 001 theta {s['paper_theta_deg']:.3f})" if "paper_theta_deg" in s else ""
        print(  # noqa: T201
            f"  segment {k}: bend {s['bend_deg']:.3f} deg{theta}, "
            f"plane {s['plane_deg']:.3f} deg, length {s['length_m']:.6f} m"
        )
    p = out["tip_in_limb_base"]["position_m"]
    print(f"tip in limb base frame (m): [{p[0]:.6f}, {p[1]:.6f}, {p[2]:.6f}]")  # noqa: T201
    print(f"PyBullet tip vs PCC: {out['pybullet_tip_error_m']:.3e} m")  # noqa: T201


def urdf_command(args: argparse.Namespace) -> int:
    """Handler of ``urdf``: write the robot's URDFs (and meshes) into ``--out``; prints them, returns 0."""
    with removed_on_failure(args.out):  # a full disk leaves no half set of files
        urdfs = write_robot_urdf(
            args.robot, args.out, sections=args.sections, combined=args.combined, mesh_uri=args.mesh_uri
        )
    meshes = sorted((urdfs[0].parent / "meshes").glob("*.stl"))
    print(f"wrote {len(urdfs)} URDF files and {len(meshes)} meshes to {urdfs[0].parent}")  # noqa: T201
    for path in urdfs:
        print(f"  {path}")  # noqa: T201
    return 0


def robots_command(args: argparse.Namespace) -> int:
    """Handler of ``robots``: print every bundled robot and its kind; returns 0."""
    robots = bundled()
    width = max(len(r.name) for r in robots)
    for r in robots:
        print(f"{r.name:<{width}}  {r.kind}")  # noqa: T201
    return 0
