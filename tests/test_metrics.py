"""Seed-000 section-tip errors and the run plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.experiments.metrics import load_columns, section_tip_errors
from pccbullet.sim.experiments.plots import plot_errors, plot_shapes, plot_tips

DATA = Path(__file__).resolve().parent / "data"
REFERENCE = DATA / "grasper_reach_reference.csv"


def test_errors_against_itself_are_exactly_zero() -> None:
    e = section_tip_errors(REFERENCE, REFERENCE, "grasper")
    assert e.err.shape == (201, 2)
    assert e.max_sectional == 0.0 and e.max_cumulative == 0.0


def test_errors_against_a_shifted_copy_equal_the_shift() -> None:
    ref = load_columns(REFERENCE)
    shift = np.array([0.003, -0.004, 0.012])  # |shift| = 13 mm
    moved = dict(ref)
    for s in (1, 2):
        for j, a in enumerate("xyz"):
            moved[f"grasper_s{s}_{a}"] = ref[f"grasper_s{s}_{a}"] + shift[j]
    e = section_tip_errors(moved, ref, "grasper")
    np.testing.assert_allclose(e.err, 0.013, rtol=1e-9)
    assert e.max_sectional == pytest.approx(0.013, rel=1e-9)
    assert e.max_cumulative == pytest.approx(0.026, rel=1e-9)


def test_reference_at_another_rate_is_interpolated() -> None:
    ref = load_columns(REFERENCE)
    coarse = {k: v[::10] for k, v in ref.items()}  # 10 Hz
    e = section_tip_errors(ref, coarse, "grasper")
    assert len(e.time) == 201
    assert np.all(e.err[::10] < 1e-12)  # exact at the shared samples
    assert 0.0 < e.max_sectional < 0.01  # linear interpolation of a smooth 100 Hz path


def test_errors_need_matching_columns() -> None:
    with pytest.raises(ConfigurationError, match="no segment-tip columns for limb 'camera'"):
        section_tip_errors(REFERENCE, REFERENCE, "camera")


def test_plots_write_png_and_svg(tmp_path: Path) -> None:
    ref = load_columns(REFERENCE)
    cols = {"time_s": ref["time_s"], **{f"grasper_tip_{a}_m": ref[f"grasper_s2_{a}"] for a in "xyz"}}
    paths = plot_tips(cols, tmp_path / "tips", reference=cols)
    poses = np.tile(np.eye(4), (201, 2, 1, 1))
    for s in (1, 2):
        poses[:, s - 1, :3, 3] = np.stack([ref[f"grasper_s{s}_{a}"] for a in "xyz"], axis=1)
    paths += plot_shapes({"grasper": poses}, ref["time_s"], tmp_path / "shapes")
    paths += plot_errors(section_tip_errors(REFERENCE, REFERENCE, "grasper"), tmp_path / "err")
    assert [p.suffix for p in paths] == [".png", ".svg"] * 3
    assert all(p.stat().st_size > 1000 for p in paths)
    assert (tmp_path / "tips.png").read_bytes()[:4] == b"\x89PNG"
