"""Virtual experiments: TOML experiment files, input profiles, runs, seed-000 metrics, plots and sweeps.

Example::

    from sim.experiments import run_experiment, section_tip_errors

    result = run_experiment("assets/experiments/camera_sweep.toml", "out/camera")
    errors = section_tip_errors("out/camera/run.csv", "out/camera/run.csv", "camera")  # zero
"""

from sim.lazy import lazy_attributes

# Names resolved on first use (PEP 562): importing the command line's registration
# (``sim.experiments.cli``) must not load PyBullet, numba and the models (about a second).
_LAZY = {
    "ExperimentSpec": "sim.experiments.spec",
    "InputSpec": "sim.experiments.spec",
    "MODELS": "sim.experiments.runner",
    "ModelInputs": "sim.experiments.runner",
    "PccModel": "sim.experiments.runner",
    "Profile": "sim.experiments.inputs",
    "RunResult": "sim.experiments.runner",
    "SectionTipErrors": "sim.experiments.metrics",
    "SweepResult": "sim.experiments.sweep",
    "experiment_from_table": "sim.experiments.spec",
    "load_columns": "sim.experiments.metrics",
    "load_experiment": "sim.experiments.spec",
    "plan_sweep": "sim.experiments.sweep",
    "register_model": "sim.experiments.runner",
    "run_experiment": "sim.experiments.runner",
    "run_sweep": "sim.experiments.sweep",
    "section_tip_errors": "sim.experiments.metrics",
}


__getattr__ = lazy_attributes(__name__, _LAZY)

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
