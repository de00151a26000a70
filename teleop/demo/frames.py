"""What the demo's viewers are sent every visual frame: the model, the HUD and the link's camera frames.

:func:`viewer_frames` builds the loop's ``on_visual`` for the GUI viewer
(:class:`~pccbullet.sim.views.gui.ViewerProcess`) and the web view
(:class:`~pccbullet.teleop.demo.web.DemoWebView`) alike; the demo and ``pccbullet bench --demo --view web``
use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from pccbullet.sim.bullet import pb
from pccbullet.teleop.demo.console import hud_colours
from pccbullet.teleop.mmt.objects import is_free

if TYPE_CHECKING:
    from pccbullet.sim.objects.spec import ObjectSpec
    from pccbullet.sim.views.gui import ViewerProcess, ViewerShape
    from pccbullet.teleop.demo.web import DemoWebView
    from pccbullet.teleop.mmt.session import MmtSession

HUD_EVERY = 10  # visual frames between two HUD updates (5 Hz)


def viewer_frames(session: MmtSession, viewer: ViewerProcess | DemoWebView) -> Callable[[int, float], None]:
    """The loop's ``on_visual`` that publishes to ``viewer``: the model (the rock, the free objects), the
    HUD every :data:`HUD_EVERY` frames, each camera frame that crossed the link once."""
    frames = [0]  # camera frames shown
    free = [f"object:{o.name}" for o in session.cfg.objects if is_free(o)]
    uplink = session.cfg.uplink.name

    def on_visual(k: int, t: float) -> None:
        hud = hud_colours(session) if k % HUD_EVERY == 0 else None
        video = session.transport.video
        image = None
        if video.received > frames[0] and video.frame is not None:  # a new frame crossed the link
            frames[0] = video.received
            w, h = video.plan.size
            image = (video.frame, f"robot camera over the {uplink} link ({w}x{h} px)")
        shapes = {"rock": np.asarray(session.contact.rock).tolist()}
        for name, body in zip(free, session.shown_bodies[1:], strict=True):  # where the robot reports them
            p, q = pb.getBasePositionAndOrientation(body, physicsClientId=session.world.client)
            shapes[name] = [*p, *q]
        viewer.publish(shapes, hud=hud, image=image)

    return on_visual


def viewer_shape(o: ObjectSpec) -> ViewerShape:
    """The GUI viewer's shape of a placed object (named ``object:<name>``), where it was placed."""
    from pccbullet.sim.objects.friction import MATERIALS
    from pccbullet.sim.views.gui import ViewerShape

    name, rgba = f"object:{o.name}", MATERIALS[o.material].rgba
    common = {"rgba": rgba, "orientation": tuple(o.orientation)}
    if o.shape == "box":
        return ViewerShape(name, "box", o.position, size=tuple(o.size), **common)  # type: ignore[arg-type]
    if o.shape == "cylinder":
        return ViewerShape(name, "cylinder", o.position, o.size[0], length=o.size[1], **common)  # type: ignore[arg-type]
    return ViewerShape(name, "sphere", o.position, o.size[0], **common)  # type: ignore[arg-type]
