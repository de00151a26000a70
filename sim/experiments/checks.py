"""Every run of a sweep checked before any is dispatched, errors named in the sweep file's terms.

:func:`check_input_limits` compares each PCC input's noise-free values over the run with its segment's limits
and reports them in the unit the experiment file wrote (``camera.s1.bend_deg``: degrees). :func:`check_runs`
validates every planned run (the experiment with the run's overrides, then those limits); a bad run raises
one :class:`~pccbullet.core.errors.SpecError` naming the sweep file, the parameter's value in it
(``parameters[2].values[1]``), the swept path and what is allowed in the path's unit. Seeded noise can
still push a run past a limit; that run fails alone when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pccbullet.core.errors import PccBulletError, SpecError
from pccbullet.sim.experiments.spec import PARAMETERS, ExperimentSpec, experiment_from_table
from pccbullet.urdf_gen.specs import SegmentSpec

UNITS = {"bend": "rad", "plane": "rad", "length": "m", "bend_deg": "deg", "plane_deg": "deg"}
UNITS |= {"length_mm": "mm"}
UNIT_WORDS = {"rad": "radians", "m": "metres", "deg": "degrees", "mm": "millimetres"}
VALUE_KEYS = ("value", "before", "after", "start", "end", "amplitude", "offset", "values", "noise")
TOLERANCE = 1e-12  # SI, as the runner's check of the sampled commands


def limits_si(seg: SegmentSpec, parameter: str) -> tuple[float, float]:
    """``(lo, hi)`` of a segment's ``bend``/``plane`` (rad) or ``length`` (m)."""
    return {
        "bend": (-seg.bend_max, seg.bend_max),
        "plane": (-seg.plane_max, seg.plane_max),
        "length": (seg.length_min, seg.length_max),
    }[parameter]


def _target(table: dict[str, Any], name: str) -> str:
    """The ``target`` string of input ``name`` in an experiment table ("" when absent)."""
    inp = table.get("inputs", {}).get(name, {})
    target = inp.get("target", "") if isinstance(inp, dict) else ""
    return target if isinstance(target, str) else ""


def _unit_range(spec: ExperimentSpec, name: str) -> tuple[str, str, float, float] | None:
    """For input ``name``: its target, unit and limits in that unit, or ``None``."""
    target = _target(spec.table, name)
    inp = next((i for i in spec.inputs if i.name == name), None)
    suffix = target.rsplit(".", 1)[-1]
    if inp is None or suffix not in UNITS:
        return None
    seg = spec.robot.limb(inp.limb).segments[inp.segment]
    lo, hi = limits_si(seg, inp.parameter)
    return target, UNITS[suffix], lo / PARAMETERS[suffix], hi / PARAMETERS[suffix]


def check_input_limits(spec: ExperimentSpec) -> None:
    """Raise :class:`SpecError` (field ``inputs.NAME``) when an input's noise-free values leave its
    segment's limits during the run; the values and limits are given in the target's unit."""
    for inp in spec.inputs:
        lo, hi = limits_si(spec.robot.limb(inp.limb).segments[inp.segment], inp.parameter)
        vlo, vhi = inp.profile.extremes(spec.duration)
        if vlo >= lo - TOLERANCE and vhi <= hi + TOLERANCE:
            continue
        found = _unit_range(spec, inp.name)
        assert found is not None  # a parsed input has a target with a known parameter
        target, unit, ulo, uhi = found
        scale = PARAMETERS[target.rsplit(".", 1)[-1]]
        worst = vlo if vlo < lo - TOLERANCE else vhi
        raise SpecError(
            spec.source,
            f"inputs.{inp.name}",
            f"{worst / scale:.6g} {unit}",
            f"{target} in [{ulo:.6g}, {uhi:.6g}] {unit} ({inp.limb} segment {inp.segment + 1}'s limits)",
        )


def _related(path: str, field: str) -> bool:
    """Whether a swept dotted ``path`` and an error's ``field`` name the same value or one holds the other."""
    a, b = path.replace("[", ".[").split("."), field.replace("[", ".[").split(".")
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _allowed(spec: ExperimentSpec | None, path: str, exc: PccBulletError) -> str:
    """What the value at ``path`` may be, in the unit of the input it drives when it drives one."""
    parts = path.split(".")
    allowed = exc.allowed if isinstance(exc, SpecError) else str(exc)
    if spec is not None and len(parts) >= 3 and parts[0] == "inputs" and parts[2].split("[")[0] in VALUE_KEYS:
        found = _unit_range(spec, parts[1])
        if found is not None:
            target, unit, lo, hi = found
            reached = ""
            if isinstance(exc, SpecError) and exc.field == f"inputs.{parts[1]}":  # the limits check
                reached = f"; with this value the input reaches {exc.value}"
            words = UNIT_WORDS[unit]
            return f"a number of {words} in [{lo:.6g}, {hi:.6g}] for {path!r} (it drives {target}{reached})"
    return f"{allowed} for {path!r}"


def check_runs(
    sweep_path: Path,
    exp_path: Path,
    tables: Sequence[dict[str, Any]],
    labels: Sequence[dict[str, tuple[str, Any]]],
    base_spec: ExperimentSpec | None,
) -> list[ExperimentSpec]:
    """Validate every run's experiment table; return their specs.

    Args:
        sweep_path: the sweep file (named in errors). exp_path: its experiment file.
        tables: per run, the experiment table with the run's overrides applied.
        labels: per run, swept path -> (where its value sits in the sweep file, e.g.
            ``parameters[2].values[1]``, the value).
        base_spec: the experiment without overrides (for units and limits), ``None`` if it is invalid.
    """
    specs = []
    for table, label in zip(tables, labels, strict=True):
        try:
            spec = experiment_from_table(table, exp_path, base_dir=exp_path.parent)
            check_input_limits(spec)
        except PccBulletError as exc:
            field = exc.field if isinstance(exc, SpecError) else ""
            culprit = next((p for p in label if field and _related(p, field)), None)
            if culprit is None:
                raise  # the experiment file itself is bad: its own error names it
            where, value = label[culprit]
            raise SpecError(
                sweep_path, where, value, _allowed(base_spec, culprit, exc) + f" in {exp_path.name}"
            ) from exc
        specs.append(spec)
    return specs
