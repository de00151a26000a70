"""A live 3D view in the browser (and in notebook cells): the web view.

(The argument for the library choice follows once measured.)
"""

from pccbullet.sim.webview.live import WorldFeed, attach, show
from pccbullet.sim.webview.scene import WebBody, WebGroup, WebScene, WebVisual, robot_bodies, world_bodies
from pccbullet.sim.webview.view import WebView

__all__ = [
    "WebBody",
    "WebGroup",
    "WebScene",
    "WebView",
    "WebVisual",
    "WorldFeed",
    "attach",
    "robot_bodies",
    "show",
    "world_bodies",
]
