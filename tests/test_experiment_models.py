"""Model-mode experiments drive the Newton-Euler model through the hydraulic drive (seed 000)."""

from __future__ import annotations

import math

import numpy as np

from pccbullet.sim.experiments.metrics import load_columns
from pccbullet.sim.experiments.runner import run_experiment
from pccbullet.sim.experiments.spec import experiment_from_table


def test_motor_step_bends_only_the_driven_section(tmp_path) -> None:
    table = {
        "name": "hydraulic_motor4",
        "robot": "hydraulic_arm",
        "mode": "model",
        "model": "newton_euler",
        "medium": "air",
        "duration_s": 1.5,
        "record_hz": 100,
        "sections": 2,
        "channels": {"motor_4": {"kind": "step", "t0_s": 0.2, "after": 1.5}},
    }
    spec = experiment_from_table(table, tmp_path / "exp.toml", base_dir=tmp_path)
    run_experiment(spec, tmp_path / "out", progress=False)
    cols = load_columns(tmp_path / "out" / "run.csv")
    bend1, bend2 = np.asarray(cols["arm_s1_bend_rad"]), np.asarray(cols["arm_s2_bend_rad"])
    t = np.asarray(cols["time_s"])
    assert np.all(np.abs(bend2[t < 0.2]) < 1e-9)  # nothing before the step
    assert math.degrees(bend2[-1]) > 60.0  # ~1 MPa in one chamber of section 2 bends it strongly
    assert math.degrees(abs(bend1[-1])) < 25.0  # section 1 only carries the reaction
