"""The demo in the browser (``pccbullet demo --view web``): the robot beside the operator's model.

:class:`DemoWebView` puts a session on a :class:`~pccbullet.sim.views.web.view.WebView` behind the GUI
viewer's interface (``load``, ``wait_ready``, ``publish``, ``keyboard_events``, ``close``, ``dropped``), so
that the demo's GUI loop (:func:`pccbullet.teleop.demo.run.run_demo`) drives either. The page shows two
panels from the master world's bodies: the robot, in dark water lit by its lamp (its limbs' joints as its
process reports them to the observer at 10 Hz, the true rock), and the operator's model (50 Hz, the rock
where the master believes it is); the HUD, the camera frames received over the link, the force the
operator feels (an arrow at the model's sensor, the bar) and the force the robot's sensor reports (an
arrow at its tip, as it crossed the link). The page's keys are the GUI's key table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pccbullet.sim.views.web.scene import WebGroup, WebScene, split_vectors, world_bodies
from pccbullet.teleop.demo.outputs import EXTERNAL_VIEW
from pccbullet.teleop.demo.render import WATER_RGB
from pccbullet.teleop.devices.keys import PRESS_KEYS, RATE_KEYS, limb_keys

if TYPE_CHECKING:
    from pccbullet.sim.views.web.view import WebView
    from pccbullet.teleop.mmt.session import MmtSession

LAMP_LINK = "spotlight_frame"  # the light arm's lamp frame (z: the beam)
LAMP_LIMB = "light"
MODEL_TITLE = "operator's model (1 kHz, drawn at 50 Hz)"
ROBOT_TITLE = "robot in seawater (its process's poses, 10 Hz)"
SPIN_WINDOW_S = 0.0  # s, the master loop's spin window with the web view (docs/measurements/performance.md)


def _link_index(client: int, body: int, name: str) -> int | None:
    from pccbullet.sim.bullet import pb

    for j in range(pb.getNumJoints(body, physicsClientId=client)):
        if pb.getJointInfo(body, j, physicsClientId=client)[12].decode() == name:
            return j
    return None


def _lamp(world: Any, robot: Any) -> tuple[str, int] | None:
    """The light arm's lamp link, as a group's ``lamp``."""
    if LAMP_LIMB not in robot.bodies:
        return None
    index = _link_index(world.client, robot.bodies[LAMP_LIMB], LAMP_LINK)
    return None if index is None else (LAMP_LIMB, index)


def demo_scene(session: MmtSession, help_lines: Sequence[str] = (), robot_bodies: Any = None) -> WebScene:
    """The demo's page: the robot's panel and the model's, the key table as help and as keys.
    ``robot_bodies``: the robot's panel's bodies and lamp (its limbs with the robot's chain,
    :meth:`DemoWebView.load`); default the model's."""
    bodies = world_bodies(session.world)
    robot_panel, lamp = robot_bodies or (bodies, _lamp(session.world, session.robot))
    limbs = [limb.name for limb in session.spec.limbs]
    keys = tuple(sorted({*RATE_KEYS, *PRESS_KEYS, *limb_keys(limbs)}))
    eye, target, _ = EXTERNAL_VIEW
    return WebScene(
        (
            WebGroup("robot", ROBOT_TITLE, robot_panel, lamp=lamp, background=WATER_RGB),
            WebGroup("model", MODEL_TITLE, bodies),
        ),
        title="pccbullet · the squid demo",
        help=tuple(help_lines),
        keys=keys,
        camera=(eye, target),
        force_bar="model",  # the force the operator feels
    )


