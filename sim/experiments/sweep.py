"""Parameter sweeps over experiment files: a grid or a seeded random design, run in parallel, resumable.

Sweep file (TOML)::

    experiment = "camera_sweep.toml"     # relative to the sweep file
    design = "grid"                      # grid (Cartesian product) | random
    seed = 0                             # run i gets seed + i; the random design draws from it
    samples = 4                          # random design only

    [[parameters]]
    path = "inputs.bend.end"             # dotted path into the experiment TOML ([i] for array items)
    values = [30, 60, 90]                # grid values, or random choices
    [[parameters]]
    path = "duration_s"
    low = 0.2                            # random design only: uniform in [low, high]
    high = 0.4

Each run writes into ``out/run_NNNN/`` (``overrides.json``, the run outputs, then the completion marker
``DONE``). A rerun skips runs with a marker and redoes the others, so an interrupted sweep resumes.
Engines: ``serial``, ``pool`` (local :class:`concurrent.futures.ProcessPoolExecutor`, the default) and
``ray`` (optional extra, imported lazily). The engine does not change results.
"""

from __future__ import annotations

import copy
import csv
import itertools
import json
import math
import multiprocessing
import re
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from sim.experiments.runner import run_experiment
from sim.experiments.spec import experiment_from_table
from urdf_gen.errors import ConfigurationError, PccBulletError, SpecError, cap
from urdf_gen.toml_fields import Fields, read_toml

DONE = "DONE"
MAX_RUNS = 100_000  # runs of one sweep (a grid's product of value counts, or a random design's samples)
ENGINES = ("pool", "serial", "ray")
RAY_HINT = (
    "--engine ray needs Ray, an optional extra: pip install 'pccbullet[ray]' (or pip install 'ray>=2.9')"
)
_INDEX = re.compile(r"^([^\[\]]+)((?:\[[0-9]{1,18}\])*)$")


@dataclass(frozen=True, slots=True)
class RunTask:
    """One run of a sweep: the resolved experiment table, where to write, and its seed."""

    index: int
    run_dir: Path
    table: dict[str, Any]
    overrides: dict[str, Any]
    source: str
    base_dir: Path
    seed: int

    @property
    def run_id(self) -> str:
        """``run_NNNN``."""
        return self.run_dir.name


@dataclass(frozen=True, slots=True)
class SweepResult:
    """Outcome: run ids done now, skipped (marker found), failed (with the error message), wall time (s)."""

    out_dir: Path
    completed: tuple[str, ...]
    skipped: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    elapsed: float


def set_dotted(table: dict[str, Any], path: str, value: Any) -> None:
    """Set ``table[a][b][i]... = value`` for ``path = "a.b[i]..."``; intermediate tables must exist."""
    node: Any = table
    parts = path.split(".")
    keys: list[str | int] = []
    for part in parts:
        m = _INDEX.match(part)
        if m is None:
            raise ConfigurationError(f"path {cap(path)} is invalid; allowed: dotted keys with optional [i]")
        keys.append(m.group(1))
        keys += [int(i) for i in re.findall(r"\[([0-9]{1,18})\]", m.group(2))]
    for key in keys[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError) as exc:
            raise ConfigurationError(f"path {path!r}: {key!r} does not exist in the experiment") from exc
    last = keys[-1]
    if not isinstance(node, dict | list):  # e.g. "name.x": name holds a string
        raise ConfigurationError(f"path {cap(path)}: {keys[-2]!r} holds a {type(node).__name__}, not a table")
    if isinstance(node, list) and not (isinstance(last, int) and last < len(node)):
        raise ConfigurationError(f"path {path!r}: index {last!r} is out of range")
    if isinstance(node, dict) and not isinstance(last, str):
        raise ConfigurationError(f"path {path!r}: {last!r} indexes a table")
    node[last] = value


def plan_sweep(sweep_path: str | Path, out_dir: str | Path) -> list[RunTask]:
    """Read a sweep file and list its runs (the experiment with each run's overrides applied)."""
    sweep_path = Path(sweep_path)
    f = Fields(read_toml(sweep_path), sweep_path)
    exp_name = f.string("experiment")
    try:
        exp_path = (sweep_path.parent / exp_name).resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # an embedded NUL, a symlink loop
        raise f.error("experiment", exp_name, "an experiment TOML path") from exc
    base_table = read_toml(exp_path)
    design = f.string("design", choices=("grid", "random"), default="grid")
    seed = f.integer("seed", 0, 2**31 - 1, default=0)
    samples = f.integer("samples", 1, 100_000, default=1) if design == "random" else 1
    params: list[tuple[str, list[Any] | None, tuple[float, float] | None]] = []
    for p in f.table_list("parameters"):
        path = p.string("path")
        if p.has("values"):
            values = p.raw("values")
            if not isinstance(values, list) or not values:
                raise p.error("values", values, "a non-empty list")
            params.append((path, values, None))
        elif design == "random":
            low = p.number("low")
            params.append((path, None, (low, p.number("high", low))))
        else:
            raise p.error("values", None, "a list of values (grid design)")
        p.finish()
    f.finish()
    runs = math.prod(len(q[1]) for q in params) if design == "grid" else samples
    if runs > MAX_RUNS:
        raise f.error("parameters", f"{runs} runs", f"a sweep of at most {MAX_RUNS} runs (fewer values)")
    if design == "grid":
        combos = [
            dict(zip([q[0] for q in params], c, strict=True))
            for c in itertools.product(*[q[1] or [] for q in params])  # grid: every q[1] is a list
        ]
    else:
        rng = np.random.default_rng(seed)
        combos = []
        for _ in range(samples):
            combo = {}
            for path, values, bounds in params:
                if values is not None:
                    combo[path] = values[int(rng.integers(len(values)))]
                else:
                    assert bounds is not None  # a parameter has values or bounds
                    combo[path] = float(rng.uniform(*bounds))
            combos.append(combo)
    tasks = []
    out = Path(out_dir)
    for i, combo in enumerate(combos):
        table = copy.deepcopy(base_table)
        for path, value in combo.items():
            try:
                set_dotted(table, path, value)
            except ConfigurationError as exc:
                raise SpecError(
                    sweep_path, "parameters.path", path, f"a path in {exp_path.name} ({exc})"
                ) from exc
        tasks.append(RunTask(i, out / f"run_{i:04d}", table, combo, str(exp_path), exp_path.parent, seed + i))
    for task in tasks[:1]:  # validate the first run up front: bad files fail before any work starts
        experiment_from_table(task.table, task.source, base_dir=task.base_dir)
    return tasks


