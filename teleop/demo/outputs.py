"""The demo's plots (``metrics.png``, ``tips.png``) and what the run records for them and for the GIF.

The run records as it goes: the limb tips at the visual rate (:class:`TipLog`) and the scene frames of the
model and the robot (:class:`~pccbullet.sim.views.scene.SceneFrame`,
:func:`~pccbullet.sim.views.scene.world_frame`); :mod:`pccbullet.teleop.demo.gif` renders the GIF from them
after the plots and the camera image. Every file is written atomically.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pccbullet.core.atomic import atomic_path
from pccbullet.sim.bullet import pb
from pccbullet.sim.views.scene import SceneFrame, show_frame

if TYPE_CHECKING:
    from pccbullet.sim.robot import Robot
    from pccbullet.teleop.mmt.session import MmtSession

GIF_EVERY = 5  # visual frames per GIF frame (10 fps)
IMAGE_SIZE = (640, 480)  # px, one GIF panel and the camera image
EXTERNAL_VIEW = ([1.25, -1.05, 0.15], [0.45, 0.0, -0.42], [0, 0, 1])  # eye, target, up (m, world)
VIEW_ANGLE_DEG = 55.0  # vertical field of view of the GIF's panels (both renderers)
LABEL_PX = 16  # px, the font size of the captions and limb labels in the pictures (at least 14)
FRAME_MARGIN = 0.06  # of the half field of view: room left around what a fitted view holds
MAX_TIP_ROWS = 30_000  # rows of the tip log (a longer session keeps every k-th visual frame)


class TipLog:
    """Limb tips at the visual rate in preallocated arrays: at most ``MAX_TIP_ROWS`` rows (a long
    session keeps every k-th frame), so memory stays bounded."""

    def __init__(self, limbs: list[str], frames: int) -> None:
        self.limbs = limbs
        self.every = max(1, -(-frames // MAX_TIP_ROWS))
        rows = max(1, -(-frames // self.every))
        self.t = np.full(rows, np.nan)
        self.xyz = np.full((rows, len(limbs), 3), np.nan)
        self.n = self._k = 0

    def add(self, t: float, tips: list[np.ndarray]) -> None:
        """Record one visual frame's tips (world, m)."""
        if self._k % self.every == 0 and self.n < len(self.t):
            self.t[self.n] = t
            self.xyz[self.n] = tips
            self.n += 1
        self._k += 1

    def last(self) -> dict[str, list[float]]:
        """The last recorded tip of every limb (m)."""
        return {name: self.xyz[max(self.n - 1, 0), i].tolist() for i, name in enumerate(self.limbs)}


def render_view(
    client: int, view: list[float], proj: list[float], light: Sequence[float] | None = None
) -> np.ndarray:
    """RGB image ``(h, w, 3) uint8`` for PyBullet view and projection matrices (16 floats each).
    ``light``: the direction the light comes from (world); ``None``: PyBullet's, which is the last one
    any image of that client was given (the robot's camera frames set their lamp's)."""
    w, h = IMAGE_SIZE
    lit = {} if light is None else {"lightDirection": list(light)}
    _, _, rgba, _, _ = pb.getCameraImage(
        w,
        h,
        viewMatrix=view,
        projectionMatrix=proj,
        renderer=pb.ER_TINY_RENDERER,
        physicsClientId=client,
        **lit,
    )
    return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]


def draw_text(draw: Any, xy: tuple[float, float], text: str, fill: tuple[int, int, int]) -> None:
    """``text`` at ``xy`` (its top-left) on a PIL ``ImageDraw``, :data:`LABEL_PX` px, outlined in black
    (light text) or white (dark text): readable on any background."""
    from PIL import ImageFont

    outline = (0, 0, 0) if sum(fill) > 384 else (255, 255, 255)
    font = ImageFont.load_default(size=LABEL_PX)
    draw.text(xy, text, fill=fill, font=font, stroke_width=2, stroke_fill=outline)


def caption(image: np.ndarray, lines: list[str], fill: tuple[int, int, int] = (20, 20, 20)) -> np.ndarray:
    """``image`` with text lines in its top-left corner (:func:`draw_text`)."""
    from PIL import Image, ImageDraw

    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    for i, line in enumerate(lines):
        draw_text(draw, (8, 6 + (LABEL_PX + 6) * i), line, fill)
    return np.asarray(pil)


