"""UDP bridge: an external device process streams its pose in and receives the force out.

This module is the bridge's receiving side (:class:`UdpBridge`, an input device of the session); the
device process uses :class:`~pccbullet.teleop.udp.client.UdpBridgeClient`. The wire format (fixed-size
packets, HMAC tags, the session id in every packet) is in :mod:`pccbullet.teleop.udp.packets`, the key
files in :mod:`pccbullet.teleop.udp.keys`.

**Session handshake.** The device process (:class:`~pccbullet.teleop.udp.client.UdpBridgeClient`) sends
HELLO with a fresh random nonce; the bridge answers WELCOME with its own fresh nonce and the session id,
the first 8 bytes of SHA-256 over both nonces. Every POSE and FORCE carries the session id (inside the
HMAC), and the sequence numbers restart at 1 in each session. Packets captured in an earlier session, or
by an earlier bridge process, carry another session id and are dropped (``session``). The bridge takes a
HELLO from the peer of the current session at any time, and from another address once the current stream
is stale: a device process that restarts re-syncs within ``timeout``. The client starts a new handshake
by itself when no FORCE came back for ``resync_after`` (a restarted bridge, a lost WELCOME): the bridge
sends a FORCE per tick while poses flow.

**Sequence window.** A POSE is accepted when ``0 < (seq - last) mod 2^32 <= SEQ_WINDOW`` (1024): one
packet with a huge or bit-flipped seq is dropped (``seq``) instead of locking the stream out, and the
counter may wrap around.

**Time.** The bridge keeps the smallest ``now - t`` seen in the session (clock offset plus the smallest
latency); a POSE whose ``now - t`` exceeds it by more than ``max_age`` (late: queued during a stall or
delayed in the network), or falls short of it by more than ``max_age`` (from the future), is dropped
(``time``) and never moves the arm.

**Authentication.** Without a key anything that can reach the port can move the arm and read the forces.
With one (``key`` bytes, from :func:`~pccbullet.teleop.udp.keys.load_key_file`) the bridge drops every
packet with a bad tag (``auth``); the demo loads the key from ``--udp-key-file``, the file named by
``$PCCBULLET_UDP_KEY_FILE`` or ``$XDG_CONFIG_HOME/pccbullet/udp.key`` (``~/.config/pccbullet/udp.key``),
in that order (:func:`~pccbullet.teleop.udp.keys.resolve_key`), so HMAC is on by default as soon as that
file exists.

The receiver binds 127.0.0.1 by default and never blocks. Each :meth:`UdpBridge.poll` reads at most
``max_packets`` datagrams and stops after ``max_drain_time`` seconds; only the newest valid pose is kept
(button edges of every accepted pose are). It drops - and counts in :attr:`UdpBridge.dropped` - packets
of the wrong size, magic, version or type, with a bad tag, NaN/inf values, positions outside
``workspace`` (m from the device origin), non-unit quaternions, another session or another sender than
the session's (``session``), a sequence number outside the window (``seq``) or a bad time stamp
(``time``).

Stream states (:meth:`UdpBridge.read`): before the first pose the samples carry no position and
``ok = True`` (the arm holds, no fault); while poses flow, the newest position; a stream with no valid
pose for ``timeout`` s after it flowed is stale: no position and ``ok = False`` (the haptic renderer
sends 0 N) until poses flow again (the renderer then ramps the force back in).
"""

from __future__ import annotations

import logging
import math
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Mapping

import numpy as np

from pccbullet.teleop.devices.base import DeviceSample
from pccbullet.teleop.udp.keys import MIN_KEY_BYTES, default_key_file, resolve_key
from pccbullet.teleop.udp.packets import (
    BUTTON_ACTIONS,
    NONCE_SIZE,
    TYPE_HELLO,
    TYPE_POSE,
    decode,
    encode_force,
    encode_welcome,
    in_window,
    session_id,
)
from pccbullet.urdf_gen.errors import ConfigurationError

log = logging.getLogger(__name__)


