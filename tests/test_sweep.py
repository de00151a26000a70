"""Sweeps: grid and random designs, pool equals serial, resume after interruption or a change, bad
markers, files the sweep did not write, errors in the CSV, workers dying with the sweep, Ray hint."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.sim.experiments.design import plan_sweep, set_dotted
from pccbullet.sim.experiments.engines import DONE
from pccbullet.sim.experiments.sweep import run_sweep

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
    # plane 360 deg is the camera's limit: the checks before dispatch pass it, the input's seeded noise
    # (1 deg) takes the run past it
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.plane.value"\nvalues = [0, 360]\n')
    res = run_sweep(sweep, tmp_path / "out", engine="serial", progress=False)
    assert res.completed == ("run_0000",)
    assert res.failed[0][0] == "run_0001" and "field 'inputs.plane'" in res.failed[0][1]
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
    with pytest.raises(
        SpecError,
        match=r"sweep\.toml: field 'parameters\[0\]\.values\[0\]' = -1\.0 is invalid; allowed: a number "
        r"in \(0, 3600\] for 'duration_s' in exp\.toml$",
    ):
        plan_sweep(sweep, tmp_path / "o")
    (tmp_path / "exp.toml").write_text(EXPERIMENT.replace("duration_s = 0.2", "duration_s = -0.2"))
    sweep.write_text(sweep.read_text().replace("duration_s", "sections").replace("-1.0", "3"))
    with pytest.raises(SpecError, match=r"exp\.toml: field 'duration_s' = -0\.2 is invalid"):
        plan_sweep(sweep, tmp_path / "o")  # the experiment's own error names the experiment file
    with pytest.raises(ConfigurationError, match="engine = 'mpi'"):
        run_sweep(sweep, tmp_path / "o", engine="mpi")
    table = {"a": [{"b": 1}]}
    set_dotted(table, "a[0].b", 2)
    assert table == {"a": [{"b": 2}]}


def test_bundled_sweep_plans() -> None:
    tasks = plan_sweep(EXP_DIR / "sweep_camera_bend.toml", Path("unused"))
    assert len(tasks) == 6 and tasks[-1].overrides["inputs.bend.end"] == 90


def test_a_changed_run_is_run_again_and_the_csv_holds_only_current_results(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    first = run_sweep(sweep, out, engine="serial", progress=False)
    assert len(first.completed) == 4
    stamps = {r: (out / r / "run.csv").stat().st_mtime_ns for r in first.completed}
    sweep.write_text(sweep.read_text().replace("values = [30, 60]", "values = [30, 75]"))
    again = run_sweep(sweep, out, engine="serial", progress=False)
    # before: 0 runs executed, 4 skipped, and sweep.csv listed 75 beside the results of 60
    assert again.changed == ("run_0002", "run_0003") and again.completed == ("run_0002", "run_0003")
    assert again.skipped == ("run_0000", "run_0001")
    assert {r: (out / r / "run.csv").stat().st_mtime_ns for r in ("run_0000", "run_0001")} == {
        r: stamps[r] for r in ("run_0000", "run_0001")
    }
    fresh = run_sweep(sweep, tmp_path / "fresh", engine="serial", progress=False)
    assert csvs(out) == csvs(tmp_path / "fresh") and len(fresh.completed) == 4
    assert (out / "sweep.csv").read_text() == (tmp_path / "fresh" / "sweep.csv").read_text()
    # a change of the experiment file itself (not of a swept value) changes every fingerprint
    (tmp_path / "exp.toml").write_text(EXPERIMENT.replace("noise = 1.0", "noise = 2.0"))
    assert run_sweep(sweep, out, engine="serial", progress=False).changed == tuple(
        f"run_{i:04d}" for i in range(4)
    )


@pytest.mark.parametrize(
    "marker",
    ["", "{", "[]", '{"final": {}}', "\x00\x01"],
    ids=["empty", "truncated", "list", "no-fingerprint", "binary"],
)
def test_a_bad_marker_means_not_finished(tmp_path: Path, marker: str) -> None:
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.bend.end"\nvalues = [30]\n')
    out = tmp_path / "out"
    run_sweep(sweep, out, engine="serial", progress=False)
    good = (out / "run_0000" / "run.csv").read_bytes()
    (out / "run_0000" / DONE).write_text(marker)  # before: an empty marker raised JSONDecodeError
    res = run_sweep(sweep, out, engine="serial", progress=False)
    assert res.completed == ("run_0000",) and res.skipped == ()
    assert (out / "run_0000" / "run.csv").read_bytes() == good
    assert json.loads((out / "run_0000" / DONE).read_text())["run_id"] == "run_0000"


def test_a_sweep_removes_only_what_it_wrote(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.bend.end"\nvalues = [30, 60]\n')
    out = tmp_path / "out"
    run_sweep(sweep, out, engine="serial", progress=False)
    for run in ("run_0000", "run_0001"):
        (out / run / "notes.txt").write_text("the user's")
        (out / run / "plots").mkdir()
    (out / "run_0001" / DONE).unlink()  # run 1 is redone: its own files go, the user's stay
    res = run_sweep(sweep, out, engine="serial", progress=False)
    assert res.completed == ("run_0001",)
    for run in ("run_0000", "run_0001"):
        assert (out / run / "notes.txt").read_text() == "the user's" and (out / run / "plots").is_dir()
    guide = (Path(__file__).resolve().parent.parent / "docs" / "guide" / "experiments.md").read_text()
    marker = json.loads((out / "run_0001" / DONE).read_text())
    assert [k for k in marker if f"| `{k}` |" not in guide] == []  # every DONE key documented
    names = sorted(p.name for p in (out / "run_0001").iterdir())
    assert names == [
        "DONE",
        "manifest.json",
        "metadata.json",
        "notes.txt",
        "overrides.json",
        "plots",
        "run.csv",
        "run.npz",
    ]


def test_an_unexpected_error_is_returned_with_its_traceback_and_listed_in_the_csv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pccbullet.sim.experiments.engines as engines_module

    real = engines_module.run_experiment

    def flaky(spec, out, **kw):  # type: ignore[no-untyped-def]
        if out.name == "run_0001":
            raise ZeroDivisionError("a bug in a model")
        return real(spec, out, **kw)

    monkeypatch.setattr(engines_module, "run_experiment", flaky)
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.bend.end"\nvalues = [30, 60]\n')
    res = run_sweep(sweep, tmp_path / "out", engine="serial", progress=False)
    assert res.completed == ("run_0000",) and res.failed[0][0] == "run_0001"
    assert res.failed[0][1].startswith("Traceback (most recent call last):")
    assert res.failed[0][1].endswith("ZeroDivisionError: a bug in a model") and "in flaky" in res.failed[0][1]
    assert (tmp_path / "out" / "run_0001" / "error.txt").read_text().strip() == res.failed[0][1]
    rows = (tmp_path / "out" / "sweep.csv").read_text().splitlines()
    assert rows[0].startswith("run_id,status,seed,inputs.bend.end,camera_tip_x_m") and rows[0].endswith(
        ",error"
    )
    assert rows[1].startswith("run_0000,ok,3,30,") and rows[1].endswith(",")
    # six tip columns (measured and commanded) stay empty for the failed run
    assert rows[2] == "run_0001,failed,4,60,,,,,,,ZeroDivisionError: a bug in a model"


def _children(pid: int) -> set[int]:
    """Live child processes of ``pid`` (Linux /proc)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                out.add(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_pool_workers_die_with_the_sweep_process(tmp_path: Path) -> None:
    slow = EXPERIMENT.replace("duration_s = 0.2", "duration_s = 30.0").replace("t1_s = 0.2", "t1_s = 30.0")
    (tmp_path / "exp.toml").write_text(slow)
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('experiment = "exp.toml"\n' + GRID)
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pccbullet.teleop.cli",
            "sweep",
            str(sweep),
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600  # generous: a loaded machine starts the pool slowly
        while len(_children(proc.pid)) < 3 and time.monotonic() < deadline:  # 2 workers + resource tracker
            time.sleep(0.2)
        kids = _children(proc.pid)
        assert len(kids) >= 3
        while not list((tmp_path / "o").glob("run_*/manifest.json")) and time.monotonic() < deadline:
            time.sleep(0.1)  # the workers are running their first run
        proc.kill()  # SIGKILL the sweep's process only
        proc.wait()
        deadline = time.monotonic() + 120  # generous: the kernel kills the workers at once, but a loaded
        while any(_alive(k) for k in kids) and time.monotonic() < deadline:  # machine runs their exit late
            time.sleep(0.1)
        # before: the workers and the resource tracker ran on for good (~200 MB each)
        assert [k for k in kids if _alive(k)] == []
    finally:
        for k in _children(proc.pid) | {proc.pid}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(k, signal.SIGKILL)


def test_a_ray_address_where_nothing_answers_fails_fast_with_one_line(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.bend.end"\nvalues = [30]\n')
    t0 = time.perf_counter()
    with pytest.raises(
        ConfigurationError, match=r"Ray address '127\.0\.0\.1:1' does not answer \(.*\); allowed: HOST:PORT"
    ):
        run_sweep(sweep, tmp_path / "o", engine="ray", address="127.0.0.1:1", progress=False)
    # refused before Ray is even started (Ray itself retries for minutes); the time bound is generous
    assert not ray.is_initialized() and time.perf_counter() - t0 < 120
    with pytest.raises(ConfigurationError, match=r"address = '1\.2\.3\.4:5' is invalid with engine 'pool'"):
        run_sweep(sweep, tmp_path / "o", engine="pool", address="1.2.3.4:5", progress=False)


SWEEPER = """
import json, sys
from pccbullet.sim.experiments.sweep import run_sweep
from pccbullet.core.errors import ConfigurationError
try:
    res = run_sweep(sys.argv[1], sys.argv[2], engine="serial", progress=False)
    print(json.dumps({"completed": len(res.completed), "failed": len(res.failed)}))
except ConfigurationError as exc:
    print(json.dumps({"refused": str(exc)}))
"""


def test_three_sweeps_into_one_folder_one_runs_the_others_are_refused(tmp_path: Path) -> None:
    """Three sweeps started together into one folder: the lock lets one run (every run complete, no
    temporary left); the others fail at once with one line naming its process (no race on the files)."""
    sweep = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SWEEPER, str(sweep), str(out)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    results = [json.loads(p.communicate(timeout=600)[0].strip().splitlines()[-1]) for p in procs]
    ran = [r for r in results if "completed" in r]
    refused = [r["refused"] for r in results if "refused" in r]
    assert len(ran) >= 1 and all(r == {"completed": 4, "failed": 0} for r in ran[:1])
    # the one that ran first completed every run; a later one found them done (it may start after)
    assert all(r["failed"] == 0 for r in ran)
    assert all("is in use by another sweep (process" in m for m in refused)
    assert len(ran) + len(refused) == 3
    assert [p for p in out.rglob(".*") if p.name != ".pccbullet.lock"] == []  # no temporary left
    assert len(list(out.glob("run_*/DONE"))) == 4


def test_a_held_lock_refuses_a_second_sweep_and_is_released(tmp_path: Path) -> None:
    from pccbullet.sim.experiments.outputs import folder_lock

    sweep = write_sweep(tmp_path, GRID)
    out = tmp_path / "out"
    out.mkdir()
    with folder_lock(out):
        with pytest.raises(ConfigurationError, match=rf"in use by another sweep \(process {os.getpid()}\)"):
            run_sweep(sweep, out, engine="serial", progress=False)
    assert run_sweep(sweep, out, engine="serial", progress=False).completed  # released


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            '[30, "ninety"]',
            r"field 'parameters\[0\]\.values\[1\]' = 'ninety' is invalid; allowed: a number of degrees in "
            r"\[-180, 180\] for 'inputs\.bend\.end' \(it drives camera\.s1\.bend_deg\) in exp\.toml$",
        ),
        (
            "[30, 9999]",
            r"field 'parameters\[0\]\.values\[1\]' = 9999 is invalid; allowed: a number of degrees in "
            r"\[-180, 180\] for 'inputs\.bend\.end' \(it drives camera\.s1\.bend_deg; with this value the "
            r"input reaches 9999 deg\) in exp\.toml$",
        ),
    ],
    ids=["word", "out-of-range"],
)
def test_every_sweep_value_is_checked_before_any_run(tmp_path: Path, capsys, values, message) -> None:
    """Before: the first run's value alone was checked; a bad later one failed when its run ran, naming the
    experiment file and giving radians."""
    from pccbullet.teleop.cli import main

    sweep = write_sweep(tmp_path, f'[[parameters]]\npath = "inputs.bend.end"\nvalues = {values}\n')
    with pytest.raises(SpecError, match="sweep\\.toml: " + message):
        plan_sweep(sweep, tmp_path / "o")
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "o"), "--engine", "serial", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"pccbullet: error: {sweep}: field 'parameters[0]")
    assert not (tmp_path / "o").exists()  # nothing dispatched, not even the sweep folder


