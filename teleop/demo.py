"""The URSULA squid demo: model-mediated teleoperation of four soft limbs, 1 kHz physics, 50 Hz visuals.

The master replica (:class:`~teleop.mmt.MmtSession`) runs at 1 kHz; a simulated slave sits behind a 1500 m
acoustic link (about 1 s one way). With a display (and without ``headless``) the physics stays in DIRECT and a
PyBullet GUI runs in its own process (:mod:`sim.viewer`): it mirrors the limbs, seabed and rock, shows the
keyboard help overlay and forwards the keys; the loop is paced to absolute deadlines. Without one it plays a
scripted operator session (camera looks down, the light follows it, the grasper reaches beside the rock on the
seabed, the palpation arm touches it) as fast as possible and writes, into ``out_dir``: ``demo.gif`` (external
view; the loop records the scene's pose for each frame and the frames are rendered after the run, as a
software-rendered frame takes ~10 ms, ten ticks), ``camera_tip.png`` (view from the camera arm's tip, lit
from the spotlight), ``tips.png`` (tip trajectories), ``metrics.png`` (forces and master/slave tips) and
``summary.json`` (loop statistics, teleoperation metrics, final tip positions). ``device`` picks another
operator input (``--device`` on the command line): the terminal keyboard, a haptic device or the UDP
bridge, in real time.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np

from sim.bullet import pb
from sim.loop import VISUAL_RATE, compute_n_steps
from sim.world import PHYSICS_DT, Robot
from teleop.devices import DEMO_DEVICES, InputDevice, ScriptedDevice, open_device
from teleop.mapping import camera_view_matrix, spotlight_direction
from teleop.mmt import MmtConfig, MmtSession
from urdf_gen.errors import ConfigurationError

GIF_EVERY = 5  # visual frames per GIF frame (10 fps)
IMAGE_SIZE = (320, 240)  # px
VIEWER_START_S = 60.0  # s, longest wait for the GUI viewer to show the scene


REST_TIPS = {"grasper": (0.725, -0.06, -0.06), "palpation": (0.725, 0.06, -0.06)}  # m, straight arms


def scripted_operator() -> ScriptedDevice:
    """The headless operator: keys bend the camera (light follows), then the stylus drives the grasper
    beside the rock and the palpation arm onto it, pressing about 2 mm into the modelled surface."""
    return ScriptedDevice(
        waypoints=[  # gaps with no position around each selection change: no stray target
            (0.0, None),
            (0.81, REST_TIPS["grasper"]),
            (1.8, (0.40, -0.07, -0.50)),
            (1.8, None),
            (1.82, REST_TIPS["palpation"]),
            (2.8, (0.47, 0.02, -0.44)),
            (3.3, (0.47, 0.02, -0.487)),
        ],
        holds=[(0.0, 0.8, "bend+")],
        presses=[
            (0.0, "select:camera"),
            (0.0, "follow"),
            (0.805, "select:grasper"),
            (1.81, "select:palpation"),
        ],
    )


ScenePose = tuple[dict[str, np.ndarray], tuple[tuple[float, ...], tuple[float, ...]]]
"""What the master world shows: every limb's joint vector and the rock's position and quaternion."""


def scene_pose(session: MmtSession) -> ScenePose:
    """The master world's pose now (joints read back exactly as PyBullet holds them)."""
    robot = session.robot
    rock = pb.getBasePositionAndOrientation(session.rock, physicsClientId=session.world.client)
    return {name: robot.joints(name) for name in robot.bodies}, (tuple(rock[0]), tuple(rock[1]))


def show_scene(session: MmtSession, pose: ScenePose) -> None:
    """Put the master world back into ``pose`` (joints reset, rock moved)."""
    joints, (position, orientation) = pose
    for name, q in joints.items():
        session.robot.set_joints(name, q)
    pb.resetBasePositionAndOrientation(
        session.rock, position, orientation, physicsClientId=session.world.client
    )
    session.world.mark_moved()


