"""How a web view's page lays a scene out: panels of bodies, help lines, the keys it takes, a camera.

A :class:`WebPage` holds one or more :class:`WebGroup` (panels, shown side by side or one at a time), each
a set of :class:`~pccbullet.sim.views.scene.SceneBody` captured from a world
(:func:`~pccbullet.sim.views.scene.world_bodies`); frames then move each panel's bodies by a
:class:`~pccbullet.sim.views.scene.SceneFrame` (:meth:`~pccbullet.sim.views.web.view.WebView.publish`).
Everything here is plain data: it is pickled to the view's process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.views.scene import Rgb, SceneBody


@dataclass(frozen=True, slots=True)
class WebGroup:
    """One panel of the page: ``bodies`` under a ``title``; ``lamp`` = (body name, link index) carries a
    spot light (the squid's lamp: the panel is then dark water lit by it); ``background`` rgb."""

    name: str
    title: str
    bodies: tuple[SceneBody, ...]
    lamp: tuple[str, int] | None = None
    background: Rgb = (0.80, 0.86, 0.90)


@dataclass(frozen=True, slots=True)
class WebPage:
    """The page: its ``groups``, the ``help`` lines shown under them, the ``keys`` whose presses and
    releases the page sends back (single characters: an operator's key table), the ``camera``'s eye and
    target (m, world), and the group whose force arrow fills the page's force bar (``force_bar``; ``None``:
    the first group with a force)."""

    groups: tuple[WebGroup, ...]
    title: str = "pccbullet"
    help: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    camera: tuple[Sequence[float], Sequence[float]] = ((1.25, -1.05, 0.15), (0.45, 0.0, -0.42))
    force_bar: str | None = None

    def __post_init__(self) -> None:
        names = [g.name for g in self.groups]
        if not names or len(set(names)) != len(names):
            raise ConfigurationError(
                f"web page groups = {names!r} are invalid; allowed: distinct names, >= 1"
            )
        for key in self.keys:
            if len(key) != 1 or not key.isprintable():
                raise ConfigurationError(f"web page key {key!r} is invalid; allowed: one printable character")
