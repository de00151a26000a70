"""UDP bridge: an external device process streams its pose in and receives the force out.

Wire format (little endian, fixed size, version 1)::

    header  = magic b"PCCT" | version u8 | type u8 | seq u32 | t f64           (18 bytes)
    POSE    = header | position 3 f64 (m) | quaternion x y z w 4 f64 | buttons u32 | tag 16 B  (94 B)
    FORCE   = header | force 3 f64 (N)                                          | tag 16 B  (58 B)

``tag`` is HMAC-SHA256 (truncated to 16 bytes) over everything before it when a shared key is set, and
16 zero bytes otherwise. Buttons: bit 0 = next limb, bit 1 = next segment, bit 2 = light follows camera.

The receiver binds 127.0.0.1 by default, never blocks, drains at most ``max_packets`` datagrams per
:meth:`UdpBridge.poll` and drops - and counts in :attr:`UdpBridge.dropped` - packets of the wrong size,
magic, version or type, with a bad tag, NaN/inf values, positions outside ``workspace`` (m from the
device origin), non-unit quaternions, or an old sequence number. A stream with no valid packet for
``timeout`` seconds is stale: samples then carry no position and ``ok = False``, so the arm holds still
and the haptic renderer zeroes the force.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import socket
import struct
import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from teleop.devices.base import DeviceSample
from urdf_gen.errors import ConfigurationError

MAGIC = b"PCCT"
VERSION = 1
TYPE_POSE = 1
TYPE_FORCE = 2
TAG_SIZE = 16
HEADER = struct.Struct("<4sBBId")
POSE_BODY = struct.Struct("<7dI")
FORCE_BODY = struct.Struct("<3d")
POSE_SIZE = HEADER.size + POSE_BODY.size + TAG_SIZE  # 94 bytes
FORCE_SIZE = HEADER.size + FORCE_BODY.size + TAG_SIZE  # 58 bytes
BUTTON_ACTIONS = ("next_limb", "next_segment", "follow")


def _tag(key: bytes | None, data: bytes) -> bytes:
    if key is None:
        return bytes(TAG_SIZE)
    return hmac.new(key, data, hashlib.sha256).digest()[:TAG_SIZE]


def encode_pose(
    seq: int,
    t: float,
    position: Sequence[float],
    quaternion: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
    buttons: int = 0,
    key: bytes | None = None,
) -> bytes:
    """A POSE datagram (94 bytes): position ``(3,)`` (m), quaternion ``(4,)`` x y z w."""
    body = HEADER.pack(MAGIC, VERSION, TYPE_POSE, seq, t) + POSE_BODY.pack(*position, *quaternion, buttons)
    return body + _tag(key, body)


def encode_force(seq: int, t: float, force: Sequence[float], key: bytes | None = None) -> bytes:
    """A FORCE datagram (58 bytes): force ``(3,)`` (N, device frame)."""
    body = HEADER.pack(MAGIC, VERSION, TYPE_FORCE, seq, t) + FORCE_BODY.pack(*force)
    return body + _tag(key, body)


def decode(data: bytes, key: bytes | None = None) -> tuple[str, tuple]:
    """Check a datagram; returns ``("ok", (type, seq, t, values))`` or ``(reason, ())`` for a drop.

    Reasons: ``size``, ``magic``, ``version``, ``type``, ``auth``, ``nan``.
    """
    if len(data) not in (POSE_SIZE, FORCE_SIZE):
        return "size", ()
    magic, version, kind, seq, t = HEADER.unpack_from(data)
    if magic != MAGIC:
        return "magic", ()
    if version != VERSION:
        return "version", ()
    expected = {TYPE_POSE: POSE_SIZE, TYPE_FORCE: FORCE_SIZE}.get(kind)
    if expected != len(data):
        return "type", ()
    if key is not None and not hmac.compare_digest(_tag(key, data[:-TAG_SIZE]), data[-TAG_SIZE:]):
        return "auth", ()
    body = POSE_BODY if kind == TYPE_POSE else FORCE_BODY
    values = body.unpack_from(data, HEADER.size)
    if not all(math.isfinite(v) for v in (t, *values)):
        return "nan", ()
    return "ok", (kind, seq, t, values)


class UdpBridge:
    """Receiving side, usable as an input device (:class:`~teleop.devices.base.InputDevice`).

    Args:
        host: address to bind; keep 127.0.0.1 unless the device process runs elsewhere.
        port: UDP port, 0 for any free one (see :attr:`address`).
        key: shared HMAC key, or ``None`` for no authentication.
        timeout: a stream older than this is stale (s).
        workspace: largest accepted |position| (m).
        max_packets: datagrams drained per poll (bounds the time spent per tick).
        clock: monotonic clock in seconds (injectable for tests).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        key: bytes | None = None,
        timeout: float = 0.1,
        workspace: float = 1.0,
        max_packets: int = 64,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if timeout <= 0 or workspace <= 0 or max_packets < 1:
            raise ConfigurationError(
                f"timeout = {timeout!r}, workspace = {workspace!r}, max_packets = {max_packets!r} are "
                "invalid; allowed: timeout > 0 s, workspace > 0 m, max_packets >= 1"
            )
        self.key = key
        self.timeout = timeout
        self.workspace = workspace
        self.max_packets = max_packets
        self.clock = clock
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setblocking(False)
        self._sock.bind((host, port))
        self.address: tuple[str, int] = self._sock.getsockname()
        self.dropped: Counter[str] = Counter()
        self.accepted = 0
        self._peer: tuple[str, int] | None = None
        self._seq = -1
        self._last_valid: float | None = None
        self._position: tuple[float, float, float] | None = None
        self._buttons = 0
        self._pressed: list[str] = []
        self._force_seq = 0

    def poll(self) -> int:
        """Drain up to ``max_packets`` datagrams; returns the number accepted."""
        n = 0
        for _ in range(self.max_packets):
            try:
                data, addr = self._sock.recvfrom(2048)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.dropped["socket"] += 1
                break
            reason, fields = decode(data, self.key)
            if reason == "ok" and fields[0] != TYPE_POSE:
                reason = "type"
            if reason == "ok":
                _, seq, _, values = fields
                pos, quat = np.asarray(values[:3]), np.asarray(values[3:7])
                if np.linalg.norm(pos) > self.workspace or abs(np.linalg.norm(quat) - 1.0) > 1e-2:
                    reason = "range"
                elif seq <= self._seq:
                    reason = "replay"
            if reason != "ok":
                self.dropped[reason] += 1
                continue
            self._seq = seq
            self._peer = addr
            self._last_valid = self.clock()
            self._position = (float(pos[0]), float(pos[1]), float(pos[2]))
            buttons = int(values[7])
            rising = buttons & ~self._buttons
            self._pressed += [a for i, a in enumerate(BUTTON_ACTIONS) if rising >> i & 1]
            self._buttons = buttons
            self.accepted += 1
            n += 1
        return n

    @property
    def stale(self) -> bool:
        """``True`` before the first valid packet and when the last one is older than ``timeout``."""
        return self._last_valid is None or self.clock() - self._last_valid > self.timeout

    def read(self, t: float) -> DeviceSample:
        """Poll, then the latest valid pose; no position and ``ok = False`` while stale."""
        self.poll()
        pressed, self._pressed = tuple(self._pressed), []
        if self.stale:
            return DeviceSample(t=t, ok=False)
        return DeviceSample(t=t, pressed=pressed, position=self._position)

    def send_force(self, force: np.ndarray) -> None:
        """Send a FORCE datagram to the last valid sender (nothing before the first one)."""
        if self._peer is None:
            return
        self._force_seq += 1
        packet = encode_force(self._force_seq, self.clock(), [float(v) for v in force], self.key)
        try:
            self._sock.sendto(packet, self._peer)
        except OSError:
            self.dropped["send"] += 1

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()