def fit_view(
    points: np.ndarray,
    view: Sequence[Sequence[float]] = EXTERNAL_VIEW,
    aspect: float = IMAGE_SIZE[0] / IMAGE_SIZE[1],
    fov_deg: float = VIEW_ANGLE_DEG,
    margin: float = FRAME_MARGIN,
    top: float = 0.0,
) -> tuple[list[float], list[float], list[float]]:
    """A view ``(eye, target, up)`` looking as ``view`` does (its direction and up) at ``points (n, 3)``
    (m, world) from the nearest distance at which every point is in the picture, centred in it, inside
    ``margin`` of the half field of view on every side (``fov_deg`` vertical, ``aspect`` width/height) and
    below a band of ``top`` of the picture's height kept free (for a caption)."""
    eye0, target0, up0 = (np.asarray(v, dtype=float) for v in view)
    d = (target0 - eye0) / np.linalg.norm(target0 - eye0)
    right = np.cross(d, up0)
    right /= np.linalg.norm(right)
    up = np.cross(right, d)
    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    tan_y = math.tan(math.radians(fov_deg) / 2.0)
    tan_x = tan_y * aspect
    # where the points may be in the picture (-1 .. 1 across and up): the middle and half the extent
    low, high = -(1.0 - margin), 1.0 - margin - 2.0 * top
    mid_y, half_y = (low + high) / 2.0, (high - low) / 2.0
    half_x = 1.0 - margin

    def nearest(centre: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """The nearest distance from which every point is where it may be, looking at ``centre``, and
        the points there in the picture (-1 .. 1 where they may be)."""
        rel = pts - centre
        x, y, z = rel @ right, rel @ up, rel @ d
        bound_y = np.where(y >= 0.0, mid_y + half_y, mid_y - half_y) * tan_y  # y / depth at the edge
        distance = max(float(np.max(np.abs(x) / (half_x * tan_x) - z)), float(np.max(y / bound_y - z)), 0.1)
        depth = z + distance
        return distance, x / (depth * tan_x * half_x), (y / (depth * tan_y) - mid_y) / half_y

    centre = pts.mean(axis=0)
    for _ in range(20):  # the target moved until the points are centred where they may be
        distance, u, v = nearest(centre)
        du, dv = (u.max() + u.min()) / 2.0, (v.max() + v.min()) / 2.0
        if abs(du) < 1e-3 and abs(dv) < 1e-3:
            break
        centre = centre + distance * (right * du * half_x * tan_x + up * dv * half_y * tan_y)
    eye = centre - nearest(centre)[0] * d
    return eye.tolist(), centre.tolist(), up.tolist()


def _save_figure(fig: Any, path: Path) -> str:
    """Lay out, write atomically (100 dpi) and close a matplotlib figure; returns the path."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)
    return str(path)


def plot_metrics(out_dir: Path, session: MmtSession) -> str:
    """Write ``metrics.png``: the operator's and the robot's force, the palpation tips and their distance
    over the session's log; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lg = session.log
    t = lg["t"]
    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    f_m, f_s = np.linalg.norm(lg["f_m"], axis=1), np.linalg.norm(lg["f_s"], axis=1)
    axes[0].plot(t, f_m, label="operator (master model)")
    axes[0].plot(t, f_s, label="slave force sensor (contacts)")
    top = 1.3 * max(float(np.nanmax(f_m, initial=0.0)), float(np.nanmax(f_s, initial=0.0)), 0.05)
    peak = session.haptics.params.peak_force
    if peak <= top:  # the device's limit, when it is on the scale of the forces
        axes[0].axhline(peak, color="r", ls=":", lw=1, label="device peak")
    else:
        axes[0].text(0.99, 0.95, f"device limit {peak:g} N: above this scale", transform=axes[0].transAxes,
                     ha="right", va="top", fontsize=7, color="r")  # fmt: skip
    axes[0].set_ylim(0.0, top)
    if len(t) and np.nanmax(f_s, initial=0.0) > 0.0:  # the robot's peak, with what the operator felt then
        i = int(np.nanargmax(f_s))
        felt = "an impact the model did not feel" if f_m[i] < 0.2 * f_s[i] else "felt by the operator too"
        axes[0].annotate(
            f"robot's peak {f_s[i]:.2f} N at {t[i]:.1f} s ({felt})",
            (t[i], f_s[i]),
            xytext=(0.35, 0.8),
            textcoords="axes fraction",
            fontsize=7,
            arrowprops={"arrowstyle": "->", "lw": 0.7},
        )
    axes[0].set_ylabel("|force| (N)")
    for i, c in enumerate("xyz"):
        axes[1].plot(t, lg["tip_m"][:, i], label=f"master {c}")
        axes[1].plot(t, lg["tip_s"][:, i], "--", label=f"slave {c}")
    axes[1].set_ylabel("palpation tip (m)")
    axes[2].plot(t, 1e3 * np.linalg.norm(lg["tip_m"] - lg["tip_s"], axis=1), label="|master - slave|")
    axes[2].set_ylabel("tip distance (mm)")
    axes[2].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=3)
    link = session.cfg.downlink
    fig.suptitle(
        f"Model-mediated teleoperation of the soft squid over a {session.transport.command_delay():.2g} s "
        f"{link.name} link"
    )
    return _save_figure(fig, out_dir / "metrics.png")


