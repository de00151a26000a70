"""The URSULA squid demo: model-mediated teleoperation of the soft squid, 1 kHz master, 50 Hz visuals.

The master (:class:`~pccbullet.teleop.mmt.session.MmtSession`) is a local model of the robot at 1 kHz; the
slave is the dynamic soft squid in seawater (:class:`~pccbullet.teleop.slave.Slave`) behind a 1500 m
acoustic link (about 1 s one way). Scripted (the headless default), everything runs in lockstep in simulated
time; with any other device the loop is paced to the wall clock and the slave runs in its own process
(:mod:`pccbullet.teleop.slave_process`). With a display (and without ``headless``) a PyBullet GUI runs in a
third process (:mod:`pccbullet.sim.viewer`): it comes up first and says it is loading, then mirrors the
model's limbs, seabed and rock, shows the key help and the camera arm's view in its side panel, and forwards
the keys. Headless, the demo writes into ``out_dir``: ``demo.gif`` (the robot beside the operator's model; the
scene poses are recorded in the loop and rendered after it), ``camera_tip.png`` (the robot's camera
view), ``tips.png``, ``metrics.png`` and ``summary.json``; with a display ``metrics.png`` and
``summary.json``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pccbullet.sim.loop import VISUAL_RATE, compute_n_steps
from pccbullet.sim.robot import Robot
from pccbullet.sim.world import PHYSICS_DT, World
from pccbullet.teleop.demo.outputs import (
    GIF_EVERY,
    ScenePose,
    TipLog,
    plot_metrics,
    scene_pose,
    write_outputs,
)
from pccbullet.teleop.devices.base import InputDevice
from pccbullet.teleop.devices.registry import DEMO_DEVICES, open_device
from pccbullet.teleop.devices.scripted import ScriptedDevice
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.slave import Slave, add_environment
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.errors import ConfigurationError

if TYPE_CHECKING:
    from pccbullet.sim.viewer import ViewerProcess

VIEWER_START_S = 60.0  # s, longest wait for the GUI viewer to show the scene
DEFAULT_DURATION_S = 14.0  # s: the scripted session reaches beside the rock, touches it and holds
MAX_GIF_FRAMES = 300  # GIF frames kept (the last 30 s at 10 fps)
STATUS_EVERY = 10  # visual frames between two terminal status lines (5 Hz)


def scripted_operator() -> ScriptedDevice:
    """The headless operator. The light follows the camera (both hang under their own weight and look
    down at the work area); the stylus drives the grasper beside the rock, then the palpation arm
    above the rock and down onto it, pressing into the modelled surface, and holds still for the last
    seconds (steady contact: the force the operator feels and the slave's sensor agree)."""
    return ScriptedDevice(
        waypoints=[  # gaps with no position around each selection change: no stray target
            (0.0, None),
            (0.01, (0.55, -0.06, -0.40)),
            (1.5, (0.40, -0.06, -0.50)),
            (4.0, (0.40, -0.06, -0.50)),
            (4.0, None),
            (4.02, (0.55, 0.06, -0.40)),
            (6.0, (0.45, 0.06, -0.44)),
            (8.5, (0.45, 0.06, -0.50)),
        ],
        presses=[(0.0, "follow"), (0.0, "select:grasper"), (4.01, "select:palpation")],
    )


def run_demo(
    out_dir: Path,
    *,
    headless: bool = False,
    duration: float = DEFAULT_DURATION_S,
    device: str = "auto",
    udp_port: int = 0,
    udp_key_file: Path | None = None,
    viewer: ViewerProcess | None = None,
) -> dict[str, object]:
    """Run the demo; GUI when a display exists and ``headless`` is false. Returns the summary.

    Args:
        device: the operator's input, one of :data:`DEMO_DEVICES`. ``"auto"``: the GUI window's
            keyboard with a display, the scripted operator without. ``"keyboard"`` needs the GUI.
            Any device other than ``"scripted"`` runs the loop in real time; headless runs with a
            human device still write the GIF, plots and summary.
        udp_port: the UDP bridge's port on 127.0.0.1 (``device="udp"``); 0 for any free one (logged).
        viewer: a GUI viewer started early, without its scene (``ViewerProcess(None)``: the command line
            starts it before importing this module, so a window says "loading" at once); ``None``:
            started here.
        udp_key_file: the bridge's HMAC key file; ``None``: the default one, created on first use
            (:func:`pccbullet.teleop.udp.keys.resolve_key`).
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
    out_dir = Path(out_dir)
    # Real time: the robot runs in its own process, so the master's 1 kHz loop never waits for its
    # physics. Scripted: everything in lockstep in simulated time (bit-identical reruns).
    realtime = device != "scripted"
    slave_kind = "process" if realtime else "local"
    if gui:  # the window comes up at once and says it is loading while the worlds are built
        from pccbullet.sim.viewer import ViewerProcess

        viewer = viewer or ViewerProcess(None, gui=True)
        try:
            with MmtSession(MmtConfig(), gui=False, slave=slave_kind) as session:
                return _run_gui(session, viewer, out_dir, duration, n_sub, device, udp_port, udp_key_file)
        finally:
            viewer.close()
    # Physics stays in DIRECT; with a display the GUI runs in its own process (pccbullet.sim.viewer).
    with MmtSession(MmtConfig(), gui=False, slave=slave_kind, record_poses=realtime) as session:
        robot = session.robot
        limbs = [limb.name for limb in robot.spec.limbs]
        operator = (
            scripted_operator() if device == "scripted" else _open(device, limbs, udp_port, udp_key_file)
        )
        out_dir.mkdir(parents=True, exist_ok=True)
        slave = session.slave
        model_poses: list[tuple[float, ScenePose]] = []
        robot_poses: list[tuple[float, dict[str, np.ndarray]]] = []
        tips = TipLog(limbs, int(round(duration * VISUAL_RATE)) + 1)

        def on_visual(k: int, t: float) -> None:
            tips.add(t, [robot.tip_pose(name)[:3, 3] for name in limbs])
            # the GIF frames are rendered after the run (a software frame takes tens of ms); the last
            # MAX_GIF_FRAMES are kept, so a long session holds bounded memory
            if k % GIF_EVERY == 0:
                model_poses.append((t, scene_pose(robot, session.rock)))
                del model_poses[:-MAX_GIF_FRAMES]
                if isinstance(slave, Slave):  # the robot in its own process records its own poses
                    robot_poses.append((t, {n: slave.robot.joints(n) for n in limbs}))
                    del robot_poses[:-MAX_GIF_FRAMES]

        status = _status_printer(session) if device == "terminal" else None

        def on_visual_all(k: int, t: float) -> None:
            on_visual(k, t)
            if status is not None and k % STATUS_EVERY == 0:
                status()

        try:
            stats = session.run(
                operator,
                duration,
                realtime=realtime,
                on_visual=on_visual_all,
                visual_every=n_sub,
                catch_sigint=True,
            )
        finally:
            operator.close()
            if status is not None:
                sys.stderr.write("\n")  # end the status line
        metrics = session.metrics()
        if isinstance(slave, Slave):
            files, robot_tips = write_outputs(
                out_dir, session, slave.robot, slave.rock, model_poses, robot_poses, tips
            )
        else:
            with _robot_scene(session) as (shown, rock):  # the robot's poses shown in a world of our own
                files, robot_tips = write_outputs(
                    out_dir, session, shown, rock, model_poses, slave.poses, tips
                )
        files.append(plot_metrics(out_dir, session))
    cfg = session.cfg
    summary: dict[str, object] = {
        "mode": "headless",
        "device": device,
        **_device_stats(operator),
        "slave": {
            "mode": "dynamic",
            "medium": cfg.medium,
            "process": slave_kind,
            "sections": robot.spec.limbs[0].segments[0].sections,
        },
        "prediction": "newton-euler" if cfg.predict else "none",
        "robot": session.robot_report(),
        "loop": stats,
        "gif_frames": len(model_poses),
        "metrics": metrics,
        "final_tip_positions_m": tips.last(),
        "slave_final_tip_positions_m": robot_tips,
        "files": files,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    logging.getLogger(__name__).info(
        "loop: %d steps, %.2f x real time, tick p99 %.2f ms",
        stats["physics_steps"],
        stats["real_time_factor"],
        stats["step_p99_ms"],
    )
    return summary


@contextlib.contextmanager
def _robot_scene(session: MmtSession) -> Iterator[tuple[Robot, int]]:
    """A kinematic world of our own with the robot, the seabed and the true rock: the slave's recorded
    poses are shown in it when the slave ran in its own process."""
    cfg = session.cfg
    with World(mode="kinematic") as world:
        shown = world.load_robot(session.spec)
        _, rock = add_environment(world, cfg.rock_true, cfg.rock_radius, cfg.seabed_z)
        yield shown, rock


def status_line(session: MmtSession) -> str:
    """One line for the terminal: selected limb and segment, its commanded PCC, the force felt."""
    m = session.mapping
    c = m.command[m.limb][m.segment]
    f = float(np.linalg.norm(session.haptics.last_force))
    return (
        f"t {session.world.time:6.2f} s | {m.limb} segment {m.segment + 1} | "
        f"bend {np.degrees(c.bend):7.2f} deg plane {np.degrees(c.plane):7.2f} deg "
        f"length {c.length * 1e3:6.1f} mm | force {f:5.2f} N | robot {session.watchdog.state}"
    )


def _status_printer(session: MmtSession):  # type: ignore[no-untyped-def]
    """Print the key help once, then return a function that rewrites the status line (stderr)."""
    from pccbullet.teleop.devices.keyboard import TERMINAL_HELP_LINES

    err = sys.stderr
    err.write("\n".join([*TERMINAL_HELP_LINES, "Ctrl-C ends the session (the outputs are written)"]) + "\n")

    def show() -> None:
        err.write("\r" + status_line(session))
        err.flush()

    return show


def _open(device: str, limbs: list[str], udp_port: int, udp_key_file: Path | None = None) -> InputDevice:
    """A named device for the demo (keyboard devices get the limb selection keys)."""
    if device == "terminal":
        return open_device(device, limbs=limbs)
    if device != "udp":
        return open_device(device)
    from pccbullet.teleop.udp.bridge import open_bridge

    return open_bridge(udp_port, udp_key_file)


def _run_gui(
    session: MmtSession,
    viewer: ViewerProcess,
    out_dir: Path,
    duration: float,
    n_sub: int,
    device_name: str,
    udp_port: int,
    udp_key_file: Path | None = None,
) -> dict[str, object]:
    from pccbullet.sim.viewer import ViewerShape
    from pccbullet.teleop.devices.keyboard import HELP_LINES, KeyboardDevice

    robot, cfg = session.robot, session.cfg
    shapes = (
        ViewerShape("seabed", "plane", (0.0, 0.0, cfg.seabed_z), rgba=(0.76, 0.7, 0.5, 1.0)),
        ViewerShape("rock", "sphere", tuple(session.contact.rock), cfg.rock_radius, (0.45, 0.45, 0.5, 1.0)),
    )
    limbs = [limb.name for limb in robot.spec.limbs]
    device: InputDevice | None = None
    if device_name == "scripted":
        device = scripted_operator()
    elif device_name != "keyboard":
        device = _open(device_name, limbs, udp_port, udp_key_file)
    # the camera arm's view in the GUI's side panel (PyBullet's GUI has one directional light and no
    # spot light: the light arm cannot light the scene there)
    viewer.load(robot, shapes, tuple(HELP_LINES), camera=("camera", naming.tip_link("camera")))
    if not viewer.wait_ready(VIEWER_START_S):  # the operator sees the scene before the loop starts
        logging.getLogger(__name__).warning(
            "the viewer is not ready after %g s; starting without it", VIEWER_START_S
        )
    if device is None:  # the keyboard reads the viewer window's keys
        device = KeyboardDevice(session.world.client, limbs, viewer.keyboard_events)

    def on_visual(k: int, t: float) -> None:
        viewer.publish({"rock": np.asarray(session.contact.rock).tolist()})

    try:
        # the loop sleeps through its waits: spinning them left the viewer process (nice +10) too little
        # CPU on 2 cores, 202-223 of 300 frames dropped (0-24 sleeping) for 599-642 late ticks (398-1271)
        stats = session.run(
            device,
            duration,
            realtime=True,
            on_visual=on_visual,
            visual_every=n_sub,
            spin_window=0.0,
            catch_sigint=True,
        )
    finally:
        device.close()
        viewer_report = viewer.close()
    stats["viewer_frames_dropped"] = viewer.dropped
    if "error" in viewer_report:
        stats["viewer_error"] = viewer_report["error"]
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [plot_metrics(out_dir, session), str(out_dir / "summary.json")]
    summary: dict[str, object] = {
        "mode": "gui",
        "device": device_name,
        **_device_stats(device),
        "robot": session.robot_report(),
        "loop": stats,
        "metrics": session.metrics(),
        "files": files,
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


def _device_stats(device: InputDevice) -> dict[str, object]:
    """What the UDP bridge accepted and dropped (by reason); nothing for other devices."""
    if hasattr(device, "accepted") and hasattr(device, "dropped"):
        return {"udp": {"accepted": device.accepted, "dropped": dict(device.dropped)}}
    return {}
