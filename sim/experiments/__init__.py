"""Virtual experiments: TOML experiment files, input profiles, runs, seed-000 metrics, plots and sweeps.

Example::

    from pccbullet.sim.experiments import run_experiment, section_tip_errors

    result = run_experiment("assets/experiments/camera_sweep.toml", "out/camera")
    errors = section_tip_errors("out/camera/run.csv", "out/camera/run.csv", "camera")  # zero
"""

from pccbullet.sim.lazy import lazy_attributes

# Names resolved on first use (PEP 562): importing the command line's registration
# (``pccbullet.sim.experiments.cli``) must not load PyBullet, numba and the models (about a second).
_LAZY = {
    "ExperimentSpec": "pccbullet.sim.experiments.spec",
    "InputSpec": "pccbullet.sim.experiments.spec",
    "MODELS": "pccbullet.sim.experiments.runner",
    "ModelInputs": "pccbullet.sim.experiments.runner",
    "PccModel": "pccbullet.sim.experiments.runner",
    "Profile": "pccbullet.sim.experiments.inputs",
    "RunResult": "pccbullet.sim.experiments.runner",
    "SectionTipErrors": "pccbullet.sim.experiments.metrics",
    "SweepResult": "pccbullet.sim.experiments.sweep",
    "experiment_from_table": "pccbullet.sim.experiments.spec",
    "load_columns": "pccbullet.sim.experiments.metrics",
    "load_experiment": "pccbullet.sim.experiments.spec",
    "plan_sweep": "pccbullet.sim.experiments.sweep",
    "register_model": "pccbullet.sim.experiments.runner",
    "run_experiment": "pccbullet.sim.experiments.runner",
    "run_sweep": "pccbullet.sim.experiments.sweep",
    "section_tip_errors": "pccbullet.sim.experiments.metrics",
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
