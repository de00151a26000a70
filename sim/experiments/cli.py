"""``pccbullet run`` and ``pccbullet sweep``: register the subcommands on the CLI's subparsers.

Handlers return an exit status: 0 on success, 1 when some sweep runs failed. ``run`` refuses a non-empty
``--out`` unless ``--overwrite``; ``sweep --address`` (or ``RAY_ADDRESS``) runs on a Ray cluster. Bad
input raises :class:`~pccbullet.core.errors.PccBulletError`, which the top-level CLI turns into status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from pathlib import Path
from typing import Any

from pccbullet.core import strict_json
from pccbullet.core.cli_args import integer, out_dir, real
from pccbullet.sim.experiments.ray_connect import CONNECT_TIMEOUT_S
from pccbullet.sim.views.web.cli import add_web_args, start_web_view


def register_run(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``run EXP.toml --out DIR [--overwrite] [--seed S] [--quiet]``."""
    p = subparsers.add_parser("run", help="run a virtual experiment (TOML) and record CSV/NPZ/metadata")
    p.add_argument(
        "experiment", type=Path, help="experiment TOML file, or a bundled one by name (camera_sweep, ...)"
    )
    p.add_argument("--out", required=True, type=out_dir, help="output folder (created; must be empty)")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="write into a non-empty --out: the files of the run recorded in its manifest.json are "
        "removed first, other files are kept",
    )
    p.add_argument(
        "--seed",
        type=integer(0, 2**32 - 1),
        default=None,
        help="seed of the input noise (default: the file's)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_web_args(
        p,
        "web: show the run live in the browser (the address is printed); at its end the last frame is "
        "served until Ctrl-C when the input is a terminal",
        ("none", "web"),
    )
    p.set_defaults(handler=run_command)
    return p


def register_sweep(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``sweep SWEEP.toml --out DIR [--engine pool|serial|ray] [--workers N]``."""
    p = subparsers.add_parser("sweep", help="run a parameter sweep (resumable; finished runs are skipped)")
    p.add_argument("sweep", type=Path, help="sweep TOML file, or a bundled one by name (sweep_camera_bend)")
    p.add_argument("--out", required=True, type=out_dir, help="output folder, one run_NNNN folder per run")
    p.add_argument("--engine", choices=("pool", "serial", "ray"), default="pool", help="default: pool")
    p.add_argument("--workers", type=integer(1, 256), default=2, help="parallel workers (default 2)")
    p.add_argument(
        "--address",
        default=None,
        help="--engine ray: address of a running Ray cluster, e.g. 10.0.0.5:6379 (default: $RAY_ADDRESS, "
        "else a local Ray)",
    )
    p.add_argument(
        "--connect-timeout",
        type=real(0.0, 3600.0, lo_open=True),
        default=CONNECT_TIMEOUT_S,
        help=f"--engine ray with a cluster: seconds to wait for it to answer (default {CONNECT_TIMEOUT_S:g})",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=sweep_command)
    return p


def run_command(args: argparse.Namespace) -> int:
    """Handler of ``run``."""
    from pccbullet.core.errors import ConfigurationError
    from pccbullet.sim.experiments.runner import run_experiment

    out: Path = args.out
    if out.is_dir() and any(out.iterdir()) and not args.overwrite:
        raise ConfigurationError(
            f"--out {str(out)[:80]!r} is not empty; allowed: an empty or new folder, or --overwrite "
            "(removes the previous run's files listed in its manifest.json, keeps the rest)"
        )
    from pccbullet.core.fields import read_toml
    from pccbullet.sim.experiments.spec import resolve_experiment_path

    path = resolve_experiment_path(args.experiment)
    if read_toml(path).get("kind") == "grasp":  # pccbullet.sim.experiments.grasp
        from pccbullet.sim.experiments.grasp import run_grasp

        _, files = run_grasp(path, out, command_line=sys.argv)
        for f in files:
            print(f)  # noqa: T201
        return 0
    view = start_web_view(args)
    try:
        progress = not args.quiet
        result = run_experiment(
            args.experiment, args.out, seed=args.seed, progress=progress, command_line=sys.argv, view=view
        )
        for path in result.files:
            print(path)  # noqa: T201
        if view is not None and sys.stdin.isatty():
            print("pccbullet: the run is done; its last frame is served until Ctrl-C", file=sys.stderr)  # noqa: T201
            with contextlib.suppress(KeyboardInterrupt):
                threading.Event().wait()
    finally:
        if view is not None:
            view.close()
    return 0


def sweep_command(args: argparse.Namespace) -> int:
    """Handler of ``sweep``."""
    from pccbullet.sim.experiments.sweep import run_sweep

    # stdout carries only the JSON summary: what Ray prints there (e.g. "A worker died") goes to stderr
    with contextlib.redirect_stdout(sys.stderr):
        res = run_sweep(
            args.sweep,
            args.out,
            engine=args.engine,
            workers=args.workers,
            progress=not args.quiet,
            address=args.address,
            connect_timeout=args.connect_timeout,
        )
    summary = {
        "out": str(res.out_dir),
        "completed": len(res.completed),
        "skipped": len(res.skipped),
        "changed": list(res.changed),  # finished before with another resolved spec: run again now
        "failed": [{"run": r, "error": e} for r, e in res.failed],
        "elapsed_s": round(res.elapsed, 3),
    }
    print(strict_json.dumps(summary, indent=2))  # noqa: T201
    return 1 if res.failed else 0
