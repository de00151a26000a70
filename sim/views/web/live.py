"""A world shown live: :func:`show` (``World.show()``) hooks a :class:`WorldFeed` into a world's steps.

The feed captures every body of the world with a visual shape (:func:`~pccbullet.sim.views.scene.
world_bodies`) into a one-panel page, then, after the world's steps, publishes its frame
(:func:`~pccbullet.sim.views.scene.world_frame`: the robots' joint vectors and the other bodies' base
poses): at most :data:`~pccbullet.sim.loop.VISUAL_RATE` frames per second of wall clock and one per visual
period of simulated time, so that a batch run faster than real time is shown at the page's pace and one
paced to real time at 50 Hz. Bodies added later (a target marker) are captured at the next frame. A frame
costs the stepping loop the joint reads and a queue put (the link poses are computed in the view's
process); between frames a step pays one counter and, once per visual period, one clock read.
"""

from __future__ import annotations

import time
from typing import Any

from pccbullet.sim.loop import VISUAL_RATE, compute_n_steps
from pccbullet.sim.views.scene import other_bodies, world_bodies, world_frame
from pccbullet.sim.views.web.layout import WebGroup, WebPage
from pccbullet.sim.views.web.view import WebView

FINAL_TRIES = 500  # tries, 10 ms apart, to publish a run's last frame
READY_S = 60.0  # s, longest wait in show() for the view process to load the world's page


class WorldFeed:
    """Publishes ``world`` to ``view`` (module docstring); a step hook, see :func:`show`.

    Args:
        world: a :class:`~pccbullet.sim.world.World`. view: the web view. title: the panel's title.
    """

    def __init__(self, world: Any, view: WebView, title: str = "PyBullet world") -> None:
        self.world, self.view, self.title = world, view, title
        self.every = compute_n_steps(VISUAL_RATE, world.dt)
        self.min_gap = 1.0 / VISUAL_RATE  # s of wall clock between two frames
        self._steps = 0
        self._last = -float("inf")
        self._bodies: tuple[int, int] = (-1, -1)  # (bodies in the client, robots) when captured
        self._free: list[int] = []  # the other bodies' ids

    def _capture(self) -> None:
        from pccbullet.sim.bullet import pb

        cid = self.world.client
        bodies = world_bodies(self.world)
        self._free = other_bodies(self.world)
        self._bodies = (pb.getNumBodies(physicsClientId=cid), len(self.world.robots))
        self.view.load(WebPage((WebGroup("world", self.title, bodies),), title=f"pccbullet · {self.title}"))

    def publish(self) -> bool:
        """Publish the world now (capturing it first if bodies were added); False if the view dropped it."""
        from pccbullet.sim.bullet import pb

        world, cid = self.world, self.world.client
        if (pb.getNumBodies(physicsClientId=cid), len(world.robots)) != self._bodies:
            self._capture()
        frame = world_frame(world, self._free)
        self._last = time.perf_counter()
        return self.view.publish({"world": frame})

    def __call__(self) -> None:
        """The step hook: publish once per visual period, if the last frame is old enough."""
        self._steps += 1
        if self._steps % self.every == 0 and time.perf_counter() - self._last >= self.min_gap:
            self.publish()


def show(world: Any, view: WebView | None = None, **options: Any) -> WebView:
    """Show ``world`` live in a web view, from now on (a step hook publishes it); returns the view once
    it has loaded the world's page (or after :data:`READY_S`).

    In a notebook, the view as a cell's last value shows the page in the cell (``world.show()``).

    Args:
        world: a :class:`~pccbullet.sim.world.World`. view: a view of your own; ``None``: a new one.
        options: :class:`~pccbullet.sim.views.web.view.WebView`'s ``host``, ``port``, ``token``.
    """
    for hook in world.step_hooks:  # shown already: publish to the new view instead
        if isinstance(hook, WorldFeed):
            world.step_hooks.remove(hook)
            break
    view = view if view is not None else WebView(**options)
    feed = WorldFeed(world, view)
    world.step_hooks.append(feed)
    feed.publish()  # the page, captured and sent
    view.wait_ready(READY_S)  # loaded: the page shows the world from its first steps on
    feed.publish()
    return view


def attach(world: Any, view: WebView | str | None, **options: Any) -> tuple[WebView | None, bool]:
    """``view`` for a run's ``view=`` option: a :class:`WebView`, ``"web"`` (a new one: its URL is logged)
    or ``None``. Returns the view shown (``None``: none) and whether the caller opened it (and closes it)."""
    from pccbullet.core.errors import ConfigurationError

    if view is None:
        return None, False
    if isinstance(view, str) and view != "web":
        raise ConfigurationError(f"view = {view!r} is invalid; allowed: None, 'web' or a WebView")
    own = isinstance(view, str)
    shown = show(world, None if own else view, **options)  # type: ignore[arg-type]
    if own:
        import logging

        logging.getLogger(__name__).warning("web view: %s", shown.url)
    return shown, own


def finish(world: Any, *, close: bool = False) -> dict[str, Any] | None:
    """Publish ``world``'s last frame to the view showing it (whatever the frame rate) and, with ``close``,
    close that view; its report then (``None`` otherwise, or when nothing shows the world)."""
    for hook in world.step_hooks:
        if isinstance(hook, WorldFeed):
            for _ in range(FINAL_TRIES):  # the last frame must reach the view (it may be busy)
                if hook.publish():
                    break
                time.sleep(0.01)
            return hook.view.close() if close else None
    return None
