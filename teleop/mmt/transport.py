"""The master's side of the teleoperation link: commands down, state reports up, in simulated time.

:class:`Transport` owns the two directions of the emulated link (:class:`~pccbullet.teleop.channel.Channel`:
delay, bandwidth, loss), numbers the commands and sends them at ``cmd_rate``, carries the robot's state
reports up (a robot in this process reports at ``state_rate``; one in its own process on its own clock)
and unpacks every new report (:mod:`pccbullet.teleop.mmt.packets`) into a :class:`StateReport`. A report
names the command the robot tracks and for how long: the master tick it answers is the tick that command
was sent plus that age, the tick whose prediction the report is compared with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pccbullet.teleop.channel import Channel
from pccbullet.teleop.mmt.config import CONTACT_FORCE_N, RING_TICKS, MmtConfig
from pccbullet.teleop.mmt.packets import (
    CMD_HEADER,
    CMD_VERSION,
    OBJECT_POSE,
    STATE_HEADER,
    STATE_OBJECTS,
    STATE_PLAIN,
    STATE_TAIL,
    STATE_TENDONS,
    decode_objects,
    decode_shape,
    decode_tensions,
    encode_configs,
    tendon_block_size,
)
from pccbullet.teleop.mmt.video import VideoLink, camera_frame, encode_frame
from pccbullet.teleop.slave import Slave
from pccbullet.teleop.slave_process import SlaveProcess
from pccbullet.urdf_gen.pcc import PccConfig


@dataclass(frozen=True, slots=True)
class StateReport:
    """One state report of the robot, unpacked.

    Attributes:
        measured: limb -> ``(S, 3) float``, the measured arc of each segment as bend vector x, y (rad) and
            length (m).
        force: the sensor's low-passed contact force ``(3,) float`` (N, world).
        rock: the rock centre the robot located by touch ``(3,) float`` (m, world), NaN before its first
            touch.
        settled: bit i set: limb i was settled (:meth:`~pccbullet.teleop.slave.Slave.settled_mask`).
        tip: the haptic limb's tip ``(3,) float`` (m, world) when the robot sent the report.
        tick: the master tick the report answers (the tick its command was sent plus the command's age),
            ``None`` when that command is unknown or the tick is older than the :data:`RING_TICKS` the
            master keeps.
        sent: the robot's clock when it sent the report (s).
        tensions: every tendon's tension ``(n,) float`` (N, steps of
            :data:`~pccbullet.teleop.mmt.packets.TENSION_STEP`), limbs in the packets' order; empty for a
            robot driven by its joints.
        held: bit i set: the robot holds limb i's grip (a closed grasp).
        objects: each free placed object's pose ``(m, 7) float`` as the robot's world has it (position
            m, quaternion x, y, z, w), in the order placed; ``(0, 7)`` without free objects.
    """

    measured: dict[str, np.ndarray]
    force: np.ndarray
    rock: np.ndarray
    settled: int
    tick: int | None
    tip: np.ndarray
    sent: float
    tensions: np.ndarray = field(default_factory=lambda: np.zeros(0))
    held: int = 0
    objects: np.ndarray = field(default_factory=lambda: np.zeros((0, 7)))

    @property
    def force_magnitude(self) -> float:
        """``|force|`` (N)."""
        return float(np.linalg.norm(self.force))

    @property
    def contact(self) -> bool:
        """Whether the robot reported a contact (``|force|`` above
        :data:`~pccbullet.teleop.mmt.config.CONTACT_FORCE_N`)."""
        return self.force_magnitude > CONTACT_FORCE_N


class Transport:
    """The two directions of the link, the commands' numbering and the state reports' unpacking.

    Args:
        cfg: the setup (``downlink``, ``uplink``, ``cmd_rate``, ``state_rate``, ``seed``).
        shape: ``(limb, segments)`` of every limb, in the packets' order.
        dt: the master's tick (s).
        n_tendons: tendons a report carries (0: a robot driven by its joints, no tendon block).
        n_objects: free objects a report carries (0: no object block).

    Attributes:
        down / up: the link's two directions (their counters are the traffic metrics).
        updates: state reports accepted (newer than every one before).
        video: the robot's camera frames, on a channel of their own with what the reports leave of the
            uplink (:class:`~pccbullet.teleop.mmt.video.VideoLink`); a robot in this process renders
            and sends one every ``video.plan.period``, one in its own process on its own clock.
    """

    def __init__(
        self, cfg: MmtConfig, shape: list[tuple[str, int]], dt: float, n_tendons: int = 0, n_objects: int = 0
    ) -> None:
        self.down = Channel(cfg.downlink, seed=cfg.seed)
        self.up = Channel(cfg.uplink, seed=cfg.seed + 1)
        self.shape = shape
        self.dt = dt
        self._order = [n for n, _ in shape]
        self._body = 6 * sum(s for _, s in shape)  # bytes of the segments in a command or a report: 6 each
        self._tendons = tendon_block_size(n_tendons)  # bytes of a report's tendon block
        self._objects = OBJECT_POSE.size * n_objects  # bytes of a report's object block
        self._version = (STATE_TENDONS if n_tendons else STATE_PLAIN) + (STATE_OBJECTS if n_objects else 0)
        self._cmd_every = max(1, round(1.0 / (cfg.cmd_rate * dt)))  # ticks between two commands
        self._state_every = max(1, round(1.0 / (cfg.state_rate * dt)))  # ticks between two reports
        self._sent_tick: dict[int, int] = {0: 0}  # command seq -> master tick it was sent at
        self._seq_down = 0
        self._seq_up = 0
        self.updates = 0
        report_bits = 8.0 * self.report_size * cfg.state_rate
        self.video = VideoLink(cfg.uplink, report_bits, cfg.seed + 2)
        self._video_every = max(1, round(self.video.plan.period / dt))  # ticks between two frames
        self._frames = 0

    @property
    def report_size(self) -> int:
        """Bytes of a state report (header, segments, tendon block, object block, tail)."""
        return STATE_HEADER.size + self._body + self._tendons + self._objects + STATE_TAIL.size

    def send_command(self, k: int, t: float, cmd: dict[str, list[PccConfig]], grips: int = 0) -> None:
        """On every ``cmd_rate`` tick: number command ``cmd`` (limb -> per-segment PCC) with the grasp bits
        ``grips`` (bit i: limb i's grasp closed), remember tick ``k`` as its send tick and send it down at
        time ``t`` (s). Every command carries the grasp bits: a lost one is made good by the next."""
        if k % self._cmd_every:
            return
        self._seq_down += 1
        self._sent_tick[self._seq_down] = k
        self._sent_tick.pop(self._seq_down - 2 * RING_TICKS, None)
        head = CMD_HEADER.pack(CMD_VERSION, 1, self._seq_down, t, grips)
        self.down.send(t, head + encode_configs(cmd, self._order))

    def commands_arrived(self, t: float) -> list[bytes]:
        """The command packets that reach the robot by time ``t`` (s), oldest first."""
        return [payload for _, payload in self.down.deliver(t)]

    def send_states(self, k: int, t: float, slave: Slave | SlaveProcess) -> None:
        """Send the robot's state reports up at master tick ``k``, time ``t`` (s): a robot in this process
        reports every ``state_rate`` tick, one in its own process whatever it sent since the last call."""
        if isinstance(slave, Slave):
            if k % self._state_every == 0:
                self.up.send(t, slave.state_packet(k + 1, t))
            if k % self._video_every == 0:  # the robot's camera: rendered and sent up as it would
                image = camera_frame(slave.robot, self.video.plan.size)
                if image is not None:  # a robot without a camera sends none
                    self.video.send(t, encode_frame(image, t, self._frames, self.video.plan.budget))
                    self._frames += 1
        else:
            for packet in slave.take_states():
                self.up.send(t, packet)
            for packet in slave.take_frames():
                self.video.send(t, packet)

    def reports(self, k: int, t: float) -> list[StateReport]:
        """The state reports that reach the master by time ``t`` (s) at tick ``k``, unpacked, oldest first;
        malformed reports and reports not newer than the last accepted one are dropped."""
        out = []
        for _, payload in self.up.deliver(t):
            report = self._unpack(payload, k)
            if report is not None:
                out.append(report)
        return out

    def _unpack(self, payload: bytes, k: int) -> StateReport | None:
        if len(payload) != self.report_size:
            return None
        version, kind, seq, sent_at, cmd_seq, age, settled = STATE_HEADER.unpack_from(payload)
        if version != self._version or kind != 2 or seq <= self._seq_up:
            return None
        self._seq_up = seq
        self.updates += 1
        end = STATE_HEADER.size + self._body
        measured = decode_shape(payload[STATE_HEADER.size : end], self.shape)
        held, tensions = (0, np.zeros(0))
        if self._tendons:
            held, tensions = decode_tensions(payload[end : end + self._tendons])
        end += self._tendons
        objects = decode_objects(payload[end : end + self._objects])
        tail = np.array(STATE_TAIL.unpack(payload[-STATE_TAIL.size :]), dtype=float)
        sent = self._sent_tick.get(cmd_seq)
        tick = None if sent is None else sent + int(round(age / self.dt))
        if tick is not None and not (k - RING_TICKS < tick <= k):
            tick = None
        return StateReport(
            measured, tail[:3], tail[3:6], settled, tick, tail[6:9], sent_at, tensions, held, objects
        )

    def report_delay(self) -> float:
        """Expected one-way delay (s) of the uplink for a state report
        (:meth:`~pccbullet.teleop.channel.LinkSpec.expected_delay`)."""
        return self.up.spec.expected_delay(self.report_size)

    def command_delay(self) -> float:
        """Expected one-way delay (s) of the downlink for a command packet: its header and 6 bytes a
        segment (:meth:`~pccbullet.teleop.channel.LinkSpec.expected_delay`); the metrics align the
        robot's log with the master's by it."""
        return self.down.spec.expected_delay(CMD_HEADER.size + self._body)
