"""The demo's GIF, rendered after its summary, plots and camera image: ``demo.gif``.

The GIF shows the robot (rendered from its own world, or from recorded frames shown in a world of our own
when it ran in its own process) in the sea, lit by its lamp (:class:`~pccbullet.teleop.demo.render.
SpotlitRenderer`), beside the operator's model (PyBullet's TinyRenderer), one GIF frame per recorded
scene frame (:class:`~pccbullet.sim.views.scene.SceneFrame`), each panel captioned. Frames become palette
images as they are rendered, so memory stays bounded; a progress bar on stderr counts them (on a
terminal). Both files are written atomically.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pccbullet.core.atomic import atomic_path
from pccbullet.sim.bullet import pb
from pccbullet.sim.loop import VISUAL_RATE
from pccbullet.sim.robot import pose_matrix
from pccbullet.sim.views.scene import SceneFrame, show_frame, world_frame
from pccbullet.teleop.demo.outputs import (
    EXTERNAL_VIEW,
    GIF_EVERY,
    IMAGE_SIZE,
    LABEL_PX,
    VIEW_ANGLE_DEG,
    caption,
    draw_text,
    fit_view,
    render_view,
)
from pccbullet.teleop.demo.render import HEAD_LENGTH, HEAD_RADIUS, SpotlitRenderer

if TYPE_CHECKING:
    from pccbullet.sim.robot import Robot
    from pccbullet.teleop.mmt.session import MmtSession


CAPTION_BAND = (LABEL_PX + 16) / IMAGE_SIZE[1]
"""The top of a panel kept free for its caption (a share of its height)."""


def _labels(image: np.ndarray, robot: Robot, view: list[float], proj: list[float], fill: tuple) -> np.ndarray:
    """``image`` with each limb's name beside its tip (:func:`~pccbullet.teleop.demo.outputs.draw_text`),
    projected with PyBullet's ``view`` and ``proj`` matrices (16 floats each, column-major), which the
    pyvista panel shares (the same eye, target, up and field of view)."""
    from PIL import Image, ImageDraw, ImageFont

    h, w = image.shape[:2]
    M = np.asarray(proj, dtype=float).reshape(4, 4).T @ np.asarray(view, dtype=float).reshape(4, 4).T
    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    for limb in robot.spec.limbs:
        clip = M @ np.append(robot.tip_pose(limb.name)[:3, 3], 1.0)
        if clip[3] <= 0:
            continue
        x, y = (clip[0] / clip[3] + 1.0) * w / 2, (1.0 - clip[1] / clip[3]) * h / 2
        if 0 <= x < w and 0 <= y < h:
            width = draw.textlength(limb.name, font=ImageFont.load_default(size=LABEL_PX))
            left = x + 8 if x + 8 + width < w else x - 8 - width  # on the side with room for it
            draw_text(draw, (left, min(max(y - LABEL_PX / 2, 0), h - LABEL_PX - 4)), limb.name, fill)
    return np.asarray(pil)


def scene_points(
    session: MmtSession, shown: Robot, rock_at: Sequence[float], model_frames: list[SceneFrame],
    robot_frames: list[SceneFrame],
) -> np.ndarray:  # fmt: skip
    """What the GIF must hold in frame ``(n, 3)`` (m, world): every slice of every limb in every recorded
    frame of the model and the robot, the head, the rock and the placed objects wherever the robot's frames
    put them. Both worlds are put back as they were."""
    robot, bodies, cfg = session.robot, session.shown_bodies, session.cfg
    points: list[np.ndarray] = []

    def limbs(r: Robot) -> None:
        points.extend(r.section_poses(limb.name)[:, :3, 3] for limb in r.spec.limbs)

    final_model, final_robot = world_frame(session.world, bodies), world_frame(shown.world)
    for frame in model_frames:
        show_frame(session.world, frame, bodies)
        limbs(robot)
    for frame in robot_frames:
        show_frame(shown.world, frame)
        limbs(shown)
    show_frame(session.world, final_model, bodies)
    show_frame(shown.world, final_robot)
    limbs(robot)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    axes = np.vstack([np.eye(3), -np.eye(3)])  # a round body's extreme points, whatever its orientation
    head = corners * [HEAD_LENGTH / 2, HEAD_RADIUS, HEAD_RADIUS]
    points += [head, np.asarray(rock_at, dtype=float) + axes * cfg.rock_radius]
    for i, o in enumerate(cfg.objects):
        size = np.asarray(o.size, dtype=float)
        # the radius of the sphere round the object: a box's half diagonal, a cylinder's (radius, length)
        round_radius = {"box": np.linalg.norm(size / 2), "cylinder": np.hypot(size[0], size[-1] / 2)}
        radius = float(round_radius.get(o.shape, size[0]))  # a sphere's own
        at = [o.position] + [list(f.bases.values())[i][0] for f in robot_frames if len(f.bases) > i]
        points += [np.asarray(p, dtype=float) + axes * radius for p in at]
    return np.vstack(points)


def lamp_for(session: MmtSession) -> SpotlitRenderer:
    """The pyvista renderer of the robot's panel and camera image, for the session's seabed and rock."""
    cfg = session.cfg
    return SpotlitRenderer(IMAGE_SIZE, EXTERNAL_VIEW, cfg.seabed_z, cfg.rock_radius, objects=cfg.objects)


def write_gif(
    out_dir: Path,
    session: MmtSession,
    lamp: SpotlitRenderer,
    shown: Robot,
    rock_at: object,
    model_frames: list[SceneFrame],
    robot_frames: list[SceneFrame],
    *,
    on_frame: Callable[[int, int], None] | None = None,
) -> tuple[str | None, int]:
    """Write ``demo.gif``: the robot beside the operator's model at each recorded model frame (the
    robot's frame nearest in time: its limbs, and the placed objects at the poses it has for them, in
    the order they were placed; without, they stay where they were placed). ``on_frame(i, n)`` after each
    frame. Returns the path (``None`` without frames) and the frames written; both worlds are put back as
    they were."""
    robot, bodies = session.robot, session.shown_bodies
    points = scene_points(session, shown, rock_at, model_frames, robot_frames)  # type: ignore[arg-type]
    fitted = fit_view(points, top=CAPTION_BAND)  # everything in frame all along, below the caption
    lamp.set_view(fitted)
    proj = pb.computeProjectionMatrixFOV(VIEW_ANGLE_DEG, IMAGE_SIZE[0] / IMAGE_SIZE[1], 0.01, 10.0)
    view = pb.computeViewMatrix(*fitted)
    final_model = world_frame(session.world, bodies)
    final_robot = world_frame(shown.world)
    robot_t = np.array([frame.t for frame in robot_frames])
    from PIL import Image

    frames = []
    delay = session.transport.command_delay()
    for i, frame in enumerate(model_frames):
        t = frame.t
        show_frame(session.world, frame, bodies)
        objects = None
        if len(robot_t):  # the robot's frame nearest in time
            k = int(np.abs(robot_t - t).argmin())
            show_frame(shown.world, robot_frames[k])
            objects = [pose_matrix(*pose) for pose in robot_frames[k].bases.values()] or None
        left = caption(  # the robot in the sea, lit by its own lamp (pyvista: PyBullet has no spot light)
            _labels(lamp.render(shown, rock_at, objects), shown, view, proj, (235, 235, 235)),
            [f"ROBOT (remote): soft-arm physics in seawater   t = {t:5.1f} s"],
            fill=(235, 235, 235),
        )
        right = caption(
            _labels(render_view(robot.world.client, view, proj), robot, view, proj, (20, 20, 20)),
            [f"OPERATOR'S MODEL (local): commands reach the robot {delay:.1f} s later"],
        )
        # a palette frame (1 byte a pixel) at once: 300 RGB frames of 1280 x 480 would hold 550 MB
        frames.append(Image.fromarray(np.concatenate([left, right], axis=1)).quantize(colors=255))
        if on_frame is not None:
            on_frame(i + 1, len(model_frames))
    show_frame(session.world, final_model, bodies)
    show_frame(shown.world, final_robot)
    if not frames:
        return None, 0
    path = out_dir / "demo.gif"
    ms = int(1000 * GIF_EVERY / VISUAL_RATE)
    with atomic_path(path) as tmp:
        frames[0].save(tmp, format="GIF", save_all=True, append_images=frames[1:], duration=ms, loop=0)
    return str(path), len(frames)


def session_bar(duration: float) -> tuple[Any, Callable[[float], None]]:
    """A tqdm bar on stderr over the session's ``duration`` simulated seconds (shown on a terminal only),
    with the real-time factor so far, and its ``on_time(t)`` (simulated time now, s)."""
    from tqdm import tqdm

    bar = tqdm(
        total=round(duration, 1), desc="session", unit="s", file=sys.stderr, disable=None, leave=False,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} s simulated{postfix}",
    )  # fmt: skip
    start = time.perf_counter()

    def on_time(t: float) -> None:
        wall = max(time.perf_counter() - start, 1e-9)
        bar.set_postfix_str(f"{t / wall:.2f}x real time", refresh=False)
        bar.update(round(t, 1) - bar.n)

    return bar, on_time


def progress_bar(total: int):
    """A tqdm bar on stderr for ``total`` GIF frames (shown on a terminal only) and its ``on_frame``."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc="demo.gif", unit="frame", file=sys.stderr, disable=None, leave=False)

    def on_frame(i: int, n: int) -> None:
        bar.update(i - bar.n)

    return bar, on_frame
