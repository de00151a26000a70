"""A bundled parameter sweep on the local process pool (resumable: run it twice, the second run skips).

    python examples/32_sweep.py [OUT_DIR] [--engine pool|serial|ray]

The ``if __name__ == "__main__"`` guard matters: pool workers are spawned and re-import this file.
"""

import sys
from pathlib import Path

from pccbullet.sim.experiments.sweep import run_sweep

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    engine = sys.argv[sys.argv.index("--engine") + 1] if "--engine" in sys.argv else "pool"
    args = [a for a in sys.argv[1:] if not a.startswith("--") and a != engine]
    out = Path(args[0] if args else "out_32_sweep")
    sweep = ROOT / "assets" / "experiments" / "sweep_camera_bend.toml"
    result = run_sweep(sweep, out, engine=engine, workers=2)
    print(f"completed {len(result.completed)}, skipped {len(result.skipped)}, failed {len(result.failed)}")
    print(f"{result.elapsed:.1f} s; summary in {out / 'sweep.csv'}")


if __name__ == "__main__":
    main()
