"""UDP bridge: an external device process streams its pose in and receives the force out.

This module is the bridge's receiving side (:class:`UdpBridge`, an input device of the session); the
device process uses :class:`~pccbullet.teleop.udp.client.UdpBridgeClient`. The wire format (fixed-size
packets, HMAC tags, the session id in every packet) is in :mod:`pccbullet.teleop.udp.packets`, the key
files in :mod:`pccbullet.teleop.udp.keys`.

**Two sockets.** The bridge's port takes handshakes only. Each session gets a socket of its own, bound
to a fresh port and *connected* to the device's address: the kernel delivers to it only what that
address sends, so datagrams from anyone else never reach the session, whatever their number.

**Session handshake.** The device process sends HELLO with a fresh random nonce to the bridge's port;
the bridge answers WELCOME with its own fresh nonce, the session id (the first 8 bytes of SHA-256 over
both nonces) and the session's port, to which the device then sends its POSEs and from which FORCEs
come back. Every POSE, FORCE and BYE carries the session id (inside the HMAC), and the sequence numbers
restart at 1 in each session, so packets captured in an earlier session, or by an earlier bridge
process, are dropped (``session``).

**A session belongs to its device** until the device says BYE or is silent for ``session_timeout``
(1 s): a HELLO from any other address meanwhile is dropped (``busy``) before its tag is even checked,
with or without a key. A HELLO from the session's own address (the client re-syncing) starts a new
session at once. The client re-handshakes by itself when no FORCE came back for ``resync_after`` (a
restarted bridge, a lost WELCOME); a device process that restarts (a new address) is taken once its old
session has been silent for ``session_timeout``.

**Sequence window.** A POSE is accepted when ``0 < (seq - last) mod 2^32 <= SEQ_WINDOW`` (1024): a
huge or bit-flipped seq is dropped (``seq``) instead of locking the stream out; the counter may wrap.

**Time.** The bridge keeps the smallest ``now - t`` seen in the session (clock offset plus the smallest
latency); a POSE whose ``now - t`` exceeds it by more than ``max_age`` (late: queued during a stall or
delayed in the network), or falls short of it by more than ``max_age`` (from the future), is dropped
(``time``) and never moves the arm.

**Authentication.** With a key (``key`` bytes, from :func:`~pccbullet.teleop.udp.keys.load_key_file`) the
bridge drops every packet with a bad tag (``auth``). The demo always has one: from ``--udp-key-file``,
the file named by ``$PCCBULLET_UDP_KEY_FILE`` or ``$XDG_CONFIG_HOME/pccbullet/udp.key``
(``~/.config/pccbullet/udp.key``), created there on first use
(:func:`~pccbullet.teleop.udp.keys.resolve_key`). Without a key anything that reaches the port can open
a session while none is live.

**Cost bounds.** Every datagram passes the cheap checks first (size, magic, version, type, session id,
and for a HELLO whether a session is live), and only then its HMAC. Each :meth:`UdpBridge.poll` reads
at most ``max_packets`` datagrams and stops after ``max_drain_time`` seconds, the session's socket
first (at least one datagram of each socket a poll, at most ``port_packets`` of the bridge's port while a
session is live); only the newest valid pose is kept (button edges of
every accepted pose are). Drops are counted by reason in :attr:`UdpBridge.dropped`: wrong size, magic,
version or type, a bad tag (``auth``), NaN/inf, a position outside ``workspace`` or a non-unit quaternion
(``range``), another session, ``busy``, ``seq``, ``time``. A flood on the bridge's port cannot starve
the session: its datagrams queue on another socket, read first.

Stream states (:meth:`UdpBridge.read`): before the first pose the samples carry no position and
``ok = True`` (the arm holds, no fault); while poses flow, the newest position; a stream with no valid
pose for ``timeout`` s after it flowed is stale: no position and ``ok = False`` (the haptic renderer
sends 0 N) until poses flow again (the renderer then ramps the force back in). After a BYE the bridge
waits for a device again (no position, ``ok = True``).
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

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.base import DeviceSample
from pccbullet.teleop.udp.keys import MIN_KEY_BYTES, resolve_key
from pccbullet.teleop.udp.packets import (
    BUTTON_ACTIONS,
    NONCE_SIZE,
    TYPE_BYE,
    TYPE_HELLO,
    TYPE_POSE,
    decode,
    encode_force,
    encode_welcome,
    in_window,
    peek,
    session_id,
)

log = logging.getLogger(__name__)

SESSION_TIMEOUT_S = 1.0  # s, silence after which a session's device loses it (see the module docstring)


def open_bridge(
    port: int = 0, key_file: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> UdpBridge:
    """The demo's bridge on 127.0.0.1:``port`` with the key of
    :func:`~pccbullet.teleop.udp.keys.resolve_key` (created on first use: HMAC is always on); logs the
    address and the key's file.

    Args:
        port: UDP port, 0 for any free one. key_file: the HMAC key file (``None``: the default lookup).
        env: the environment the default lookup reads (``None``: ``os.environ``).

    Returns:
        The bound :class:`UdpBridge`.
    """
    key, path = resolve_key(key_file, env)
    bridge = UdpBridge(port=port, key=key)
    host, bound = bridge.address
    log.warning("UDP bridge listening on %s:%d, HMAC key from %s", host, bound, path)
    return bridge


class UdpBridge:
    """Receiving side, usable as an input device (:class:`~pccbullet.teleop.devices.base.InputDevice`).

    Args:
        host: address to bind; keep 127.0.0.1 unless the device process runs elsewhere.
        port: UDP port of the handshakes, 0 for any free one (see :attr:`address`).
        key: shared HMAC key (at least 16 bytes), or ``None`` for no authentication.
        timeout: a stream with no valid pose for this long is stale (s).
        session_timeout: a session whose device sent nothing valid for this long ends (s); until then no
            other address can open one.
        max_age: largest accepted lateness of a pose (s), see the module docstring.
        workspace: largest accepted |position| (m).
        max_packets: datagrams read per poll at most.
        max_drain_time: time spent reading per poll at most (s); at least one datagram of each socket
            is read.
        port_packets: datagrams read from the bridge's port per poll at most while a session is live
            (its device re-syncs there; anything else is ``busy``).
        clock: monotonic clock in seconds (injectable for tests).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        key: bytes | None = None,
        timeout: float = 0.1,
        session_timeout: float = SESSION_TIMEOUT_S,
        max_age: float = 0.1,
        workspace: float = 1.0,
        max_packets: int = 64,
        max_drain_time: float = 2e-4,
        port_packets: int = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not (
            0 < timeout <= 60
            and timeout <= session_timeout <= 3600
            and 0 < max_age <= 60
            and 0 < workspace <= 100
            and 0 < max_drain_time <= 1
        ) or not all(isinstance(n, int) and 1 <= n <= 100_000 for n in (max_packets, port_packets)):
            raise ConfigurationError(
                f"timeout = {timeout!r}, session_timeout = {session_timeout!r}, max_age = {max_age!r}, "
                f"workspace = {workspace!r}, max_packets = {max_packets!r}, port_packets = {port_packets!r}, "
                f"max_drain_time = {max_drain_time!r} are invalid; allowed: 0 < timeout <= 60 s, timeout <= "
                "session_timeout <= 3600 s, 0 < max_age <= 60 s, 0 < workspace <= 100 m, 1 <= max_packets, "
                "port_packets <= 100000, 0 < max_drain_time <= 1 s"
            )
        if key is not None and len(key) < MIN_KEY_BYTES:
            raise ConfigurationError(
                f"key of {len(key)} bytes is too short; allowed: >= {MIN_KEY_BYTES} bytes"
            )
        if not 0 <= port <= 65535:
            raise ConfigurationError(f"UDP port = {port!r} is invalid; allowed: 0..65535")
        self.key = key
        self.timeout = timeout
        self.session_timeout = session_timeout
        self.max_age = max_age
        self.workspace = workspace
        self.max_packets = max_packets
        self.max_drain_time = max_drain_time
        self.port_packets = port_packets
        self.clock = clock
        self._host = host
        self._sock = self._socket(host, port)
        self.address: tuple[str, int] = self._sock.getsockname()
        self._link: socket.socket | None = None  # the session's own socket, connected to its device
        self.dropped: Counter[str] = Counter()
        self.accepted = 0  # valid poses
        self.received = 0  # datagrams read
        self.handshakes = 0
        self.polls_cut = 0  # socket reads that stopped on max_packets or max_drain_time with data left
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

    @staticmethod
    def _socket(host: str, port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setblocking(False)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise ConfigurationError(
                f"cannot bind the UDP bridge to {host}:{port} ({exc.strerror}); allowed: a free port"
            ) from None
        return sock

    def _live(self, now: float) -> bool:
        """A session is open and its device spoke within ``session_timeout``."""
        return self._session is not None and now - self._since <= self.session_timeout

    def _hello(self, data: bytes, addr: tuple[str, int], now: float) -> str:
        if addr != self._peer and self._live(now):
            return "busy"  # another device owns the session: not even the tag is checked
        reason, fields = decode(data, self.key)
        if reason != "ok":
            return reason
        _, _, t, _, (nonce,) = fields
        if self._session is not None and addr == self._peer and nonce == self._nonces[0]:
            self._welcome()  # a retransmitted HELLO: the WELCOME was lost
            return "ok"
        self._end(waiting=self._last_valid is None)
        link = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        link.setblocking(False)
        link.bind((self._host, 0))
        link.connect(addr)  # the kernel delivers to it only what the device's address sends
        self._link = link
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
        self._welcome()
        return "ok"

    def _welcome(self) -> None:
        if self._session is None or self._link is None or self._peer is None:
            return
        port = self._link.getsockname()[1]
        packet = encode_welcome(self.clock(), self._session, *self._nonces, key=self.key, port=port)
        try:
            self._sock.sendto(packet, self._peer)
        except OSError:
            self.dropped["send"] += 1

    def _end(self, *, waiting: bool) -> None:
        """Close the session (a BYE, a silence, a new handshake); ``waiting``: back to before the first
        pose (no fault) rather than a stale stream."""
        if self._link is not None:
            self._link.close()
        self._link = None
        self._session = None
        self._peer = None
        if waiting:
            self._last_valid = None
            self._position = None

    def poll(self) -> int:
        """Read up to ``max_packets`` datagrams for at most ``max_drain_time``, the session's socket
        first; returns the poses accepted."""
        start = time.perf_counter()
        now = self.clock()
        left, n = self.max_packets, 0
        if self._link is not None:
            read, n = self._drain(self._link, left, start, now)
            left = min(left - read, self.port_packets if self._live(now) else left)
        self._drain(self._sock, max(left, 1), start, now)
        if self._session is not None and not self._live(now):
            self._end(waiting=False)  # silent for session_timeout: any device may connect
        return n

    def _drain(self, sock: socket.socket, most: int, start: float, now: float) -> tuple[int, int]:
        """Read up to ``most`` datagrams of ``sock`` within the time budget; (read, poses accepted)."""
        n = i = 0
        for i in range(most):
            if i and time.perf_counter() - start > self.max_drain_time:
                self.polls_cut += 1
                return i, n
            try:
                data, addr = sock.recvfrom(2048)
            except (BlockingIOError, InterruptedError):
                return i, n
            except OSError:  # e.g. an ICMP error on the session's connected socket
                self.dropped["socket"] += 1
                return i, n
            self.received += 1
            if sock is self._sock:
                reason = self._at_port(data, addr, now)
            else:
                reason = self._at_session(data, now)
                if self._link is not sock:  # a BYE ended the session
                    return i + 1, n
            if reason == "ok":
                n += sock is not self._sock
            else:
                self.dropped[reason] += 1
        self.polls_cut += 1
        return i + 1, n

    def _at_port(self, data: bytes, addr: tuple[str, int], now: float) -> str:
        reason, kind, _ = peek(data)
        if reason != "ok":
            return reason
        if kind != TYPE_HELLO:  # a session's packet at the handshake port: captured, replayed, stray
            return "session" if kind in (TYPE_POSE, TYPE_BYE) else "type"
        return self._hello(data, addr, now)

    def _at_session(self, data: bytes, now: float) -> str:
        reason, kind, session = peek(data)
        if reason != "ok":
            return reason
        if kind not in (TYPE_POSE, TYPE_BYE):
            return "type"
        if session != self._session:
            return "session"
        reason, fields = decode(data, self.key)  # the tag, after every cheap check
        if reason != "ok":
            return reason
        if kind == TYPE_BYE:
            self._end(waiting=True)
            return "ok"
        _, seq, t, _, values = fields
        reason = self._check_pose(seq, t, values, now)
        if reason != "ok":
            return reason
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
        return "ok"

    def _check_pose(self, seq: int, t: float, values: tuple, now: float) -> str:
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
        """``True`` before the first valid pose (and after a BYE)."""
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
        if self._session is None or self._link is None or self._last_valid is None or self.stale:
            return
        self._force_seq += 1
        values = [float(v) for v in force]
        if len(values) != 3 or not all(map(math.isfinite, values)):
            self.dropped["send"] += 1
            return
        packet = encode_force(self._force_seq, self.clock(), values, self.key, session=self._session)
        try:
            self._link.send(packet)
        except OSError:
            self.dropped["send"] += 1

    def close(self) -> None:
        """Close the sockets."""
        self._end(waiting=False)
        self._sock.close()
