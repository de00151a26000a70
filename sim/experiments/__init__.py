"""Virtual experiments: TOML experiment files, input profiles, runs, seed-000 metrics, plots and sweeps.

Example::

    from sim.experiments import run_experiment, section_tip_errors

    result = run_experiment("assets/experiments/camera_sweep.toml", "out/camera")
    errors = section_tip_errors("out/camera/run.csv", "out/camera/run.csv", "camera")  # zero
"""

from sim.experiments.inputs import Profile
from sim.experiments.metrics import SectionTipErrors, load_columns, section_tip_errors
from sim.experiments.runner import (
    MODELS,
    ModelInputs,
    PccModel,
    RunResult,
    register_model,
    run_experiment,
)
from sim.experiments.spec import ExperimentSpec, InputSpec, experiment_from_table, load_experiment
from sim.experiments.sweep import SweepResult, plan_sweep, run_sweep

__all__ = [
    "MODELS",
    "ExperimentSpec",
    "InputSpec",
    "ModelInputs",
    "PccModel",
    "Profile",
    "RunResult",
    "SectionTipErrors",
    "SweepResult",
    "experiment_from_table",
    "load_columns",
    "load_experiment",
    "plan_sweep",
    "register_model",
    "run_experiment",
    "run_sweep",
    "section_tip_errors",
]
