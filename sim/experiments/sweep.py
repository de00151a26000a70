"""Parameter sweeps over experiment files: a grid or a seeded random design, run in parallel, resumable.

The sweep file and its designs: :mod:`pccbullet.sim.experiments.design`; running one run and the
engines: :mod:`pccbullet.sim.experiments.engines`.

Each run writes into ``out/run_NNNN/``: ``manifest.json`` (every file the run writes, listed before it is
written), ``overrides.json``, the run outputs, then, last and atomically, the completion marker ``DONE``
(JSON: run id, seed, overrides, the run's fingerprint, final tip positions). A run that failed writes
``error.txt`` instead. A rerun skips a run whose marker is valid and whose fingerprint (the SHA-256 of its
resolved experiment, inputs, robot file, seed and versions:
:func:`~pccbullet.sim.experiments.runner.spec_fingerprint`) equals the planned one; it re-runs every other
run, **including a finished run whose resolved spec changed** (reported as ``changed``). An empty or corrupt
marker counts as not finished. Before a run starts again, only the files its manifest lists are removed;
nothing else in the folder is touched.

``sweep.csv`` (written atomically even when runs fail) has one row per planned run: ``run_id``,
``status`` (``ok`` | ``failed``), ``seed``, the overrides, the final tip positions (m) and ``error``.
Engines: ``serial``, ``pool`` (local :class:`concurrent.futures.ProcessPoolExecutor`, the default) and
``ray`` (optional extra, imported lazily; a local Ray, or an existing cluster through ``address`` or
``RAY_ADDRESS``). The engine does not change results. Pool workers exit when the sweep's process dies.
A sweep holds its folder's lock (:func:`~pccbullet.sim.experiments.outputs.folder_lock`): a second sweep
into the same folder fails at once with one line naming the first one's process.
"""

from __future__ import annotations

import csv
import io
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from pccbullet.core.atomic import write_atomic
from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.experiments.design import RunTask, plan_sweep
from pccbullet.sim.experiments.engines import ENGINES, execute, pool_results, ray_results, read_marker
from pccbullet.sim.experiments.outputs import folder_lock
from pccbullet.sim.experiments.ray_connect import CONNECT_TIMEOUT_S

log = logging.getLogger(__name__)

SUMMARY_NAME = "sweep.csv"


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


def run_sweep(
    sweep_path: str | Path,
    out_dir: str | Path,
    *,
    engine: str = "pool",
    workers: int = 2,
    progress: bool = True,
    address: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT_S,
) -> SweepResult:
    """Run every unfinished or changed run of a sweep; write ``sweep.csv`` (one row per planned run,
    failed ones included) in ``out_dir``.

    Args:
        engine: ``"pool"`` (process pool), ``"serial"`` (this process) or ``"ray"`` (needs ``ray``).
        workers: parallel workers for ``pool`` and a local ``ray``.
        address: ``ray`` only: the address of a running Ray cluster (default ``RAY_ADDRESS``, else a
            local Ray is started and stopped).
        connect_timeout: ``ray`` with a cluster only: seconds a probe connection may take before the
            sweep gives up with one line (:mod:`pccbullet.sim.experiments.ray_connect`).

    Every run is validated before any is dispatched
    (:func:`~pccbullet.sim.experiments.checks.check_runs`).
    """
    if engine not in ENGINES:
        raise ConfigurationError(f"engine = {engine!r} is invalid; allowed: " + ", ".join(ENGINES))
    if workers < 1:
        raise ConfigurationError(f"workers = {workers!r} is invalid; allowed: an integer >= 1")
    if address is not None and engine != "ray":
        raise ConfigurationError(
            f"address = {address!r} is invalid with engine {engine!r}; allowed: only with engine 'ray'"
        )
    if not 0.0 < connect_timeout <= 3600.0:
        raise ConfigurationError(
            f"connect_timeout = {connect_timeout!r} is invalid; allowed: seconds in (0, 3600]"
        )
    start = time.perf_counter()
    tasks = plan_sweep(sweep_path, out_dir)
    out = Path(out_dir).absolute()
    out.mkdir(parents=True, exist_ok=True)
    with folder_lock(out):
        return _run(tasks, out, engine, workers, progress, address, start, connect_timeout)


def _run(
    tasks: list[RunTask],
    out: Path,
    engine: str,
    workers: int,
    progress: bool,
    address: str | None,
    start: float,
    connect_timeout: float,
) -> SweepResult:
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
        results = pool_results(todo, min(workers, len(todo)))
    else:
        results = ray_results(todo, workers, address, connect_timeout)
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
