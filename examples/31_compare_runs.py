"""Seed-000 section-tip errors: the grasper reach in PyBullet's dynamic mode against the PCC kinematics.

python examples/31_compare_runs.py [OUT_DIR]
"""

import sys
from pathlib import Path

from pccbullet.sim.experiments.metrics import section_tip_errors
from pccbullet.sim.experiments.plots import plot_errors, plot_tips
from pccbullet.sim.experiments.runner import run_experiment
from pccbullet.sim.experiments.spec import experiment_from_table, load_experiment

ROOT = Path(__file__).resolve().parent.parent
out = Path(sys.argv[1] if len(sys.argv) > 1 else "out_31_compare")
dynamic = run_experiment(ROOT / "assets" / "experiments" / "grasper_reach_dynamic.toml", out / "dynamic")
# The same inputs, kinematically: the reference of what PCC would do without gravity.
spec = load_experiment(ROOT / "assets" / "experiments" / "grasper_reach_dynamic.toml")
table = dict(spec.table, mode="kinematic")
kinematic = run_experiment(experiment_from_table(table, spec.source, base_dir=ROOT), out / "kinematic")
errors = section_tip_errors(dynamic.columns, kinematic.columns, "grasper")
print(
    f"max sectional error {errors.max_sectional * 1e3:.2f} mm, "
    f"max cumulative {errors.max_cumulative * 1e3:.2f} mm"
)
for path in plot_errors(errors, out / "errors") + plot_tips(dynamic.columns, out / "tips", kinematic.columns):
    print(path)
