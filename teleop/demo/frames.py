"""What the demo's viewers are sent every visual frame: the model, the HUD and the link's camera frames.

:func:`viewer_frames` builds the loop's ``on_visual`` for the GUI viewer
(:class:`~pccbullet.sim.views.gui.ViewerProcess`) and the web view
(:class:`~pccbullet.teleop.demo.web.DemoWebView`) alike; the demo and ``pccbullet bench --demo --view web``
use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pccbullet.sim.views.scene import world_frame
from pccbullet.teleop.demo.console import hud_colours

if TYPE_CHECKING:
    from pccbullet.sim.views.gui import ViewerProcess
    from pccbullet.teleop.demo.web import DemoWebView
    from pccbullet.teleop.mmt.session import MmtSession

HUD_EVERY = 10  # visual frames between two HUD updates (5 Hz)


def viewer_frames(session: MmtSession, viewer: ViewerProcess | DemoWebView) -> Callable[[int, float], None]:
    """The loop's ``on_visual`` that publishes to ``viewer``: the model's frame (its limbs, the rock where
    the model has it, the free objects where the robot reports them:
    :attr:`~pccbullet.teleop.mmt.session.MmtSession.shown_bodies`), the HUD every :data:`HUD_EVERY`
    frames, each camera frame that crossed the link once."""
    frames = [0]  # camera frames shown
    uplink = session.cfg.uplink.name

    def on_visual(k: int, t: float) -> None:
        hud = hud_colours(session) if k % HUD_EVERY == 0 else None
        video = session.transport.video
        image = None
        if video.received > frames[0] and video.frame is not None:  # a new frame crossed the link
            frames[0] = video.received
            w, h = video.plan.size
            image = (video.frame, f"robot camera over the {uplink} link ({w}x{h} px)")
        viewer.publish(world_frame(session.world, session.shown_bodies), hud=hud, image=image)

    return on_visual
