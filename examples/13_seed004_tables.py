"""Seed 004's experimental robot: the constant-curvature columns of Tables 5 and 6 from a pressure law.

Usage: python examples/13_seed004_tables.py
Loads seed004_experimental.toml (l0 = 169.9 mm, d = 50.75 mm, and the pressure-to-length law fitted to
Table 5: the paper gives none), puts every actuator at its law length for the table's pressures (Table 5:
all three at P; Table 6: actuators 2 and 3 at P, actuator 1 idle at l0) and prints our constant-curvature
tip beside the paper's constant-curvature and measured columns (mm).
"""

from __future__ import annotations

import numpy as np

from pccbullet.urdf_gen.pressure_law import BAR, load_pressure_law, tip_from_pressures
from pccbullet.urdf_gen.spec_loader import robots_dir
from pccbullet.urdf_gen.three_actuator import load_three_actuator

# Seed 004 Tables 5 and 6 (mm): pressure (bar) -> (y_meas, z_meas, y_cc, z_cc)
TABLE5 = {0.4: (3.0, 184.2, 0.0, 185.9), 0.6: (3.0, 191.7, 0.0, 194.9), 0.8: (3.0, 201.8, 0.0, 204.9)}
TABLE6 = {0.4: (20.9, 178.2, 23.2, 179.4), 0.6: (33.6, 179.9, 37.2, 182.2), 0.8: (47.0, 184.0, 53.9, 183.0)}


def main() -> int:
    path = robots_dir() / "seed004_experimental.toml"
    spec = load_three_actuator(path)
    law = load_pressure_law(path, spec)
    print(
        f"l(P) = {spec.initial_length_m * 1e3:.1f} mm + {law.linear * 1e3 * BAR:.2f} mm/bar P "
        f"+ {law.quadratic * 1e3 * BAR**2:.3f} mm/bar^2 P^2 (fitted to Table 5)"
    )
    for name, table, driven in (("Table 5", TABLE5, (1, 1, 1)), ("Table 6", TABLE6, (0, 1, 1))):
        print(
            f"{name}: P (bar)   y, z ours (mm)     y, z paper CC (mm)   y, z measured (mm)   ours - measured"
        )
        for p_bar, (ym, zm, yc, zc) in table.items():
            y, z = 1e3 * tip_from_pressures(spec, law, np.array(driven) * p_bar * BAR)[1:]
            print(
                f"         {p_bar:4.1f}    {y:6.2f}, {z:6.2f}     {yc:6.1f}, {zc:6.1f}"
                f"       {ym:6.1f}, {zm:6.1f}       {y - ym:+5.2f}, {z - zm:+5.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
