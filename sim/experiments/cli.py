"""``pccbullet run`` and ``pccbullet sweep``: register the subcommands on the CLI's subparsers.

Handlers return an exit status: 0 on success, 1 when some sweep runs failed. Bad input raises
:class:`~urdf_gen.errors.PccBulletError`, which the top-level CLI turns into status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from urdf_gen.cli_args import integer, out_dir


def register_run(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``run EXP.toml --out DIR [--seed S] [--quiet]``."""
    p = subparsers.add_parser("run", help="run a virtual experiment (TOML) and record CSV/NPZ/metadata")
    p.add_argument("experiment", type=Path, help="experiment TOML file (see assets/experiments)")
    p.add_argument("--out", required=True, type=out_dir, help="output folder (created if missing)")
    p.add_argument(
        "--seed",
        type=integer(0, 2**32 - 1),
        default=None,
        help="seed of the input noise (default: the file's)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_command)
    return p


def register_sweep(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``sweep SWEEP.toml --out DIR [--engine pool|serial|ray] [--workers N]``."""
    p = subparsers.add_parser("sweep", help="run a parameter sweep (resumable; finished runs are skipped)")
    p.add_argument("sweep", type=Path, help="sweep TOML file")
    p.add_argument("--out", required=True, type=out_dir, help="output folder, one run_NNNN folder per run")
    p.add_argument("--engine", choices=("pool", "serial", "ray"), default="pool", help="default: pool")
    p.add_argument("--workers", type=integer(1, 256), default=2, help="parallel workers (default 2)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=sweep_command)
    return p


def run_command(args: argparse.Namespace) -> int:
    """Handler of ``run``."""
    from sim.experiments.runner import run_experiment

    result = run_experiment(
        args.experiment, args.out, seed=args.seed, progress=not args.quiet, command_line=sys.argv
    )
    for path in result.files:
        print(path)  # noqa: T201
    return 0


def sweep_command(args: argparse.Namespace) -> int:
    """Handler of ``sweep``."""
    from sim.experiments.sweep import run_sweep

    res = run_sweep(args.sweep, args.out, engine=args.engine, workers=args.workers, progress=not args.quiet)
    summary = {
        "out": str(res.out_dir),
        "completed": len(res.completed),
        "skipped": len(res.skipped),
        "failed": [{"run": r, "error": e} for r, e in res.failed],
        "elapsed_s": round(res.elapsed, 3),
    }
    print(json.dumps(summary, indent=2))  # noqa: T201
    return 1 if res.failed else 0
