"""The ``export`` subcommand's arguments, apart from the meshing code: registering it loads no trimesh."""

from __future__ import annotations

import argparse
from typing import Any

from pccbullet.core.atomic import removed_on_failure
from pccbullet.core.cli_args import integer, out_dir
from pccbullet.sim.export.formats import FORMATS


def _export_command(args: argparse.Namespace) -> int:
    """Run ``pccbullet export`` (:func:`pccbullet.sim.export.cli.export_command`, imported when used)."""
    from pccbullet.sim.export.cli import export_command

    with removed_on_failure(args.out):  # a full disk leaves no half set of files
        return export_command(args)


def register_export(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``export ROBOT_OR_RUN --out DIR --format stl|obj|ply|glb|vtk [--render] [--gif] [--mp4]`` and
    ``export [ROBOT] --pose-file FILE --out DIR ...``."""
    p = subparsers.add_parser("export", help="meshes (skin + rigid sections) of a robot or a recorded run")
    p.add_argument(
        "source",
        nargs="?",
        default=None,
        help="bundled robot name, robot TOML, or a run folder from 'pccbullet run' (with --pose-file: "
        "optional, replaces the file's robot)",
    )
    p.add_argument(
        "--pose-file",
        default=None,
        help="pose the robot's limbs from a pose file (TOML, or a bundled name such as ursula_fig10)",
    )
    p.add_argument("--out", required=True, type=out_dir, help="output folder (created if missing)")
    p.add_argument("--format", choices=FORMATS, default="stl", help="mesh format (vtk: .vtp + .pvd)")
    p.add_argument(
        "--every", type=integer(1, 10**9), default=1, help="export every k-th recorded frame (runs only)"
    )
    p.add_argument(
        "--ring", type=integer(3, 1024), default=32, help="polygon sides of skin and slices (default 32)"
    )
    p.add_argument("--render", action="store_true", help="offscreen PNG of the first and last frame")
    p.add_argument(
        "--view",
        choices=("iso", "xy", "xz", "yz"),
        default="iso",
        help="camera of --render: isometric (default) or looking at the world plane xy, xz or yz",
    )
    p.add_argument("--gif", action="store_true", help="animated GIF of the skin")
    p.add_argument("--mp4", action="store_true", help="MP4 of the skin (needs imageio-ffmpeg)")
    p.add_argument(
        "--workspace", type=integer(0, 10**6), default=0, help="N random tip samples per limb: cloud + hull"
    )
    p.set_defaults(handler=_export_command)
    return p
