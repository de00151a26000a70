"""The ``pccbullet`` command. Units at this edge: degrees and metres (as each flag says); SI inside.

Subcommands:
    robots   list bundled robots
    urdf     write URDFs and meshes of a robot to a folder
    pose     section joint values and tip pose of a limb for a PCC configuration
    demo     the squid demo (GUI with a display, headless animation + summary without)
    run      run an experiment file; sweep: a parameter sweep; export: meshes, renders
    bench    speed table: robot x mode x N -> steps/s, real-time factor, p99 step time
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sim.experiments.cli import register_run, register_sweep
from sim.export.cli import register_export
from teleop.devices import DEMO_DEVICES
from urdf_gen import __version__, naming
from urdf_gen.cli_args import OneLineParser, integer, out_dir, port, real, udp_port_free
from urdf_gen.errors import PccBulletError, clip
from urdf_gen.pcc import PccConfig, limb_joints, limb_transform, paper_theta_from_bend, rest_configs
from urdf_gen.spec_loader import bundled_robots, load_robot
from urdf_gen.urdf_writer import write_urdf

log = logging.getLogger("pccbullet")
SECTIONS = integer(1, 200)  # --sections: N per segment (the robot files' limit; PyBullet's may be lower)
MAX_DEMO_S = 86400.0  # s, longest demo (--duration)


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="pccbullet",
        description="Soft robot arms in PyBullet: PCC segments as chains of rigid RRP sections.",
        epilog="Units: angles in degrees (--bend, --plane), lengths in metres (--length). "
        "bend is the total arc angle of a segment (seed 001's theta is bend/2).",
    )
    p.add_argument("--version", action="version", version=f"pccbullet {__version__}")
    p.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = p.add_subparsers(dest="command", required=True)
    register_run(sub)
    register_sweep(sub)
    register_export(sub)

    sub.add_parser("robots", help="list bundled robots")

    u = sub.add_parser("urdf", help="write URDFs (head + one per limb) and meshes")
    u.add_argument("robot", help="bundled robot name (e.g. ursula) or path to a robot TOML")
    u.add_argument("--out", required=True, type=out_dir, help="output folder (created if missing)")
    u.add_argument(
        "--sections", type=SECTIONS, default=None, help="sections per segment N (default: the file's)"
    )

    q = sub.add_parser("pose", help="section joints and tip pose of a limb for a PCC configuration")
    q.add_argument("robot", help="bundled robot name or path to a robot TOML")
    q.add_argument("--limb", required=True, help="limb name, e.g. camera")
    q.add_argument("--bend", required=True, type=real(), help="total arc angle of the segment (deg)")
    q.add_argument(
        "--plane", required=True, type=real(), help="bending-plane angle about the segment base z (deg)"
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
        default=1,
        help="segment to pose, 1-based; others stay straight (default 1)",
    )
    q.add_argument(
        "--sections", type=SECTIONS, default=None, help="sections per segment N (default: the file's)"
    )
    q.add_argument("--json", action="store_true", help="print JSON instead of a table")

    b = sub.add_parser("bench", help="physics steps/s, real-time factor, p99 step time; model step costs")
    b.add_argument("--robot", nargs="+", default=["ursula"], help="robots to bench (default: ursula)")
    b.add_argument(
        "--sections", nargs="+", type=SECTIONS, default=[5, 10, 20], help="N per segment (default 5 10 20)"
    )
    b.add_argument("--mode", nargs="+", default=["kinematic", "dynamic"], choices=["kinematic", "dynamic"])
    b.add_argument(
        "--medium", default="water", choices=["air", "water", "seawater"], help="dynamic-mode medium"
    )
    b.add_argument(
        "--seconds",
        type=real(0.0, 3600.0, lo_open=True),
        default=1.0,
        help="simulated seconds per run (default 1)",
    )
    b.add_argument("--peer", choices=["mujoco"], default=None, help="also step the same URDFs in MuJoCo")
    b.add_argument("--no-models", action="store_true", help="skip the model step-cost benchmarks")
    b.add_argument("--json", action="store_true", help="print JSON instead of a table")

    d = sub.add_parser("demo", help="the URSULA squid demo")
    d.add_argument(
        "--out", type=out_dir, default=Path("pccbullet_demo"), help="folder for the headless outputs"
    )
    d.add_argument("--headless", action="store_true", help="no GUI even if a display is available")
    d.add_argument(
        "--duration",
        type=real(0.0, MAX_DEMO_S, lo_open=True),
        default=12.0,
        help=f"simulated seconds, in (0, {MAX_DEMO_S:g}] (default 12)",
    )
    d.add_argument(
        "--device",
        default="auto",
        choices=DEMO_DEVICES,
        help="operator input (default auto: the GUI keyboard with a display, the scripted operator without)",
    )
    d.add_argument(
        "--udp-port", type=port, default=0, help="port of the UDP bridge (--device udp; 0: any free)"
    )
    d.add_argument(
        "--udp-key-file",
        type=Path,
        default=None,
        help="HMAC key file of the UDP bridge (default: $PCCBULLET_UDP_KEY_FILE, else "
        "~/.config/pccbullet/udp.key when it exists, else no HMAC)",
    )
    return p


def _pose(args: argparse.Namespace) -> int:
    spec = load_robot(args.robot, sections=args.sections)
    limb = spec.limb(args.limb)
    if not 1 <= args.segment <= len(limb.segments):
        raise PccBulletError(
            f"--segment {args.segment} is invalid for limb '{limb.name}'; allowed: 1..{len(limb.segments)}"
        )
    configs = rest_configs(limb.segments)
    seg = limb.segments[args.segment - 1]
    length = seg.length if args.length is None else args.length
    configs[args.segment - 1] = PccConfig(math.radians(args.bend), math.radians(args.plane), length)

    from sim.world import World  # PyBullet is the check, not only the arithmetic

    with World() as world:
        robot = world.load_robot(spec)
        q = robot.pcc_joints(limb.name, configs)
        robot.set_joints(limb.name, q)
        T_world_base = robot.T_world_limbbase(limb.name)
        T_world_tip = robot.tip_pose(limb.name)
    T_base_tip = limb_transform(configs)
    T_head_tip = limb.T_head_base() @ T_base_tip
    pybullet_error = float(np.linalg.norm((T_world_base @ T_base_tip)[:3, 3] - T_world_tip[:3, 3]))
    names = naming.limb_joint_names(limb)
    joints = [
        {"name": n, "value": float(v), "unit": "m" if n.endswith("_chord") else "rad"}
        for n, v in zip(names, limb_joints(configs, [s.sections for s in limb.segments]), strict=True)
    ]
    out = {
        "robot": spec.name,
        "limb": limb.name,
        "segments": [
            {
                "bend_deg": math.degrees(c.bend),
                "paper_theta_deg": math.degrees(paper_theta_from_bend(c.bend)),
                "plane_deg": math.degrees(c.plane),
                "length_m": c.length,
                "sections": s.sections,
            }
            for c, s in zip(configs, limb.segments, strict=True)
        ],
        "joints": joints,
        "tip_in_limb_base": {
            "position_m": T_base_tip[:3, 3].tolist(),
            "rotation": T_base_tip[:3, :3].tolist(),
        },
        "tip_in_head": {"position_m": T_head_tip[:3, 3].tolist(), "rotation": T_head_tip[:3, :3].tolist()},
        "pybullet_tip_error_m": pybullet_error,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{spec.name} / {limb.name}: {len(joints)} joints")
    for j in joints:
        print(f"  {j['name']:<28} {j['value']: .9f} {j['unit']}")
    p = T_base_tip[:3, 3]
    print(f"tip in limb base frame (m): [{p[0]:.6f}, {p[1]:.6f}, {p[2]:.6f}]")
    print(f"PyBullet tip vs PCC: {pybullet_error:.3e} m")
    return 0


def _urdf(args: argparse.Namespace) -> int:
    spec = load_robot(args.robot, sections=args.sections)
    out = write_urdf(spec, args.out)
    print(f"wrote {len(out.urdfs)} URDF files and {len(out.meshes)} meshes to {out.head.parent}")
    for path in out.urdfs:
        print(f"  {path}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from teleop.demo import run_demo
    from teleop.udp_bridge import load_key_file

    if args.udp_key_file is not None:  # a bad key file fails before the worlds are built
        load_key_file(args.udp_key_file)

    if args.device == "udp":
        udp_port_free(args.udp_port)

    summary = run_demo(
        out_dir=args.out,
        headless=args.headless,
        duration=args.duration,
        device=args.device,
        udp_port=args.udp_port,
        udp_key_file=args.udp_key_file,
    )
    print(json.dumps(summary, indent=2))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from sim.bench import format_table, run_bench

    result = run_bench(
        args.robot,
        args.mode,
        args.sections,
        medium=args.medium,
        seconds=args.seconds,
        peer=args.peer,
        models=not args.no_models,
    )
    print(json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``pccbullet``; returns the exit status (2 for bad input, 130 on Ctrl-C).

    Bad arguments, bad files and failing file-system writes print one line ``pccbullet: error: ...`` on
    stderr (the traceback only at ``-vv``), never a traceback alone.
    """
    try:
        args = _parser().parse_args(argv)
    except PccBulletError as exc:
        print(f"pccbullet: error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)])
    try:
        if args.command == "robots":
            for name in bundled_robots():
                print(name)
            return 0
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args))
        return {"pose": _pose, "urdf": _urdf, "demo": _demo, "bench": _bench}[args.command](args)
    except PccBulletError as exc:
        print(f"pccbullet: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder or file that could not be written or read, a port taken meanwhile
        log.debug("OSError", exc_info=True)
        where = f" {clip(str(exc.filename), 200)!r}" if exc.filename else ""
        print(f"pccbullet: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pccbullet: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