def test_sweep_checks_name_the_unit_each_input_was_written_in(tmp_path: Path) -> None:
    # a sine's amplitude on a degree input; a random design's draw on a length in millimetres
    sweep = write_sweep(
        tmp_path,
        '[[parameters]]\npath = "inputs.plane.value"\nvalues = [0, 400]\n',
    )
    with pytest.raises(
        SpecError,
        match=r"'parameters\[0\]\.values\[1\]' = 400 is invalid; allowed: a number of degrees in \[-360, 360\] "
        r"for 'inputs\.plane\.value' \(it drives camera\.s1\.plane_deg; with this value the input reaches "
        r"400 deg\)",
    ):
        plan_sweep(sweep, tmp_path / "o")
    exp = EXPERIMENT + '[inputs.length]\ntarget = "camera.s1.length_mm"\nkind = "constant"\nvalue = 600\n'
    (tmp_path / "exp.toml").write_text(exp)
    sweep.write_text(
        'experiment = "exp.toml"\ndesign = "random"\nseed = 1\nsamples = 3\n'
        '[[parameters]]\npath = "inputs.length.value"\nlow = 500\nhigh = 5000\n'
    )
    with pytest.raises(
        SpecError,
        match=r"field 'parameters\[0\]\.low\.\.high' = [0-9.]+ is invalid; allowed: a number of millimetres in "
        r"\[[0-9.]+, [0-9.]+\] for 'inputs\.length\.value' \(it drives camera\.s1\.length_mm;",
    ):
        plan_sweep(sweep, tmp_path / "o")