def _render(client: int, view: list[float], proj: list[float], light: np.ndarray | None = None) -> np.ndarray:
    """RGB image ``(h, w, 3) uint8`` for PyBullet view and projection matrices (16 floats each)."""
    w, h = IMAGE_SIZE
    extra = {} if light is None else {"lightDirection": light.tolist()}
    _, _, rgba, _, _ = pb.getCameraImage(
        w,
        h,
        viewMatrix=view,
        projectionMatrix=proj,
        renderer=pb.ER_TINY_RENDERER,
        physicsClientId=client,
        **extra,
    )
    return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]


def run_demo(
    out_dir: Path,
    *,
    headless: bool = False,
    duration: float = 6.0,
    device: str = "auto",
    udp_port: int = 0,
    udp_key_file: Path | None = None,
) -> dict[str, object]:
    """Run the demo; GUI when a display exists and ``headless`` is false. Returns the summary.

    Args:
        device: the operator's input, one of :data:`DEMO_DEVICES`. ``"auto"``: the GUI window's
            keyboard with a display, the scripted operator without. ``"keyboard"`` needs the GUI.
            Any device other than ``"scripted"`` runs the loop in real time; headless runs with a
            human device still write the GIF, plots and summary.
        udp_port: the UDP bridge's port on 127.0.0.1 (``device="udp"``); 0 for any free one (logged).
        udp_key_file: the bridge's HMAC key file; ``None``: the default one if it exists
            (:func:`teleop.udp_bridge.resolve_key`), else no HMAC (logged).
    """
    if device not in DEMO_DEVICES:
        raise ConfigurationError(f"device = {device!r} is invalid; allowed: {', '.join(DEMO_DEVICES)}")
    gui = not headless and bool(os.environ.get("DISPLAY"))
    if device == "keyboard" and not gui:
        raise ConfigurationError(
            "device = 'keyboard' reads the GUI window's keys and needs a display; "
            "use --device terminal without one"
        )
    if device == "auto":
        device = "keyboard" if gui else "scripted"
    n_sub = compute_n_steps(VISUAL_RATE, PHYSICS_DT)
    # Physics stays in DIRECT; with a display the GUI runs in its own process (sim.viewer).
    with MmtSession(MmtConfig(), gui=False) as session:
        robot, client = session.robot, session.world.client
        limbs = [limb.name for limb in robot.spec.limbs]
        if gui:
            return _run_gui(session, duration, n_sub, device, udp_port, udp_key_file)
        operator = (
            scripted_operator() if device == "scripted" else _open(device, limbs, udp_port, udp_key_file)
        )
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        proj = pb.computeProjectionMatrixFOV(60, IMAGE_SIZE[0] / IMAGE_SIZE[1], 0.01, 5.0)
        view = pb.computeViewMatrix([1.3, -1.3, 0.5], [0.5, 0.0, -0.3], [0, 0, 1])
        poses: list[ScenePose] = []
        tips: dict[str, list[list[float]]] = {limb.name: [] for limb in robot.spec.limbs}
        times: list[float] = []

        def on_visual(k: int, t: float) -> None:
            times.append(t)
            for name in tips:
                tips[name].append(robot.tip_pose(name)[:3, 3].tolist())
            if k % GIF_EVERY == 0:  # rendered after the run: a frame takes ~10 ms, ten 1 kHz ticks
                poses.append(scene_pose(session))

        try:
            stats = session.run(
                operator, duration, realtime=device != "scripted", on_visual=on_visual, visual_every=n_sub
            )
        finally:
            operator.close()
        metrics = session.metrics()
        final = scene_pose(session)
        frames = []
        for pose in poses:
            show_scene(session, pose)
            frames.append(_render(client, view, proj))
        show_scene(session, final)
        files = _write_outputs(out_dir, robot, frames, np.array(times), tips, proj)
        files.append(_plot_metrics(out_dir, session))
    summary: dict[str, object] = {
        "mode": "headless",
        "device": device,
        **_device_stats(operator),
        "loop": stats,
        "gif_frames": len(frames),
        "metrics": metrics,
        "final_tip_positions_m": {k: v[-1] for k, v in tips.items()},
        "files": files,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    logging.getLogger(__name__).info(
        "loop: %d steps, %.0f Hz physics, %.1f Hz visuals, %d overruns",
        stats["physics_steps"],
        stats["physics_rate_hz"],
        stats["visual_rate_hz"],
        stats["overruns"],
    )
    return summary


def _open(device: str, limbs: list[str], udp_port: int, udp_key_file: Path | None = None) -> InputDevice:
    """A named device for the demo (keyboard devices get the limb selection keys)."""
    if device == "terminal":
        return open_device(device, limbs=limbs)
    if device != "udp":
        return open_device(device)
    from teleop.udp_bridge import open_bridge

    return open_bridge(udp_port, udp_key_file)


def _run_gui(
    session: MmtSession,
    duration: float,
    n_sub: int,
    device_name: str,
    udp_port: int,
    udp_key_file: Path | None = None,
) -> dict[str, object]:
    from sim.viewer import ViewerProcess, ViewerShape
    from teleop.devices.keyboard import HELP_LINES, KeyboardDevice

    robot, cfg = session.robot, session.cfg
    shapes = (
        ViewerShape("seabed", "plane", (0.0, 0.0, cfg.seabed_z), rgba=(0.76, 0.7, 0.5, 1.0)),
        ViewerShape("rock", "sphere", tuple(session.rock_model), cfg.rock_radius, (0.45, 0.45, 0.5, 1.0)),
    )
    limbs = [limb.name for limb in robot.spec.limbs]
    # open a hardware device before the viewer starts, so that a missing SDK leaves no viewer behind
    device: InputDevice | None = None
    if device_name == "scripted":
        device = scripted_operator()
    elif device_name != "keyboard":
        device = _open(device_name, limbs, udp_port, udp_key_file)
    viewer = ViewerProcess(robot, gui=True, shapes=shapes, help_lines=tuple(HELP_LINES))
    if not viewer.wait_ready(VIEWER_START_S):  # the operator sees the scene before the loop starts
        logging.getLogger(__name__).warning(
            "the viewer is not ready after %g s; starting without it", VIEWER_START_S
        )
    if device is None:  # the keyboard reads the viewer window's keys
        device = KeyboardDevice(session.world.client, limbs, viewer.keyboard_events)

    def on_visual(k: int, t: float) -> None:
        viewer.publish({"rock": np.asarray(session.rock_model).tolist()})

    try:
        # the loop sleeps through its waits: spinning them left the viewer process (nice +10) too little
        # CPU on 2 cores, 202-223 of 300 frames dropped (0-24 sleeping) for 599-642 late ticks (398-1271)
        stats = session.run(
            device, duration, realtime=True, on_visual=on_visual, visual_every=n_sub, spin_window=0.0
        )
    finally:
        device.close()
        viewer_report = viewer.close()
    stats["viewer_frames_dropped"] = viewer.dropped
    if "error" in viewer_report:
        stats["viewer_error"] = viewer_report["error"]
    return {
        "mode": "gui",
        "device": device_name,
        **_device_stats(device),
        "loop": stats,
        "metrics": session.metrics(),
    }


def _device_stats(device: InputDevice) -> dict[str, object]:
    """What the UDP bridge accepted and dropped (by reason); nothing for other devices."""
    if hasattr(device, "accepted") and hasattr(device, "dropped"):
        return {"udp": {"accepted": device.accepted, "dropped": dict(device.dropped)}}
    return {}


def _plot_metrics(out_dir: Path, session: MmtSession) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lg = {k: np.asarray(v) for k, v in session.log.items()}
    fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    axes[0].plot(lg["t"], np.linalg.norm(lg["f_m"], axis=1), label="operator (master model)")
    axes[0].plot(lg["t"], np.linalg.norm(lg["f_s"], axis=1), label="slave force sensor")
    axes[0].set_ylabel("|force| (N)")
    for i, c in enumerate("xyz"):
        axes[1].plot(lg["t"], lg["tip_m"][:, i], label=f"master {c}")
        axes[1].plot(lg["t"], lg["tip_s"][:, i], "--", label=f"slave {c}")
    axes[1].set_ylabel("palpation tip (m)")
    axes[1].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    fig.suptitle("Model-mediated teleoperation over a 1 s acoustic link")
    fig.tight_layout()
    path = out_dir / "metrics.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


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
    light = spotlight_direction(robot.link_pose("spotlight_frame"))
    iio.imwrite(cam, _render(robot.world.client, camera_view_matrix(robot.tip_pose("camera")), proj, light))
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
