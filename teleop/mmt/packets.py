"""The teleoperation link's packets: commands down, state reports up (little endian, fixed layout).

Command (10 Hz, version :data:`CMD_VERSION`): :data:`CMD_HEADER` (with a bit per limb whose grasp the
operator closed) then per segment (bend, plane, length) as int16/int16/uint16 in steps of :data:`SCALES`.
State report (5 Hz): :data:`STATE_HEADER` (with the command the robot tracks, how long it has tracked it
and a bit per settled limb), per segment the measured arc as bend vector x, y and length
(int16/int16/uint16, steps :data:`SHAPE_SCALES`), then :data:`STATE_TAIL`. A tendon-driven robot's report
(version :data:`STATE_TENDONS`; :data:`STATE_PLAIN` without tendons) carries after the segments its
tendon block: a bit per limb whose grip it holds, then every tendon's tension as a uint8 in steps of
:data:`TENSION_STEP` (:func:`encode_tensions`): ``1 + n`` bytes for ``n`` tendons (25 for URSULA's 24).
A scene with free objects adds 2 to the version (:data:`STATE_OBJECTS`) and an object block after that:
each free object's position and orientation as the robot's world has it (:func:`encode_objects`, 14 bytes
an object; a real robot would find them with its camera).
"""

from __future__ import annotations

import struct

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.pcc_fit import bend_vector

CMD_VERSION = 2  # commands with the grasp bits
# version, type, seq, send time (s), grasp closed (bit i: limb i's): 15 bytes
CMD_HEADER = struct.Struct("<BBIdB")
STATE_HEADER = struct.Struct("<BBIdIfB")  # version, type, seq, send time, command seq, its age (s),
# settled limbs (bit i: limb i's joints all slower than pccbullet.teleop.slave.SETTLED_RATE): 23 bytes
STATE_TAIL = struct.Struct("<9f")  # force (N, world), rock centre (m, NaN until touched), haptic tip (m)
STATE_PLAIN, STATE_TENDONS = 1, 2  # report versions: without / with the tendon block
STATE_OBJECTS = 2  # added to the version by the object block
OBJECT_POSE = struct.Struct("<3h4h")  # position (mm), quaternion x, y, z, w (steps of 1/32767): 14 bytes
TENSION_STEP = 0.125  # N, a tendon tension's step in a report: 0 to 31.875 N in a uint8 (stall: <= 30 N)
SCALES = np.array([1e-4, 2e-4, 1e-5])  # command quantization: bend (rad), plane (rad), length (m)
SHAPE_SCALES = np.array([2e-4, 2e-4, 1e-5])  # measured shape: bend vector x, y (rad), length (m)


def encode_configs(configs: dict[str, list[PccConfig]], order: list[str]) -> bytes:
    """Per-segment (bend, plane, length) as int16/int16/uint16, limbs in ``order``."""
    vals = np.array([[c.bend, c.plane, c.length] for n in order for c in configs[n]]) / SCALES
    q = np.rint(vals)
    bad_length = (q[:, 2] < 0) | (q[:, 2] > 65535)
    if not np.isfinite(q).all() or (np.abs(q[:, :2]) > 32767).any() or bad_length.any():
        raise ConfigurationError(
            "a command cannot be encoded; allowed: |bend| <= 3.27 rad, |plane| <= 6.55 rad, "
            "0 <= length <= 0.655 m"
        )
    return struct.pack("<" + "hhH" * len(q), *q.astype(int).ravel())


def decode_configs(data: bytes, shape: list[tuple[str, int]]) -> dict[str, list[PccConfig]]:
    """Inverse of :func:`encode_configs`: limb -> per-segment configurations."""
    n = sum(s for _, s in shape)
    vals = np.array(struct.unpack("<" + "hhH" * n, data), dtype=float).reshape(n, 3) * SCALES
    out, k = {}, 0
    for name, s in shape:
        out[name] = [PccConfig(*map(float, row)) for row in vals[k : k + s]]
        k += s
    return out


def encode_shape(shapes: dict[str, list[PccConfig]], order: list[str]) -> bytes:
    """Measured shapes as bend vectors and lengths (int16, int16, uint16 per segment)."""
    vals = np.array([[*bend_vector(c), c.length] for n in order for c in shapes[n]]) / SHAPE_SCALES
    q = np.rint(np.nan_to_num(vals))
    q[:, :2] = np.clip(q[:, :2], -32767, 32767)
    q[:, 2] = np.clip(q[:, 2], 0, 65535)
    return struct.pack("<" + "hhH" * len(q), *q.astype(int).ravel())


def decode_shape(data: bytes, shape: list[tuple[str, int]]) -> dict[str, np.ndarray]:
    """Inverse of :func:`encode_shape`: limb -> ``(S, 3)`` (bend vector x, y (rad), length (m))."""
    n = sum(s for _, s in shape)
    vals = np.array(struct.unpack("<" + "hhH" * n, data), dtype=float).reshape(n, 3) * SHAPE_SCALES
    out, k = {}, 0
    for name, s in shape:
        out[name] = vals[k : k + s]
        k += s
    return out


def tendon_block_size(n_tendons: int) -> int:
    """Bytes of a report's tendon block for ``n_tendons`` tendons (0: no block, a robot without tendons)."""
    return 1 + n_tendons if n_tendons else 0


def encode_tensions(held: int, tensions: np.ndarray) -> bytes:
    """The tendon block: the held-grip bits (bit i: limb i), then ``tensions`` ``(n,)`` (N) as uint8 in
    steps of :data:`TENSION_STEP`, clipped to 0..255 steps (a NaN: 0)."""
    q = np.clip(np.rint(np.nan_to_num(np.asarray(tensions, dtype=float)) / TENSION_STEP), 0, 255)
    return struct.pack("<B", held & 0xFF) + q.astype(np.uint8).tobytes()


def decode_tensions(data: bytes) -> tuple[int, np.ndarray]:
    """Inverse of :func:`encode_tensions`: the held-grip bits and the tensions ``(n,)`` (N)."""
    return data[0], np.frombuffer(data, dtype=np.uint8, offset=1).astype(float) * TENSION_STEP


def encode_objects(poses: np.ndarray) -> bytes:
    """The object block: ``poses`` ``(m, 7)`` (position m, quaternion x, y, z, w), each as
    :data:`OBJECT_POSE` (millimetres within +-32.767 m, the quaternion's components in steps of 1/32767)."""
    p = np.asarray(poses, dtype=float).reshape(-1, 7)
    q = np.empty((len(p), 7))
    q[:, :3] = np.clip(np.rint(p[:, :3] * 1000.0), -32767, 32767)
    q[:, 3:] = np.clip(np.rint(p[:, 3:] * 32767.0), -32767, 32767)
    return q.astype("<i2").tobytes()


def decode_objects(data: bytes) -> np.ndarray:
    """Inverse of :func:`encode_objects`: ``(m, 7)`` poses, the quaternions normalized."""
    q = np.frombuffer(data, dtype="<i2").astype(float).reshape(-1, 7)
    out = np.concatenate([q[:, :3] / 1000.0, q[:, 3:] / 32767.0], axis=1)
    norm = np.linalg.norm(out[:, 3:], axis=1, keepdims=True)
    out[:, 3:] /= np.where(norm > 0.0, norm, 1.0)
    return out
