"""What the GUI viewer draws over its scene: text lines and an image panel fixed on the screen.

PyBullet's GUI has no screen-space drawing of its own once its panels (the example browser, the
buffer previews) are off: :class:`Overlay` places debug text and a textured quad in front of the
viewer's camera, where a screen point ``(u, v)`` (0..1 from the top-left corner) lies at a fixed depth,
and moves them along whenever the camera moves or the content changes. Lines update in place
(``replaceItemUniqueId``); the image is a texture whose pixels are replaced (``changeTexture``).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from pccbullet.sim.views.scene import Rgb

DEPTH = 0.05  # m in front of the camera where the overlay lies (nearer than anything in the scene)
TEXT_SIZE = 1.0  # PyBullet's debug text size at DEPTH
LINE_STEP = 0.032  # screen heights between two text lines
PANEL_WIDTH = 0.30  # screen widths of the image panel
FAR = 10000.0  # PyBullet's far distance of getDebugVisualizerCamera's horizontal and vertical vectors
INSET_SIZE = (320, 240)  # px, the viewer's own camera inset
INSET_FOV_DEG = 100.0  # the camera arm's wide-angle lens (as the demo's camera_tip.png)


class Overlay:
    """Screen-fixed text lines and one image panel in the GUI of client ``cid`` (module docstring).

    Args:
        pb: the ``pybullet`` module. cid: a GUI client id.
    """

    def __init__(self, pb: Any, cid: int) -> None:
        self.pb, self.cid = pb, cid
        self._text: dict[str, list[int]] = {}  # block name -> debug item ids
        self._blocks: dict[str, tuple[float, float, list[tuple[str, Rgb]]]] = {}
        self._camera: tuple | None = None
        self._panel: tuple[int, int, int, int] | None = None  # body, texture, width, height
        self._panel_at: tuple[float, float] = (0.68, 0.06)
        self._caption: str = ""
        self._tmp = tempfile.mkdtemp(prefix="pccbullet_overlay_")

    def _basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Camera position, forward, full-width and full-height vectors at :data:`DEPTH` (m, world)."""
        cam = self.pb.getDebugVisualizerCamera(physicsClientId=self.cid)
        forward, horizontal, vertical = (np.asarray(cam[i], dtype=float) for i in (5, 6, 7))
        target, dist = np.asarray(cam[11], dtype=float), float(cam[10])
        forward = forward / max(np.linalg.norm(forward), 1e-12)
        eye = target - dist * forward
        return eye, forward, horizontal * DEPTH / FAR, vertical * DEPTH / FAR

    def _point(self, u: float, v: float) -> np.ndarray:
        eye, forward, width, height = self._basis()
        return eye + forward * DEPTH + (u - 0.5) * width - (v - 0.5) * height

    def text(
        self, name: str, u: float, v: float, lines: list[tuple[str, tuple[float, float, float]]]
    ) -> None:
        """Show ``lines`` (text, rgb 0..1) from screen point ``(u, v)`` down, as block ``name``."""
        self._blocks[name] = (u, v, lines)
        self._draw_text(name)

    def _draw_text(self, name: str) -> None:
        pb, cid = self.pb, self.cid
        u, v, lines = self._blocks[name]
        ids = self._text.setdefault(name, [])
        for i, (line, rgb) in enumerate(lines):
            pos = self._point(u, v + i * LINE_STEP).tolist()
            kw: dict[str, Any] = {"replaceItemUniqueId": ids[i]} if i < len(ids) else {}
            item = pb.addUserDebugText(line, pos, list(rgb), TEXT_SIZE, physicsClientId=cid, **kw)
            if i >= len(ids):
                ids.append(item)
        for item in ids[len(lines) :]:
            pb.removeUserDebugItem(item, physicsClientId=cid)
        del ids[len(lines) :]

    def image(self, rgb: np.ndarray, caption: str) -> None:
        """Show ``rgb`` ``(h, w, 3) uint8`` in the panel (top right), ``caption`` above it."""
        pb, cid = self.pb, self.cid
        h, w = rgb.shape[:2]
        if self._panel is None or self._panel[2:] != (w, h):
            self._panel = self._make_panel(rgb)
        pb.changeTexture(
            self._panel[1], np.ascontiguousarray(rgb).ravel().tolist(), w, h, physicsClientId=cid
        )
        self._caption = caption
        self._place_panel()

    def _make_panel(self, rgb: np.ndarray) -> tuple[int, int, int, int]:
        import imageio.v3 as iio

        pb, cid = self.pb, self.cid
        h, w = rgb.shape[:2]
        path = os.path.join(self._tmp, f"panel_{w}x{h}.png")
        iio.imwrite(path, rgb)
        texture = pb.loadTexture(path, physicsClientId=cid)
        _, _, width, height = self._basis()
        half_w = 0.5 * PANEL_WIDTH * np.linalg.norm(width)
        half_h = half_w * h / w
        quad = [[-half_w, -half_h, 0], [half_w, -half_h, 0], [half_w, half_h, 0], [-half_w, half_h, 0]]
        vis = pb.createVisualShape(
            pb.GEOM_MESH,
            vertices=quad,
            indices=[0, 1, 2, 0, 2, 3],
            uvs=[[0, 1], [1, 1], [1, 0], [0, 0]],
            normals=[[0, 0, 1]] * 4,
            physicsClientId=cid,
        )
        body = pb.createMultiBody(0, -1, vis, [0, 0, 0], physicsClientId=cid)
        pb.changeVisualShape(body, -1, textureUniqueId=texture, rgbaColor=[1, 1, 1, 1], physicsClientId=cid)
        return body, texture, w, h

    def _place_panel(self) -> None:
        if self._panel is None:
            return
        pb, cid = self.pb, self.cid
        eye, forward, width, height = self._basis()
        right = width / max(np.linalg.norm(width), 1e-12)
        up = height / max(np.linalg.norm(height), 1e-12)
        u0, v0 = self._panel_at
        w, h = self._panel[2:]
        half_v = float(0.5 * PANEL_WIDTH * np.linalg.norm(width) * h / w / np.linalg.norm(height))
        centre = self._point(u0 + PANEL_WIDTH / 2, v0 + LINE_STEP + half_v)
        R = np.column_stack([right, up, -forward])  # the quad's normal (+z) faces the camera
        quat = _quaternion(R)
        pb.resetBasePositionAndOrientation(self._panel[0], centre.tolist(), quat, physicsClientId=cid)
        self._blocks["panel"] = (u0, v0, [(self._caption, (1.0, 1.0, 1.0))])
        self._draw_text("panel")

    def follow_camera(self) -> None:
        """Put everything back in place if the operator moved the camera since the last call."""
        cam = self.pb.getDebugVisualizerCamera(physicsClientId=self.cid)
        key = (cam[8], cam[9], cam[10], tuple(cam[11]), cam[0], cam[1])
        if key == self._camera:
            return
        self._camera = key
        for name in list(self._blocks):
            if name != "panel":
                self._draw_text(name)
        self._place_panel()


