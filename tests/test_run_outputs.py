"""Run outputs: units in the CSV header, metadata keys, a manifest, atomic files, --overwrite."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.atomic import temporaries
from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet_internals import symbols
from pccbullet.sim.experiments.cli import register_run
from pccbullet.sim.experiments.outputs import MANIFEST, Manifest, read_manifest, remove_recorded
from pccbullet.sim.experiments.runner import run_experiment
from pccbullet.sim.experiments.spec import experiment_from_table

ROOT = Path(__file__).resolve().parent.parent
EXP = """
robot = "ursula"
sections = 2
duration_s = 0.1
record_hz = 50
limbs = ["camera"]
outputs = ["csv", "npz", "plots"]
[inputs.bend]
target = "camera.s1.bend_deg"
kind = "ramp"
t1_s = 0.1
start = 0
end = 30
"""


def _exp(folder: Path, text: str = EXP) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "exp.toml"
    path.write_text(text)
    return path


def _run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    register_run(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_csv_header_names_carry_units_and_metadata_records_the_physics(tmp_path: Path) -> None:
    res = run_experiment(_exp(tmp_path / "in"), tmp_path / "out", progress=False)
    header = (tmp_path / "out" / "run.csv").read_text().splitlines()[0].split(",")
    assert header[:4] == ["time_s", "camera_tip_x_m", "camera_tip_y_m", "camera_tip_z_m"]
    assert {
        "camera_s1_x_m",
        "camera_s1_z_m",
        "camera_s1_bend_rad",
        "camera_s1_plane_rad",
        "camera_s1_length_m",
    } <= set(header)
    assert all(h.endswith(("_s", "_m", "_rad")) for h in header)
    assert set(np.load(tmp_path / "out" / "run.npz").files) == set(header) | {"camera_sections"}
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["fingerprint"] == res.fingerprint and len(res.fingerprint) == 64
    assert meta["broadphase_margin_m"] == 0.005 and meta["contact_breaking_threshold_m"] == 0.005
    assert meta["joint_io"] == {}  # kinematic: no joint I/O
    assert meta["bullet_internals"] is symbols.enabled()  # PCCBULLET_SAFE=1 records False
    spec = experiment_from_table(
        {**__import__("tomllib").loads(EXP), "mode": "dynamic"}, "d.toml", base_dir=tmp_path
    )
    run_experiment(spec, tmp_path / "dyn", progress=False)
    meta = json.loads((tmp_path / "dyn" / "metadata.json").read_text())
    from pccbullet.sim.bullet_internals import capi

    expected = "c_api" if capi.c_api() is not None else "python"
    assert meta["joint_io"] == dict.fromkeys(("camera", "grasper", "light", "palpation"), expected)
    # every key of metadata.json is documented in the table of docs/guide/experiments.md
    guide = (ROOT / "docs" / "guide" / "experiments.md").read_text()
    assert [k for k in meta if f"| `{k}` |" not in guide] == []


def test_run_out_refuses_a_non_empty_folder_and_overwrite_removes_only_its_own_files(tmp_path: Path) -> None:
    exp = _exp(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(
        ConfigurationError,
        match=r"--out '.*out' is not empty; allowed: an empty or new folder, or --overwrite",
    ):
        _run_cli(["run", str(exp), "--out", str(out), "--quiet"])
    assert _run_cli(["run", str(exp), "--out", str(out), "--quiet", "--overwrite"]) == 0
    first = set(read_manifest(out))
    assert first == {
        "run.csv",
        "run.npz",
        "metadata.json",
        "tips.png",
        "tips.svg",
        "shapes.png",
        "shapes.svg",
    }
    # the next experiment writes no plots: the old ones go, the user's file stays
    _exp(tmp_path / "in", EXP.replace(', "plots"', ""))
    assert _run_cli(["run", str(exp), "--out", str(out), "--quiet", "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "metadata.json",
        "notes.txt",
        "run.csv",
        "run.npz",
    ]
    assert (out / "notes.txt").read_text() == "mine"


def test_a_manifest_never_names_a_file_outside_its_folder(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("a")
    (tmp_path / "d" / MANIFEST).write_text(json.dumps({"files": ["../keep.txt", "/etc/passwd", "a.txt", 3]}))
    assert read_manifest(tmp_path / "d") == ["a.txt"]
    assert remove_recorded(tmp_path / "d") == ["a.txt"]
    assert (tmp_path / "keep.txt").exists() and list((tmp_path / "d").iterdir()) == []
    (tmp_path / "d" / MANIFEST).write_text("")  # empty or corrupt: nothing recorded
    assert read_manifest(tmp_path / "d") == []
    with pytest.raises(ValueError, match=r"manifest name '\.\./x' is invalid"):
        Manifest(tmp_path / "d").add("../x")


KILLER = """
import os, signal, sys
real = os.replace
def replace(src, dst):
    if str(dst).endswith(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)  # killed mid-write: the data sits in the temp file
    real(src, dst)
os.replace = replace
from pccbullet.sim.experiments.runner import run_experiment
run_experiment(sys.argv[1], sys.argv[3], progress=False)
"""


def test_a_kill_mid_write_leaves_no_truncated_file(tmp_path: Path) -> None:
    exp = _exp(tmp_path / "in")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(exp), "run.npz", str(out)],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL
    # run.csv was complete before run.npz was started; run.npz never existed half-written
    (leftover,) = temporaries(out / "run.npz")
    assert not (out / "run.npz").exists() and leftover.stat().st_size > 0
    assert not (out / "metadata.json").exists()
    assert len(np.loadtxt(out / "run.csv", delimiter=",", skiprows=1, ndmin=2)) == 6
    res = run_experiment(exp, out, progress=False)  # the next run removes the leftover temp file
    assert temporaries(out / "run.npz") == []
    assert np.array_equal(np.load(out / "run.npz")["camera_tip_x_m"], res.columns["camera_tip_x_m"])
    assert sorted(read_manifest(out)) == sorted(p.name for p in out.iterdir() if p.name != MANIFEST)
