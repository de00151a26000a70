"""``pccbullet mjcf ROBOT --out DIR``: the robot's dynamic chain as an MJCF file with its material.

A subcommand of its own rather than ``urdf --format mjcf``: ``urdf`` writes the paper's kinematic RRP
chain for ROS, Pinocchio and yourdfpy (mesh URIs, one combined file) and loads nothing but the robot
files; an MJCF file carries dynamics (the chain, the medium, the chords' shear, tendons and their motors)
and needs the dynamic model (the material, the chain's first natural frequency) to write it. Registering
the command imports no MuJoCo and no PyBullet.
"""

from __future__ import annotations

import argparse
from typing import Any

from pccbullet.core.atomic import removed_on_failure
from pccbullet.core.cli_args import integer, out_dir
from pccbullet.core.errors import PccBulletError
from pccbullet.urdf_gen.catalog import robot_kind
from pccbullet.urdf_gen.topology import Topology

MEDIA = ("air", "water", "seawater")


def register_mjcf(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``mjcf ROBOT --out DIR [--sections N] [--chain rod|rrp] [--medium M] [--no-shear]
    [--no-tendons]``."""
    p = subparsers.add_parser(
        "mjcf", help="write the robot's dynamic chain with its material as MJCF (MuJoCo) with meshes"
    )
    p.add_argument("robot", help="bundled PCC robot name (e.g. ursula) or path to a robot TOML")
    p.add_argument("--out", required=True, type=out_dir, help="output folder (created if missing)")
    p.add_argument(
        "--sections", type=integer(1, 200), default=None, help="sections per segment N (default: the file's)"
    )
    chains = sorted(t.value for t in Topology)
    p.add_argument(
        "--chain", choices=chains, default=Topology.ROD.value, help="the limbs' chain (default rod)"
    )
    p.add_argument("--medium", choices=MEDIA, default="air", help="the fluid around the robot (default air)")
    p.add_argument("--no-shear", action="store_true", help="rod chains: no shear slides across the chords")
    p.add_argument("--no-tendons", action="store_true", help="leave out the robot file's tendons and motors")
    p.set_defaults(handler=mjcf_command)
    return p


def mjcf_command(args: argparse.Namespace) -> int:
    """Handler of ``mjcf``: write ``{robot}.xml`` and its meshes into ``--out``; prints what, returns 0."""
    kind = robot_kind(args.robot)
    if kind != "pcc":
        raise PccBulletError(f"'mjcf' takes a PCC robot; {args.robot!r} is a {kind} robot")
    from pccbullet.sim.mjcf.writer import write_mjcf
    from pccbullet.urdf_gen.spec_loader import load_robot

    spec = load_robot(args.robot, sections=args.sections)
    with removed_on_failure(args.out):  # a full disk leaves no half set of files
        out = write_mjcf(
            spec, args.out, chain=args.chain, medium=args.medium, shear=not args.no_shear,
            tendons=not args.no_tendons,
        )  # fmt: skip
    print(f"wrote {out.path} and {len(out.meshes)} meshes ({args.chain} chain, {args.medium})")  # noqa: T201
    kinds = {limb.name: limb.actuators.kind if limb.actuators else "none" for limb in spec.limbs}
    tendons = [] if args.no_tendons else [name for name, kind in kinds.items() if kind == "tendon"]
    from pccbullet.sim.limb.chambers import declares_chambers

    chambers = {
        limb.name: limb.actuators.count * len(limb.segments)
        for limb in spec.limbs
        if limb.actuators is not None and declares_chambers(limb) and not {"pressure_law", "bending_law"} & set(spec.extra)
    }
    written = ("tendon", "none", "chamber") if chambers else ("tendon", "none")
    others = sorted({kind for kind in kinds.values() if kind not in written})
    notes = [f"tendons and their motors: {', '.join(tendons) if tendons else 'none'}"]
    if chambers:
        notes.append("chamber actuators: " + ", ".join(f"{name} ({n})" for name, n in chambers.items()))
    notes += [f"{kind} actuators: not written" for kind in others]
    print("; ".join(notes))  # noqa: T201
    return 0
