"""The UDP bridge's wire format: packets, HMAC tags, session ids, the sequence window.

Wire format (little endian, fixed size, version 3)::

    header  = magic b"PCCT" | version u8 | type u8 | seq u32 | t f64 | session u64      (26 bytes)
    HELLO   = header | client nonce 16 B                                       | tag 16 B  (58 B)
    WELCOME = header | client nonce 16 B | bridge nonce 16 B | session port u16 | tag 16 B (76 B)
    POSE    = header | position 3 f64 (m) | quaternion x y z w 4 f64 | buttons u32 | tag 16 B  (102 B)
    FORCE   = header | force 3 f64 (N)                                         | tag 16 B  (66 B)
    BYE     = header                                                           | tag 16 B  (42 B)

``tag`` is HMAC-SHA256 (truncated to 16 bytes) over everything before it when a shared key is set, and
16 zero bytes otherwise. Buttons: bit 0 = next limb, bit 1 = next segment, bit 2 = light follows camera,
bit 3 = close / open the selected limb's grasp.
``t`` is the sender's monotonic clock (s).

The protocol (handshake, sequence window, time checks, keys) is described in
:mod:`pccbullet.teleop.udp.bridge`.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import struct
from collections.abc import Sequence

MAGIC = b"PCCT"
VERSION = 3
TYPE_POSE = 1
TYPE_FORCE = 2
TYPE_HELLO = 3
TYPE_WELCOME = 4
TYPE_BYE = 5
TAG_SIZE = 16
NONCE_SIZE = 16
HEADER = struct.Struct("<4sBBIdQ")
POSE_BODY = struct.Struct("<7dI")
FORCE_BODY = struct.Struct("<3d")
HELLO_BODY = struct.Struct("<16s")
WELCOME_BODY = struct.Struct("<16s16sH")
BYE_BODY = struct.Struct("<")
BODIES = {
    TYPE_POSE: POSE_BODY,
    TYPE_FORCE: FORCE_BODY,
    TYPE_HELLO: HELLO_BODY,
    TYPE_WELCOME: WELCOME_BODY,
    TYPE_BYE: BYE_BODY,
}
SIZES = {kind: HEADER.size + body.size + TAG_SIZE for kind, body in BODIES.items()}
POSE_SIZE = SIZES[TYPE_POSE]  # 102 bytes
FORCE_SIZE = SIZES[TYPE_FORCE]  # 66 bytes
_LENGTHS = frozenset(SIZES.values())
SEQ_WINDOW = 1024  # largest accepted forward jump of the sequence number
BUTTON_ACTIONS = ("next_limb", "next_segment", "follow", "grasp")


def _tag(key: bytes | None, data: bytes) -> bytes:
    if key is None:
        return bytes(TAG_SIZE)
    return hmac.digest(key, data, "sha256")[:TAG_SIZE]


def session_id(client_nonce: bytes, bridge_nonce: bytes) -> int:
    """The session id (u64, never 0) of a handshake's two nonces."""
    sid = int.from_bytes(
        hashlib.sha256(b"pccbullet-udp" + client_nonce + bridge_nonce).digest()[:8], "little"
    )
    return sid or 1


def _packet(
    kind: int, seq: int, t: float, session: int, values: Sequence[object], key: bytes | None
) -> bytes:
    body = HEADER.pack(MAGIC, VERSION, kind, seq & 0xFFFFFFFF, t, session) + BODIES[kind].pack(*values)
    return body + _tag(key, body)


def encode_pose(
    seq: int,
    t: float,
    position: Sequence[float],
    quaternion: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
    buttons: int = 0,
    key: bytes | None = None,
    *,
    session: int = 0,
) -> bytes:
    """A POSE datagram (102 bytes): position ``(3,)`` (m), quaternion ``(4,)`` x y z w."""
    return _packet(TYPE_POSE, seq, t, session, (*position, *quaternion, buttons), key)


def encode_force(
    seq: int, t: float, force: Sequence[float], key: bytes | None = None, *, session: int = 0
) -> bytes:
    """A FORCE datagram (66 bytes): force ``(3,)`` (N, device frame)."""
    return _packet(TYPE_FORCE, seq, t, session, tuple(force), key)


def encode_hello(t: float, nonce: bytes, key: bytes | None = None) -> bytes:
    """A HELLO datagram (58 bytes): the client's fresh ``nonce`` (16 bytes)."""
    return _packet(TYPE_HELLO, 0, t, 0, (nonce,), key)


def encode_welcome(
    t: float,
    session: int,
    client_nonce: bytes,
    bridge_nonce: bytes,
    key: bytes | None = None,
    port: int = 0,
) -> bytes:
    """A WELCOME datagram (76 bytes): the answer to a HELLO, with the session's own UDP ``port``."""
    return _packet(TYPE_WELCOME, 0, t, session, (client_nonce, bridge_nonce, port), key)


def encode_bye(seq: int, t: float, key: bytes | None = None, *, session: int = 0) -> bytes:
    """A BYE datagram (42 bytes): the device ends its session."""
    return _packet(TYPE_BYE, seq, t, session, (), key)


def peek(data: bytes) -> tuple[str, int, int]:
    """The cheap checks, before any HMAC: size, magic, version, type. Returns ``("ok", type, session)``
    or ``(reason, 0, 0)`` (reasons ``size``, ``magic``, ``version``, ``type``)."""
    n = len(data)
    if n not in _LENGTHS:
        return "size", 0, 0
    if data[:4] != MAGIC:
        return "magic", 0, 0
    if data[4] != VERSION:
        return "version", 0, 0
    kind = data[5]
    if SIZES.get(kind) != n:
        return "type", 0, 0
    return "ok", kind, int.from_bytes(data[18:26], "little")


def decode(data: bytes, key: bytes | None = None) -> tuple[str, tuple]:
    """Check a datagram; returns ``("ok", (type, seq, t, session, values))`` or ``(reason, ())``.

    Reasons: ``size``, ``magic``, ``version``, ``type`` (:func:`peek`), ``auth``, ``nan``.
    """
    reason, _, _ = peek(data)
    if reason != "ok":
        return reason, ()
    _, _, kind, seq, t, session = HEADER.unpack_from(data)
    if key is not None and not hmac.compare_digest(_tag(key, data[:-TAG_SIZE]), data[-TAG_SIZE:]):
        return "auth", ()
    values = BODIES[kind].unpack_from(data, HEADER.size)
    if not math.isfinite(t) or (kind in (TYPE_POSE, TYPE_FORCE) and not all(map(math.isfinite, values))):
        return "nan", ()
    return "ok", (kind, seq, t, session, values)


def in_window(seq: int, last: int) -> bool:
    """``True`` when ``seq`` is 1..SEQ_WINDOW ahead of ``last`` (mod 2^32)."""
    return 0 < (seq - last) % (1 << 32) <= SEQ_WINDOW
