"""Run a bundled virtual experiment (the camera tentacle sweep) and list what it wrote.

python examples/30_run_experiment.py [OUT_DIR]
"""

import sys
from pathlib import Path

from pccbullet.sim.experiments.runner import run_experiment

ROOT = Path(__file__).resolve().parent.parent
out = Path(sys.argv[1] if len(sys.argv) > 1 else "out_30_camera_sweep")
result = run_experiment(ROOT / "assets" / "experiments" / "camera_sweep.toml", out)
tip = [result.columns[f"camera_tip_{a}_m"][-1] for a in "xyz"]
print(f"{len(result.time)} samples; final camera tip at {[round(v, 4) for v in tip]} m")
for path in result.files:
    print(path)
