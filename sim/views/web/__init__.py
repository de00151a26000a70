"""A live 3D view in the browser and in notebook cells: the web view (docs/guide/web-view.md).

:class:`WebView` serves a page on ``127.0.0.1`` (any other host needs a token) from a process of its own;
:func:`show` (``World.show()``) shows a world from then on, ``run_experiment(..., view=)`` a run, the RL
environment's ``render_mode="web"`` its world, and ``pccbullet demo --view web`` the squid demo, whose keys
the page takes. The loop that publishes never waits: a frame the view process has not taken is dropped and
counted.

Modules: :mod:`~pccbullet.sim.views.web.layout` (how a page lays out the scene's bodies,
:mod:`pccbullet.sim.views.scene`), :mod:`~pccbullet.sim.views.web.view` (the publishing side),
:mod:`~pccbullet.sim.views.web.server` (the view's process), :mod:`~pccbullet.sim.views.web.access` (who
may open it: the security model in docs/guide/web-view.md), :mod:`~pccbullet.sim.views.web.inbox` (what
pages send, the keys they hold), :mod:`~pccbullet.sim.views.web.tracked` (the page's geometry and its link
poses from the frames there), :mod:`~pccbullet.sim.views.web.files` (the page's files, copied),
:mod:`~pccbullet.sim.views.web.live` (a world shown), and the page (``page/``: ``index.html``, ``app.js``
and three.js r180, vendored: no network at run time).

Why a page of our own on ``websockets`` and three.js, and not viser or pyvista's trame backend (measured on
this project's 2-core machine, figures in docs/measurements/performance.md): it adds one dependency of
0.2 MB (viser adds 5 packages, its own wheel 3.6 MB; trame with trame-vtk and trame-vuetify adds 15, aiohttp
and its helpers among them); it takes the operator's keys (viser's client sends no key events to Python);
and it draws in the browser, off the simulation's cores (trame's server-side rendering runs VTK offscreen:
the demo's scene took 300 ms a frame at 640x480 here, a core for 3 frames per second), at the frame rates
reported in the docs.
"""

from pccbullet.sim.views.web.layout import WebGroup, WebPage
from pccbullet.sim.views.web.live import WorldFeed, attach, finish, show
from pccbullet.sim.views.web.view import WebView

__all__ = ["WebGroup", "WebPage", "WebView", "WorldFeed", "attach", "finish", "show"]
