"""The device-process side of the UDP bridge: :class:`UdpBridgeClient` shakes hands with a
:class:`~pccbullet.teleop.udp.bridge.UdpBridge`, streams the handle's pose and receives the force.

The protocol (handshake, session ids, sequence window, re-sync) is described in
:mod:`pccbullet.teleop.udp.bridge`; the wire format is :mod:`pccbullet.teleop.udp.packets`. Example::

    from pccbullet.teleop.udp.client import UdpBridgeClient
    from pccbullet.teleop.udp.keys import default_key_file, load_key_file

    client = UdpBridgeClient(("127.0.0.1", 5005), key=load_key_file(default_key_file()))
    client.connect()  # handshake; DeviceError when the bridge does not answer within 2 s
    client.send_pose([0.05, 0.0, 0.1])  # m, device frame; once per tick
    force = client.recv_force()  # (3,) N or None
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections.abc import Callable, Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.base import DeviceError
from pccbullet.teleop.udp.packets import (
    NONCE_SIZE,
    TYPE_FORCE,
    TYPE_WELCOME,
    decode,
    encode_bye,
    encode_hello,
    encode_pose,
    in_window,
    session_id,
)


class UdpBridgeClient:
    """The device-process side: handshake, send poses, receive forces (non-blocking after
    :meth:`connect`).

    Args:
        server: the bridge's ``(host, port)``.
        key: the shared HMAC key, or ``None``.
        resync_after: start a new handshake when no FORCE came for this long while sending poses (s): counted
            from the first pose sent since the bridge was last heard (a device may wait after its
            handshake before its first pose; the bridge keeps a silent session for a second).
        clock: monotonic clock in seconds, also the ``t`` of the packets.
    """

    def __init__(
        self,
        server: tuple[str, int],
        *,
        key: bytes | None = None,
        resync_after: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0.0 < resync_after <= 60.0:
            raise ConfigurationError(f"resync_after = {resync_after!r} s is invalid; allowed: 0 < s <= 60")
        self.server = server
        self.key = key
        self.resync_after = resync_after
        self.clock = clock
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setblocking(False)
        self._sock.bind(("127.0.0.1", 0))
        self.session: int | None = None
        self.handshakes = 0
        self._nonce = b""
        self._hello_at = -math.inf
        self._heard = 0.0  # clock of the WELCOME or the last FORCE
        self._unanswered: float | None = None  # clock of the first pose sent since then
        self._seq = 0
        self._force_seq = 0
        self._force: np.ndarray | None = None
        self._dest = server  # where the session's packets go: the session's port after the WELCOME

    def connect(self, timeout: float = 2.0) -> None:
        """Handshake (blocking, HELLO repeated every 50 ms); raises
        :class:`~pccbullet.teleop.devices.base.DeviceError` without a WELCOME within ``timeout`` s."""
        self.session = None
        self._dest = self.server
        end = time.monotonic() + timeout
        while self.session is None:
            if time.monotonic() > end:
                raise DeviceError(
                    f"no answer from the UDP bridge at {self.server[0]}:{self.server[1]} within "
                    f"{timeout:g} s (is it running, with the same key?)"
                )
            self._maybe_hello()
            time.sleep(0.002)
            self._poll()

    def _maybe_hello(self) -> None:
        now = self.clock()
        if now - self._hello_at < 0.05:
            return
        if not self._nonce or now - self._hello_at > 1.0:
            self._nonce = os.urandom(NONCE_SIZE)
        self._hello_at = now
        self._send(encode_hello(now, self._nonce, self.key), self.server)

    def _poll(self) -> None:
        for _ in range(256):
            try:
                data = self._sock.recv(2048)
            except OSError:  # nothing waiting (BlockingIOError) or the socket failed
                return
            reason, fields = decode(data, self.key)
            if reason != "ok":
                continue
            kind, seq, _, session, values = fields
            if kind == TYPE_WELCOME and self.session is None and values[0] == self._nonce:
                if session == session_id(values[0], values[1]) and values[2]:
                    self.session, self._seq, self._force_seq = session, 0, 0
                    self._dest = (self.server[0], values[2])
                    self._heard, self._unanswered = self.clock(), None
                    self.handshakes += 1
            elif kind == TYPE_FORCE and session == self.session and in_window(seq, self._force_seq):
                self._force_seq = seq
                self._force = np.asarray(values)
                self._heard, self._unanswered = self.clock(), None

    def send_pose(
        self, position: Sequence[float], quaternion: Sequence[float] = (0, 0, 0, 1), buttons: int = 0
    ) -> bool:
        """Send the handle pose: position ``(3,)`` (m), quaternion ``(4,)`` x y z w. Returns ``False``
        (and sends a HELLO instead) while no session is up."""
        self._poll()
        quiet = self._unanswered is not None and self.clock() - self._unanswered > self.resync_after
        if self.session is not None and quiet:
            self.session = None  # the bridge went quiet: restarted, or our session was replaced
            self._nonce = b""
            self._dest = self.server
        if self.session is None:
            self._maybe_hello()
            return False
        self._seq = (self._seq + 1) & 0xFFFFFFFF
        if self._unanswered is None:
            self._unanswered = self.clock()
        self.send_raw(
            encode_pose(
                self._seq, self.clock(), position, quaternion, buttons, self.key, session=self.session
            )
        )
        return True

    def send_raw(self, data: bytes) -> None:
        """Send any bytes to the session's port (the bridge's port before a session; tests use it for
        malformed and replayed packets)."""
        self._send(data, self._dest)

    def _send(self, data: bytes, to: tuple[str, int]) -> None:
        try:
            self._sock.sendto(data, to)
        except OSError:  # an ICMP error of an earlier datagram (the session's port closed): re-sync
            pass

    def recv_force(self) -> np.ndarray | None:
        """The newest force ``(3,)`` (N) of this session that arrived since the last call, or ``None``."""
        self._poll()
        force, self._force = self._force, None
        return force

    def close(self) -> None:
        """Say BYE (the session is free for another device at once) and close the socket."""
        if self.session is not None:
            self._seq = (self._seq + 1) & 0xFFFFFFFF
            self.send_raw(encode_bye(self._seq, self.clock(), self.key, session=self.session))
            self.session = None
        self._sock.close()
