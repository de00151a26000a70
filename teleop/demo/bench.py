"""``pccbullet bench --demo``: the teleoperation demo in real time, the slave in its own process.

Runs the scripted operator session (:func:`pccbullet.teleop.demo.run.scripted_operator`) paced to the wall
clock, the master's 1 kHz loop in this process and the dynamic slave in another
(:mod:`pccbullet.teleop.slave_process`), and reports both loops' real-time factors, the master tick's p50/p99
and late ticks, with the machine's own constant-work probe (:func:`pccbullet.sim.bench.machine_jitter`)
measured just before, so that a figure can be read against how fast the machine was at the time. With a
web view (``--view web``) the session is shown on it as the demo shows it (:mod:`pccbullet.teleop.demo.web`)
once a page has opened it, and the figures add the view's: frames dropped, sent to the page, the page's rate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pccbullet.sim.bench import machine_jitter
from pccbullet.teleop.demo.run import DEFAULT_DURATION_S, scripted_operator
from pccbullet.teleop.haptics import HapticParams
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.session import MmtSession

if TYPE_CHECKING:
    from pccbullet.sim.webview.view import WebView

PAGE_WAIT_S = 300.0  # s, longest wait for a page to open the web view before the timed run


def bench_demo(
    seconds: float = DEFAULT_DURATION_S, sections: int = 10, view: WebView | None = None
) -> dict[str, Any]:
    """One real-time run of ``seconds`` simulated seconds (default: the whole scripted session, so that
    its last second of contact is the session's steady one) at N = ``sections``; returns the figures.
    ``view``: show the session on this web view (its page opened first); it is closed at the end."""
    web: dict[str, Any] = {}
    with MmtSession(MmtConfig(sections=sections), slave="process", record_poses=view is not None) as session:
        options: dict[str, Any] = {}
        if view is not None:
            from pccbullet.teleop.demo.frames import viewer_frames
            from pccbullet.teleop.demo.web import DemoWebView

            shown = DemoWebView(view, session)
            shown.load(session.robot)
            web["page_opened"] = view.wait_ready(PAGE_WAIT_S) and view.wait_page(PAGE_WAIT_S)
            options = {"on_visual": viewer_frames(session, shown), "spin_window": shown.spin_window}
        probe = machine_jitter()
        try:
            stats = session.run(scripted_operator(), seconds, realtime=True, **options)
        finally:
            if view is not None:
                web.update(view.close())
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
        **({"web_view": web} if view is not None else {}),
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
            *_web_line(result.get("web_view")),
        ]
    )


def _web_line(web: dict[str, Any] | None) -> list[str]:
    if web is None:
        return []
    page = web.get("page") or {}
    return [
        f"web view: {web.get('published', 0)} frames published, {web.get('dropped', 0)} dropped, "
        f"{web.get('sent', 0)} sent to {web.get('pages', 0)} page(s), {web.get('skipped', 0)} skipped by it; "
        f"page drew {page.get('mean_fps', float('nan')):.1f} frames/s"
    ]
