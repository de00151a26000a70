"""Static shape of the seed-003 rolling-joint snake robot with and without gravity compensation.

Solves the paper's planar case (Table 1: steel, tensions [0, 2.4, 0, 5.1] N) on the ground and on the
ceiling, prints joint angles and tip positions, writes the URDF to a temporary directory, and times the
spatial steel case (alpha = 90 deg).

Run from the repository root:  python examples/10_rolling_snake_statics.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from pccbullet.sim.models.rolling_snake.model import (
    bench_rolling_snake,
    solve_rolling_snake,
    solve_rolling_snake_no_gravity,
)
from pccbullet.urdf_gen.rolling_snake.spec import load_rolling_snake
from pccbullet.urdf_gen.rolling_snake.urdf import rolling_snake_joint_values, write_rolling_snake_urdf

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    spec = load_rolling_snake(ROOT / "assets" / "robots" / "snake003_sim_steel.toml")
    tensions = [0.0, 2.4, 0.0, 5.1]  # N
    free = solve_rolling_snake_no_gravity(spec, tensions)
    print(f"{spec.name}: link mass {spec.link_mass * 1e3:.3f} g")
    print(f"  no gravity : angles {np.degrees(free.angles).round(2)} deg, tip {(free.tip * 1e3).round(2)} mm")
    for mount in ("ground", "ceiling"):
        res = solve_rolling_snake(spec, tensions, mount, eps=1e-12)
        angles = np.degrees(res.angles).round(2)
        print(
            f"  {mount:<11}: angles {angles} deg, tip {(res.tip * 1e3).round(2)} mm"
            f" ({res.iterations} iterations, omega {res.omega}, converged {res.converged})"
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = write_rolling_snake_urdf(spec, tmp)
        values = rolling_snake_joint_values(spec, res.angles)
        print(
            f"  URDF written to {path.name}; {len(values)} joint values, e.g. roll_1_a = "
            f"{values['roll_1_a']:.4f} rad"
        )
    bench = bench_rolling_snake(runs=200)
    print(
        f"  spatial steel solve: median {bench['median_s'] * 1e3:.3f} ms, "
        f"p90 {bench['p90_s'] * 1e3:.3f} ms, {bench['iterations']:.0f} it. (paper: 8.5 ms, MATLAB)"
    )


if __name__ == "__main__":
    main()
