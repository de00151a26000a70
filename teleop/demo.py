"""The URSULA squid demo: four soft limbs posed from PCC, 1 kHz physics, 50 Hz visuals.

With a display (and without ``headless``) it opens the PyBullet GUI and plays a scripted operator
session in real time, paced to absolute deadlines. Without one it runs the same session as fast as
possible and writes, into ``out_dir``: ``demo.gif`` (external view), ``camera_tip.png`` (view from
the camera arm's tip), ``tips.png`` (tip trajectories), ``summary.json`` (loop statistics, final tip
positions).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sim.bullet import pb
from sim.world import PHYSICS_DT, Robot, World
from urdf_gen.errors import ConfigurationError
from urdf_gen.pcc import PccConfig

VISUAL_RATE = 50.0  # Hz
GIF_EVERY = 5  # visual frames per GIF frame (10 fps)
IMAGE_SIZE = (320, 240)  # px


def visual_substeps(dt: float = PHYSICS_DT, rate: float = VISUAL_RATE) -> int:
    """Physics steps per visual frame; raises if ``1 / rate`` is not a whole number of steps."""
    n = round(1.0 / rate / dt)
    if n < 1 or abs(n * dt * rate - 1.0) > 1e-9:
        raise ConfigurationError(f"visual rate {rate:g} Hz does not divide the physics rate {1 / dt:g} Hz")
    return n


def _smooth(t: float, t0: float, t1: float) -> float:
    """0 before t0, 1 after t1, a cosine ramp in between."""
    if t <= t0:
        return 0.0
    if t >= t1:
        return 1.0
    return 0.5 - 0.5 * math.cos(math.pi * (t - t0) / (t1 - t0))


def scripted_session(t: float) -> dict[str, list[PccConfig]]:
    """The operator script: grasper reaches down and curls, palpation presses, tentacles look at it."""
    a = _smooth(t, 0.5, 2.5)
    b = _smooth(t, 2.5, 4.5)
    c = _smooth(t, 1.0, 3.0)
    return {
        "grasper": [
            PccConfig(math.radians(40) * a, math.radians(20), 0.300 - 0.008 * b),
            PccConfig(math.radians(120) * b, math.radians(10), 0.300 - 0.008 * b),
        ],
        "palpation": [
            PccConfig(math.radians(50) * a, math.radians(-20), 0.300),
            PccConfig(math.radians(-30) * a + math.radians(40) * b, math.radians(15), 0.300 - 0.009 * b),
        ],
        "camera": [PccConfig(math.radians(70) * c, math.radians(15), 0.600 - 0.015 * c)],
        "light": [PccConfig(math.radians(70) * c, math.radians(-15), 0.600 - 0.015 * c)],
    }


SEABED_Z = -0.75  # m, seabed below the head centre
ROCK = ((0.55, 0.0, SEABED_Z + 0.06), 0.08)  # m, centre and radius of the object on the seabed


def add_seabed(client: int) -> None:
    """A sand-coloured seabed plane and a rock for the arms to reach."""
    plane = pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=client)
    vis = pb.createVisualShape(
        pb.GEOM_BOX, halfExtents=[2, 2, 0.001], rgbaColor=[0.76, 0.7, 0.5, 1], physicsClientId=client
    )
    pb.createMultiBody(0, plane, vis, [0, 0, SEABED_Z], physicsClientId=client)
    centre, radius = ROCK
    col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=radius, physicsClientId=client)
    vis = pb.createVisualShape(
        pb.GEOM_SPHERE, radius=radius, rgbaColor=[0.45, 0.45, 0.5, 1], physicsClientId=client
    )
    pb.createMultiBody(0, col, vis, centre, physicsClientId=client)


def _render(client: int, view: np.ndarray, proj: list[float]) -> np.ndarray:
    w, h = IMAGE_SIZE
    _, _, rgba, _, _ = pb.getCameraImage(
        w,
        h,
        viewMatrix=view.T.reshape(-1).tolist(),
        projectionMatrix=proj,
        renderer=pb.ER_TINY_RENDERER,
        physicsClientId=client,
    )
    return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]


def _tip_view(robot: Robot, limb: str) -> np.ndarray:
    """OpenGL view matrix ``(4, 4)`` looking along the limb tip's z axis."""
    T = robot.tip_pose(limb)
    eye = T[:3, 3]
    return np.asarray(pb.computeViewMatrix(eye, eye + T[:3, 2], -T[:3, 0])).reshape(4, 4).T