def robot_tips(
    shown: Robot, robot_frames: Sequence[SceneFrame], limbs: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The robot's limb tips along its recorded frames, posed in ``shown`` (the robot's world, or one of our
    own): times ``(n,)`` (s) and tips ``(n, limbs, 3)`` (m, world); ``shown`` is left in the last frame."""
    t = np.array([frame.t for frame in robot_frames])
    xyz = np.full((len(robot_frames), len(limbs), 3), np.nan)
    for k, frame in enumerate(robot_frames):
        show_frame(shown.world, frame)
        xyz[k] = [shown.tip_pose(n)[:3, 3] for n in limbs]
    return t, xyz


def plot_tips(out_dir: Path, tips: TipLog, robot_t: np.ndarray, robot_xyz: np.ndarray) -> str:
    """Write ``tips.png``: every limb's tip, the model (solid) and the robot (dashed); returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
    t_model = tips.t[: tips.n]
    for i, name in enumerate(tips.limbs):
        for j, ax in enumerate(axes):
            (line,) = ax.plot(t_model, tips.xyz[: tips.n, i, j], label=f"{name} (model)")
            if len(robot_t):
                ax.plot(robot_t, robot_xyz[:, i, j], "--", color=line.get_color(), label=f"{name} (robot)")
    for ax, label in zip(axes, "xyz", strict=True):
        ax.set_ylabel(f"tip {label} (m)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(ncol=4, fontsize=7)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("URSULA limb tips (world frame): the operator's model and the robot")
    return _save_figure(fig, out_dir / "tips.png")


def write_camera_image(out_dir: Path, session: MmtSession) -> str:
    """Write ``camera_tip.png``: the last frame of the robot's camera that crossed the link (scaled to
    :data:`IMAGE_SIZE`, pixels kept square and sharp), with when it was captured and arrived; a black
    image saying so when none arrived. Returns its path."""
    import imageio.v3 as iio
    from PIL import Image

    video, link = session.transport.video, session.cfg.uplink
    plan = video.plan
    w, h = IMAGE_SIZE
    if video.frame is None:
        image = np.zeros((h, w, 3), np.uint8)
        lines = [f"ROBOT CAMERA: no frame has crossed the {link.name} link"]
    else:
        image = np.asarray(Image.fromarray(video.frame).resize((w, h), Image.Resampling.NEAREST))
        lines = [
            f"ROBOT CAMERA: the last frame received over the {link.name} link",
            f"captured t = {video.captured:.1f} s, arrived t = {video.arrived:.1f} s; "
            f"{plan.size[0]}x{plan.size[1]} px, a frame every {plan.period:.2g} s; {video.received} received",
        ]
    path = out_dir / "camera_tip.png"
    with atomic_path(path) as tmp:
        iio.imwrite(tmp, caption(image, lines, fill=(235, 235, 235)))
    return str(path)
