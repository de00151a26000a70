"""The grasp experiment kind (``kind = "grasp"``, :mod:`pccbullet.sim.experiments.grasp`): its metrics on
constructed records, a shortened run of the bundled ``grasper_grasp`` (deterministic, within the tendon
caps, its files), and bad fields refused in one line with exit status 2."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import SpecError
from pccbullet.core.fields import read_toml
from pccbullet.sim.experiments.grasp import grasp_metrics, run_grasp, simulate_grasp
from pccbullet.sim.experiments.grasp_spec import grasp_from_table
from pccbullet.sim.experiments.spec import experiments_dir, load_experiment
from pccbullet.teleop.cli import main

BUNDLED = experiments_dir() / "grasper_grasp.toml"


def _short(table: dict, seconds: float = 0.3) -> dict:
    """The bundled grasp with every phase and the settling shortened (the same motions, faster)."""
    t = copy.deepcopy(table)
    t["grasp"]["settle_s"] = seconds
    for phase in ("approach", "close", "lift", "hold"):
        t["grasp"][phase]["duration_s"] = seconds
        t["grasp"][phase].pop("ramp_s", None)
    return t


def _spec(table: dict):
    return grasp_from_table(table, BUNDLED, base_dir=BUNDLED.parent)


def _columns(z_obj, support, tip_z, phase, contact) -> dict:
    n = len(phase)
    cols = {"time_s": np.arange(n) * 0.1, "phase": np.asarray(phase, float)}
    for a, v in zip("xyz", (np.zeros(n), np.zeros(n), np.asarray(z_obj, float)), strict=True):
        cols[f"object_{a}_m"] = v
    for a, v in zip("xyz", (np.zeros(n), np.zeros(n), np.asarray(tip_z, float)), strict=True):
        cols[f"tip_{a}_m"] = v
    for i in range(3):
        for j in range(3):
            cols[f"tip_r{i}{j}"] = np.full(n, 1.0 if i == j else 0.0)
    cols["contact_n"] = np.asarray(contact, float)
    cols["support_n"] = np.asarray(support, float)
    return cols


FACTS = {
    "tendons": ["t0"], "max_tension_n": [10.0], "peak_tensions_n": [4.0], "peak_motor_forces_n": [3.5],
    "object_mass_kg": 0.5, "object_net_weight_n": 0.4, "object_friction": 0.9,
}  # fmt: skip


def test_metrics_of_an_object_moving_with_the_tip() -> None:
    # lifted 0.15 m with the tip, off the support through the 3-sample hold
    m = grasp_metrics(
        _columns(
            [0.0, 0.0, 0.1, 0.15, 0.15, 0.15],
            [1.0, 0.5, 0.0, 0.0, 0.0, 0.0],
            [0.2, 0.2, 0.3, 0.35, 0.35, 0.35],
            [0, 1, 2, 3, 3, 3],
            [0, 1, 2, 2, 3, 1],
        ),
        FACTS,
    )
    assert m["held"] is True
    assert m["lifted_height_m"] == pytest.approx(0.15)
    assert m["slip_m"] == pytest.approx(0.0)
    assert m["off_support_s"] == pytest.approx(0.3) and m["hold_s"] == pytest.approx(0.3)
    assert m["contact_force_peak_n"] == 3.0 and m["contact_force_mean_n"] == pytest.approx(2.0)
    assert m["peak_tensions_n"] == {"t0": 4.0}


def test_metrics_of_a_dropped_object() -> None:
    # the tip rises, the object falls back onto its support during the hold: not held, slip = its fall
    m = grasp_metrics(
        _columns(
            [0.0, 0.05, 0.05, 0.0], [1.0, 0.0, 0.0, 1.0], [0.2, 0.3, 0.3, 0.3], [0, 2, 3, 3], [0, 1, 1, 0]
        ),
        FACTS,
    )
    assert m["held"] is False
    assert m["slip_m"] == pytest.approx(0.05)
    assert m["off_support_s"] == pytest.approx(0.1)
    assert m["lifted_height_m"] == pytest.approx(0.0)


def test_short_grasp_is_deterministic_and_within_the_caps(tmp_path: Path) -> None:
    spec = _spec(_short(read_toml(BUNDLED)))
    a, facts_a = simulate_grasp(spec)
    b, facts_b = simulate_grasp(spec)
    assert a.keys() == b.keys()
    for key in a:
        assert np.array_equal(a[key], b[key]), key  # bit for bit
    assert facts_a == facts_b
    caps = np.asarray(facts_a["max_tension_n"])
    assert caps.tolist() == [30.0] * 4 + [10.0] * 4  # URSULA: segment 1 at 30 N, segment 2 at 10 N
    assert (np.asarray(facts_a["peak_motor_forces_n"]) <= caps + 1e-9).all()
    assert max(facts_a["peak_tensions_n"]) > 0.2  # the tendons pulled
    assert len(a["time_s"]) == round(4 * 0.3 * spec.record_hz) + 1


def test_run_writes_metrics_csv_plot(tmp_path: Path) -> None:
    metrics, files = run_grasp(_spec(_short(read_toml(BUNDLED), 0.2)), tmp_path)
    assert sorted(p.name for p in files) == ["grasp.csv", "grasp.png", "metadata.json", "metrics.json"]
    on_disk = json.loads((tmp_path / "metrics.json").read_text())
    assert on_disk["held"] is metrics["held"]
    assert set(on_disk["peak_tensions_n"]) == {f"grasper_s{s}_t{i}" for s in (1, 2) for i in range(4)}
    assert (tmp_path / "grasp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


BAD = [  # (a line of the bundled file, its replacement, what the message names)
    ('object = "bar"', 'object = "post_left"', "a free object"),
    ('object = "bar"', 'object = "nothing"', "grasp.object"),
    ('limb = "grasper"', 'limb = "camera"', "grasp.limb"),
    ("pcc = [[50, 180, 300], [0, 0, 300]]", "pcc = [[50, 180, 300]]", "grasp.lift.pcc"),
    ("pcc = [[50, 180, 300], [0, 0, 300]]", "pcc = [[200, 0, 300], [0, 0, 300]]", "grasp.lift.pcc"),
    ("pcc = [[50, 180, 300], [0, 0, 300]]", "tensions_n = [1, 2, 3]", "grasp.lift.tensions_n"),
    ("grip_n = [6, 0, 0, 0]", "grip_n = [6, 0, 0]", "grasp.close.grip_n"),
    ("grip_n = [6, 0, 0, 0]", "grip_n = [6, 0, 0, -1]", "grasp.close.grip_n"),
    ("duration_s = 4.0\npcc = [[3", "duration_s = -1\npcc = [[3", "grasp.approach.duration_s"),
    ("duration_s = 4.0\npcc = [[3", "duration_s = 0.0005\npcc = [[3", "grasp.approach.duration_s"),
    ("duration_s = 4.0\npcc = [[3", "duration_s = 4.0\nramp_s = 9\npcc = [[3", "grasp.approach.ramp_s"),
    ('drive = "tendons"', 'drive = "joints"', "drive"),
    ("external_loads = true", 'external_loads = "yes"', "external_loads"),
    ('medium = "water"', 'medium = "mud"', "medium"),
    ('material = "pla"', 'material = "pla"\ncolour = 3', "objects[0].colour"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_bad_grasp_fields_give_one_line_errors(tmp_path: Path, capsys, old, new, message) -> None:
    text = BUNDLED.read_text()
    assert old in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(SpecError):
        grasp_from_table(read_toml(path), path, base_dir=BUNDLED.parent)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("pccbullet")]
    assert len(lines) == 1 and lines[0].startswith("pccbullet: error: "), err
    assert "Traceback" not in err and message in lines[0], lines[0]


def test_the_grasper_lifts_the_bar_and_holds_it_in_water(tmp_path: Path) -> None:
    """The bundled grasp (N = 10, water, through the tendons only): the grasper's segment 2, held at 6 N on
    its lower tendon, coils round the bar and pulls it off its posts; segment 1 bends up and the bar rises
    with it. The bar ends >= 10 cm higher than it lay (measured 14.2 cm), off its posts through the whole
    3 s hold (>= 2 s asked), moving with the tip (slip in the tip's frame < 5 mm; measured 0.03 mm); the
    limb carries its net weight in water (mean contact force 0.213 N = (1240 - 998) kg/m^3 g V); no motor
    beyond its cap; the grip tendon at its 6 N."""
    metrics, _ = run_grasp(BUNDLED, tmp_path)
    assert metrics["lifted_height_m"] >= 0.10
    assert metrics["held"] is True and metrics["off_support_s"] >= 2.0 and metrics["hold_s"] >= 2.0
    assert metrics["slip_m"] < 0.005
    assert metrics["contact_force_mean_n"] == pytest.approx(metrics["object_net_weight_n"], rel=0.05)
    caps, peaks = metrics["max_tension_n"], metrics["peak_motor_forces_n"]
    assert all(peaks[name] <= caps[name] + 1e-9 for name in caps)
    rows = np.genfromtxt(tmp_path / "grasp.csv", delimiter=",", names=True)
    hold = rows["phase"] == 3
    assert np.abs(rows["grasper_s2_t0_tension_n"][hold] - 6.0).max() < 0.3


def test_tensions_and_pcc_together_are_refused() -> None:
    table = read_toml(BUNDLED)
    table["grasp"]["lift"]["tensions_n"] = [1.0] * 8
    with pytest.raises(SpecError, match="either pcc or tensions_n"):
        _spec(table)


def test_load_experiment_names_the_grasp_kind() -> None:
    with pytest.raises(SpecError, match="run_grasp"):
        load_experiment(BUNDLED)


@pytest.mark.xfail(
    strict=True,
    reason="known defect: the pressing coil slips on the bar in a sawtooth and the tendon carries 5.95 to "
    "6.19 N against the motor's 6 N over the close phase's last 0.6 s (6.17 N at its end, 2.8 %); the 2 % "
    "held at that instant only while the tip carried a 0.1 g marker mass (5.19 N with 0.01 g)",
)
def test_a_grip_pressing_on_an_object_pulls_with_its_set_tension() -> None:
    """The grip of the bundled grasp at the end of its close phase (the coil round the bar, the bar off its
    posts): the grip motor pulls its 6 N and the tendon carries them (within 2 %: measured 6.02 N) with the
    contacts' estimate in the implicit step (``external_loads``, the grasp's default). Without it the
    solve expects the coil to move into the bar, the motor sits on its torque-speed line at a speed
    nothing moves with and pulls 5.4 N, and the bar is still on its posts (docs/guide/tendons.md)."""
    table = read_toml(BUNDLED)
    for phase in ("lift", "hold"):
        table["grasp"][phase] = {"duration_s": 0.02}
    cols, _ = simulate_grasp(_spec(table))
    end = np.flatnonzero(cols["phase"] == 1)[-1]
    assert cols["grasper_s2_t0_motor_n"][end] == pytest.approx(6.0, abs=1e-9)
    assert cols["grasper_s2_t0_tension_n"][end] == pytest.approx(6.0, rel=0.02)
    assert cols["support_n"][end] == 0.0 and cols["contact_n"][end] > 0.15
