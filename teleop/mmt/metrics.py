"""The teleoperation session's metrics (:meth:`~pccbullet.teleop.mmt.session.MmtSession.metrics`): from its
log, its link's traffic and a few values the session reports (:class:`SessionValues`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pccbullet.teleop.channel import Channel
from pccbullet.teleop.mmt.config import CONTACT_FORCE_N
from pccbullet.teleop.session_log import SessionLog


@dataclass(frozen=True, slots=True)
class SessionValues:
    """What the metrics report besides the log and the link's counters.

    Attributes:
        k_env: the learned contact stiffness (N/m).
        rock_located: whether the master's model has located the rock.
        rock_error: distance between the modelled and the true rock centre (m).
        slave_reflex_ticks: the robot's ticks with its force reflex on.
        state_updates: state reports the master accepted.
        ticks_over_budget: master ticks that took longer than their period.
        haptic_faults_latched / haptic_recoveries: the haptic renderer's faults, and the missed-deadline
            faults cleared once the loop was back on time.
    """

    k_env: float
    rock_located: bool
    rock_error: float
    slave_reflex_ticks: int
    state_updates: int
    ticks_over_budget: int
    haptic_faults_latched: int
    haptic_recoveries: int


def session_metrics(
    log: SessionLog, dt: float, command_delay: float, down: Channel, up: Channel, values: SessionValues
) -> dict[str, float]:
    """Tip and force errors, forces, contact agreement and traffic of a session (the metrics table of
    docs/guide/demo.md).

    Args:
        log: the session's log (master and robot tips and forces per logged tick).
        dt: the master's tick (s).
        command_delay: expected one-way delay of a command (s): the robot's log is compared with the
            master's this much later.
        down / up: the link's two directions (packets, bytes, losses, delays).
        values: the session's other values.

    Returns:
        Metric name -> value (SI units, named in the key).
    """
    n = log.n
    dt_log = dt * log.every
    duration = max(n * dt_log, dt)
    lag = int(round(command_delay / dt_log))
    lag = min(lag, max(n - 1, 0))
    tip_m, tip_s, f_m, f_s = log["tip_m"], log["tip_s"], log["f_m"], log["f_s"]
    tip_err = np.linalg.norm(tip_m[: n - lag] - tip_s[lag:], axis=1) if n else np.zeros(1)
    f_err = np.linalg.norm(f_m[: n - lag] - f_s[lag:], axis=1) if n else np.zeros(1)
    steps = np.linalg.norm(np.diff(f_m, axis=0), axis=1) if n > 1 else np.zeros(1)
    blend = log["blending"][1:].astype(bool) if n > 1 else np.zeros(1, dtype=bool)
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
        "k_env_n_per_m": float(values.k_env),
        "rock_located": bool(values.rock_located),
        "rock_error_m": float(values.rock_error),
        "slave_reflex_ticks": int(values.slave_reflex_ticks),
        "max_force_step_n": float(steps.max()),
        "max_force_step_during_correction_n": float(steps[blend].max()) if blend.any() else 0.0,
        "down_packets_per_s": down.sent / duration,
        "down_bytes_per_s": down.bytes_sent / duration,
        "up_packets_per_s": up.sent / duration,
        "up_bytes_per_s": up.bytes_sent / duration,
        "down_loss_rate": down.loss_rate,
        "up_loss_rate": up.loss_rate,
        "mean_down_delay_s": float(np.mean(down.delays)) if down.delays else 0.0,
        "state_updates": values.state_updates,
        "ticks_over_budget": values.ticks_over_budget,
        "haptic_faults_latched": int(values.haptic_faults_latched),
        "haptic_recoveries": int(values.haptic_recoveries),
    }
