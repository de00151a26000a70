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

Each run writes into ``out/run_NNNN/``: ``manifest.json`` (every file the run writes, listed before
it is written), ``overrides.json``, the run outputs, then, last and atomically, the completion marker
``DONE`` (JSON: run id, seed, overrides, the run's fingerprint, final tip positions). A run that failed
writes ``error.txt`` instead. A rerun skips a run whose marker is valid and whose fingerprint (the
SHA-256 of its resolved experiment, inputs, robot file, seed and versions: :func:`spec_fingerprint`)
equals the planned one; it re-runs every other run, **including a finished run whose resolved spec
changed** (reported as ``changed``). An empty or corrupt marker counts as not finished. Before a run
starts again, only the files its manifest lists are removed; nothing else in the folder is touched.

``sweep.csv`` (written atomically even when runs fail) has one row per planned run: ``run_id``,
``status`` (``ok`` | ``failed``), ``seed``, the overrides, the final tip positions (m) and ``error``.
Engines: ``serial``, ``pool`` (local :class:`concurrent.futures.ProcessPoolExecutor`, the default) and
``ray`` (optional extra, imported lazily; a local Ray, or an existing cluster through ``address`` or
``RAY_ADDRESS``). The engine does not change results. Pool workers exit when the sweep's process dies.
"""

from __future__ import annotations

import copy
import csv
import io
import itertools
import json
import logging
import math
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from pccbullet.sim.experiments.outputs import Manifest, remove_recorded, write_atomic, write_json
from pccbullet.sim.experiments.runner import run_experiment, spec_fingerprint
from pccbullet.sim.experiments.spec import experiment_from_table, resolve_experiment_path
from pccbullet.urdf_gen.errors import ConfigurationError, PccBulletError, SpecError, cap
from pccbullet.urdf_gen.toml_fields import Fields, read_toml

log = logging.getLogger(__name__)

DONE = "DONE"
MAX_RUNS = 100_000  # runs of one sweep (a grid's product of value counts, or a random design's samples)
ERROR_NAME = "error.txt"
OVERRIDES_NAME = "overrides.json"
SUMMARY_NAME = "sweep.csv"
ENGINES = ("pool", "serial", "ray")
RAY_ADDRESS_ENV = "RAY_ADDRESS"
PARENT_POLL_S = 0.5  # s, how often a pool worker checks that the sweep's process still lives
RAY_HINT = (
    "--engine ray needs Ray, an optional extra: pip install 'pccbullet[ray]' (or pip install 'ray>=2.9')"
)
_INDEX = re.compile(r"^([^\[\]]+)((?:\[[0-9]{1,18}\])*)$")


@dataclass(frozen=True, slots=True)
class RunTask:
    """One run of a sweep: the resolved experiment table, where to write (absolute), its seed and the
    fingerprint of its resolved spec (:func:`~pccbullet.sim.experiments.runner.spec_fingerprint`)."""

    index: int
    run_dir: Path
    table: dict[str, Any]
    overrides: dict[str, Any]
    source: str
    base_dir: Path
    seed: int
    fingerprint: str = ""

    @property
    def run_id(self) -> str:
        """``run_NNNN``."""
        return self.run_dir.name


@dataclass(frozen=True, slots=True)
class SweepResult:
    """Outcome: run ids done now, skipped (valid marker, same fingerprint), failed (with the error
    message, a traceback for unexpected errors), changed (finished before with another fingerprint,
    so run again now), wall time (s)."""

    out_dir: Path
    completed: tuple[str, ...]
    skipped: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    elapsed: float
    changed: tuple[str, ...] = ()


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
    if isinstance(node, list):
        if not (isinstance(last, int) and last < len(node)):
            raise ConfigurationError(f"path {path!r}: index {last!r} is out of range")
        node[last] = value
    else:
        if not isinstance(last, str):
            raise ConfigurationError(f"path {path!r}: {last!r} indexes a table")
        node[last] = value


def plan_sweep(sweep_path: str | Path, out_dir: str | Path) -> list[RunTask]:
    """Read a sweep file (or a bundled one by name) and list its runs (the experiment with each run's
    overrides applied)."""
    sweep_path = resolve_experiment_path(sweep_path)
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
    runs = math.prod(len(q[1] or ()) for q in params) if design == "grid" else samples
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
    out = Path(out_dir).absolute()  # workers (Ray on other nodes) have other working directories
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
    for k, task in enumerate(tasks):
        try:
            spec = experiment_from_table(task.table, task.source, base_dir=task.base_dir)
        except PccBulletError:
            if k == 0:  # bad files fail before any work starts
                raise
            continue  # this run fails when it runs, with this error; no fingerprint
        tasks[k] = replace(task, fingerprint=spec_fingerprint(spec, task.seed))
    return tasks


def read_marker(run_dir: Path) -> dict[str, Any] | None:
    """A run's completion marker, or ``None`` if it is missing, empty, corrupt or incomplete."""
    try:
        marker = json.loads((run_dir / DONE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or not isinstance(marker.get("final"), dict):
        return None
    if not isinstance(marker.get("fingerprint"), str):
        return None
    return marker


def _traceback_text(exc: BaseException) -> str:
    """``exc``'s traceback as one text, without the trailing newline."""
    return "".join(traceback.format_exception(exc)).rstrip()


def execute(task: RunTask) -> dict[str, Any]:
    """Run one task in its folder and write the completion marker last; every error is returned
    (``{"run_id", "error"}``: one line for bad input, the traceback text otherwise), never raised."""
    try:
        return _execute(task)
    except Exception as exc:  # noqa: BLE001 -- reported, with its traceback, in the sweep's results
        text = _traceback_text(exc)
        try:
            write_atomic(task.run_dir / ERROR_NAME, text + "\n")
        except OSError:
            pass
        return {"run_id": task.run_id, "error": text}


def _execute(task: RunTask) -> dict[str, Any]:
    run_dir = task.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    remove_recorded(run_dir)  # a previous attempt's own files, nothing else
    manifest = Manifest(run_dir)
    manifest.add(DONE, ERROR_NAME, OVERRIDES_NAME)
    write_json(run_dir / OVERRIDES_NAME, {"overrides": task.overrides, "seed": task.seed})
    try:
        spec = experiment_from_table(task.table, task.source, base_dir=task.base_dir)
        result = run_experiment(
            spec, run_dir, seed=task.seed, progress=False, command_line=["sweep"], clean=False
        )
    except PccBulletError as exc:
        write_atomic(run_dir / ERROR_NAME, str(exc) + "\n")
        return {"run_id": task.run_id, "error": str(exc)}
    final = {k: float(v[-1]) for k, v in result.columns.items() if "_tip_" in k}
    summary = {
        "run_id": task.run_id,
        "seed": task.seed,
        "overrides": task.overrides,
        "fingerprint": result.fingerprint,
        "final": final,
    }
    write_json(run_dir / DONE, summary)  # last: the run is complete only now
    return summary


def _watch_parent(parent: int) -> None:
    """Pool-worker initializer: exit when the sweep's process (``parent``) dies. On Linux the kernel
    kills the worker (``PR_SET_PDEATHSIG``); everywhere a thread polls the parent's pid."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    if os.getppid() != parent:  # died before the signal was armed
        os._exit(1)
    threading.Thread(target=poll, name="pccbullet-parent-watch", daemon=True).start()


def _pool(tasks: list[RunTask], workers: int) -> Iterator[dict[str, Any]]:
    ctx = multiprocessing.get_context("spawn")  # no PyBullet client state inherited from the parent
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_watch_parent, initargs=(os.getpid(),)
    ) as ex:
        futures = {ex.submit(execute, t): t for t in tasks}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 -- a worker that died (BrokenProcessPool)
                text = _traceback_text(exc)
                yield {"run_id": futures[fut].run_id, "error": text}


def _check_reachable(address: str) -> None:
    """Fail fast with one line where nothing answers at a ``HOST:PORT`` Ray address (Ray itself
    retries for minutes); other forms (``auto``, ``ray://...``) are left to Ray."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except (OSError, ValueError) as exc:
        raise ConfigurationError(
            f"Ray address {address[:80]!r} does not answer ({exc}); allowed: HOST:PORT of a running "
            "Ray cluster's head (its GCS port, 6379 by default), via --address or RAY_ADDRESS"
        ) from exc


def _ray(tasks: list[RunTask], workers: int, address: str | None) -> Iterator[dict[str, Any]]:
    """Run on Ray: the cluster at ``address`` (or ``RAY_ADDRESS``), else a private local Ray with
    ``workers`` CPUs (never a cluster found on this machine without being named). Retries are off (a
    killed worker is a failed run, reported with Ray's error)."""
    try:
        import ray
        from ray.exceptions import RayError
    except ImportError as exc:
        raise ConfigurationError(RAY_HINT) from exc
    started = False
    if not ray.is_initialized():
        address = address or os.environ.get(RAY_ADDRESS_ENV) or None
        if address:  # an existing cluster brings its own resources: no num_cpus here
            _check_reachable(address)
            ray.init(address=address, log_to_driver=False)
        else:  # "local": a private Ray, even where a cluster started on this machine would be found
            ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(execute)
        pending = {remote.remote(t): t for t in tasks}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(done[0])
            try:
                yield ray.get(done[0])
            except RayError as exc:  # the worker died, or Ray could not run the task
                yield {"run_id": task.run_id, "error": f"{type(exc).__name__}: {exc}".rstrip()}
    finally:
        if started:
            ray.shutdown()


def run_sweep(
    sweep_path: str | Path,
    out_dir: str | Path,
    *,
    engine: str = "pool",
    workers: int = 2,
    progress: bool = True,
    address: str | None = None,
) -> SweepResult:
    """Run every unfinished or changed run of a sweep; write ``sweep.csv`` (one row per planned run,
    failed ones included) in ``out_dir``.

    Args:
        engine: ``"pool"`` (process pool), ``"serial"`` (this process) or ``"ray"`` (needs ``ray``).
        workers: parallel workers for ``pool`` and a local ``ray``.
        address: ``ray`` only: the address of a running Ray cluster (default ``RAY_ADDRESS``, else a
            local Ray is started and stopped).
    """
    if engine not in ENGINES:
        raise ConfigurationError(f"engine = {engine!r} is invalid; allowed: " + ", ".join(ENGINES))
    if workers < 1:
        raise ConfigurationError(f"workers = {workers!r} is invalid; allowed: an integer >= 1")
    if address is not None and engine != "ray":
        raise ConfigurationError(
            f"address = {address!r} is invalid with engine {engine!r}; allowed: only with engine 'ray'"
        )
    start = time.perf_counter()
    tasks = plan_sweep(sweep_path, out_dir)
    out = Path(out_dir).absolute()
    out.mkdir(parents=True, exist_ok=True)
    todo, skipped, changed = [], [], []
    for t in tasks:
        marker = read_marker(t.run_dir)
        if marker is not None and t.fingerprint and marker["fingerprint"] == t.fingerprint:
            skipped.append(t.run_id)
            continue
        if marker is not None:
            changed.append(t.run_id)
            log.info("%s: its resolved experiment changed since it ran; running it again", t.run_id)
        todo.append(t)
    if engine == "serial" or not todo:
        results: Iterator[dict[str, Any]] = (execute(t) for t in todo)
    elif engine == "pool":
        results = _pool(todo, min(workers, len(todo)))
    else:
        results = _ray(todo, workers, address)
    completed, failed = [], []
    try:
        for summary in tqdm(results, total=len(todo), desc="sweep", unit="run", disable=not progress):
            if "error" in summary:
                failed.append((summary["run_id"], summary["error"]))
            else:
                completed.append(summary["run_id"])
    finally:
        _write_summary(tasks, out, dict(failed))
    return SweepResult(
        out,
        tuple(sorted(completed)),
        tuple(skipped),
        tuple(sorted(failed)),
        time.perf_counter() - start,
        tuple(changed),
    )


def _write_summary(tasks: list[RunTask], out: Path, errors: dict[str, str]) -> None:
    """``sweep.csv``: one row per planned run with a valid marker of its fingerprint or an error."""
    rows = []
    for t in tasks:
        marker = read_marker(t.run_dir)
        row: dict[str, Any] = {"run_id": t.run_id, "status": "ok", "seed": t.seed, **t.overrides}
        if t.run_id in errors:
            error = errors[t.run_id].strip().splitlines()
            rows.append({**row, "status": "failed", "error": error[-1] if error else ""})
        elif marker is not None and marker["fingerprint"] == t.fingerprint:
            rows.append({**row, **marker["final"], "error": ""})
    if not rows:
        return
    names = list(dict.fromkeys(k for r in rows for k in r if k != "error")) + ["error"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write_atomic(out / SUMMARY_NAME, buf.getvalue())