class UdpBridgeClient:
    """The device-process side: send poses, receive forces (non-blocking)."""

    def __init__(self, server: tuple[str, int], *, key: bytes | None = None) -> None:
        self.server = server
        self.key = key
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setblocking(False)
        self._sock.bind(("127.0.0.1", 0))
        self._seq = 0

    def send_pose(
        self, position: Sequence[float], quaternion: Sequence[float] = (0, 0, 0, 1), buttons: int = 0
    ) -> None:
        """Send the handle pose: position ``(3,)`` (m), quaternion ``(4,)`` x y z w."""
        self._seq += 1
        self.send_raw(encode_pose(self._seq, time.monotonic(), position, quaternion, buttons, self.key))

    def send_raw(self, data: bytes) -> None:
        """Send any bytes (tests use it for malformed packets)."""
        self._sock.sendto(data, self.server)

    def recv_force(self) -> np.ndarray | None:
        """The newest force ``(3,)`` (N) waiting in the socket, or ``None``."""
        force = None
        for _ in range(64):
            try:
                data = self._sock.recv(2048)
            except (BlockingIOError, InterruptedError):
                break
            reason, fields = decode(data, self.key)
            if reason == "ok" and fields[0] == TYPE_FORCE:
                force = np.asarray(fields[3])
        return force

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()
