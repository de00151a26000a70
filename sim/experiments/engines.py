"""Sweep engines: one run of a sweep executed in its folder, and the runs spread over ``serial`` (this
process), ``pool`` (a local :class:`concurrent.futures.ProcessPoolExecutor`) or ``ray`` (optional extra,
imported lazily; a local Ray, or an existing cluster through ``address`` or ``RAY_ADDRESS``).

A run writes into its folder: ``manifest.json`` (every file the run writes, listed before it is written),
``overrides.json``, the run outputs, then, last and atomically, the completion marker ``DONE`` (JSON: run id,
seed, overrides, the run's fingerprint, final tip positions), read back by :func:`read_marker`. A run that
failed writes ``error.txt`` instead. Before a run starts again, only the files its manifest lists are removed.
The engine does not change results. Pool workers exit when the sweep's process dies.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from pccbullet.core.atomic import write_atomic
from pccbullet.core.errors import PccBulletError
from pccbullet.sim.experiments.design import RunTask
from pccbullet.sim.experiments.outputs import Manifest, remove_recorded, write_json
from pccbullet.sim.experiments.ray_connect import CONNECT_TIMEOUT_S, connect
from pccbullet.sim.experiments.runner import run_experiment
from pccbullet.sim.experiments.spec import experiment_from_table

DONE = "DONE"  # a run's completion marker
ERROR_NAME = "error.txt"
OVERRIDES_NAME = "overrides.json"
ENGINES = ("pool", "serial", "ray")
RAY_ADDRESS_ENV = "RAY_ADDRESS"
PARENT_POLL_S = 0.5  # s, how often a pool worker checks that the sweep's process still lives


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
    except Exception as exc:  # reported, with its traceback, in the sweep's results
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


def pool_results(tasks: list[RunTask], workers: int) -> Iterator[dict[str, Any]]:
    """Run ``tasks`` on a local process pool of ``workers`` (spawned) processes; yield each result of
    :func:`execute` as it comes (a worker that died yields its error)."""
    ctx = multiprocessing.get_context("spawn")  # no PyBullet client state inherited from the parent
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_watch_parent, initargs=(os.getpid(),)
    ) as ex:
        futures = {ex.submit(execute, t): t for t in tasks}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # a worker that died (BrokenProcessPool)
                text = _traceback_text(exc)
                yield {"run_id": futures[fut].run_id, "error": text}


def ray_results(
    tasks: list[RunTask], workers: int, address: str | None, connect_timeout: float = CONNECT_TIMEOUT_S
) -> Iterator[dict[str, Any]]:
    """Run ``tasks`` on Ray and yield each result of :func:`execute` as it comes: the cluster at ``address``
    (or ``RAY_ADDRESS``), probed first within ``connect_timeout`` seconds
    (:mod:`pccbullet.sim.experiments.ray_connect`), else a private local Ray with ``workers`` CPUs (never a
    cluster found on this machine without being named). Retries are off (a killed worker is a failed
    run, reported with Ray's error)."""
    ray, started = connect(address or os.environ.get(RAY_ADDRESS_ENV) or None, workers, connect_timeout)
    from ray.exceptions import RayError

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
