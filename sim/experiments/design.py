"""Sweep designs: a sweep file (TOML) read into the list of its runs, a grid or a seeded random design.

Sweep file::

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

Each run is a :class:`RunTask`: the experiment table with the run's overrides applied, its folder, its seed
and the fingerprint of its resolved spec (:func:`~pccbullet.sim.experiments.runner.spec_fingerprint`), by
which a rerun of the sweep knows a finished run (:mod:`pccbullet.sim.experiments.sweep`).
"""

from __future__ import annotations

import copy
import itertools
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from pccbullet.core.errors import ConfigurationError, PccBulletError, SpecError, cap
from pccbullet.core.fields import Fields, read_toml
from pccbullet.sim.experiments.checks import check_runs
from pccbullet.sim.experiments.runner import spec_fingerprint
from pccbullet.sim.experiments.spec import ExperimentSpec, experiment_from_table, resolve_experiment_path

MAX_RUNS = 100_000  # runs of one sweep (a grid's product of value counts, or a random design's samples)
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
    # per run: swept path -> (where its value sits in the sweep file, the value)
    labels: list[dict[str, tuple[str, Any]]] = []
    if design == "grid":
        for idx in itertools.product(*[range(len(q[1] or ())) for q in params]):
            labels.append(
                {
                    q[0]: (f"parameters[{i}].values[{j}]", (q[1] or [])[j])
                    for i, (q, j) in enumerate(zip(params, idx, strict=True))
                }
            )
    else:
        rng = np.random.default_rng(seed)
        for _ in range(samples):
            label: dict[str, tuple[str, Any]] = {}
            for i, (path, values, bounds) in enumerate(params):
                if values is not None:
                    j = int(rng.integers(len(values)))
                    label[path] = (f"parameters[{i}].values[{j}]", values[j])
                else:
                    assert bounds is not None  # a parameter has values or bounds
                    label[path] = (f"parameters[{i}].low..high", float(rng.uniform(*bounds)))
            labels.append(label)
    tables = []
    for label in labels:
        table = copy.deepcopy(base_table)
        for path, (_, value) in label.items():
            try:
                set_dotted(table, path, value)
            except ConfigurationError as exc:
                raise SpecError(
                    sweep_path, "parameters.path", path, f"a path in {exp_path.name} ({exc})"
                ) from exc
        tables.append(table)
    try:
        base_spec: ExperimentSpec | None = experiment_from_table(
            base_table, exp_path, base_dir=exp_path.parent
        )
    except PccBulletError:
        base_spec = None  # a placeholder the sweep replaces; units then come from no spec
    specs = check_runs(sweep_path, exp_path, tables, labels, base_spec)  # every run, before any runs
    out = Path(out_dir).absolute()  # workers (Ray on other nodes) have other working directories
    tasks = []
    for i, (table, label, spec) in enumerate(zip(tables, labels, specs, strict=True)):
        combo = {path: value for path, (_, value) in label.items()}
        task = RunTask(i, out / f"run_{i:04d}", table, combo, str(exp_path), exp_path.parent, seed + i)
        tasks.append(replace(task, fingerprint=spec_fingerprint(spec, task.seed)))
    return tasks
