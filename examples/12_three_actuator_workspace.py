"""Seed 004's three-actuator soft robot: actuator lengths -> shape -> tip, and its sampled workspace.

Usage: python examples/12_three_actuator_workspace.py [--samples N] [--seed S] [--out-dir DIR] [--plot]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

import numpy as np

from pccbullet.urdf_gen.three_actuator import (
    load_bundled_three_actuator,
    sample_workspace,
    shape_from_lengths,
    tip_transform,
    write_three_actuator_urdf,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out-dir", type=Path, default=None, help="where to write outputs (default: a temp dir)"
    )
    parser.add_argument("--plot", action="store_true", help="save workspace.png (needs matplotlib)")
    args = parser.parse_args(argv)
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="seed004_"))
    spec = load_bundled_three_actuator()

    for lengths_mm in ((200, 200, 200), (250, 200, 200), (200, 250, 250), (150, 260, 200)):
        shape = shape_from_lengths(np.array(lengths_mm) * 1e-3, spec.distance_m)
        tip_mm = tip_transform(shape.bend, shape.plane, shape.length)[:3, 3] * 1e3
        print(
            f"l = {lengths_mm} mm -> length {shape.length * 1e3:.1f} mm,"
            f" plane {math.degrees(shape.plane):7.2f} deg,"
            f" bend {math.degrees(shape.bend):6.2f} deg, tip {np.round(tip_mm, 1)} mm"
        )

    ws = sample_workspace(spec, args.samples, seed=args.seed)
    z_mm = ws.tips[:, 2] * 1e3
    print(
        f"workspace: {args.samples} samples, z from {z_mm.min():.1f} to {z_mm.max():.1f} mm,"
        f" max radial reach {np.hypot(ws.tips[:, 0], ws.tips[:, 1]).max() * 1e3:.1f} mm"
    )
    print(f"URDF: {write_three_actuator_urdf(spec, out_dir)}")

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 5))
        radial = np.hypot(ws.tips[:, 0], ws.tips[:, 1]) * 1e3
        ax.scatter(radial, ws.tips[:, 2] * 1e3, s=1)
        ax.set_xlabel("radial distance (mm)")
        ax.set_ylabel("z (mm)")
        ax.set_aspect("equal")
        path = out_dir / "workspace.png"
        fig.savefig(path, dpi=120)
        print(f"plot: {path}")


if __name__ == "__main__":
    main()
