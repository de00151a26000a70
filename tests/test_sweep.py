"""Sweeps: grid and random designs, pool equals serial, resume after interruption, Ray hint."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from sim.experiments.sweep import DONE, plan_sweep, run_sweep, set_dotted
from urdf_gen.errors import ConfigurationError, SpecError

EXP_DIR = Path(__file__).resolve().parent.parent / "assets" / "experiments"

EXPERIMENT = """
robot = "ursula"
sections = 2
duration_s = 0.2
record_hz = 50
limbs = ["camera"]
outputs = ["csv", "npz"]
[inputs.bend]
target = "camera.s1.bend_deg"
kind = "ramp"
t1_s = 0.2
start = 0
end = 30
[inputs.plane]
target = "camera.s1.plane_deg"
kind = "constant"
value = 0
noise = 1.0
"""


def write_sweep(folder: Path, params: str, header: str = 'design = "grid"\nseed = 3') -> Path:
    (folder / "exp.toml").write_text(EXPERIMENT)
    path = folder / "sweep.toml"
    path.write_text(f'experiment = "exp.toml"\n{header}\n{params}')
    return path


GRID = """
[[parameters]]
path = "inputs.bend.end"
values = [30, 60]
[[parameters]]
path = "inputs.plane.value"
values = [0, 45]
"""


def csvs(folder: Path) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in sorted(folder.glob("run_*/run.csv"))}


def test_pool_equals_serial_and_resume(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, GRID)
    t0 = time.perf_counter()
    serial = run_sweep(sweep, tmp_path / "serial", engine="serial", progress=False)
    t1 = time.perf_counter()
    pool = run_sweep(sweep, tmp_path / "pool", engine="pool", workers=2, progress=False)
    t2 = time.perf_counter()
    print(f"serial {t1 - t0:.2f} s, pool {t2 - t1:.2f} s for 4 runs")  # noqa: T201
    assert serial.completed == pool.completed == ("run_0000", "run_0001", "run_0002", "run_0003")
    a, b = csvs(tmp_path / "serial"), csvs(tmp_path / "pool")
    assert len(a) == 4 and a == b
    assert len(set(a.values())) == 4  # the overrides and the per-run seeds make every run differ
    assert (tmp_path / "pool" / "sweep.csv").read_text() == (tmp_path / "serial" / "sweep.csv").read_text()
    over = json.loads((tmp_path / "serial" / "run_0003" / "overrides.json").read_text())
    assert over == {"overrides": {"inputs.bend.end": 60, "inputs.plane.value": 45}, "seed": 6}

    # Interrupt: run 1 lost its marker (it died half-way); run 2 never started.
    out = tmp_path / "serial"
    (out / "run_0001" / DONE).unlink()
    (out / "run_0001" / "run.npz").unlink()
    for p in (out / "run_0002").iterdir():
        p.unlink()
    (out / "run_0002").rmdir()
    stamps = {r: (out / r / "run.csv").stat().st_mtime_ns for r in ("run_0000", "run_0003")}
    again = run_sweep(sweep, out, engine="serial", progress=False)
    assert again.skipped == ("run_0000", "run_0003")
    assert again.completed == ("run_0001", "run_0002")
    assert {r: (out / r / "run.csv").stat().st_mtime_ns for r in stamps} == stamps
    assert csvs(out) == a
    nothing = run_sweep(sweep, out, engine="pool", progress=False)
    assert nothing.completed == () and len(nothing.skipped) == 4


def test_failing_run_has_no_marker_and_is_retried(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.bend.end"\nvalues = [30, 270]\n')
    res = run_sweep(sweep, tmp_path / "out", engine="serial", progress=False)
    assert res.completed == ("run_0000",)
    assert res.failed[0][0] == "run_0001" and "inputs.bend" in res.failed[0][1]
    assert not (tmp_path / "out" / "run_0001" / DONE).exists()
    retry = run_sweep(sweep, tmp_path / "out", engine="serial", progress=False)
    assert retry.skipped == ("run_0000",) and retry.failed[0][0] == "run_0001"


def test_random_design_is_seeded(tmp_path: Path) -> None:
    params = '[[parameters]]\npath = "inputs.bend.end"\nlow = 10\nhigh = 80\n[[parameters]]\npath = "sections"\nvalues = [1, 2, 3]\n'
    sweep = write_sweep(tmp_path, params, 'design = "random"\nseed = 11\nsamples = 5')
    a = [t.overrides for t in plan_sweep(sweep, tmp_path / "o")]
    b = [t.overrides for t in plan_sweep(sweep, tmp_path / "o")]
    assert a == b and len(a) == 5 and len({t["inputs.bend.end"] for t in a}) == 5
    assert all(10 <= t["inputs.bend.end"] <= 80 and t["sections"] in (1, 2, 3) for t in a)
    sweep.write_text(sweep.read_text().replace("seed = 11", "seed = 12"))
    assert [t.overrides for t in plan_sweep(sweep, tmp_path / "o")] != a


def test_ray_engine_without_ray_gives_an_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError, installed or not
    sweep = write_sweep(tmp_path, GRID)
    with pytest.raises(ConfigurationError, match=r"--engine ray needs Ray.*pip install 'pccbullet\[ray\]'"):
        run_sweep(sweep, tmp_path / "out", engine="ray", progress=False)


def test_bad_sweeps(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.nope.end"\nvalues = [1]\n')
    with pytest.raises(SpecError, match=r"sweep\.toml: field 'parameters\.path' = 'inputs\.nope\.end'"):
        plan_sweep(sweep, tmp_path / "o")
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "duration_s"\nvalues = [-1.0]\n')
    with pytest.raises(SpecError, match=r"exp\.toml: field 'duration_s' = -1\.0"):
        plan_sweep(sweep, tmp_path / "o")
    with pytest.raises(ConfigurationError, match="engine = 'mpi'"):
        run_sweep(sweep, tmp_path / "o", engine="mpi")
    table = {"a": [{"b": 1}]}
    set_dotted(table, "a[0].b", 2)
    assert table == {"a": [{"b": 2}]}


def test_bundled_sweep_plans() -> None:
    tasks = plan_sweep(EXP_DIR / "sweep_camera_bend.toml", Path("unused"))
    assert len(tasks) == 6 and tasks[-1].overrides["inputs.bend.end"] == 90
