"""The demo's files: ``metrics.png``, and the GIF, camera image and tip plot rendered after the run.

The run records what these files need as it goes: the limb tips at the visual rate (:class:`TipLog`) and
the scene poses of the model and the robot (:data:`ScenePose`, :func:`scene_pose`). The GIF shows the
robot (rendered from its own world, or from recorded poses shown in a world of our own when it ran in its
own process) beside the operator's model, one frame per recorded scene pose; frames become palette images
as they are rendered, so memory stays bounded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pccbullet.sim.bullet import pb
from pccbullet.sim.loop import VISUAL_RATE
from pccbullet.teleop.demo.render import SpotlitRenderer

if TYPE_CHECKING:
    from pccbullet.sim.robot import Robot
    from pccbullet.teleop.mmt.session import MmtSession

GIF_EVERY = 5  # visual frames per GIF frame (10 fps)
IMAGE_SIZE = (640, 480)  # px, one GIF panel and the camera image
CAMERA_FOV_DEG = 100.0  # vertical field of view of the tip camera (a wide-angle underwater camera)
EXTERNAL_VIEW = ([1.25, -1.05, 0.15], [0.45, 0.0, -0.42], [0, 0, 1])  # eye, target, up (m, world)
MAX_TIP_ROWS = 30_000  # rows of the tip log (a longer session keeps every k-th visual frame)


ScenePose = tuple[dict[str, np.ndarray], tuple[tuple[float, ...], tuple[float, ...]]]
"""What a world shows: every limb's joint vector and the rock's position and quaternion."""


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


def scene_pose(robot: Robot, rock: int) -> ScenePose:
    """A world's pose now (joints read back exactly as PyBullet holds them)."""
    pose = pb.getBasePositionAndOrientation(rock, physicsClientId=robot.world.client)
    return {name: robot.joints(name) for name in robot.bodies}, (tuple(pose[0]), tuple(pose[1]))


def show_scene(robot: Robot, rock: int, pose: ScenePose) -> None:
    """Put a world back into ``pose`` (joints reset, rock moved) to render it."""
    joints, (position, orientation) = pose
    for name, q in joints.items():
        robot.set_joints(name, q)
    pb.resetBasePositionAndOrientation(rock, position, orientation, physicsClientId=robot.world.client)
    robot.world.mark_moved()


def _render(client: int, view: list[float], proj: list[float]) -> np.ndarray:
    """RGB image ``(h, w, 3) uint8`` for PyBullet view and projection matrices (16 floats each)."""
    w, h = IMAGE_SIZE
    _, _, rgba, _, _ = pb.getCameraImage(
        w,
        h,
        viewMatrix=view,
        projectionMatrix=proj,
        renderer=pb.ER_TINY_RENDERER,
        physicsClientId=client,
    )
    return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]


def _caption(image: np.ndarray, lines: list[str], fill: tuple[int, int, int] = (20, 20, 20)) -> np.ndarray:
    """``image`` with text lines in its top-left corner (PIL's default font)."""
    from PIL import Image, ImageDraw

    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    for i, line in enumerate(lines):
        draw.text((8, 6 + 14 * i), line, fill=fill)
    return np.asarray(pil)


