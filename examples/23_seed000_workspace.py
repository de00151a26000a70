"""Seed 000 sec. 3.1, Fig. 5: the workspace of one section of the hydraulic arm over 0-1 MPa per chamber.

Usage: python examples/23_seed000_workspace.py --out DIR [--samples N]
Prints the tips' extent along x, y, z (the paper: "approximately 0.5 m x 0.5 m x 0.5 m") and the bending
limits along +x and -x, and writes DIR/seed000_workspace.png (the tips in 3D and in the x-z plane).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    from pccbullet.sim.models.chamber_statics import plot_pressure_workspace, pressure_workspace

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--samples", type=int, default=11, help="pressures per chamber (grid of N^3)")
    args = ap.parse_args(argv)
    ws = pressure_workspace("hydraulic_arm", samples=args.samples)
    lo, hi, ex = ws.tips.min(axis=0), ws.tips.max(axis=0), ws.extent
    print(f"{len(ws.tips)} static solves, section 1 alone, no gravity, 0-1 MPa per chamber")
    for axis, a, b, e in zip("xyz", lo, hi, ex, strict=True):
        print(f"  {axis}: {a:+.3f} .. {b:+.3f} m, extent {e:.3f} m")
    print(f"extent {ex[0]:.3f} m x {ex[1]:.3f} m x {ex[2]:.3f} m (paper: approximately 0.5 x 0.5 x 0.5 m)")
    for name, p in (("P2 = P3 = 1 MPa (+x limit)", [0, 1e6, 1e6]), ("P1 = 1 MPa (-x limit)", [1e6, 0, 0])):
        i = int(np.argmin(np.abs(ws.pressures - p).sum(axis=1)))
        print(
            f"  {name}: bend {math.degrees(ws.bend[i]):.1f} deg, arc {ws.length[i]:.3f} m, "
            f"radius {ws.length[i] / ws.bend[i]:.3f} m, tip {np.round(ws.tips[i], 3).tolist()} m"
        )
    path = plot_pressure_workspace(ws, args.out / "seed000_workspace.png")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
