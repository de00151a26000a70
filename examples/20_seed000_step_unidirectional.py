"""Seed 000 sec. 3.2.1: 1.5 N m step torques on actuators 5, 6 (t = 2 s) and 1 (t = 6 s).

Usage: python examples/20_seed000_step_unidirectional.py --out DIR [--profile step_uni|step_bi|ramp]
Writes DIR/<profile>.csv (t, torques, pressures, section-tip x/y/z) and DIR/<profile>.png.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None, default_profile: str = "step_uni") -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pccbullet.sim.models.hydraulics import simulate_hydraulic_arm

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--profile", default=default_profile, choices=("step_uni", "step_bi", "ramp"))
    ap.add_argument("--duration", type=float, default=10.0, help="simulated time (s)")
    ap.add_argument("--pieces", type=int, default=5, help="pieces per section")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    r = simulate_hydraulic_arm(args.profile, duration=args.duration, pieces=args.pieces)
    tips = r["tips"].reshape(len(r["t"]), -1)
    head = ["t_s"] + [f"T{i}_nm" for i in range(1, 7)] + [f"P{i}_pa" for i in range(1, 7)]
    head += [f"tip{s}_{c}_m" for s in (1, 2) for c in "xyz"]
    data = np.column_stack([r["t"], r["torque"], r["pressure"], tips])
    csv = args.out / f"{args.profile}.csv"
    np.savetxt(csv, data, delimiter=",", header=",".join(head), comments="")
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    for s, ax in enumerate(axes):
        for c, name in ((0, "x"), (2, "z")):
            ax.plot(r["t"], r["tips"][:, s, c], label=f"{name} (m)")
        ax.set_ylabel(f"section {s + 1} tip")
        ax.legend()
        ax.grid(True)
    axes[-1].set_xlabel("t (s)")
    fig.suptitle(f"seed 000 {args.profile}: section-tip coordinates")
    png = args.out / f"{args.profile}.png"
    fig.savefig(png, dpi=120)
    print(f"wrote {csv} and {png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
