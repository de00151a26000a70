"""``pccbullet mjcf ROBOT --out DIR``: the robot's dynamic chain as an MJCF file with its material.

A subcommand of its own rather than ``urdf --format mjcf``: ``urdf`` writes the paper's kinematic RRP
chain for ROS, Pinocchio and yourdfpy (mesh URIs, one combined file) and loads nothing but the robot
files; an MJCF file carries dynamics (the chain, the medium, the chords' shear, tendons and their motors)
and needs the dynamic model (the material, the chain's first natural frequency) to write it. Registering
the command imports no MuJoCo and no PyBullet.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pccbullet.core.atomic import removed_on_failure
from pccbullet.core.cli_args import integer, out_dir
from pccbullet.core.errors import PccBulletError
from pccbullet.urdf_gen.catalog import robot_kind
from pccbullet.urdf_gen.topology import Topology

if TYPE_CHECKING:
    from pccbullet.urdf_gen.specs import RobotSpec

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
    print("; ".join(model_summary(out.path, spec)))  # noqa: T201
    return 0


def model_summary(path: Path, spec: RobotSpec) -> list[str]:
    """What an MJCF file written for ``spec`` holds, read from the file itself: its cable tendons (per limb,
    by the limb whose name prefixes theirs) and the pull-only motors on them, the chambers' pushing
    actuators on their fibres (:func:`pccbullet.sim.mjcf.tendons.write_chambers`) per limb, any other
    actuators by kind, and a note naming the limbs whose declared chambers no written actuator drives."""
    root = ET.parse(path).getroot()
    tendons = [t.get("name", "") for section in root.findall("tendon") for t in section]
    actuators = [a for section in root.findall("actuator") for a in section]
    names = sorted((limb.name for limb in spec.limbs), key=len, reverse=True)  # longest prefix first

    def per_limb(items: list[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for item in items:
            owner = next((n for n in names if item.startswith(f"{n}_")), "other")
            counts[owner] = counts.get(owner, 0) + 1
        return counts

    fibres = {a.get("tendon") for a in actuators if a.tag == "general" and a.get("tendon") is not None}
    chambers = per_limb([str(a.get("tendon")) for a in actuators if a.tag == "general" and a.get("tendon")])
    cables = [t for t in tendons if t not in fibres]
    motors = sum(1 for a in actuators if a.tag == "motor" and a.get("tendon") in cables)
    if cables:
        limbs = ", ".join(f"{n} {k}" for n, k in per_limb(cables).items())
        notes = [f"tendons: {len(cables)} ({limbs}), motors on them: {motors}"]
    else:
        notes = ["tendons: none"]
    if chambers:
        notes.append("chamber actuators: " + ", ".join(f"{n} ({k})" for n, k in chambers.items()))
    others: dict[str, int] = {}
    for a in actuators:
        if a.get("tendon") is None:
            others[a.tag] = others.get(a.tag, 0) + 1
    if others:
        kinds = ", ".join(f"{k} {tag}" for tag, k in sorted(others.items()))
        notes.append(f"other actuators: {sum(others.values())} ({kinds})")
    declared = [limb.name for limb in spec.limbs if limb.actuators and limb.actuators.kind == "chamber"]
    left = [n for n in declared if n not in chambers]
    if left:
        notes.append(f"chambers of {', '.join(left)}: not written (no actuator drives them)")
    return notes
