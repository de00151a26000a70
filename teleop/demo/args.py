"""The ``demo`` command's arguments that say what it runs: the robot (``--robot``) and the objects placed in
its scene (``--objects``). Registered by :mod:`pccbullet.teleop.cli`; importing this imports no physics."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_scene_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--robot FILE`` and ``--objects FILE`` to the ``demo`` parser."""
    parser.add_argument(
        "--robot",
        default=None,
        metavar="FILE",
        help="the robot: a bundled name or a robot TOML (default: ursula). Another robot runs with the "
        "interactive devices (keyboard, terminal, udp, haptic; the scripted session is URSULA's) in a "
        "scene fitted to the limb with its force sensor (fitted to its first limb if it has none)",
    )
    parser.add_argument(
        "--objects",
        type=Path,
        default=None,
        metavar="FILE",
        help="the objects in the scene: a TOML file of [[objects]] tables (as a grasp experiment's; "
        "default: a bar on two rock posts under the grasper)",
    )
