"""Matplotlib (Agg) figures of runs: tip coordinates against time, arm shapes, section-tip errors.

Each function writes ``<stem>.png`` and ``<stem>.svg`` and returns both paths. Lengths are plotted in
millimetres (an edge of the program), times in seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from pccbullet.core.atomic import atomic_path
from pccbullet.core.types import FloatArray
from pccbullet.sim.experiments.metrics import SectionTipErrors

MM = 1e3  # mm per m


def _save(fig: Figure, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    for p in paths:
        with atomic_path(p) as tmp:
            fig.savefig(tmp, dpi=100, metadata={"Date": None} if p.suffix == ".svg" else None)
    return paths


def _tip_limbs(columns: Mapping[str, FloatArray]) -> list[str]:
    return [k[: -len("_tip_x_m")] for k in columns if k.endswith("_tip_x_m")]


def plot_tips(
    columns: Mapping[str, FloatArray],
    stem: str | Path,
    reference: Mapping[str, FloatArray] | None = None,
) -> list[Path]:
    """Tip x, y, z (mm) of every limb against time (s); a reference run dashed if given."""
    limbs = _tip_limbs(columns)
    fig = Figure(figsize=(7, 6))
    axes = fig.subplots(3, 1, sharex=True, squeeze=False)
    t = columns["time_s"]
    for j, axis in enumerate("xyz"):
        ax = axes[j, 0]
        for limb in limbs:
            (line,) = ax.plot(t, columns[f"{limb}_tip_{axis}_m"] * MM, label=limb)
            if reference is not None and f"{limb}_tip_{axis}_m" in reference:
                ax.plot(
                    reference["time_s"], reference[f"{limb}_tip_{axis}_m"] * MM, "--", color=line.get_color()
                )
        ax.set_ylabel(f"tip {axis} (mm)")
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(loc="best", fontsize="small")
    axes[-1, 0].set_xlabel("time (s)")
    fig.tight_layout()
    return _save(fig, Path(stem))


def plot_shapes(
    sections: Mapping[str, FloatArray],
    time: FloatArray,
    stem: str | Path,
    frames: Sequence[int] | None = None,
) -> list[Path]:
    """Arm shapes (section-body positions, mm) in 3D at a few recorded frames.

    Args:
        sections: per limb ``(T, N, 4, 4) float`` section poses in the world.
        time: ``(T,) float`` recording times (s).
        frames: frame indices to draw (default: 5 evenly spaced).
    """
    n = len(time)
    idx = sorted(set(frames)) if frames is not None else sorted(set(np.linspace(0, n - 1, 5).astype(int)))
    fig = Figure(figsize=(6, 6))
    ax = fig.add_subplot(projection="3d")
    cmap = matplotlib.colormaps["viridis"]
    for limb, poses in sections.items():
        for i in idx:
            p = poses[i, :, :3, 3] * MM
            color = cmap(i / max(n - 1, 1))
            ax.plot(p[:, 0], p[:, 1], p[:, 2], "-o", ms=2, color=color, label=f"t = {time[i]:.2f} s")
        ax.text(*(poses[0, -1, :3, 3] * MM), limb, fontsize="small")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles, strict=True))
    ax.legend(uniq.values(), uniq.keys(), fontsize="small")
    ax.set_xlabel("x (mm)")
    ax.set_ylabel("y (mm)")
    ax.set_zlabel("z (mm)")
    ax.set_aspect("equal")
    return _save(fig, Path(stem))


def plot_errors(errors: SectionTipErrors, stem: str | Path) -> list[Path]:
    """ERR_i(t) (mm) per segment tip and their sum, with the seed-000 maxima in the title."""
    fig = Figure(figsize=(7, 3.5))
    ax = fig.subplots()
    for i in range(errors.err.shape[1]):
        ax.plot(errors.time, errors.err[:, i] * MM, label=f"ERR{i + 1}")
    ax.plot(errors.time, errors.err.sum(axis=1) * MM, "k--", label="sum")
    ax.set_title(
        f"{errors.limb}: max sectional {errors.max_sectional * MM:.2f} mm, "
        f"max cumulative {errors.max_cumulative * MM:.2f} mm",
        fontsize="medium",
    )
    ax.set_xlabel("time (s)")
    ax.set_ylabel("error (mm)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return _save(fig, Path(stem))
