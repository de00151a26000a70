"""The robot's eyes: camera frames from the robot's camera arm, across the link, to the operator.

The robot renders what its camera arm sees (:func:`camera_frame`: PyBullet's TinyRenderer in the
robot's own world, lit from its light arm's direction) and sends it up the link as a JPEG. The uplink's
bandwidth decides the frames (:func:`video_plan`): what the state reports leave of it is the video's
share; the frame size is the largest of 320x240, 160x120 and 80x60 px whose budget of 0.25 bytes a
pixel fits a frame every :data:`MAX_PERIOD_S`, the period is that budget over the share (at least
:data:`MIN_PERIOD_S`), and each frame is JPEG-encoded at the best quality that fits the budget. The
frames take a :class:`~pccbullet.teleop.channel.Channel` of their own with the uplink's distance,
jitter and loss and the video's share of its bandwidth: they arrive late and some not at all, like the
reports. :class:`VideoLink` is the master's side: it sends what the robot captured and keeps the newest
frame that arrived, with its capture time (its age is what the operator is told).
"""

from __future__ import annotations

import io
import math
import struct
from dataclasses import dataclass, replace

import numpy as np

from pccbullet.sim.bullet import pb
from pccbullet.sim.robot import Robot
from pccbullet.teleop.channel import Channel, LinkSpec
from pccbullet.urdf_gen import naming

SIZES = ((320, 240), (160, 120), (80, 60))  # px, the frame sizes, largest first
BYTES_PER_PIXEL = 0.25  # the JPEG budget of a frame (bytes a pixel)
MIN_PERIOD_S = 0.2  # s, at most 5 frames a second
MAX_PERIOD_S = 5.0  # s, the slowest frame rate a size is chosen for
FOV_DEG = 100.0  # the camera arm's wide-angle lens
HEADER = struct.Struct("<dI")  # capture time (s), frame number


@dataclass(frozen=True, slots=True)
class VideoPlan:
    """The frames a link can carry.

    Attributes:
        size: (width, height) px. period: s between two frames. budget: bytes a frame may take.
        bandwidth: the video's share of the uplink (bit/s).
    """

    size: tuple[int, int]
    period: float
    budget: int
    bandwidth: float


def video_plan(uplink: LinkSpec, telemetry_bits_per_s: float) -> VideoPlan:
    """Frame size, period and byte budget for the share of ``uplink`` that the state reports
    (``telemetry_bits_per_s``) leave (at least a tenth of it); see the module docstring."""
    share = max(uplink.bandwidth - telemetry_bits_per_s, 0.1 * uplink.bandwidth)
    fits = [(w, h) for w, h in SIZES if 8.0 * int(w * h * BYTES_PER_PIXEL) / share <= MAX_PERIOD_S]
    w, h = fits[0] if fits else SIZES[-1]
    budget = int(w * h * BYTES_PER_PIXEL)
    return VideoPlan((w, h), max(MIN_PERIOD_S, 8.0 * budget / share), budget, share)


def payload_limb(robot: Robot, kind: str) -> str | None:
    """The first limb of ``robot`` whose tip carries a payload of ``kind`` (``"camera"``, ``"light"``),
    or ``None``."""
    return next((limb.name for limb in robot.spec.limbs if limb.payload and limb.payload.kind == kind), None)


def camera_frame(robot: Robot, size: tuple[int, int]) -> np.ndarray | None:
    """What the camera arm of ``robot`` (a :class:`~pccbullet.sim.robot.Robot`) sees: ``(h, w, 3) uint8``,
    looking along its tip's z axis (image up: the tip's -x), lit from the light arm's direction (from
    above without one); ``None`` for a robot without a camera payload (nothing to send)."""
    camera = payload_limb(robot, "camera")
    if camera is None:
        return None
    T = robot.tip_pose(camera)
    eye = T[:3, 3]
    view = pb.computeViewMatrix(eye.tolist(), (eye + T[:3, 2]).tolist(), (-T[:3, 0]).tolist())
    w, h = size
    proj = pb.computeProjectionMatrixFOV(FOV_DEG, w / h, 0.01, 5.0)
    light = payload_limb(robot, "light")
    beam = robot.link_pose(naming.tip_link(light))[:3, 2] if light is not None else np.array([0.0, 0.0, -1.0])
    _, _, rgba, _, _ = pb.getCameraImage(
        w,
        h,
        viewMatrix=view,
        projectionMatrix=proj,
        renderer=pb.ER_TINY_RENDERER,
        lightDirection=(-beam).tolist(),
        physicsClientId=robot.world.client,
    )
    return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]


def encode_frame(image: np.ndarray, t: float, number: int, budget: int) -> bytes:
    """A frame packet: capture time, number and the JPEG of ``image`` at the best quality (95 down to 5)
    within ``budget`` bytes (the lowest quality when none fits)."""
    from PIL import Image

    pil = Image.fromarray(image)
    data = b""
    for quality in (95, 85, 75, 60, 45, 30, 20, 10, 5):
        buf = io.BytesIO()
        pil.save(buf, format="JPEG", quality=quality)
        data = buf.getvalue()
        if len(data) <= budget:
            break
    return HEADER.pack(t, number) + data


def decode_frame(packet: bytes) -> tuple[float, int, np.ndarray] | None:
    """Capture time, number and image ``(h, w, 3) uint8`` of a frame packet; ``None`` if malformed."""
    from PIL import Image, UnidentifiedImageError

    if len(packet) <= HEADER.size:
        return None
    t, number = HEADER.unpack_from(packet)
    try:
        image = np.asarray(Image.open(io.BytesIO(packet[HEADER.size :])).convert("RGB"))
    except (UnidentifiedImageError, OSError, ValueError):
        return None
    return (t, number, image) if math.isfinite(t) else None


class VideoLink:
    """The video's channel and the newest frame that crossed it (master side).

    Args:
        uplink: the robot-to-operator link. telemetry_bits_per_s: what the state reports take of it.
        seed: the channel's seed.

    Attributes:
        plan: :class:`VideoPlan`. channel: the video's channel. frame: the newest frame's image,
            ``None`` before the first. captured, arrived: its capture and arrival times (s).
        received: frames that arrived.
    """

    def __init__(self, uplink: LinkSpec, telemetry_bits_per_s: float, seed: int) -> None:
        self.plan = video_plan(uplink, telemetry_bits_per_s)
        self.channel = Channel(replace(uplink, bandwidth=self.plan.bandwidth), seed=seed)
        self.frame: np.ndarray | None = None
        self.captured = math.nan
        self.arrived = math.nan
        self.received = 0
        self._number = -1

    def send(self, t: float, packet: bytes) -> None:
        """A frame packet the robot sent at time ``t`` (s)."""
        self.channel.send(t, packet)

    def deliver(self, t: float) -> bool:
        """Take the frames that arrived by time ``t`` (s); returns whether a newer one came."""
        newer = False
        for arrival, packet in self.channel.deliver(t):
            frame = decode_frame(packet)
            if frame is None or frame[1] <= self._number:
                continue
            self.captured, self._number, self.frame = frame
            self.arrived = arrival
            self.received += 1
            newer = True
        return newer

    def age(self, t: float) -> float:
        """How old the newest frame is at time ``t`` (s; NaN before the first)."""
        return t - self.captured
