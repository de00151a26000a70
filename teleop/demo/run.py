"""The URSULA squid demo: model-mediated teleoperation of the soft squid, 1 kHz master, 50 Hz visuals.

The master (:class:`~pccbullet.teleop.mmt.session.MmtSession`) is a local model of the robot at 1 kHz; the
slave is the dynamic soft squid in seawater (:class:`~pccbullet.teleop.slave.Slave`) behind a 1500 m
acoustic link (about 1 s one way). Scripted (the headless default), everything runs in lockstep in simulated
time; with any other device the loop is paced to the wall clock and the slave runs in its own process
(:mod:`pccbullet.teleop.slave_process`). With a display (and without ``headless``) a PyBullet GUI runs in a
third process (:mod:`pccbullet.sim.views.gui`): it comes up first and says it is loading, then mirrors the
model's limbs, seabed and rock, shows the key help and the camera arm's view in its side panel, and forwards
the keys. With ``view="web"`` a page in the browser takes its place (:mod:`pccbullet.teleop.demo.web`). The
demo writes into ``out_dir``, in this order: ``summary.json`` (at once, then with the session's figures the
moment the loop ends: :mod:`pccbullet.teleop.demo.summary`), ``metrics.png``, and
headless ``tips.png``, ``camera_tip.png`` and ``demo.gif`` (the robot beside the operator's model, from
scene frames recorded in the loop, with a progress bar: :mod:`pccbullet.teleop.demo.gif`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.loop import VISUAL_RATE, compute_n_steps
from pccbullet.sim.robot import Robot
from pccbullet.sim.views.scene import SceneFrame, world_bodies, world_frame
from pccbullet.sim.world import PHYSICS_DT, World
from pccbullet.teleop.demo.console import QuitKey, open_operator, status_printer
from pccbullet.teleop.demo.frames import viewer_frames
from pccbullet.teleop.demo.gif import lamp_for, progress_bar, session_bar, write_gif
from pccbullet.teleop.demo.outputs import (
    GIF_EVERY,
    TipLog,
    plot_metrics,
    plot_tips,
    robot_tips,
    write_camera_image,
)
from pccbullet.teleop.demo.scene import demo_config, demo_spec
from pccbullet.teleop.demo.script import SESSION_S, scripted_operator
from pccbullet.teleop.demo.summary import SummaryFile, session_status
from pccbullet.teleop.devices.base import InputDevice
from pccbullet.teleop.devices.keys import key_table
from pccbullet.teleop.devices.registry import DEMO_DEVICES
from pccbullet.teleop.interrupts import Deferral, sigint_deferred, signal_name, signal_of
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.objects import add_environment, load_objects, place_objects
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.mmt.video import payload_limb
from pccbullet.teleop.slave import Slave
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.specs import RobotSpec

if TYPE_CHECKING:
    from pccbullet.sim.objects.spec import ObjectSpec
    from pccbullet.sim.views.gui import ViewerProcess
    from pccbullet.sim.views.web.view import WebView
    from pccbullet.teleop.demo.web import DemoWebView

VIEWER_START_S = 60.0  # s, longest wait for the GUI viewer to show the scene
MAX_SESSION_S = 86400.0  # s, longest interactive session (it runs until the operator quits)
MAX_GIF_FRAMES = 300  # GIF frames kept (the last 30 s at 10 fps)
STATUS_EVERY = 10  # visual frames between two terminal status lines (5 Hz)
VIEWS = ("auto", "web")  # auto: the GUI with a display, else headless; web: the page (teleop/demo/web.py)


def run_demo(
    out_dir: Path,
    *,
    headless: bool = False,
    duration: float | None = None,
    device: str = "auto",
    udp_port: int = 0,
    udp_key_file: Path | None = None,
    viewer: ViewerProcess | WebView | None = None,
    gif: bool = True,
    link: str = "acoustic",
    view: str = "auto",
    drive: str = "mixed",
    objects: Path | Sequence[ObjectSpec] | None = None,
    start_up: Deferral | None = None,
    robot: str | Path | RobotSpec | None = None,
) -> dict[str, object]:
    """Run the demo; GUI when a display exists and ``headless`` is false. Returns the summary.

    ``summary.json`` is written first of all and rewritten as the demo goes
    (:class:`~pccbullet.teleop.demo.summary.SummaryFile`): a Ctrl-C at any moment leaves it whole; one
    after the session (a second Ctrl-C while the files are rendered) re-raises
    :class:`KeyboardInterrupt` once the summary says so. SIGTERM and SIGHUP do what Ctrl-C does
    (under :func:`~pccbullet.teleop.interrupts.ctrl_c_guarded`, as the command line runs it).

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
        gif: headless: render ``demo.gif`` (after the summary, the plots and the camera image).
        link: ``"acoustic"`` or ``"optical"`` (:func:`~pccbullet.teleop.channel.link_named`), both ways.
        duration: simulated seconds; ``None``: :data:`~pccbullet.teleop.demo.script.SESSION_S` for the
            scripted operator, and with any other device until the operator quits (the ``x`` key, or
            Ctrl-C; at most :data:`MAX_SESSION_S`).
        view: one of :data:`VIEWS`; ``"web"``: the page in the browser instead of the GUI
            (:mod:`pccbullet.teleop.demo.web`; ``viewer`` may be a started
            :class:`~pccbullet.sim.views.web.view.WebView`), whose keys ``"keyboard"`` (and ``"auto"``) read.
        drive: what moves the robot's limbs, one of :data:`~pccbullet.teleop.demo.scene.DRIVES`.
        objects: objects to place in the scene (:attr:`~pccbullet.teleop.mmt.config.MmtConfig.objects`), or
            a TOML file of ``[[objects]]`` tables (:func:`~pccbullet.teleop.mmt.objects.load_objects`);
            ``None``: the bar on its posts (:func:`~pccbullet.teleop.demo.scene.scene_objects`).
        robot: the robot (a bundled name, a robot TOML path or a spec); ``None``: URSULA (:data:`ROBOT`).
            Another robot is driven by the interactive devices (every one but ``"scripted"``, whose
            session moves URSULA's limbs by name: asking for it with another robot is one line) in the
            scene fitted to its haptic limb (:func:`~pccbullet.teleop.demo.scene.demo_config`), with a
            force sensor fitted if it has none (:func:`~pccbullet.teleop.demo.scene.demo_robot`).
        start_up: signals held since the command started (the command line's
            :class:`~pccbullet.teleop.interrupts.Deferral`: its modules load meanwhile); ended once
            ``summary.json`` exists, so that one held is recorded as at start-up.
    """
    if device not in DEMO_DEVICES:
        raise ConfigurationError(f"device = {device!r} is invalid; allowed: {', '.join(DEMO_DEVICES)}")
    if view not in VIEWS:
        raise ConfigurationError(f"view = {view!r} is invalid; allowed: {', '.join(VIEWS)}")
    web = view == "web"
    gui = not web and not headless and bool(os.environ.get("DISPLAY"))
    if device == "keyboard" and not (gui or web):
        raise ConfigurationError(
            "device = 'keyboard' reads the GUI window's keys and needs a display; "
            "use --device terminal or --view web without one"
        )
    placed = load_objects(objects) if isinstance(objects, Path) else objects
    if device == "auto":
        device = "keyboard" if gui or web else "scripted"
    spec = demo_spec(robot, device)  # read once: the master, the slave and its process share it
    cfg = demo_config(link, drive, placed, spec)
    if duration is None:
        duration = SESSION_S if device == "scripted" else MAX_SESSION_S
    out_dir = Path(out_dir)
    mode = "web" if web else "gui" if gui else "headless"
    first: dict[str, object] = {"mode": mode, "device": device, "link": link, "tendons": {"drive": drive}}
    summary = SummaryFile(out_dir, first)
    try:
        if start_up is not None:
            start_up.end()
        if gui or web:  # the window (page) comes up at once and says it is loading while the worlds are built
            from pccbullet.sim.views.gui import ViewerProcess
            from pccbullet.sim.views.web.view import WebView
            from pccbullet.teleop.demo.web import DemoWebView, open_web_view

            viewer = viewer or (open_web_view() if web else ViewerProcess(None, gui=True))
            try:
                with MmtSession(spec, cfg, gui=False, slave="process", record_poses=web) as session:
                    shown = DemoWebView(viewer, session) if isinstance(viewer, WebView) else viewer
                    _run_gui(session, shown, summary, duration, device, udp_port, udp_key_file)
            finally:
                viewer.close()
        else:
            _run_headless(summary, spec, cfg, duration, device, udp_port, udp_key_file, gif)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM or SIGHUP
        phase = "start-up" if summary.data["status"] == "starting" else "outputs"
        summary.update(status="interrupted", interrupted_in=phase, interrupted_by=signal_name(signal_of(exc)))
        raise
    except Exception as exc:  # e.g. a full disk while the files are written: the summary says so
        with contextlib.suppress(OSError):
            if summary.data["status"] == "starting":
                summary.update(status="failed", error=str(exc)[:500])
            else:
                summary.update(outputs_error=str(exc)[:500])
        raise
    return summary.data


def _run_headless(
    summary: SummaryFile,
    spec: RobotSpec,
    cfg: MmtConfig,
    duration: float,
    device: str,
    udp_port: int,
    udp_key_file: Path | None,
    gif: bool,
) -> None:
    """The demo without a window: the session, then the summary, the plots, the camera image, the GIF."""
    out_dir = summary.path.parent
    n_sub = compute_n_steps(VISUAL_RATE, PHYSICS_DT)
    # Real time: the robot runs in its own process, so the master's 1 kHz loop never waits for its
    # physics. Scripted: everything in lockstep in simulated time (bit-identical reruns).
    realtime = device != "scripted"
    slave_kind = "process" if realtime else "local"
    with MmtSession(spec, cfg, gui=False, slave=slave_kind, record_poses=realtime) as session:
        robot = session.robot
        limbs = [limb.name for limb in robot.spec.limbs]
        operator = QuitKey(
            scripted_operator()
            if device == "scripted"
            else open_operator(device, limbs, udp_port, udp_key_file)
        )
        slave = session.slave
        model_frames: list[SceneFrame] = []
        robot_frames: list[SceneFrame] = []  # with the placed objects' poses (lockstep)
        tips = TipLog(limbs, int(round(duration * VISUAL_RATE)) + 1)
        status = status_printer(session) if device == "terminal" else None
        # the session's progress on a terminal (the terminal device has its status line instead)
        progress, on_time = session_bar(duration) if status is None else (None, None)

        def on_visual(k: int, t: float) -> None:
            tips.add(t, [robot.tip_pose(name)[:3, 3] for name in limbs])
            # the GIF frames are rendered after the run (a frame takes tens of ms); the last
            # MAX_GIF_FRAMES are kept, so a long session holds bounded memory
            if k % GIF_EVERY == 0:
                model_frames.append(world_frame(session.world, session.shown_bodies))
                del model_frames[:-MAX_GIF_FRAMES]
                if isinstance(slave, Slave):  # the robot in its own process records its own poses
                    robot_frames.append(world_frame(slave.world, [o.body for o in slave.objects]))
                    del robot_frames[:-MAX_GIF_FRAMES]
            if status is not None and k % STATUS_EVERY == 0:
                status()
            if on_time is not None and k % int(VISUAL_RATE) == 0:  # once a simulated second
                on_time(t)

        try:
            stats = session.run(
                operator,
                duration,
                realtime=realtime,
                on_visual=on_visual,
                visual_every=n_sub,
                catch_sigint=True,
                stop=operator.stop,
                priority=realtime,
            )
        finally:
            operator.close()
            if status is not None:
                status.close()  # end the status line
            if progress is not None:
                progress.close()
        cfg = session.cfg
        ended = time.perf_counter()
        with sigint_deferred():  # the session's figures reach the disk before anything else
            summary.update(
                **session_status(stats),
                **_device_stats(operator.device),
                slave={
                    "mode": "dynamic",
                    "medium": cfg.medium,
                    "process": slave_kind,
                    "sections": robot.spec.limbs[0].segments[0].sections,
                },
                prediction="newton-euler" if cfg.predict else "none",
                robot=session.robot_report(),
                loop=stats,
                metrics=session.metrics(),
                tendons=session.tendon_report() | {"drive": summary.data["tendons"]["drive"]},  # type: ignore[index]
                final_tip_positions_m=tips.last(),
            )
            _log_loop(stats)
        summary.add_file(plot_metrics(out_dir, session))
        with contextlib.ExitStack() as stack:
            final: tuple[dict[str, list[float]], float | None]
            if isinstance(slave, Slave):  # the robot's own world; its state now is the final one
                shown, rock = slave.robot, slave.rock
                recorded = robot_frames
                final = ({n: shown.tip_pose(n)[:3, 3].tolist() for n in limbs}, session.world.time)
            else:  # the robot's recorded frames, shown in a world of our own
                shown, rock = stack.enter_context(_robot_scene(session))
                recorded = slave.poses
                final = ({}, None)
            robot_t, robot_xyz = robot_tips(shown, recorded, limbs)
            if final[1] is None and len(robot_t):  # the last pose the robot's process sent
                final = ({n: robot_xyz[-1, i].tolist() for i, n in enumerate(limbs)}, float(robot_t[-1]))
            summary.update(slave_final_tip_positions_m=final[0], slave_final_tip_time_s=final[1])
            summary.add_file(plot_tips(out_dir, tips, robot_t, robot_xyz))
            summary.add_file(write_camera_image(out_dir, session))
            if not gif:
                summary.update(outputs_wall_time_s=time.perf_counter() - ended)
                return
            rock_at = pb.getBasePositionAndOrientation(rock, physicsClientId=shown.world.client)[0]
            # VTK loads its modules (~60, through pyvista) while the renderer is built: a KeyboardInterrupt
            # raised inside a VTK module's loading can be swallowed, or leave the module half-loaded (an
            # ImportError, a crash later), so a Ctrl-C waits until the renderer is built
            with sigint_deferred():
                lamp = lamp_for(session)
            stack.callback(lamp.close)
            bar, on_frame = progress_bar(len(model_frames))
            stack.callback(bar.close)
            path, frames = write_gif(
                out_dir, session, lamp, shown, rock_at, model_frames, recorded, on_frame=on_frame
            )
            summary.update(gif_frames=frames)
            if path is not None:
                summary.add_file(path)
            summary.update(outputs_wall_time_s=time.perf_counter() - ended)


def _log_loop(stats: dict[str, float]) -> None:
    logging.getLogger(__name__).info(
        "loop: %d steps, %.2f x real time, tick p99 %.2f ms",
        stats["physics_steps"],
        stats["real_time_factor"],
        stats["step_p99_ms"],
    )


@contextlib.contextmanager
def _robot_scene(session: MmtSession) -> Iterator[tuple[Robot, int]]:
    """A kinematic world of our own with the robot, the seabed and the true rock: the slave's recorded
    poses are shown in it when the slave ran in its own process."""
    cfg = session.cfg
    with World(mode="kinematic", chain=cfg.chain) as world:  # the robot's chain, to show its poses
        shown = world.load_robot(session.spec)
        _, rock = add_environment(world, cfg.rock_true, cfg.rock_radius, cfg.seabed_z)
        place_objects(world, cfg.objects, fixed=True)
        yield shown, rock


def _run_gui(
    session: MmtSession,
    viewer: ViewerProcess | DemoWebView,
    summary: SummaryFile,
    duration: float,
    device_name: str,
    udp_port: int,
    udp_key_file: Path | None = None,
) -> None:
    from pccbullet.teleop.devices.keyboard import KeyboardDevice

    robot = session.robot
    n_sub = compute_n_steps(VISUAL_RATE, PHYSICS_DT)
    limbs = [limb.name for limb in robot.spec.limbs]
    device: InputDevice | None = None
    if device_name == "scripted":
        device = scripted_operator()
    elif device_name != "keyboard":
        device = open_operator(device_name, limbs, udp_port, udp_key_file)
    # the key table at the bottom left, the HUD at the top left, the camera arm's view at the top right
    # (PyBullet's GUI has one directional light and no spot light: the light arm cannot light it there)
    keys = (*key_table(limbs), "mouse: turn, zoom and pan the view")
    camera = payload_limb(robot, "camera")  # its view in the side panel; none without a camera
    view = None if camera is None else (camera, naming.tip_link(camera))
    viewer.load(world_bodies(session.world), keys, camera=view)
    if not viewer.wait_ready(VIEWER_START_S):  # the operator sees the scene before the loop starts
        logging.getLogger(__name__).warning(
            "the viewer is not ready after %g s; starting without it", VIEWER_START_S
        )
    if device is None:  # the keyboard reads the viewer window's keys
        device = KeyboardDevice(session.world.client, limbs, viewer.keyboard_events)
    device = QuitKey(device)
    on_visual = viewer_frames(session, viewer)
    try:
        # the loop sleeps through its waits: spinning them left the viewer process (nice +10) too little
        # CPU on 2 cores, 202-223 of 300 frames dropped (0-24 sleeping) for 599-642 late ticks (398-1271)
        stats = session.run(
            device,
            duration,
            realtime=True,
            on_visual=on_visual,
            visual_every=n_sub,
            spin_window=getattr(viewer, "spin_window", 0.0),  # the web view's own (teleop/demo/web.py)
            catch_sigint=True,
            stop=device.stop,
            priority=True,
        )
    finally:
        device.close()
        viewer_report = viewer.close()
    stats["viewer_frames_dropped"] = viewer.dropped
    if "error" in viewer_report:
        stats["viewer_error"] = viewer_report["error"]
    if "page" in viewer_report:  # the web view's: frames sent to the pages, skipped, the page's rate
        stats["web_view"] = viewer_report  # type: ignore[assignment]
    with sigint_deferred():
        summary.update(
            **session_status(stats),
            **_device_stats(device.device),
            robot=session.robot_report(),
            loop=stats,
            metrics=session.metrics(),
            tendons=session.tendon_report() | {"drive": summary.data["tendons"]["drive"]},  # type: ignore[index]
        )
    summary.add_file(plot_metrics(summary.path.parent, session))
    summary.add_file(write_camera_image(summary.path.parent, session))


def _device_stats(device: InputDevice) -> dict[str, object]:
    """What the UDP bridge accepted and dropped (by reason); nothing for other devices."""
    if hasattr(device, "accepted") and hasattr(device, "dropped"):
        return {"udp": {"accepted": device.accepted, "dropped": dict(device.dropped)}}
    return {}
