"""The teleoperation session's metrics (:meth:`~pccbullet.teleop.mmt.session.MmtSession.metrics`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pccbullet.teleop.mmt.packets import CMD_HEADER
from pccbullet.teleop.slave import CONTACT_FORCE_N

if TYPE_CHECKING:
    from pccbullet.teleop.mmt.session import MmtSession


def session_metrics(s: MmtSession) -> dict[str, float]:
    """Tip and force errors, forces, contact agreement, traffic of session ``s`` from its log."""
    lg = s.log
    n = lg.n
    dt_log = s.world.dt * lg.every
    duration = max(n * dt_log, s.world.dt)
    lag = int(round(s.cfg.downlink.expected_delay(CMD_HEADER.size + 6 * len(s.shape)) / dt_log))
    lag = min(lag, max(n - 1, 0))
    tip_m, tip_s, f_m, f_s = lg["tip_m"], lg["tip_s"], lg["f_m"], lg["f_s"]
    tip_err = np.linalg.norm(tip_m[: n - lag] - tip_s[lag:], axis=1) if n else np.zeros(1)
    f_err = np.linalg.norm(f_m[: n - lag] - f_s[lag:], axis=1) if n else np.zeros(1)
    steps = np.linalg.norm(np.diff(f_m, axis=0), axis=1) if n > 1 else np.zeros(1)
    blend = lg["blending"][1:].astype(bool) if n > 1 else np.zeros(1, dtype=bool)
    fs_mag = np.linalg.norm(f_s, axis=1) if n else np.zeros(1)
    contact = fs_mag > CONTACT_FORCE_N
    window = np.zeros(n, dtype=bool)
    if contact.any():
        last = int(np.flatnonzero(contact)[-1])
        first = max(0, last - int(round(1.0 / dt_log)) + 1)
        window[first : last + 1] = True
    diff = np.linalg.norm(f_m - f_s, axis=1) if n else np.zeros(1)
    return {
        "tip_error_rms_m": float(np.sqrt(np.mean(tip_err**2))),
        "tip_error_final_m": float(np.linalg.norm(tip_m[-1] - tip_s[-1])) if n else 0.0,
        "force_error_rms_n": float(np.sqrt(np.mean(f_err**2))),
        "max_force_n": float(np.linalg.norm(f_m, axis=1).max()) if n else 0.0,
        "slave_force_max_n": float(fs_mag.max()) if n else 0.0,
        "contact_time_s": float(contact.sum() * dt_log),
        "force_error_contact_rms_n": float(np.sqrt(np.mean(diff[window] ** 2))) if window.any() else 0.0,
        "force_error_contact_max_n": float(diff[window].max()) if window.any() else 0.0,
        "operator_force_contact_mean_n": float(np.linalg.norm(f_m[window], axis=1).mean())
        if window.any()
        else 0.0,
        "slave_force_contact_mean_n": float(fs_mag[window].mean()) if window.any() else 0.0,
        "k_env_n_per_m": float(s.k_env),
        "rock_located": bool(s.rock_located),
        "rock_error_m": float(np.linalg.norm(s.rock_model - np.asarray(s.cfg.rock_true))),
        "slave_reflex_ticks": int(s.slave.reflex_ticks),
        "max_force_step_n": float(steps.max()),
        "max_force_step_during_correction_n": float(steps[blend].max()) if blend.any() else 0.0,
        "down_packets_per_s": s.down.sent / duration,
        "down_bytes_per_s": s.down.bytes_sent / duration,
        "up_packets_per_s": s.up.sent / duration,
        "up_bytes_per_s": s.up.bytes_sent / duration,
        "down_loss_rate": s.down.loss_rate,
        "up_loss_rate": s.up.loss_rate,
        "mean_down_delay_s": float(np.mean(s.down.delays)) if s.down.delays else 0.0,
        "state_updates": s.updates,
        "ticks_over_budget": s.over_budget,
        "haptic_faults_latched": int(s.haptics.faults_latched),
        "haptic_recoveries": int(s.haptic_recoveries),
    }