def plot_metrics(out_dir: Path, session: MmtSession) -> str:
    """Write ``metrics.png``: the operator's and the robot's force, the palpation tips and their distance
    over the session's log; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lg = session.log
    t = lg["t"]
    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    axes[0].plot(t, np.linalg.norm(lg["f_m"], axis=1), label="operator (master model)")
    axes[0].plot(t, np.linalg.norm(lg["f_s"], axis=1), label="slave force sensor (contacts)")
    axes[0].axhline(session.haptics.params.peak_force, color="r", ls=":", lw=1, label="device peak")
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
    fig.suptitle("Model-mediated teleoperation of the soft squid over a 1 s acoustic link")
    fig.tight_layout()
    path = out_dir / "metrics.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def write_outputs(
    out_dir: Path,
    session: MmtSession,
    shown: Robot,
    shown_rock: int,
    model_poses: list[tuple[float, ScenePose]],
    robot_poses: list[tuple[float, dict[str, np.ndarray]]],
    tips: TipLog,
) -> tuple[list[str], dict[str, list[float]]]:
    """Write the GIF (the robot beside the operator's model), the camera image and the tip plot.

    Args:
        out_dir: the folder. session: the session that ran (its model world is rendered).
        shown, shown_rock: a robot and rock body that show the robot's recorded poses.
        model_poses: ``(t, pose)`` of the model's scene, one per GIF frame.
        robot_poses: ``(t, joints per limb)`` of the robot, matched to the frames by time.
        tips: the model's limb tips at the visual rate.

    Returns:
        The files written and the robot's last tip positions per limb (m, world).
    """
    import imageio.v3 as iio
    import matplotlib
    from PIL import Image

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    robot, rock = session.robot, session.rock
    proj = pb.computeProjectionMatrixFOV(55, IMAGE_SIZE[0] / IMAGE_SIZE[1], 0.01, 5.0)
    view = pb.computeViewMatrix(*EXTERNAL_VIEW)
    final_model = scene_pose(robot, rock)
    final_robot = {n: shown.joints(n) for n in shown.bodies}
    limbs = tips.limbs
    robot_t = np.array([t for t, _ in robot_poses])
    cfg = session.cfg
    lamp = SpotlitRenderer(IMAGE_SIZE, EXTERNAL_VIEW, cfg.seabed_z, cfg.rock_radius)
    rock_at = pb.getBasePositionAndOrientation(shown_rock, physicsClientId=shown.world.client)[0]
    frames = []
    for t, pose_m in model_poses:
        show_scene(robot, rock, pose_m)
        if len(robot_t):  # the robot's pose nearest in time
            for name, q in robot_poses[int(np.abs(robot_t - t).argmin())][1].items():
                shown.set_joints(name, q)
        left = _caption(  # the robot in the sea, lit by its own lamp (pyvista: PyBullet has no spot light)
            lamp.render(shown, rock_at),
            [f"remote robot: soft-arm physics in seawater   t = {t:4.1f} s"],
            fill=(235, 235, 235),
        )
        right = _caption(
            _render(robot.world.client, view, proj),
            ["operator's local model (commands reach the robot 1 s later)"],
        )
        # a palette frame (1 byte a pixel) at once: 300 RGB frames of 1280 x 480 would hold 550 MB
        frames.append(Image.fromarray(np.concatenate([left, right], axis=1)).quantize(colors=255))
    show_scene(robot, rock, final_model)
    robot_xyz = np.full((len(robot_poses), len(limbs), 3), np.nan)
    for k, (_, joints) in enumerate(robot_poses):
        for name, q in joints.items():
            shown.set_joints(name, q)
        robot_xyz[k] = [shown.tip_pose(n)[:3, 3] for n in limbs]
    last = robot_poses[-1][1] if robot_poses else final_robot
    for name, q in last.items():
        shown.set_joints(name, q)
    robot_tips = {n: shown.tip_pose(n)[:3, 3].tolist() for n in limbs}
    files = []
    if frames:
        gif = out_dir / "demo.gif"
        ms = int(1000 * GIF_EVERY / VISUAL_RATE)
        frames[0].save(gif, save_all=True, append_images=frames[1:], duration=ms, loop=0)
        files.append(str(gif))
    cam = out_dir / "camera_tip.png"  # what the robot's camera sees, lit by the robot's lamp
    lamp.look_from(shown.tip_pose("camera"), CAMERA_FOV_DEG)
    iio.imwrite(cam, lamp.render(shown, rock_at))
    lamp.close()
    fig, axes = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
    t_model = tips.t[: tips.n]
    for i, name in enumerate(limbs):
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
    fig.tight_layout()
    plot = out_dir / "tips.png"
    fig.savefig(plot, dpi=100)
    plt.close(fig)
    files += [str(cam), str(plot), str(out_dir / "summary.json")]
    return files, robot_tips