@pytest.mark.parametrize(
    ("kind", "t_end", "expected"),
    [
        ('kind = "ramp"\nt0_s = 0.5\nt1_s = 2.0\nstart = 0\nend = 90', 1.0, (0.0, 30.0)),
        ('kind = "step"\nt0_s = 0.5\nbefore = 10\nafter = -5', 1.0, (-5.0, 10.0)),
        ('kind = "step"\nt0_s = 2.0\nbefore = 10\nafter = -5', 1.0, (10.0, 10.0)),
        ('kind = "sine"\namplitude = 2\nfrequency_hz = 0.25\noffset = 1', 1.0, (1.0, 3.0)),
        ('kind = "sine"\namplitude = 2\nfrequency_hz = 0.25\noffset = 1', 3.0, (-1.0, 3.0)),
        ('kind = "sine"\namplitude = 2\nfrequency_hz = 5\nphase_deg = 90', 0.05, (0.0, 2.0)),
        ('kind = "waypoints"\ntimes_s = [0, 1, 2]\nvalues = [0, 7, -3]', 1.5, (0.0, 7.0)),
    ],
    ids=["ramp-cut", "step", "step-later", "sine-quarter", "sine-whole", "sine-crest", "waypoints"],
)
def test_profile_extremes_over_a_run(kind: str, t_end: float, expected: tuple[float, float]) -> None:
    """Noise-free extremes over [0, t_end], checked against a dense sampling (10^6 points)."""
    import tomllib

    import numpy as np

    from pccbullet.core.fields import Fields
    from pccbullet.sim.experiments.inputs import parse_profile

    profile = parse_profile(Fields(tomllib.loads(kind), Path("x.toml")), Path("."))
    lo, hi = profile.extremes(t_end)
    dense = profile.value(np.linspace(0.0, t_end, 1_000_001))
    assert (lo, hi) == pytest.approx(expected, abs=1e-9)
    assert (lo, hi) == pytest.approx((dense.min(), dense.max()), abs=1e-4)  # a grid step of slope <= 10 per s
