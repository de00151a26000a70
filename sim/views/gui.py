"""A viewer in its own process, mirroring a world's scene.

PyBullet holds the GIL and its GUI renders in the calling process, so a GUI client in the physics
process stalls a 1 kHz loop. The physics runs in DIRECT mode; :class:`ViewerProcess` starts a second
process with its own PyBullet client (GUI when asked, DIRECT for tests) that loads the scene's bodies
(:class:`~pccbullet.sim.views.scene.SceneBody`: the same URDFs, the other bodies built from their visual
shapes) and poses them by the frames (:class:`~pccbullet.sim.views.scene.SceneFrame`) that
:meth:`ViewerProcess.publish` sends at the visual rate (:class:`~pccbullet.sim.views.mirror.Mirror`).
The queue holds two frames: when the viewer falls behind, frames are dropped, never the physics blocked.
The GUI viewer loads the scene with rendering off, then says it is ready
(:meth:`ViewerProcess.wait_ready`), and runs at a lower priority: PyBullet's GUI threads spin, and without
a GPU they take the cores the physics needs.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from pccbullet.sim.views.mirror import Mirror
from pccbullet.sim.views.overlay import Overlay, camera_link, render_inset
from pccbullet.sim.views.pending import PendingOverlay
from pccbullet.sim.views.scene import SceneBody, SceneFrame

QUEUE_FRAMES = 2
KEY_QUEUE = 256
INSET_EVERY = 10  # frames between two camera insets (5 Hz at 50 Hz frames)
CAMERA_CHECK_POLLS = 10  # viewer polls between two looks at whether the operator moved the camera
LOADING_TEXT = "pccbullet: loading the squid and its world ..."
POLL_S = 0.02  # s, keyboard polling period of the viewer while it waits for frames
VIEWER_NICE = 10  # added to the GUI viewer process's nice value


def _apply_frame(mirror: Mirror, frame: dict[str, Any], overlay: Overlay | None = None) -> None:
    hud, image = frame.get("hud"), frame.get("image")
    if overlay is not None and hud is not None:
        overlay.text("hud", 0.01, 0.03, [(line, tuple(rgb)) for line, rgb in hud])
    if overlay is not None and image is not None:
        h, w, data, caption = image
        overlay.image(np.frombuffer(data, dtype=np.uint8).reshape(h, w, 3), caption)
    mirror.apply(frame["frame"])


def _yield_cpu() -> int | None:
    """Lower the viewer process's priority by ``VIEWER_NICE``; returns the new nice value (``None`` if
    refused). PyBullet's GUI threads spin and render without a frame limit (bullet3 issue #2945): with
    software OpenGL the viewer takes nearly two cores. At a lower priority the physics process keeps
    closer to real time and the viewer drops frames instead (figures: docs/measurements/performance.md);
    confining the viewer to one core leaves it unable to stop."""
    import os

    try:
        return os.nice(VIEWER_NICE)
    except OSError:
        return None


def _viewer_main(
    bodies: tuple[SceneBody, ...] | None,
    help_lines: list[str],
    frames: mp.Queue,
    keys: mp.Queue,
    report: mp.Queue,
    ready: Any,
    stop: Any,
    gui: bool,
    scene: Any = None,
    camera: tuple[str, str] | None = None,
) -> None:
    from pccbullet.sim.bullet import pb

    cid = pb.connect(pb.GUI if gui else pb.DIRECT)
    if gui:  # no PyBullet panels (example browser, buffer previews) and no shortcuts on our keys
        pb.configureDebugVisualizer(pb.COV_ENABLE_GUI, 0, physicsClientId=cid)
        pb.configureDebugVisualizer(pb.COV_ENABLE_KEYBOARD_SHORTCUTS, 0, physicsClientId=cid)
        pb.resetDebugVisualizerCamera(1.6, 50, -25, [0.55, 0.0, -0.3], physicsClientId=cid)
    if bodies is None:  # started early: say so until the scene arrives
        loading = pb.addUserDebugText(
            LOADING_TEXT, [0.2, -0.4, 0.0], [0.1, 0.1, 0.1], 1.6, physicsClientId=cid
        )
        while bodies is None and not stop.is_set():
            try:
                bodies, help_lines, camera = scene.get(timeout=POLL_S)
            except queue.Empty:
                pb.getKeyboardEvents(physicsClientId=cid)  # keep the window responsive
        pb.removeUserDebugItem(loading, physicsClientId=cid)
        if bodies is None:
            report.put({"applied": 0, "first_joints": {}})
            pb.disconnect(cid)
            return
    if gui:
        # Loading with rendering on redraws the scene for every link (~35 ms a link with software OpenGL,
        # seconds for URSULA, every frame dropped meanwhile); with rendering off a limb loads in ~0.04 s.
        pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 0, physicsClientId=cid)
    mirror = Mirror(cid, bodies, shapes=True)
    overlay = Overlay(pb, cid) if gui else None
    if overlay is not None:
        overlay.text("keys", 0.01, 0.86, [(line, (0.85, 0.85, 0.85)) for line in help_lines])
    inset = camera_link(pb, cid, mirror.ids, camera) if gui and camera else None
    images = 0  # camera frames that came with the frames: then the viewer renders no inset of its own
    if gui:
        pb.configureDebugVisualizer(pb.COV_ENABLE_RENDERING, 1, physicsClientId=cid)
    ready.set()
    if gui:  # the window and the scene are up at full priority; the spinning render threads give way now
        _yield_cpu()
    applied = 0
    polls = 0
    while True:
        polls += 1
        if overlay is not None and polls % CAMERA_CHECK_POLLS == 0:
            overlay.follow_camera()  # a command of its own: once in a while, not every frame
        if gui:
            events = pb.getKeyboardEvents(physicsClientId=cid)
            if events:
                try:
                    keys.put_nowait(dict(events))
                except queue.Full:
                    pass
        try:
            frame = frames.get(timeout=POLL_S)
        except queue.Empty:
            if not stop.is_set():
                continue
            # stop is set only after every published frame is in the pipe: show what is left, then end
            while True:
                try:
                    frame = frames.get_nowait()
                except queue.Empty:
                    break
                _apply_frame(mirror, frame, overlay)
                applied += 1
            break
        images += "image" in frame
        _apply_frame(mirror, frame, overlay)
        applied += 1
        if inset is not None and overlay is not None and not images and applied % INSET_EVERY == 0:
            render_inset(pb, cid, inset, overlay)
    ids = mirror.ids
    shown = {  # what the viewer shows at the end: the first three position entries of every limb body
        name: [
            v for s in pb.getJointStatesMultiDof(ids[name], b.joints[:3], physicsClientId=cid) for v in s[0]
        ][:3]
        for name, b in mirror.bodies.items()
        if b.joints
    }
    placed = {  # and where its other bodies are (position, quaternion)
        name: [v for part in pb.getBasePositionAndOrientation(ids[name], physicsClientId=cid) for v in part]
        for name, b in mirror.bodies.items()
        if b.urdf is None
    }
    report.put({"applied": applied, "first_joints": shown, "shapes": placed})
    pb.disconnect(cid)


class ViewerProcess:
    """Start a mirror viewer of a scene; ``gui=False`` runs it headless (for tests).

    Args:
        bodies: the scene's bodies (:func:`~pccbullet.sim.views.scene.world_bodies`,
            :func:`~pccbullet.sim.views.scene.robot_bodies`); ``None``: sent later with :meth:`load`.
        gui: open a PyBullet GUI window in the viewer process.
        help_lines: text overlay lines.
    """

    def __init__(
        self,
        bodies: Sequence[SceneBody] | None = None,
        *,
        gui: bool = True,
        help_lines: tuple[str, ...] = (),
    ) -> None:
        ctx = mp.get_context("spawn")
        self._frames: mp.Queue = ctx.Queue(maxsize=QUEUE_FRAMES)
        self._keys: mp.Queue = ctx.Queue(maxsize=KEY_QUEUE)
        self._report: mp.Queue = ctx.Queue()
        self._ready = ctx.Event()
        self._stop = ctx.Event()
        self._scene: mp.Queue = ctx.Queue(maxsize=1)
        self._closed: dict[str, Any] | None = None  # the report, once closed
        self._held: set[int] = set()
        self._overlay = PendingOverlay()  # HUD and image not yet in a frame the viewer got
        self.dropped = 0
        self.sent = 0
        self._process = ctx.Process(
            target=_viewer_main,
            args=(
                None if bodies is None else tuple(bodies),
                list(help_lines),
                self._frames,
                self._keys,
                self._report,
                self._ready,
                self._stop,
                gui,
                self._scene,
            ),
            daemon=True,
        )
        self._process.start()

    def load(
        self,
        bodies: Sequence[SceneBody],
        help_lines: Sequence[str] = (),
        camera: tuple[str, str] | None = None,
    ) -> None:
        """Send the scene's ``bodies`` to a viewer started without them (``bodies=None``: it shows a
        loading text meanwhile, so a window appears at once while the worlds are built). ``camera``: (body
        name, link name) whose view the GUI's side panel shows (5 Hz)."""
        self._scene.put((tuple(bodies), list(help_lines), camera))

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until the viewer has loaded the scene and shows frames; False after ``timeout`` s or if
        the viewer process ended."""
        deadline = time.monotonic() + timeout
        while not self._ready.wait(timeout=min(0.1, max(0.0, deadline - time.monotonic()))):
            if not self._process.is_alive() or time.monotonic() >= deadline:
                return False
        return True

    def publish(
        self,
        frame: SceneFrame,
        *,
        hud: Sequence[tuple[str, Sequence[float]]] | None = None,
        image: tuple[np.ndarray, str] | None = None,
    ) -> bool:
        """Send ``frame`` (:func:`~pccbullet.sim.views.scene.world_frame`); returns False (and counts a
        drop) if the viewer lags. ``hud``: lines (text, rgb 0..1) shown at the top left of the window;
        ``image``: an RGB image ``(h, w, 3) uint8`` and its caption, shown in the panel at the top right
        (instead of the viewer's own camera inset)."""
        self._overlay.note(hud, image)  # kept until a frame carries it (a dropped frame must not lose it)
        if not self._overlay.offer(self._frames, {"frame": frame}):
            self.dropped += 1
            return False
        self.sent += 1
        return True

    def keyboard_events(self) -> dict[int, int]:
        """Key events of the viewer window since the last call, in ``pb.getKeyboardEvents`` form.

        Held keys stay ``KEY_IS_DOWN`` between the viewer's polls (it polls every ``POLL_S``)."""
        from pccbullet.sim.bullet import pb

        triggered: dict[int, int] = {}
        while True:
            try:
                events = self._keys.get_nowait()
            except queue.Empty:
                break
            for key, state in events.items():
                if state & pb.KEY_WAS_TRIGGERED:
                    triggered[key] = triggered.get(key, 0) | pb.KEY_WAS_TRIGGERED
                if state & pb.KEY_IS_DOWN:
                    self._held.add(key)
                if state & pb.KEY_WAS_RELEASED:
                    self._held.discard(key)
        out = {key: pb.KEY_IS_DOWN for key in self._held}
        for key, state in triggered.items():
            out[key] = out.get(key, 0) | state
        return out

    def close(self, timeout: float = 10.0) -> dict[str, Any]:
        """Stop the viewer; returns its report (frames applied, first joint positions of each limb body,
        each other body's position and quaternion, ``"shapes"``).

        The viewer shows every frame already queued, then ends; the stop request needs no room in the
        (possibly full) frame queue. A viewer that does not answer within ``timeout`` s is killed;
        its report then has ``applied = None`` and an ``"error"``, as has one that ended on its own.
        """
        if self._closed is not None:
            return self._closed
        self._frames.close()
        self._frames.join_thread()  # every published frame is in the pipe before the viewer may stop
        self._stop.set()
        deadline = time.monotonic() + timeout
        while True:
            try:
                report: dict[str, Any] = self._report.get(timeout=0.1)
                break
            except queue.Empty:
                if not self._process.is_alive():
                    try:  # it may have reported just before it ended
                        report = self._report.get(timeout=0.5)
                        break
                    except queue.Empty:
                        error = f"the viewer ended without a report (exit code {self._process.exitcode})"
                elif time.monotonic() >= deadline:
                    self._process.kill()  # SIGKILL: also ends a stopped or hung process
                    error = f"the viewer did not stop within {timeout:g} s; killed"
                else:
                    continue
                report = {"applied": None, "first_joints": {}, "error": error}
                break
        self._process.join(timeout=timeout)
        self._closed = report
        return report