def open_bridge(
    port: int = 0, key_file: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> UdpBridge:
    """The demo's bridge on 127.0.0.1:``port`` with the key of
    :func:`~pccbullet.teleop.udp.keys.resolve_key` (HMAC on when a key file exists); logs the address and
    whether HMAC is on.

    Args:
        port: UDP port, 0 for any free one. key_file: the HMAC key file (``None``: the default lookup).
        env: the environment the default lookup reads (``None``: ``os.environ``).

    Returns:
        The bound :class:`UdpBridge`.
    """
    key, path = resolve_key(key_file, env)
    bridge = UdpBridge(port=port, key=key)
    host, bound = bridge.address
    if key is None:
        log.warning(
            "UDP bridge listening on %s:%d WITHOUT HMAC (any local process can move the arm); put a key "
            "into %s or pass --udp-key-file",
            host,
            bound,
            default_key_file(env),
        )
    else:
        log.warning("UDP bridge listening on %s:%d, HMAC key from %s", host, bound, path)
    return bridge


class UdpBridge:
    """Receiving side, usable as an input device (:class:`~pccbullet.teleop.devices.base.InputDevice`).

    Args:
        host: address to bind; keep 127.0.0.1 unless the device process runs elsewhere.
        port: UDP port, 0 for any free one (see :attr:`address`).
        key: shared HMAC key (at least 16 bytes), or ``None`` for no authentication.
        timeout: a stream with no valid pose for this long is stale (s).
        max_age: largest accepted lateness of a pose (s), see the module docstring.
        workspace: largest accepted |position| (m).
        max_packets: datagrams read per poll at most.
        max_drain_time: time spent reading per poll at most (s); at least one datagram is read.
        clock: monotonic clock in seconds (injectable for tests).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        key: bytes | None = None,
        timeout: float = 0.1,
        max_age: float = 0.1,
        workspace: float = 1.0,
        max_packets: int = 64,
        max_drain_time: float = 2e-4,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (
            0 < timeout <= 60 and 0 < max_age <= 60 and 0 < workspace <= 100 and 0 < max_drain_time <= 1
        ) or not (isinstance(max_packets, int) and 1 <= max_packets <= 100_000):
            raise ConfigurationError(
                f"timeout = {timeout!r}, max_age = {max_age!r}, workspace = {workspace!r}, max_packets = "
                f"{max_packets!r}, max_drain_time = {max_drain_time!r} are invalid; allowed: 0 < timeout <= "
                "60 s, 0 < max_age <= 60 s, 0 < workspace <= 100 m, 1 <= max_packets <= 100000, "
                "0 < max_drain_time <= 1 s"
            )
        if key is not None and len(key) < MIN_KEY_BYTES:
            raise ConfigurationError(
                f"key of {len(key)} bytes is too short; allowed: >= {MIN_KEY_BYTES} bytes"
            )
        if not 0 <= port <= 65535:
            raise ConfigurationError(f"UDP port = {port!r} is invalid; allowed: 0..65535")
        self.key = key
        self.timeout = timeout
        self.max_age = max_age
        self.workspace = workspace
        self.max_packets = max_packets
        self.max_drain_time = max_drain_time
        self.clock = clock
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setblocking(False)
        try:
            self._sock.bind((host, port))
        except OSError as exc:
            self._sock.close()
            raise ConfigurationError(
                f"cannot bind the UDP bridge to {host}:{port} ({exc.strerror}); allowed: a free port"
            ) from None
        self.address: tuple[str, int] = self._sock.getsockname()
        self.dropped: Counter[str] = Counter()
        self.accepted = 0  # valid poses
        self.received = 0  # datagrams read
        self.handshakes = 0
        self.polls_cut = 0  # polls that stopped on max_packets or max_drain_time with data left
        self._session: int | None = None
        self._nonces = (b"", b"")  # (client, bridge) of the current session
        self._peer: tuple[str, int] | None = None
        self._seq = 0
        self._offset = math.inf  # smallest now - t of the session (s)
        self._since = 0.0  # bridge time of the session's start or last valid pose
        self._last_valid: float | None = None
        self._position: tuple[float, float, float] | None = None
        self._buttons = 0
        self._pressed: list[str] = []
        self._force_seq = 0

    def _hello(self, t: float, nonce: bytes, addr: tuple[str, int], now: float) -> None:
        if self._session is not None and addr == self._peer and nonce == self._nonces[0]:
            self._welcome(addr)  # a retransmitted HELLO: the WELCOME was lost
            return
        if self._session is not None and addr != self._peer and now - self._since <= self.timeout:
            self.dropped["busy"] += 1  # another device while this one streams
            return
        bridge_nonce = os.urandom(NONCE_SIZE)
        self._session = session_id(nonce, bridge_nonce)
        self._nonces = (nonce, bridge_nonce)
        self._peer = addr
        self._seq = 0
        self._offset = now - t
        self._since = now
        self._buttons = 0
        self._force_seq = 0
        self.handshakes += 1
        self._welcome(addr)

    def _welcome(self, addr: tuple[str, int]) -> None:
        if self._session is None:
            return
        packet = encode_welcome(self.clock(), self._session, *self._nonces, key=self.key)
        try:
            self._sock.sendto(packet, addr)
        except OSError:
            self.dropped["send"] += 1

    def poll(self) -> int:
        """Read up to ``max_packets`` datagrams for at most ``max_drain_time``; returns the poses accepted."""
        n = 0
        start = time.perf_counter()
        now = self.clock()
        for i in range(self.max_packets):
            if i and time.perf_counter() - start > self.max_drain_time:
                self.polls_cut += 1
                break
            try:
                data, addr = self._sock.recvfrom(2048)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self.dropped["socket"] += 1
                break
            self.received += 1
            reason, fields = decode(data, self.key)
            if reason == "ok":
                kind, seq, t, session, values = fields
                if kind == TYPE_HELLO:
                    self._hello(t, values[0], addr, now)
                    continue
                reason = self._check_pose(kind, seq, t, session, values, now)
                if reason == "ok" and addr != self._peer:
                    reason = "session"  # the session's id, but not from its device's address
            if reason != "ok":
                self.dropped[reason] += 1
                continue
            self._seq = seq
            self._offset = min(self._offset, now - t)
            self._last_valid = self._since = now
            self._position = (values[0], values[1], values[2])
            buttons = values[7]
            rising = buttons & ~self._buttons
            if rising:
                self._pressed += [a for j, a in enumerate(BUTTON_ACTIONS) if rising >> j & 1]
            self._buttons = buttons
            self.accepted += 1
            n += 1
        else:
            self.polls_cut += 1
        return n

    def _check_pose(self, kind: int, seq: int, t: float, session: int, values: tuple, now: float) -> str:
        if kind != TYPE_POSE:
            return "type"
        if session != self._session:
            return "session"
        if not in_window(seq, self._seq):
            return "seq"
        lag = now - t
        if lag - self._offset > self.max_age or lag < self._offset - self.max_age:
            return "time"
        x, y, z, qx, qy, qz, qw = values[:7]
        if (
            x * x + y * y + z * z > self.workspace**2
            or abs(qx * qx + qy * qy + qz * qz + qw * qw - 1.0) > 2e-2
        ):
            return "range"
        return "ok"

    @property
    def waiting(self) -> bool:
        """``True`` before the first valid pose."""
        return self._last_valid is None

    @property
    def stale(self) -> bool:
        """``True`` when poses flowed and the last one is older than ``timeout``."""
        return self._last_valid is not None and self.clock() - self._last_valid > self.timeout

    def read(self, t: float) -> DeviceSample:
        """Poll, then the newest valid pose (see the module docstring for the stream states)."""
        self.poll()
        pressed, self._pressed = tuple(self._pressed), []
        if self._last_valid is None:
            return DeviceSample(t=t)
        if self.stale:
            return DeviceSample(t=t, ok=False)
        return DeviceSample(t=t, pressed=pressed, position=self._position)

    def send_force(self, force: np.ndarray) -> None:
        """Send a FORCE datagram to the session's device while its poses flow (nothing otherwise: a
        device that hears nothing starts a new handshake)."""
        if self._session is None or self._peer is None or self._last_valid is None or self.stale:
            return
        self._force_seq += 1
        values = [float(v) for v in force]
        if len(values) != 3 or not all(map(math.isfinite, values)):
            self.dropped["send"] += 1
            return
        packet = encode_force(self._force_seq, self.clock(), values, self.key, session=self._session)
        try:
            self._sock.sendto(packet, self._peer)
        except OSError:
            self.dropped["send"] += 1

    def close(self) -> None:
        """Close the socket."""
        self._sock.close()