def run_session(
    robot: Robot, duration: float, *, realtime: bool, on_visual: Callable[[int, float], None] | None = None
) -> dict[str, float]:
    """Step the scripted session; returns loop statistics."""
    world = robot.world
    n_sub = visual_substeps(world.dt)
    steps = int(round(duration / world.dt))
    step_times = np.empty(steps)
    overruns = 0
    start = time.perf_counter()
    for i in range(steps):
        t0 = time.perf_counter()
        if i % n_sub == 0:
            for limb, configs in scripted_session(world.time).items():
                robot.set_pcc(limb, configs)
            if on_visual is not None:
                on_visual(i // n_sub, world.time)
        world.step()
        step_times[i] = time.perf_counter() - t0
        if realtime:
            deadline = start + (i + 1) * world.dt
            slack = deadline - time.perf_counter()
            if slack > 0:
                time.sleep(slack)
            elif slack < -world.dt:
                overruns += 1
    wall = time.perf_counter() - start
    return {
        "physics_steps": steps,
        "wall_time_s": wall,
        "physics_rate_hz": steps / wall,
        "visual_rate_hz": (steps // n_sub) / wall,
        "real_time_factor": steps * world.dt / wall,
        "step_time_p50_ms": float(np.percentile(step_times, 50) * 1e3),
        "step_time_p99_ms": float(np.percentile(step_times, 99) * 1e3),
        "overruns": overruns,
    }


def run_demo(out_dir: Path, *, headless: bool = False, duration: float = 6.0) -> dict[str, object]:
    """Run the demo; GUI when a display exists and ``headless`` is false. Returns the summary."""
    gui = not headless and bool(os.environ.get("DISPLAY"))
    with World(gui=gui, mode="kinematic") as world:
        robot = world.load_robot("ursula")
        add_seabed(world.client)
        if gui:
            pb.resetDebugVisualizerCamera(1.6, 50, -25, [0.55, 0.0, -0.2], physicsClientId=world.client)
            stats = run_session(robot, duration, realtime=True)
            return {"mode": "gui", "loop": stats}
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        proj = pb.computeProjectionMatrixFOV(60, IMAGE_SIZE[0] / IMAGE_SIZE[1], 0.01, 5.0)
        view = np.asarray(pb.computeViewMatrix([1.3, -1.3, 0.5], [0.5, 0.0, -0.2], [0, 0, 1])).reshape(4, 4).T
        frames: list[np.ndarray] = []
        tips: dict[str, list[list[float]]] = {limb.name: [] for limb in robot.spec.limbs}
        times: list[float] = []

        def on_visual(k: int, t: float) -> None:
            times.append(t)
            for name in tips:
                tips[name].append(robot.tip_pose(name)[:3, 3].tolist())
            if k % GIF_EVERY == 0:
                frames.append(_render(world.client, view, proj))

        stats = run_session(robot, duration, realtime=False, on_visual=on_visual)
        files = _write_outputs(out_dir, robot, frames, np.array(times), tips, proj)
    summary: dict[str, object] = {
        "mode": "headless",
        "loop": stats,
        "gif_frames": len(frames),
        "final_tip_positions_m": {k: v[-1] for k, v in tips.items()},
        "files": files,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _write_outputs(
    out_dir: Path,
    robot: Robot,
    frames: list[np.ndarray],
    times: np.ndarray,
    tips: dict[str, list[list[float]]],
    proj: list[float],
) -> list[str]:
    import imageio.v3 as iio
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gif = out_dir / "demo.gif"
    iio.imwrite(gif, np.stack(frames), duration=1000 * GIF_EVERY / VISUAL_RATE, loop=0)
    cam = out_dir / "camera_tip.png"
    iio.imwrite(cam, _render(robot.world.client, _tip_view(robot, "camera"), proj))
    fig, axes = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
    for name, xyz in tips.items():
        arr = np.asarray(xyz)
        for i, ax in enumerate(axes):
            ax.plot(times, arr[:, i], label=name)
    for ax, label in zip(axes, "xyz", strict=True):
        ax.set_ylabel(f"tip {label} (m)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(ncol=4, fontsize=8)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("URSULA limb tips (world frame)")
    fig.tight_layout()
    plot = out_dir / "tips.png"
    fig.savefig(plot, dpi=100)
    plt.close(fig)
    return [str(gif), str(cam), str(plot), str(out_dir / "summary.json")]