def execute(task: RunTask) -> dict[str, Any]:
    """Run one task in its folder and write the completion marker; errors are returned, not raised."""
    if task.run_dir.exists():
        shutil.rmtree(task.run_dir)  # a run without a marker is incomplete: start it afresh
    task.run_dir.mkdir(parents=True)
    (task.run_dir / "overrides.json").write_text(
        json.dumps({"overrides": task.overrides, "seed": task.seed}, indent=2, default=str) + "\n"
    )
    try:
        spec = experiment_from_table(task.table, task.source, base_dir=task.base_dir)
        result = run_experiment(spec, task.run_dir, seed=task.seed, progress=False, command_line=["sweep"])
    except PccBulletError as exc:
        return {"run_id": task.run_id, "error": str(exc)}
    final = {k: float(v[-1]) for k, v in result.columns.items() if "_tip_" in k}
    summary = {"run_id": task.run_id, "seed": task.seed, "overrides": task.overrides, "final": final}
    (task.run_dir / DONE).write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return summary


def _pool(tasks: list[RunTask], workers: int) -> Iterator[dict[str, Any]]:
    ctx = multiprocessing.get_context("spawn")  # no PyBullet client state inherited from the parent
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
        futures = [ex.submit(execute, t) for t in tasks]
        for fut in as_completed(futures):
            yield fut.result()


def _ray(tasks: list[RunTask], workers: int) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError as exc:
        raise ConfigurationError(RAY_HINT) from exc
    ray.init(num_cpus=workers, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(execute)
    pending = [remote.remote(t) for t in tasks]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


def run_sweep(
    sweep_path: str | Path,
    out_dir: str | Path,
    *,
    engine: str = "pool",
    workers: int = 2,
    progress: bool = True,
) -> SweepResult:
    """Run every unfinished run of a sweep; write ``sweep.csv`` (one row per finished run) in ``out_dir``.

    Args:
        engine: ``"pool"`` (process pool), ``"serial"`` (this process) or ``"ray"`` (needs ``ray``).
        workers: parallel workers for ``pool`` and ``ray``.
    """
    if engine not in ENGINES:
        raise ConfigurationError(f"engine = {engine!r} is invalid; allowed: " + ", ".join(ENGINES))
    if workers < 1:
        raise ConfigurationError(f"workers = {workers!r} is invalid; allowed: an integer >= 1")
    start = time.perf_counter()
    out = Path(out_dir)
    tasks = plan_sweep(sweep_path, out)
    out.mkdir(parents=True, exist_ok=True)
    todo = [t for t in tasks if not (t.run_dir / DONE).is_file()]
    skipped = tuple(t.run_id for t in tasks if t not in todo)
    if engine == "serial" or not todo:
        results: Iterator[dict[str, Any]] = (execute(t) for t in todo)
    elif engine == "pool":
        results = _pool(todo, min(workers, len(todo)))
    else:
        results = _ray(todo, workers)
    completed, failed = [], []
    for summary in tqdm(results, total=len(todo), desc="sweep", unit="run", disable=not progress):
        if "error" in summary:
            failed.append((summary["run_id"], summary["error"]))
        else:
            completed.append(summary["run_id"])
    _write_summary(tasks, out)
    return SweepResult(
        out, tuple(sorted(completed)), skipped, tuple(sorted(failed)), time.perf_counter() - start
    )


def _write_summary(tasks: list[RunTask], out: Path) -> None:
    rows = []
    for t in tasks:
        marker = t.run_dir / DONE
        if marker.is_file():
            s = json.loads(marker.read_text())
            rows.append({"run_id": t.run_id, "seed": t.seed, **t.overrides, **s["final"]})
    if not rows:
        return
    names = list(dict.fromkeys(k for r in rows for k in r))
    with (out / "sweep.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=names)
        w.writeheader()
        w.writerows(rows)
