"""Experiment files, input profiles, runs in every mode, outputs and validation messages."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError, PccBulletError, SpecError
from pccbullet.sim.experiments.cli import register_run
from pccbullet.sim.experiments.runner import MODELS, ModelInputs, register_model, run_experiment
from pccbullet.sim.experiments.spec import experiment_from_table, load_experiment
from pccbullet.sim.export.rigid import limb_base_pose
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.spec_loader import robots_dir

EXP_DIR = Path(__file__).resolve().parent.parent / "assets" / "experiments"
DATA = Path(__file__).resolve().parent / "data"
BUNDLED = sorted(  # grasp experiments: tests/test_grasp.py
    p
    for p in EXP_DIR.glob("*.toml")
    if not p.name.startswith("sweep_") and 'kind = "grasp"' not in p.read_text()
)


def small(**extra: object) -> dict:
    """A fast camera experiment table (2 sections, 0.2 s, 50 Hz)."""
    table = {
        "robot": "ursula",
        "sections": 2,
        "duration_s": 0.2,
        "record_hz": 50,
        "limbs": ["camera"],
        "inputs": {
            "bend": {
                "target": "camera.s1.bend_deg",
                "kind": "ramp",
                "t0_s": 0.0,
                "t1_s": 0.2,
                "start": 0,
                "end": 60,
            }
        },
    }
    table.update(extra)
    return table


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_experiments_load(path: Path) -> None:
    spec = load_experiment(path)
    assert (spec.inputs or spec.channels) and spec.duration > 0 and 1000 % spec.record_hz == 0


def test_bundled_experiment_twice_gives_identical_csv(tmp_path: Path) -> None:
    path = EXP_DIR / "grasper_reach_dynamic.toml"
    a = run_experiment(path, tmp_path / "a", progress=False)
    b = run_experiment(path, tmp_path / "b", progress=False)
    assert (tmp_path / "a" / "run.csv").read_bytes() == (tmp_path / "b" / "run.csv").read_bytes()
    assert len(a.time) == 101 and a.time[-1] == pytest.approx(1.0)
    # The compliant arm (rod chain) follows its 45 deg spring target in water, 0.4 s after the ramp
    # (50.7 deg: the net weight and the still swinging second segment)
    assert b.columns["grasper_s1_bend_rad"][-1] == pytest.approx(math.radians(45), abs=0.12)


def test_kinematic_run_records_the_pcc_geometry(tmp_path: Path) -> None:
    res = run_experiment(EXP_DIR / "grasper_reach.toml", tmp_path, progress=False)
    ref = np.loadtxt(DATA / "grasper_reach_reference.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(res.time, ref[:, 0], atol=1e-12)
    got = np.column_stack([res.columns[f"grasper_s{s}_{a}_m"] for s in (1, 2) for a in "xyz"])
    np.testing.assert_allclose(got, ref[:, 1:], atol=1e-6)  # PyBullet reports link poses in float32
    assert res.columns["grasper_s2_length_m"][-1] == pytest.approx(0.29)
    T = limb_base_pose(res_spec := load_experiment(EXP_DIR / "grasper_reach.toml").robot, "grasper")
    last = [
        PccConfig(*(res.columns[f"grasper_s{s}_{p}"][-1] for p in ("bend_rad", "plane_rad", "length_m")))
        for s in (1, 2)
    ]
    np.testing.assert_allclose(
        res.columns["grasper_tip_x_m"][-1], (T @ limb_transform(last))[0, 3], atol=1e-6
    )
    assert res_spec.name == "ursula"
    npz = np.load(tmp_path / "run.npz")
    assert npz["grasper_sections"].shape == (201, 8, 4, 4)
    assert {p.name for p in res.files} >= {"run.csv", "run.npz", "metadata.json", "tips.png", "shapes.svg"}


def test_metadata(tmp_path: Path) -> None:
    spec = experiment_from_table(small(medium="water"), tmp_path / "m.toml", base_dir=tmp_path)
    run_experiment(spec, tmp_path, seed=7, progress=False, command_line=["pccbullet", "run", "m.toml"])
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["robot_sha256"] == hashlib.sha256((robots_dir() / "ursula.toml").read_bytes()).hexdigest()
    assert meta["seed"] == 7 and meta["medium"] == "water" and meta["command_line"][1] == "run"
    assert {"numpy", "pybullet", "trimesh", "python"} <= set(meta["versions"])


def test_profiles_and_recorded_input(tmp_path: Path) -> None:
    inputs = {
        "bend": {
            "target": "camera.s1.bend_deg",
            "kind": "recorded",
            "file": str(DATA / "operator_camera.csv"),
        },
        "plane": {
            "target": "camera.s1.plane_deg",
            "kind": "recorded",
            "file": str(DATA / "operator_camera.csv"),
            "column": "plane_deg",
        },
        "length": {"target": "camera.s1.length_mm", "kind": "step", "t0_s": 0.1, "before": 600, "after": 590},
    }
    spec = experiment_from_table(small(inputs=inputs), tmp_path / "r.toml", base_dir=tmp_path)
    res = run_experiment(spec, tmp_path, progress=False)
    t = res.time
    rec = np.loadtxt(DATA / "operator_camera.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(
        res.columns["camera_s1_bend_rad"], np.radians(np.interp(t, rec[:, 0], rec[:, 1])), atol=1e-12
    )
    np.testing.assert_allclose(res.columns["camera_s1_plane_rad"], np.radians(20 * t), atol=1e-12)
    np.testing.assert_allclose(res.columns["camera_s1_length_m"], np.where(t >= 0.1, 0.59, 0.6))
    sine = {
        "target": "camera.s1.plane",
        "kind": "sine",
        "amplitude": 0.5,
        "frequency_hz": 2.0,
        "phase_deg": 90,
        "offset": 0.1,
    }
    way = {"target": "camera.s1.bend", "kind": "waypoints", "times_s": [0.0, 0.1], "values": [0.0, 1.0]}
    res = run_experiment(
        experiment_from_table(small(inputs={"p": sine, "b": way}), "w.toml", base_dir=tmp_path),
        tmp_path / "w",
        progress=False,
    )
    np.testing.assert_allclose(
        res.columns["camera_s1_plane_rad"], 0.1 + 0.5 * np.cos(4 * np.pi * res.time), atol=1e-12
    )
    np.testing.assert_allclose(res.columns["camera_s1_bend_rad"], np.clip(res.time * 10, 0, 1), atol=1e-12)


def test_noise_is_seeded(tmp_path: Path) -> None:
    noisy = small()
    noisy["inputs"]["bend"]["noise"] = 1.0
    spec = experiment_from_table(noisy, "n.toml", base_dir=tmp_path)
    a = run_experiment(spec, tmp_path / "a", seed=1, progress=False).columns["camera_s1_bend_rad"]
    b = run_experiment(spec, tmp_path / "b", seed=1, progress=False).columns["camera_s1_bend_rad"]
    c = run_experiment(spec, tmp_path / "c", seed=2, progress=False).columns["camera_s1_bend_rad"]
    assert np.array_equal(a, b) and not np.array_equal(a, c)


class LagModel:
    """A first-order lag of the commanded bend (time constant 50 ms): a stand-in for Newton–Euler."""

    def __init__(self, spec: object) -> None:
        self.bend = 0.0

    def __call__(self, inputs: ModelInputs) -> dict[str, list[PccConfig]]:
        cmd = inputs.pcc["camera"][0]
        self.bend += inputs.dt / 0.05 * (cmd.bend - self.bend) + 1e-3 * inputs.channels["torque"]
        return {"camera": [PccConfig(self.bend, cmd.plane, cmd.length)]}


def test_model_mode_plugs_in_a_stepping_callable(tmp_path: Path) -> None:
    register_model("lag_test", LagModel)
    try:
        table = small(
            mode="model",
            model="lag_test",
            medium="water",
            channels={"torque": {"kind": "constant", "value": 0.0}},
        )
        table["inputs"]["bend"] = {"target": "camera.s1.bend", "kind": "step", "t0_s": 0.0, "after": 1.0}
        res = run_experiment(
            experiment_from_table(table, "x.toml", base_dir=tmp_path), tmp_path, progress=False
        )
    finally:
        MODELS.pop("lag_test")
    expected = 1.0 - (1.0 - 1e-3 / 0.05) ** np.round(res.time * 1000)
    np.testing.assert_allclose(res.columns["camera_s1_bend_rad"][1:], expected[1:], rtol=1e-9)
    table["model"] = "no_such_model"
    with pytest.raises(ConfigurationError, match="no_such_model.*allowed"):
        run_experiment(experiment_from_table(table, "x.toml", base_dir=tmp_path), tmp_path, progress=False)


BAD = [
    (
        {"inputs": {"bend": {"target": "tentacle.s1.bend", "kind": "constant", "value": 0}}},
        r"inputs\.bend\.target' = 'tentacle\.s1\.bend'",
    ),
    (
        {"inputs": {"bend": {"target": "camera.s2.bend", "kind": "constant", "value": 0}}},
        r"inputs\.bend\.target' = 'camera\.s2\.bend'.*s1\.\.s1",
    ),
    (
        {"inputs": {"bend": {"target": "camera.s1.twist", "kind": "constant", "value": 0}}},
        r"inputs\.bend\.target' = 'camera\.s1\.twist'",
    ),
    ({"duration_s": -1.0}, r"'duration_s' = -1\.0 is invalid"),
    ({"robot": "octopus"}, r"'robot' = 'octopus' is invalid.*bundled robot"),
    ({"record_hz": 300}, r"'record_hz' = 300 is invalid; allowed: a divisor of the 1000 Hz"),
    ({"recording_rate": 100}, r"'recording_rate' = 100 is invalid; allowed: a known key"),
    ({"mode": "quantum"}, r"'mode' = 'quantum'"),
]


@pytest.mark.parametrize(
    ("change", "message"),
    BAD,
    ids=["limb", "segment", "parameter", "duration", "robot", "rate", "key", "mode"],
)
def test_bad_experiment_files(tmp_path: Path, change: dict, message: str) -> None:
    table = small(**change)
    lines = []
    for key, value in table.items():
        if key != "inputs":
            lines.append(f"{key} = {json.dumps(value)}")
    for name, inp in table["inputs"].items():
        lines.append(f"[inputs.{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in inp.items()]
    path = tmp_path / "bad_exp.toml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SpecError, match=r"bad_exp\.toml: field '" + message.lstrip("'")):
        load_experiment(path)


def test_input_outside_limits_names_the_input(tmp_path: Path) -> None:
    table = small()
    table["inputs"]["bend"]["end"] = 200
    spec = experiment_from_table(table, "lim.toml", base_dir=tmp_path)
    with pytest.raises(
        SpecError,
        match=r"lim\.toml: field 'inputs\.bend' = '3\.15905 at t = 0\.181 s' is invalid; allowed: bend in \[-3\.14159, 3\.14159\]",
    ):
        run_experiment(spec, tmp_path, progress=False)


def test_cli_run_handler(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    register_run(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["run", str(EXP_DIR / "grasper_reach_dynamic.toml"), "--out", str(tmp_path), "--quiet"]
    )
    assert args.handler(args) == 0
    assert (tmp_path / "run.csv").is_file()
    args = parser.parse_args(["run", str(tmp_path / "missing.toml"), "--out", str(tmp_path / "b")])
    with pytest.raises(PccBulletError, match="missing.toml"):
        args.handler(args)


def test_hydraulic_placeholders_carry_the_seed000_torques() -> None:
    spec = load_experiment(EXP_DIR / "hydraulic_ramp.toml")
    assert spec.mode == "model" and spec.model == "newton_euler" and spec.robot.name == "hydraulic_arm"
    ramp = dict(spec.channels)
    t = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    np.testing.assert_allclose(ramp["motor_4"].value(t), [0.0, 0.75, 1.5, 1.5, 1.5])
    np.testing.assert_allclose(ramp["motor_1"].value(t), [0.0, 0.0, 0.0, 0.75, 1.5])