def camera_link(pb: Any, cid: int, ids: dict[str, int], camera: tuple[str, str]) -> tuple | None:
    """``(body id, link index)`` of the camera link ``camera = (body name, link name)``, or ``None``."""
    body_name, link_name = camera
    body = ids.get(body_name)
    if body is None:
        return None
    for j in range(pb.getNumJoints(body, physicsClientId=cid)):
        if pb.getJointInfo(body, j, physicsClientId=cid)[12].decode() == link_name:
            return body, j
    return None


def render_inset(pb: Any, cid: int, link: tuple[int, int], overlay: Overlay) -> None:
    """Render the view from the camera link (z ahead, -x up) into the overlay's image panel."""
    state = pb.getLinkState(link[0], link[1], computeForwardKinematics=True, physicsClientId=cid)
    R = np.asarray(pb.getMatrixFromQuaternion(state[5])).reshape(3, 3)
    eye = np.asarray(state[4])
    view = pb.computeViewMatrix(eye.tolist(), (eye + R[:, 2]).tolist(), (-R[:, 0]).tolist())
    proj = pb.computeProjectionMatrixFOV(INSET_FOV_DEG, INSET_SIZE[0] / INSET_SIZE[1], 0.01, 5.0)
    w, h = INSET_SIZE
    img = pb.getCameraImage(w, h, view, proj, renderer=pb.ER_TINY_RENDERER, physicsClientId=cid)[2]
    rgb = np.asarray(img, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
    overlay.image(rgb, "camera arm's view (the model's, rendered here)")


def _quaternion(R: np.ndarray) -> list[float]:
    """Quaternion ``[x, y, z, w]`` of a rotation matrix ``(3, 3)``."""
    w = np.sqrt(max(0.0, 1.0 + R[0, 0] + R[1, 1] + R[2, 2])) / 2.0
    x = np.copysign(np.sqrt(max(0.0, 1.0 + R[0, 0] - R[1, 1] - R[2, 2])) / 2.0, R[2, 1] - R[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1.0 - R[0, 0] + R[1, 1] - R[2, 2])) / 2.0, R[0, 2] - R[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1.0 - R[0, 0] - R[1, 1] + R[2, 2])) / 2.0, R[1, 0] - R[0, 1])
    return [float(x), float(y), float(z), float(w)]
