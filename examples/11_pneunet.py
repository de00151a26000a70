"""PneuNets actuators (seed 002): pressure -> joint angles -> tip position, and a URDF for each.

Usage: python examples/11_pneunet.py [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from pccbullet.urdf_gen.pneunet import (
    PNEUNET_NAMES,
    load_bundled_pneunet,
    pressure_to_pose,
    write_pneunet_urdf,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--out-dir", type=Path, default=None, help="where to write URDFs (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix="pneunet_"))
    for name in PNEUNET_NAMES:
        spec = load_bundled_pneunet(name)
        print(f"{name}: {spec.n_chambers} chambers, {spec.n_joints} joints")
        for pressure_kpa in (0, 20, 40, 60, 80):
            pose = pressure_to_pose(spec, pressure_kpa * 1e3)
            x_mm, y_mm, _ = pose.tip_position_m * 1e3
            angle = math.degrees(pose.joint_angles_rad[0])
            print(f"  {pressure_kpa:3d} kPa: joint {angle:6.2f} deg, tip x {x_mm:6.1f} mm, y {y_mm:6.1f} mm")
        print(f"  URDF: {write_pneunet_urdf(spec, out_dir)}")


if __name__ == "__main__":
    main()
