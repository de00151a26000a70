"""The demo in the browser (``pccbullet demo --view web``): the robot beside the operator's model.

:class:`DemoWebView` puts a session on a :class:`~pccbullet.sim.views.web.view.WebView` behind the GUI
viewer's interface (``load``, ``wait_ready``, ``publish``, ``keyboard_events``, ``close``, ``dropped``), so
that the demo's GUI loop (:func:`pccbullet.teleop.demo.run.run_demo`) drives either. The page shows two
panels of one scene type (:mod:`pccbullet.sim.views.scene`): the robot, captured from a world of its own
with the robot's chain, in dark water lit by its lamp (its limbs' joints as its process reports them to the
observer at 10 Hz, the true rock), and the operator's model, the master world's bodies (50 Hz, the rock
where the master believes it is); the HUD, the camera frames received over the link, the force the
operator feels (an arrow at the model's sensor, the bar) and the force the robot's sensor reports (an
arrow at its tip, as it crossed the link). The page's keys are the GUI's key table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.views.scene import Pose, SceneBody, SceneFrame, body_name, world_bodies
from pccbullet.sim.views.web.layout import WebGroup, WebPage
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


def demo_page(
    session: MmtSession,
    help_lines: Sequence[str] = (),
    robot_panel: tuple[Sequence[SceneBody], tuple[str, int] | None] | None = None,
    model_bodies: Sequence[SceneBody] | None = None,
) -> WebPage:
    """The demo's page: the robot's panel and the model's, the key table as help and as keys.
    ``robot_panel``: the robot's panel's bodies and lamp (its limbs with the robot's chain,
    :meth:`DemoWebView.load`); default the model's. ``model_bodies``: the model's panel's; default the
    master world's (:func:`~pccbullet.sim.views.scene.world_bodies`)."""
    bodies = tuple(model_bodies) if model_bodies is not None else world_bodies(session.world)
    robot_bodies, lamp = robot_panel or (bodies, _lamp(session.world, session.robot))
    limbs = [limb.name for limb in session.spec.limbs]
    keys = tuple(sorted({*RATE_KEYS, *PRESS_KEYS, *limb_keys(limbs)}))
    eye, target, _ = EXTERNAL_VIEW
    return WebPage(
        (
            WebGroup("robot", ROBOT_TITLE, tuple(robot_bodies), lamp=lamp, background=WATER_RGB),
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
        self._robot_pose = -1.0  # time of the robot's pose last sent
        self._robot_rock = ""  # the robot's panel's rock and free objects (load)
        self._robot_free: list[str] = []

    @property
    def dropped(self) -> int:
        """Frames the view dropped (its process had not taken the previous ones)."""
        return self.view.dropped

    def load(self, bodies: Sequence[SceneBody], help_lines: Sequence[str] = (), camera: Any = None) -> None:
        """Send the demo's page: ``bodies`` (the master world's) in the model's panel, the robot's panel
        built here (the GUI viewer's ``camera``: the page has its own)."""
        from pccbullet.sim.world import World
        from pccbullet.teleop.mmt.objects import add_environment, is_free, place_objects

        cfg = self.session.cfg
        with World(mode="kinematic", chain=cfg.chain) as world:  # the robot's chain (its poses come)
            robot = world.load_robot(self.session.spec)
            rock = add_environment(world, cfg.rock_true, cfg.rock_radius, cfg.seabed_z)[1]
            placed = place_objects(world, cfg.objects, fixed=True)
            # the free objects: where the robot reports them, in both panels
            free = [o.body for o, spec in zip(placed, cfg.objects, strict=True) if is_free(spec)]
            self._robot_free = [body_name(b) for b in free]
            self._robot_rock = body_name(rock)
            robot_panel = (world_bodies(world), _lamp(world, robot))
            self.view.load(demo_page(self.session, help_lines, robot_panel, bodies))

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until the view process has the scene."""
        return self.view.wait_ready(timeout)

    def keyboard_events(self) -> dict[int, int]:
        """The page's keys (:meth:`~pccbullet.sim.views.web.view.WebView.keyboard_events`)."""
        return self.view.keyboard_events()

    def publish(
        self,
        frame: SceneFrame,
        *,
        hud: list[tuple[str, tuple[float, float, float]]] | None = None,
        image: tuple[np.ndarray, str] | None = None,
    ) -> bool:
        """A frame of both panels: the model's ``frame`` (the master world's), and the robot's, its limbs
        as its process last reported them, the true rock and the free objects where the robot reports
        them."""
        s = self.session
        poses = getattr(s.slave, "poses", None)
        joints: Mapping[str, FloatArray] = {}
        if poses and poses[-1].t != self._robot_pose:  # a new pose from the robot's process
            self._robot_pose = poses[-1].t
            joints = poses[-1].joints
        bases: dict[str, Pose] = {self._robot_rock: (s.cfg.rock_true, (0.0, 0.0, 0.0, 1.0))}
        limit = s.haptics.params.peak_force
        force = {"model": [*s.model_tip, *s.haptics.last_force, limit]}
        if s.last_report is not None:
            force["robot"] = [*s.last_report.tip, *s.last_report.force, limit]
            for name, p in zip(self._robot_free, s.last_report.objects.tolist(), strict=True):
                bases[name] = (tuple(p[:3]), tuple(p[3:]))
        robot = SceneFrame(poses[-1].t if poses else s.world.time, joints, bases)
        return self.view.publish({"model": frame, "robot": robot}, hud=hud, image=image, force=force)

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
