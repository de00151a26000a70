"""Strict JSON (``pccbullet.core.strict_json``): what pccbullet writes is standard JSON (non-finite floats
as ``null``), what it reads from a peer refuses ``NaN`` and the infinities; the demo's summary and the
experiments' JSON files go through it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pccbullet.core import strict_json


def _standard(text: str) -> object:
    """Parse as a strict reader does (a browser's ``JSON.parse``): NaN and Infinity are errors."""
    return strict_json.loads(text)


def test_non_finite_floats_are_written_as_null() -> None:
    value = {"p99": math.nan, "max": math.inf, "min": -math.inf, "ok": 1.5, 3: (1, 2.0, math.nan)}
    text = strict_json.dumps(value, indent=2)
    assert "NaN" not in text and "Infinity" not in text
    assert _standard(text) == {"p99": None, "max": None, "min": None, "ok": 1.5, "3": [1, 2.0, None]}


def test_numpy_values_are_written_as_numbers_and_lists() -> None:
    value = {"a": np.float64(np.nan), "b": np.arange(3, dtype=np.int32), "c": np.array([0.5, np.inf])}
    assert _standard(strict_json.dumps(value, compact=True)) == {"a": None, "b": [0, 1, 2], "c": [0.5, None]}
    assert strict_json.dumps([1.0, 2], compact=True) == "[1.0,2]"


def test_default_results_are_mapped_too_and_unknown_objects_still_raise() -> None:
    assert _standard(strict_json.dumps({"x": {1, 2}}, default=lambda s: [math.nan, *sorted(s)])) == {
        "x": [None, 1, 2]
    }
    with pytest.raises(TypeError, match="not JSON serializable"):
        strict_json.dumps({"x": object()})


@pytest.mark.parametrize("text", ["NaN", '{"fps": Infinity}', "[-Infinity]"])
def test_reading_refuses_nan_and_infinity(text: str) -> None:
    with pytest.raises(ValueError, match=r"JSON number (NaN|Infinity|-Infinity) is invalid; allowed: finite"):
        strict_json.loads(text)
    assert json.loads(text) is not None  # what Python's json would have taken


def test_the_demo_summary_and_run_outputs_are_standard_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pccbullet.sim.experiments.outputs import write_json
    from pccbullet.teleop.demo.summary import SummaryFile

    summary = SummaryFile(tmp_path / "demo", {"loop": {"step_p99_ms": math.nan, "n": np.int64(3)}})
    summary.update(force=[math.inf, 0.0])
    data = _standard(summary.path.read_text())
    assert data["loop"] == {"step_p99_ms": None, "n": 3} and data["force"] == [None, 0.0]  # type: ignore[index]
    write_json(tmp_path / "run.json", {"rms": -math.inf, "path": tmp_path})
    assert _standard((tmp_path / "run.json").read_text()) == {"rms": None, "path": str(tmp_path)}
