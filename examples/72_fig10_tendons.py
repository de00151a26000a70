"""Seed 001 Fig. 10 reached through the tendons, in water and in air: settled tip errors and tensions.

Runs the bundled experiment ``ursula_fig10_tendons`` (the paper's camera, grasper and palpation poses
commanded over 2 s and held; the light tentacle straight) in both media, with the tendon controller alone
(tendon lengths of the commanded arcs) and with the shape loop at 50 Hz (measured segment ends), and prints,
per limb, the distance between its settled tip and the tip of its commanded PCC arcs (mean over the last
second) and per tendon set the tensions that hold the pose. Writes the numbers to ``--json``.

    python examples/72_fig10_tendons.py --out /tmp/fig10 --json /tmp/fig10.json
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from pccbullet.core import strict_json
from pccbullet.sim.experiments.runner import run_experiment
from pccbullet.sim.experiments.spec import load_experiment
from pccbullet.urdf_gen.spec_loader import robots_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="fig10_tendons", help="run folders go here")
    ap.add_argument("--json", default=None, help="write the table's numbers here")
    args = ap.parse_args()
    path = robots_dir().parent / "experiments" / "ursula_fig10_tendons.toml"
    base = load_experiment(path)
    table: dict[str, dict] = {}
    for medium, loop in (("water", 0), ("water", 50), ("air", 0), ("air", 50)):
        case = f"{medium}, shape loop {loop} Hz" if loop else f"{medium}, tendon lengths"
        spec = replace(base, medium=medium, shape_loop_hz=loop)
        res = run_experiment(spec, Path(args.out) / f"{medium}_{loop}", progress=False)
        c = res.columns
        last = c["time_s"] >= c["time_s"][-1] - 1.0
        row: dict[str, dict] = {}
        for limb in base.robot.limbs:
            tip = np.stack([c[f"{limb.name}_tip_{a}_m"] for a in "xyz"], axis=1)
            cmd = np.stack([c[f"{limb.name}_cmd_tip_{a}_m"] for a in "xyz"], axis=1)
            err = np.linalg.norm(tip - cmd, axis=1)
            tensions = {t.name: float(np.mean(c[f"{t.name}_tension_n"][last])) for t in limb.tendons}
            peaks = {t.name: float(np.max(c[f"{t.name}_tension_n"])) for t in limb.tendons}
            row[limb.name] = {
                "tip_error_mm": float(np.mean(err[last]) * 1e3),
                "tip_error_percent_of_length": float(np.mean(err[last]) / limb.rest_length * 100.0),
                "still_moving_mm_per_s": float(
                    np.abs(np.diff(tip[last], axis=0)).sum(axis=1).mean() * 50.0 * 1e3
                ),
                "tensions_n": tensions,
                "peak_tensions_n": peaks,
            }
        table[case] = row
    print("| limb | case | tip error (mm) | % of length | held tensions, N (set 1 / set 2) | peak N |")
    print("|---|---|---|---|---|---|")
    for medium, row in table.items():
        for limb, r in row.items():
            t = list(r["tensions_n"].values())
            sets = " / ".join(" ".join(f"{x:.2f}" for x in t[k : k + 4]) for k in range(0, len(t), 4))
            print(
                f"| {limb} | {medium} | {r['tip_error_mm']:.0f} | {r['tip_error_percent_of_length']:.1f} | "
                f"{sets} | {max(r['peak_tensions_n'].values()):.1f} |"
            )
    if args.json:
        Path(args.json).write_text(strict_json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
