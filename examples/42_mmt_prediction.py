"""The master's sag prediction, on and off: master/slave tip distance over the demo's scripted session.

Runs the headless demo's scripted operator (lockstep, URSULA at N = 10 in seawater) twice: with the
Newton-Euler prediction (the default) and without it (the master shows the command plus the residuals
the slave reports, blended in over the 1 s link). Prints the palpation and grasper tip distances every
second and writes ``mmt_prediction.png``.

    python examples/42_mmt_prediction.py [OUT_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from pccbullet.teleop.demo.script import SESSION_S, scripted_operator
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.urdf_gen.spec_loader import load_robot


def session_errors(predict: bool) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """Times (s), palpation tip distance master - slave (m) per tick, and the metrics."""
    with MmtSession(load_robot("ursula"), MmtConfig(predict=predict)) as s:
        s.run(scripted_operator(), SESSION_S)
        lg = s.log
        return lg["t"], np.linalg.norm(lg["tip_m"] - lg["tip_s"], axis=1), s.metrics()


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
    out.mkdir(parents=True, exist_ok=True)
    runs = {name: session_errors(flag) for name, flag in (("prediction", True), ("no prediction", False))}
    print("palpation tip distance master - slave (mm) at t = 1, 2, ... s")
    for name, (t, err, m) in runs.items():
        at = [1e3 * err[np.searchsorted(t, k)] for k in range(1, int(t[-1]) + 1)]
        print(f"{name:>14}: " + " ".join(f"{v:5.0f}" for v in at))
        rms = 1e3 * np.sqrt(np.mean(err**2))
        print(f"{'':>14}  RMS {rms:.0f} mm, final {1e3 * m['tip_error_final_m']:.0f} mm")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for name, (t, err, _) in runs.items():
        ax.plot(t, 1e3 * err, label=name)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("palpation tip distance (mm)")
    ax.set_title("Master model vs soft robot: with and without the sag prediction")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "mmt_prediction.png", dpi=100)
    print(f"wrote {out / 'mmt_prediction.png'}")


if __name__ == "__main__":
    main()
