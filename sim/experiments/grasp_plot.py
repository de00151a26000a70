"""The grasp experiment's plot: the object's height, the limb-object and support contact forces and the
tendon tensions against time, the phases shaded (:func:`plot_grasp`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pccbullet.core.atomic import write_atomic
from pccbullet.core.types import FloatArray
from pccbullet.sim.experiments.grasp_spec import PHASES


def plot_grasp(cols: dict[str, FloatArray], tendons: Sequence[str], path: str | Path) -> Path:
    """Write the PNG at ``path`` (atomically) and return its path."""
    import io

    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    t = cols["time_s"]
    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for ax in axes:
        for k, name in enumerate(PHASES):
            inside = t[cols["phase"] == k]
            if inside.size:
                ax.axvspan(inside[0], inside[-1], color=f"C{k}", alpha=0.08)
                if ax is axes[0]:
                    ax.text(inside[0], 1.0, name, transform=ax.get_xaxis_transform(), va="bottom", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].plot(t, (cols["object_z_m"] - cols["object_z_m"][0]) * 100.0, label="object")
    axes[0].plot(t, (cols["tip_z_m"] - cols["tip_z_m"][0]) * 100.0, "--", label="tip")
    axes[0].set_ylabel("height change (cm)")
    axes[0].legend(fontsize=8)
    axes[1].plot(t, cols["contact_n"], label="limb on object")
    axes[1].plot(t, cols["support_n"], label="support on object")
    axes[1].set_ylabel("contact force (N)")
    axes[1].legend(fontsize=8)
    for k, name in enumerate(tendons):
        y = cols[f"{name}_tension_n"]
        if np.max(y) > 0.5:
            axes[2].plot(t, y, label=name, color=f"C{k % 10}")
    axes[2].set_ylabel("tension (N)")
    axes[2].set_xlabel("time (s)")
    axes[2].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return Path(path)
