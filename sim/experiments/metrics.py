"""Section-tip errors of seed 000 (sec. 4) between two runs or a run and a reference CSV.

For segment ("section" in seed 000) tips i = 1..S of a limb, with ``psi_i^e(t)`` the reference and
``psi_i(t)`` the run::

    ERR_i(t)            = || psi_i^e(t) - psi_i(t) ||            (m)
    max sectional error = max_i max_t ERR_i(t)
    max cumulative error = max_t sum_i ERR_i(t)

Runs and references are CSVs in the run format: a ``time_s`` column and ``{limb}_s{i}_x``,
``{limb}_s{i}_y``, ``{limb}_s{i}_z`` per segment tip (m). A reference sampled at other times is linearly
interpolated onto the run's times inside the overlap of both time ranges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.core.types import FloatArray

Columns = Mapping[str, FloatArray]


@dataclass(frozen=True, slots=True)
class SectionTipErrors:
    """ERR_i(t) of one limb.

    Attributes:
        limb: limb name. time: ``(T,) float`` (s). err: ``(T, S) float`` (m), column i-1 is ERR_i.
        max_sectional: max_i max_t ERR_i (m). max_cumulative: max_t sum_i ERR_i (m).
    """

    limb: str
    time: FloatArray
    err: FloatArray
    max_sectional: float
    max_cumulative: float


def load_columns(path: str | Path) -> dict[str, FloatArray]:
    """A run CSV (or a run folder holding ``run.csv``) -> ``column name -> (T,) float``."""
    path = Path(path)
    if path.is_dir():
        path = path / "run.csv"
    try:
        header = path.open().readline().strip().split(",")
        data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except (OSError, ValueError) as exc:
        raise SpecError(path, "<file>", str(exc), "a CSV with a header row and numeric rows") from exc
    if data.shape[1] != len(header) or "time_s" not in header:
        raise SpecError(path, "<header>", header, "a 'time_s' column and one name per data column")
    return {name.strip(): data[:, i] for i, name in enumerate(header)}


def segment_tips(columns: Columns, limb: str) -> FloatArray:
    """Segment-tip positions of ``limb``: ``(T, S, 3) float`` (m) from the ``{limb}_s{i}_{x,y,z}_m``
    columns, or the unit-less ``{limb}_s{i}_{x,y,z}`` columns of a reference table such as
    ``tests/data/grasper_reach_reference.csv``."""
    tips = []
    unit = "_m" if f"{limb}_s1_x_m" in columns else ""
    i = 1
    while f"{limb}_s{i}_x{unit}" in columns:
        tips.append(np.stack([columns[f"{limb}_s{i}_{a}{unit}"] for a in "xyz"], axis=1))
        i += 1
    if not tips:
        raise ConfigurationError(f"no segment-tip columns for limb {limb!r} (expected {limb}_s1_x_m, ...)")
    return np.stack(tips, axis=1)


def section_tip_errors(
    run: Columns | str | Path, reference: Columns | str | Path, limb: str
) -> SectionTipErrors:
    """ERR_i(t), max sectional and max cumulative error of ``run`` against ``reference`` for ``limb``."""
    a = run if isinstance(run, Mapping) else load_columns(run)
    b = reference if isinstance(reference, Mapping) else load_columns(reference)
    t = np.asarray(a["time_s"], dtype=float)
    tb = np.asarray(b["time_s"], dtype=float)
    psi = segment_tips(a, limb)
    psi_e = segment_tips(b, limb)
    if psi.shape[1] != psi_e.shape[1]:
        raise ConfigurationError(
            f"limb {limb!r}: run has {psi.shape[1]} segment tips, reference {psi_e.shape[1]}"
        )
    if not (t.shape == tb.shape and np.array_equal(t, tb)):
        keep = (t >= tb[0] - 1e-12) & (t <= tb[-1] + 1e-12)
        if not keep.any():
            raise ConfigurationError("run and reference times do not overlap")
        t, psi = t[keep], psi[keep]
        psi_e = np.stack(
            [
                np.stack([np.interp(t, tb, psi_e[:, i, j]) for j in range(3)], axis=1)
                for i in range(psi.shape[1])
            ],
            axis=1,
        )
    err = np.linalg.norm(psi_e - psi, axis=2)
    return SectionTipErrors(
        limb=limb,
        time=t,
        err=err,
        max_sectional=float(err.max()),
        max_cumulative=float(err.sum(axis=1).max()),
    )
