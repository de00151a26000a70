"""``pccbullet bench --demo``: the teleoperation demo in real time, the slave in its own process.

Runs the scripted operator session (:func:`pccbullet.teleop.demo.script.scripted_operator`) paced to the wall
clock, the master's 1 kHz loop in this process and the dynamic slave in another
(:mod:`pccbullet.teleop.slave_process`), and reports both loops' real-time factors, the master tick's p50/p99
and late ticks, with the machine's own constant-work probe (:func:`pccbullet.sim.bench.machine_jitter`)
measured just before, so that a figure can be read against how fast the machine was at the time. With a
web view (``--view web``) the session is shown on it as the demo shows it (:mod:`pccbullet.teleop.demo.web`)
once a page has opened it, and the figures add the view's: frames dropped, sent to the page, the page's rate.

``flood=N`` (``--flood N``): the operator's device is a process of its own that plays the same script over
the UDP bridge with its HMAC key, and at :data:`FLOOD_AT_S` of the session (the palpation arm moving over
the rock) a flooder process sends ``N`` junk datagrams to the bridge's port
(:mod:`pccbullet.teleop.demo.flood`; ``N = 0``: the same run without a flood). The master ticks and the
device's poses during the flood are reported beside the whole run's, with the probe before and after the
run.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import TYPE_CHECKING, Any

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bench import machine_jitter
from pccbullet.teleop.demo.flood import (
    AFTER_S,
    SchedLog,
    TickRecorder,
    flood,
    flood_figures,
    fresh_key,
    udp_operator,
)
from pccbullet.teleop.demo.scene import ROBOT, demo_config
from pccbullet.teleop.demo.script import SESSION_S, scripted_operator
from pccbullet.teleop.haptics import HapticParams
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.urdf_gen.spec_loader import load_robot

if TYPE_CHECKING:
    from pccbullet.sim.views.web.view import WebView

PAGE_WAIT_S = 300.0  # s, longest wait for a page to open the web view before the timed run
FLOOD_AT_S = 10.0  # s of the session when the flood starts: the palpation arm moves over the rock
RESULT_WAIT_S = 120.0  # s, longest wait for the device's and the flooder's records after the run
START_S = 120.0  # s, longest wait for the device's process to import what it needs


def bench_demo(
    seconds: float = SESSION_S,
    sections: int = 10,
    flood_n: int | None = None,
    flood_at: float = FLOOD_AT_S,
    priority: bool = True,
    view: WebView | None = None,
) -> dict[str, Any]:
    """One real-time run of ``seconds`` simulated seconds (default: the whole scripted session, so that
    its last second of contact is the session's steady one) at N = ``sections``; returns the figures.
    ``flood_n``: the operator over UDP and that many junk datagrams at ``flood_at`` s of the session
    (module docstring); ``None``: the scripted operator in this process. ``priority``: the master's and
    the robot's loops ask for real-time scheduling (:mod:`pccbullet.teleop.realtime`); ``False``: the
    normal priority any user has. ``view``: show the session on this web view (its page opened first; not
    with a flood); it is closed at the end."""
    if view is not None and flood_n is not None:
        raise ConfigurationError("a flood run with a web view is invalid; allowed: one of the two")
    extra: dict[str, Any] = {}
    web: dict[str, Any] = {}
    spec = load_robot(ROBOT, sections=sections)  # the demo's robot and scene
    cfg = demo_config("acoustic", "mixed")
    with MmtSession(spec, cfg, slave="process", record_poses=view is not None) as session:
        options: dict[str, Any] = {}
        if view is not None:
            from pccbullet.sim.views.scene import world_bodies
            from pccbullet.teleop.demo.frames import viewer_frames
            from pccbullet.teleop.demo.web import DemoWebView

            shown = DemoWebView(view, session)
            shown.load(world_bodies(session.world))
            web["page_opened"] = view.wait_ready(PAGE_WAIT_S) and view.wait_page(PAGE_WAIT_S)
            options = {"on_visual": viewer_frames(session, shown), "spin_window": shown.spin_window}
        probe = machine_jitter()
        try:
            if flood_n is None:
                stats = session.run(scripted_operator(), seconds, realtime=True, priority=priority, **options)
            else:
                stats, extra = _run_flooded(session, seconds, flood_n, flood_at, priority)
        finally:
            if view is not None:
                web.update(view.close())
        metrics = session.metrics()
        robot = session.robot_report()
        objects = session.tendon_report()["objects"]
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
            "realtime_priority": stats["realtime_priority"],
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
        "robot_losses": len(robot["losses"]),  # type: ignore[arg-type]
        "contact_force_error_max_n": metrics["force_error_contact_max_n"],
        "slave_force_max_n": metrics["slave_force_max_n"],
        "objects": objects,
        "machine_probe": probe,
        "haptic_params": {"peak_force_n": HapticParams().peak_force},
        **extra,
        **({"web_view": web} if view is not None else {}),
    }


def _run_flooded(
    session: MmtSession, seconds: float, junk: int, flood_at: float, priority: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The session with the operator over UDP and the flood; (the loop's statistics, the flood's figures)."""
    from pccbullet.teleop.udp.bridge import UdpBridge

    key = fresh_key()
    bridge = UdpBridge(key=key)
    ctx = mp.get_context("spawn")
    out: Any = ctx.Queue()
    go, ready, begin, stop = ctx.Event(), ctx.Event(), ctx.Event(), ctx.Event()
    limbs = [limb.name for limb in session.spec.limbs]
    device = ctx.Process(
        target=udp_operator, args=(bridge.address, key, limbs, (ready, begin, stop), out), daemon=True
    )
    flooder = ctx.Process(target=flood, args=(bridge.address, junk, go, out), daemon=True)
    ticks = TickRecorder(session, lambda: bridge.accepted, int(round(seconds / session.world.dt)))
    sched = SchedLog({})

    def on_visual(frame: int, t: float) -> None:
        sched.sample()  # 50 Hz: how long each process waited for a core
        if frame == 0:  # the device shakes hands now, its poses read from the first ticks on
            begin.set()
        if t >= flood_at and not go.is_set():
            go.set()

    try:
        device.start()
        flooder.start()
        if not ready.wait(START_S):
            raise ConfigurationError(f"the UDP device process did not start within {START_S:g} s")
        robot_pid = getattr(session.slave, "pid", None)
        pids = {"master": "self", "robot": robot_pid, "device": device.pid, "flooder": flooder.pid}
        sched.pids = {name: pid for name, pid in pids.items() if pid is not None}
        stats = session.run(bridge, seconds, realtime=True, on_visual=on_visual, priority=priority)
        go.set()  # a run shorter than flood_at floods after it: the window then holds no tick
        stop.set()
        results = [out.get(timeout=RESULT_WAIT_S), out.get(timeout=RESULT_WAIT_S)]
    finally:
        begin.set()
        stop.set()
        go.set()
        for p in (device, flooder):
            if p.pid is not None:  # started
                p.join(timeout=10.0)
                if p.is_alive():
                    p.kill()
        bridge.close()
    window, sent = sorted(results, key=lambda r: isinstance(r, list))
    figures = flood_figures(ticks, window, sent, session.world.dt)
    figures.update(
        limb_selected=session.mapping.limb,
        waiting_for_a_core=sched.waited(window[0], window[1] + AFTER_S),
        datagrams=junk,
        flood_s=window[1] - window[0],
        dropped=dict(bridge.dropped),
        polls_cut=bridge.polls_cut,
    )
    return stats, {"flood": figures, "machine_probe_after": machine_jitter()}


def format_demo(result: dict[str, Any]) -> str:
    """The figures as a short table."""
    p = result["machine_probe"]

    def row(name: str, r: dict[str, Any]) -> str:
        return (
            f"{name:<15}{r['real_time_factor']:5.2f}  {r['tick_p50_ms']:7.3f} ms {r['tick_p99_ms']:7.3f} ms"
            f"   {r['late_ticks']}/{r['ticks']}"
        )

    lines = [
        f"demo bench: {result['seconds']:g} s in real time, slave at N = {result['sections']}",
        "               RTF    tick p50   tick p99   late ticks",
        row("master (1 kHz)", result["master"])
        + ("   (real-time priority)" if result["master"]["realtime_priority"] else "   (normal priority)"),
        row("slave (process)", result["slave"]),
        f"machine probe, constant 0.5 ms of work: p50 {p['p50_ms']:.3f} ms, p99 {p['p99_ms']:.3f} ms",
        f"contact, last second: |F_operator - F_robot| max {result['contact_force_error_max_n']:.3f} N; "
        f"haptic faults latched {result['master']['haptic_faults_latched']}; "
        f"robot losses {result['robot_losses']}",
    ]
    for name, o in result.get("objects", {}).items():
        held = "held" if o["held"] else "not held"
        lines.append(f"{name}: lifted {100 * o['lifted_height_m']:.1f} cm, {held} at the end")
    lines += _web_line(result.get("web_view"))
    if "flood" in result:
        f, q = result["flood"], result["machine_probe_after"]
        waited = f["waiting_for_a_core"]
        share = "n/a" if f["accepted_share"] is None else f"{100 * f['accepted_share']:.1f} %"
        tick = f["tick"]
        lines += [
            f"flood: {f['datagrams']} junk datagrams to the UDP bridge in {f['flood_s']:.3f} s",
            f"  master tick during it ({f['ticks']} ticks): "
            + (
                "none"
                if tick["p50_ms"] is None
                else f"p50 {tick['p50_ms']:.3f} ms, p99 {tick['p99_ms']:.3f} ms, max {tick['max_ms']:.3f} ms"
            )
            + f"; late ticks {f['late_ticks']}",
            f"  device poses accepted during it: {f['poses_accepted']} of {f['poses_sent']} ({share}); "
            f"whole run {f['run_poses_accepted']} of {f['run_poses_sent']}",
            f"  bridge drops: {f['dropped']}",
            "  share of it waiting for a core: "
            + ", ".join(f"{name} {'n/a' if w is None else f'{100 * w:.0f} %'}" for name, w in waited.items()),
            f"machine probe after the run: p50 {q['p50_ms']:.3f} ms, p99 {q['p99_ms']:.3f} ms",
        ]
    return "\n".join(lines)


def _web_line(web: dict[str, Any] | None) -> list[str]:
    if web is None:
        return []
    page = web.get("page") or {}
    return [
        f"web view: {web.get('published', 0)} frames published, {web.get('dropped', 0)} dropped, "
        f"{web.get('sent', 0)} sent to {web.get('pages', 0)} page(s), {web.get('skipped', 0)} skipped by it; "
        f"page drew {page.get('mean_fps', float('nan')):.1f} frames/s"
    ]