class DemoWebView:
    """A session shown on ``view`` with the GUI viewer's interface (module docstring).

    Args:
        view: the web view (started early by the command line, so that its address is printed at once).
        session: the demo's session.
    """

    spin_window = SPIN_WINDOW_S
    """The master loop's spin window (:class:`~pccbullet.sim.loop.Loop`) while the page is served."""

    def __init__(self, view: WebView, session: MmtSession) -> None:
        self.view, self.session = view, session
        self._rock = f"body{session.rock}"
        self._robot_pose = -1.0  # time of the robot's pose last sent
        self._robot_bodies: Any = ()  # the robot's panel's bodies (load)
        self._model_bodies: Any = ()  # the model's panel's
        self._robot_rock = self._rock
        self._robot_free: list[str] = []  # the free objects' bodies in each panel (load)
        self._model_free: list[str] = []

    @property
    def dropped(self) -> int:
        """Frames the view dropped (its process had not taken the previous ones)."""
        return self.view.dropped

    def load(self, robot: Any, shapes: Any = (), help_lines: Sequence[str] = (), camera: Any = None) -> None:
        """Send the demo's scene (the GUI viewer's ``shapes`` and ``camera``: the page has its own)."""
        from pccbullet.sim.world import World
        from pccbullet.teleop.mmt.objects import add_environment, is_free, place_objects

        cfg = self.session.cfg
        with World(mode="kinematic", chain=cfg.chain) as world:  # the robot's chain (its poses come)
            robot = world.load_robot(self.session.spec)
            rock = add_environment(world, cfg.rock_true, cfg.rock_radius, cfg.seabed_z)[1]
            placed = place_objects(world, cfg.objects, fixed=True)
            # the free objects: where the robot reports them, in both panels
            free = [o.body for o, spec in zip(placed, cfg.objects, strict=True) if is_free(spec)]
            self._robot_free = [f"body{b}" for b in free]
            self._model_free = [f"body{b}" for b in self.session.shown_bodies[1:]]
            self._robot_bodies = world_bodies(world)
            self._robot_rock = f"body{rock}"
            self._model_bodies = world_bodies(self.session.world)
            self.view.load(demo_scene(self.session, help_lines, (self._robot_bodies, _lamp(world, robot))))

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until the view process has the scene."""
        return self.view.wait_ready(timeout)

    def keyboard_events(self) -> dict[int, int]:
        """The page's keys (:meth:`~pccbullet.sim.views.web.view.WebView.keyboard_events`)."""
        return self.view.keyboard_events()

    def publish(
        self,
        shapes: Any = None,
        *,
        hud: list[tuple[str, tuple[float, float, float]]] | None = None,
        image: tuple[np.ndarray, str] | None = None,
    ) -> bool:
        """A frame of both panels (the GUI viewer's ``shapes``: the model's rock is read here)."""
        s = self.session
        robot, cfg = s.robot, s.cfg
        model = split_vectors(self._model_bodies, {n: robot.joints(n) for n in robot.bodies})
        joints: dict[str, dict[str, Any]] = {"model": model}
        poses = getattr(s.slave, "poses", None)
        if poses and poses[-1][0] != self._robot_pose:  # a new pose from the robot's process
            self._robot_pose = poses[-1][0]
            joints["robot"] = split_vectors(self._robot_bodies, poses[-1][1])
        still = (0.0, 0.0, 0.0, 1.0)
        bases = {
            "model": {self._rock: (tuple(s.contact.rock), still)},
            "robot": {self._robot_rock: (tuple(cfg.rock_true), still)},
        }
        limit = s.haptics.params.peak_force
        force = {"model": [*s.model_tip, *s.haptics.last_force, limit]}
        if s.last_report is not None:
            force["robot"] = [*s.last_report.tip, *s.last_report.force, limit]
            for names, side in ((self._model_free, "model"), (self._robot_free, "robot")):
                for name, p in zip(names, s.last_report.objects.tolist(), strict=True):
                    bases[side][name] = (tuple(p[:3]), tuple(p[3:]))
        return self.view.publish(joints, bases=bases, t=s.world.time, hud=hud, image=image, force=force)

    def close(self) -> dict[str, Any]:
        """Stop the view; its report (:meth:`~pccbullet.sim.views.web.view.WebView.close`)."""
        return self.view.close()


def open_web_view(host: str = "127.0.0.1", port: int = 0) -> WebView:
    """A started :class:`~pccbullet.sim.views.web.view.WebView` for the demo; its address is logged."""
    import logging

    from pccbullet.sim.views.web.view import WebView

    view = WebView(host=host, port=port)
    logging.getLogger(__name__).warning("the demo's web view: %s", view.url)
    return view
