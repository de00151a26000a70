"""``pccbullet bench --demo``: the teleoperation demo in real time, the slave in its own process.

Runs the scripted operator session (:func:`pccbullet.teleop.demo.run.scripted_operator`) paced to the wall
clock, the master's 1 kHz loop in this process and the dynamic slave in another
(:mod:`pccbullet.teleop.slave_process`), and reports both loops' real-time factors, the master tick's p50/p99
and late ticks, with the machine's own constant-work probe (:func:`pccbullet.sim.bench.machine_jitter`)
measured just before, so that a figure can be read against how fast the machine was at the time.
"""

from __future__ import annotations

from typing import Any

from pccbullet.sim.bench import machine_jitter
from pccbullet.teleop.demo.run import DEFAULT_DURATION_S, scripted_operator
from pccbullet.teleop.haptics import HapticParams
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.session import MmtSession


def bench_demo(seconds: float = DEFAULT_DURATION_S, sections: int = 10) -> dict[str, Any]:
    """One real-time run of ``seconds`` simulated seconds (default: the whole scripted session, so that
    its last second of contact is the session's steady one) at N = ``sections``; returns the figures."""
    probe = machine_jitter()
    with MmtSession(MmtConfig(sections=sections), slave="process") as session:
        stats = session.run(scripted_operator(), seconds, realtime=True)
        metrics = session.metrics()
    slave: dict[str, Any] = stats.pop("slave")  # type: ignore[assignment]
    return {
        "seconds": seconds,
        "sections": sections,
        "master": {
            "real_time_factor": stats["real_time_factor"],
            "tick_p50_ms": stats["step_p50_ms"],
            "tick_p99_ms": stats["step_p99_ms"],
            "late_ticks": stats["overruns"],
            "ticks": stats["physics_steps"],
            "haptic_faults_latched": metrics["haptic_faults_latched"],
            "haptic_recoveries": metrics["haptic_recoveries"],
        },
        "slave": {
            "real_time_factor": slave.get("real_time_factor"),
            "tick_p50_ms": slave.get("step_p50_ms"),
            "tick_p99_ms": slave.get("step_p99_ms"),
            "late_ticks": slave.get("overruns"),
            "ticks": slave.get("physics_steps"),
        },
        "contact_force_error_max_n": metrics["force_error_contact_max_n"],
        "machine_probe": probe,
        "haptic_params": {"peak_force_n": HapticParams().peak_force},
    }


def format_demo(result: dict[str, Any]) -> str:
    """The figures as a short table."""
    p = result["machine_probe"]

    def row(name: str, r: dict[str, Any]) -> str:
        return (
            f"{name:<15}{r['real_time_factor']:5.2f}  {r['tick_p50_ms']:7.3f} ms {r['tick_p99_ms']:7.3f} ms"
            f"   {r['late_ticks']}/{r['ticks']}"
        )

    return "\n".join(
        [
            f"demo bench: {result['seconds']:g} s in real time, slave at N = {result['sections']}",
            "               RTF    tick p50   tick p99   late ticks",
            row("master (1 kHz)", result["master"]),
            row("slave (process)", result["slave"]),
            f"machine probe, constant 0.5 ms of work: p50 {p['p50_ms']:.3f} ms, p99 {p['p99_ms']:.3f} ms",
            f"contact, last second: |F_operator - F_robot| max {result['contact_force_error_max_n']:.3f} N; "
            f"haptic faults latched {result['master']['haptic_faults_latched']}",
        ]
    )
