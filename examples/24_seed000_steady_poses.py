"""Seed 000 sec. 4.2, Fig. 11: steady poses of the water-hydraulic arm at 0.5, 1, 1.5 and 2 N m.

Usage: python examples/24_seed000_steady_poses.py --out DIR
Runs the bundled experiments hydraulic_steady_section2 (Fig. 11a: actuator 4 drives section 2) and
hydraulic_steady_section1 (Fig. 11b: actuator 1 drives section 1) into DIR/section2 and DIR/section1,
prints the steady poses at t = 4, 8, 12, 16 s next to the Newton-Euler statics at the same torques, and
plots the arm's shapes in its bending plane (DIR/seed000_steady_poses.png).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

TORQUES_NM = (0.5, 1.0, 1.5, 2.0)
STEADY_S = (4.0, 8.0, 12.0, 16.0)  # s, end of each hold of the bundled staircases
PANELS = (("section2", 3, "a"), ("section1", 0, "b"))  # experiment suffix, motor index, Fig. 11 panel


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from pccbullet.sim.experiments.runner import run_experiment
    from pccbullet.sim.export.rigid import limb_base_pose
    from pccbullet.sim.models.chamber_statics import steady_poses
    from pccbullet.urdf_gen.spec_loader import load_robot

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    args = ap.parse_args(argv)
    fig = Figure(figsize=(9, 4.6))
    base = (
        1e3 * limb_base_pose(load_robot("hydraulic_arm"), "arm")[:3, 3]
    )  # mm, where the arm leaves the head
    for k, (suffix, motor, panel) in enumerate(PANELS):
        run = run_experiment(f"hydraulic_steady_{suffix}", args.out / suffix, progress=False)
        data, sections = run.columns, run.sections["arm"]
        t = data["time_s"]
        torques = np.zeros((len(TORQUES_NM), 6))
        torques[:, motor] = TORQUES_NM
        statics = steady_poses(torques, pieces=4)
        print(f"Fig. 11{panel}: motor {motor + 1} drives {suffix.replace('section', 'section ')}")
        print("  T (N m)  P (MPa)  bend 1 / 2 (deg), run   bend 1 / 2 (deg), statics   tip x, z (mm), run")
        ax = fig.add_subplot(1, 2, k + 1)
        for T, ts, st in zip(TORQUES_NM, STEADY_S, statics, strict=True):
            i = int(np.argmin(np.abs(t - ts)))
            bends = [math.degrees(data[f"arm_s{s}_bend_rad"][i]) for s in (1, 2)]
            tip = 1e3 * np.array([data["arm_tip_x_m"][i], data["arm_tip_z_m"][i]])
            print(
                f"  {T:7.1f}  {st.pressures[motor] * 1e-6:7.3f}  {bends[0]:6.2f} / {bends[1]:6.2f}"
                f"             {math.degrees(st.bend[0]):6.2f} / {math.degrees(st.bend[1]):6.2f}"
                f"              {tip[0]:7.1f}, {tip[1]:7.1f}"
            )
            pts = np.vstack([base, 1e3 * sections[i, :, :3, 3]])
            ax.plot(pts[:, 0], pts[:, 2], "-o", ms=3, label=f"{T:g} N m")
        straight = np.vstack([base, 1e3 * sections[0, :, :3, 3]])
        ax.plot(straight[:, 0], straight[:, 2], ":", color="grey", label="0 N m")
        ax.set_title(f"Fig. 11{panel}: actuator {motor + 1} drives {suffix.replace('section', 'section ')}")
        ax.set_xlabel("x (mm)")
        ax.set_ylabel("z (mm)")
        ax.set_aspect("equal")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    path = args.out / "seed000_steady_poses.png"
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
