"""``pccbullet bench``: physics steps per second, real-time factor and p99 step time per robot, mode and N.

Kinematic mode: every tick writes a fresh PCC configuration to every limb (a slow sweep) and refreshes
contacts. Dynamic mode: every tick moves the spring targets of every limb and PyBullet integrates the
compliant chains (in the chosen medium, as RRP or rod chains). Batch mode (as fast as possible), after a
50-step warm-up.
``--peer mujoco`` runs the robot's MJCF export (:mod:`pccbullet.sim.mjcf`: the same sprung, damped chain
in the same medium, the chords' shear as slides, contacts as PyBullet's, no tendons since the PyBullet rows
have none) at the same dt, right after each dynamic row, its spring targets moved every tick by the same
sweep: steps per second, real-time factor and p99 step time for a ratio.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.loop import Loop
from pccbullet.sim.world import StepTiming, World, WorldMode
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.topology import Topology

log = logging.getLogger(__name__)

WARMUP_STEPS = 50


def _sweep(robot: Any, mode: str | None = None) -> tuple[Any, Any]:
    """Callbacks moving every limb slowly through bends and planes: ``(on_tick, on_visual)``.

    Dynamic mode moves the spring targets every tick; a tendon-driven robot gets its goal once per
    visual frame (a command stream's rate, 50 Hz), its tendon controller runs every tick. Kinematic mode
    computes the PCC input every tick and writes the joints once per visual frame (PCC is the truth; the
    chain is what is shown and collided, at 50 Hz). ``mode``: ``"target"``, ``"goal"`` or ``"reset"``
    (default: ``"goal"`` for a tendon-driven robot, ``"target"`` for one with compliant limbs).
    """
    limbs = [(limb.name, limb.segments) for limb in robot.spec.limbs]
    if mode is None:
        tendons = any(c.drive is Drive.TENDONS for c in robot.compliant.values())
        mode = "goal" if tendons else "target" if robot.compliant else "reset"

    latest: dict[str, list[PccConfig]] = {}

    def on_tick(t: float) -> None:
        for i, (name, segments) in enumerate(limbs):
            latest[name] = [
                PccConfig(0.5 * seg.bend_max * math.sin(0.5 * t + i), 0.3 * math.sin(0.2 * t + k), seg.length)
                for k, seg in enumerate(segments)
            ]
            if mode == "target":
                robot.set_pcc(name, latest[name], mode=mode)

    def on_visual(t: float) -> None:
        if mode in ("reset", "goal"):
            for name, configs in latest.items():
                robot.set_pcc(name, configs, mode="target" if mode == "goal" else mode)

    return on_tick, on_visual


def bench_world(
    robot: str,
    mode: str,
    sections: int,
    medium: str = "water",
    seconds: float = 1.0,
    chain: Topology | str = Topology.ROD,
    drive: Drive | str = Drive.JOINTS,
) -> dict[str, Any]:
    """One row of the table: run ``seconds`` of simulated time in batch mode and return the loop stats.
    ``chain`` and ``drive`` apply to the dynamic mode (kinematic worlds pose RRP chains)."""
    world_mode = WorldMode.of(mode)
    chain = Topology.of(chain) if world_mode.integrates else world_mode.default_chain
    drive = Drive.of(drive) if world_mode.integrates else Drive.JOINTS
    with World(mode=world_mode, medium=medium, chain=chain) as world:
        handle = world.load_robot(robot, sections=sections, drive=drive)
        joints = sum(handle.joint_count(limb.name) for limb in handle.spec.limbs)
        on_tick, on_visual = _sweep(handle)
        loop = Loop(world, on_tick=on_tick, on_visual=on_visual)
        loop.run(WARMUP_STEPS * world.dt)
        world.timing = StepTiming()
        stats = loop.run(seconds)
        timing = world.timing
    return {
        "robot": robot,
        "mode": mode,
        "chain": chain,
        "drive": drive,
        "sections": sections,
        "medium": medium,
        "joints": joints,
        **stats.as_dict(),
        # where a step goes, means: PyBullet's own step, the compliant joints' controller, the rest
        # (target updates by the caller and the loop itself)
        "pybullet_ms": timing.physics_s / timing.steps * 1e3,
        "controller_ms": timing.controller_s / timing.steps * 1e3,
        "other_ms": (stats.wall_time_s - timing.physics_s - timing.controller_s) / timing.steps * 1e3,
    }


def _busy(n: int) -> float:
    total = 0.0
    for i in range(n):
        total += i * 0.5
    return total


def machine_jitter(step_ms: float = 0.5, steps: int = 2000) -> dict[str, float]:
    """The machine's own step-time spread: a constant pure-Python busy loop of about ``step_ms``,
    timed per repetition like a loop step. No simulation step's p99 can beat this machine's.

    Returns ``{"step_ms", "p50_ms", "p99_ms", "p99_over_p50"}``.
    """
    if not (step_ms > 0 and steps >= 100):
        raise ValueError(
            f"step_ms = {step_ms!r}, steps = {steps!r} are invalid; allowed: step_ms > 0, steps >= 100"
        )
    clock = time.perf_counter
    n = 1000
    for _ in range(3):  # calibrate the busy loop to step_ms
        t0 = clock()
        _busy(n)
        n = max(1, int(n * step_ms * 1e-3 / max(clock() - t0, 1e-9)))
    times = np.empty(steps)
    for i in range(steps):
        t0 = clock()
        _busy(n)
        times[i] = clock() - t0
    p50, p99 = (float(np.percentile(times, q) * 1e3) for q in (50, 99))
    return {"step_ms": step_ms, "p50_ms": p50, "p99_ms": p99, "p99_over_p50": p99 / p50}


PEERS = ("mujoco",)


def check_peer(peer: str | None) -> None:
    """Raise :class:`~pccbullet.core.errors.PccBulletError` (one line) unless ``peer`` is ``None`` or a
    peer whose simulator imports here: checked before any benchmark runs."""
    from pccbullet.core.errors import ConfigurationError, PccBulletError

    if peer is None:
        return
    if peer not in PEERS:
        raise ConfigurationError(f"peer = {peer!r} is invalid; allowed: None, " + ", ".join(map(repr, PEERS)))
    try:
        import mujoco  # noqa: F401
    except ImportError as exc:
        raise PccBulletError(
            f"--peer mujoco needs MuJoCo, which does not import here ({exc}): pip install 'pccbullet[mujoco]'"
        ) from exc


def bench_mujoco(
    robot: str,
    sections: int,
    seconds: float = 1.0,
    dt: float = 1e-3,
    medium: str = "water",
    chain: Topology | str = Topology.ROD,
) -> dict[str, Any]:
    """Run ``robot``'s MJCF export (:class:`~pccbullet.sim.mjcf.peer.MujocoRobot`, no tendons) in MuJoCo at
    ``dt`` for ``seconds``, after the same warm-up, moving every limb's spring targets every tick as the
    dynamic rows do; steps per second, real-time factor and p99 step time of the whole robot."""
    check_peer("mujoco")
    from pccbullet.sim.mjcf.peer import MujocoRobot

    spec = load_robot(robot, sections=sections)
    with MujocoRobot(spec, chain=chain, medium=medium, dt=dt, tendons=False) as peer:
        on_tick, _ = _sweep(peer, mode="target")
        clock = time.perf_counter
        for k in range(WARMUP_STEPS):
            on_tick(k * dt)
            peer.step()
        steps = int(round(seconds / dt))
        times = np.empty(steps)
        start = clock()
        for k in range(steps):
            t0 = clock()
            on_tick((WARMUP_STEPS + k) * dt)
            peer.step()
            times[k] = clock() - t0
        wall = clock() - start
        nv = int(peer.model.nv)
        stable = bool(np.isfinite(peer.data.qpos).all())
    return {
        "robot": robot,
        "sections": sections,
        "chain": chain,
        "medium": medium,
        "dofs": nv,
        "stable": stable,
        "physics_rate_hz": steps / wall,
        "real_time_factor": steps * dt / wall,
        "step_p99_ms": float(np.percentile(times, 99) * 1e3),
    }


def run_bench(
    robots: Sequence[str] = ("ursula",),
    modes: Sequence[str] = ("kinematic", "dynamic"),
    sections: Sequence[int] = (5, 10, 20),
    *,
    medium: str = "water",
    seconds: float = 1.0,
    peer: str | None = None,
    models: bool = True,
    chain: Topology | str = Topology.ROD,
    drive: Drive | str = Drive.JOINTS,
) -> dict[str, Any]:
    """The whole benchmark as a dict: ``rows`` (PyBullet), ``peer`` rows, ``models`` (model step costs);
    ``chain``: the dynamic rows' chain, ``"rrp"`` or ``"rod"``; ``drive``: their actuation, ``"joints"``
    or ``"tendons"``. The peer is checked first
    (:func:`check_peer`): a missing simulator is reported before anything runs."""
    check_peer(peer)
    jobs = [(r, m, n) for r in robots for m in modes for n in sections]
    rows, peers = [], []
    for r, m, n in tqdm(jobs, desc="bench", unit="run", leave=False):
        rows.append(bench_world(r, m, n, medium, seconds, chain, drive))
        # right after its PyBullet row: the same machine load
        if peer == "mujoco" and WorldMode.of(m).integrates:
            peers.append(bench_mujoco(r, n, seconds, medium=medium, chain=chain))
        log.info(
            "bench %s %s N=%d: %.0f steps/s, %.2fx real time",
            r,
            m,
            n,
            rows[-1]["physics_rate_hz"],
            rows[-1]["real_time_factor"],
        )
    result: dict[str, Any] = {"rows": rows, "peer": peers, "models": {}, "machine": machine_jitter()}
    if models:
        from pccbullet.sim.models.bench_models import bench_newton_euler
        from pccbullet.sim.models.rolling_snake.model import bench_rolling_snake

        result["models"]["newton_euler_s_per_step"] = bench_newton_euler()
        result["models"]["rolling_snake_static_solve_s"] = bench_rolling_snake()
    return result


def format_table(result: dict[str, Any]) -> str:
    """Human-readable table of :func:`run_bench`'s result."""
    peer = {(p["robot"], p["sections"]): p for p in result.get("peer", [])}
    head = (
        f"{'robot':<10} {'mode':<10} {'chain':<5} {'drive':<7} {'N':>3} {'joints':>6} {'steps/s':>9}"
        f" {'RTF':>7} {'p99 ms':>7}"
        f" {'pb ms':>6} {'ctl ms':>6} {'oth ms':>6}"
    )
    lines = [head + ("  mujoco steps/s  mj p99  ratio" if peer else ""), "-" * len(head)]
    for r in result["rows"]:
        line = (
            f"{r['robot']:<10} {r['mode']:<10} {r.get('chain', 'rrp'):<5} {r.get('drive', 'joints'):<7}"
            f" {r['sections']:>3}"
            f" {r['joints']:>6} "
            f"{r['physics_rate_hz']:>9.0f} {r['real_time_factor']:>7.2f} {r['step_p99_ms']:>7.3f}"
            f" {r['pybullet_ms']:>6.3f} {r['controller_ms']:>6.3f} {r['other_ms']:>6.3f}"
        )
        p = peer.get((r["robot"], r["sections"]))
        if p is not None and WorldMode.of(r["mode"]).integrates:
            ratio = r["physics_rate_hz"] / p["physics_rate_hz"]
            line += f"  {p['physics_rate_hz']:>14.0f}  {p.get('step_p99_ms', math.nan):>6.3f}  {ratio:.2f}"
        lines.append(line)
    lines.append(
        "pb / ctl / oth ms: mean per step in PyBullet's step, in the compliant joints' controller, and"
        " elsewhere (target updates, loop)"
    )
    if peer:
        lines.append(
            "mujoco: the robot's MJCF export (pccbullet mjcf: the same sprung chain, medium, contacts; the"
            " chords' shear as slides; no tendons), targets moved every tick; ratio: PyBullet / MuJoCo"
        )
    machine = result.get("machine")
    if machine:
        lines.append(
            f"machine: a constant busy loop (calibrated to {machine['step_ms']:.2f} ms) timed the same way: "
            f"p50 {machine['p50_ms']:.3f} ms, p99 {machine['p99_ms']:.3f} ms "
            f"(p99 / p50 = {machine['p99_over_p50']:.2f}); a step's p99 cannot beat the machine's"
        )
    models = result.get("models", {})
    if "newton_euler_s_per_step" in models:
        ne = models["newton_euler_s_per_step"]
        costs = ", ".join(f"{k}: {v * 1e3:.3f} ms" for k, v in ne.items() if k.startswith("n="))
        lines.append(f"Newton-Euler model, 4 URSULA limbs, per 1 ms step: {costs}")
    if "rolling_snake_static_solve_s" in models:
        rs = models["rolling_snake_static_solve_s"]
        lines.append(
            f"seed 003 static solve (steel, ground, alpha 90 deg): median {rs['median_s'] * 1e3:.3f} ms"
        )
    return "\n".join(lines)
