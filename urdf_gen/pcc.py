"""Piecewise-constant-curvature kinematics and the RRP-section discretization of seed 001.

Conventions (see DESIGN.md):

* A segment's PCC parameters are ``bend`` (total arc angle, rad), ``plane`` (angle of the bending plane
  about the segment base z axis, measured from x, rad) and ``length`` (arc length, m).
* Seed 001 calls "theta" the angle between the base z axis and the chord from base to tip
  (its sec. 3.2, Fig. 5). For a circular arc that chord angle is half the arc angle:
  ``theta_paper = bend / 2``. Every function here takes ``bend``; use :func:`bend_from_paper_theta`
  at the boundary when you start from the paper's numbers.
* The arc tip frame is ``T = Rz(plane) @ [Ry(bend) | p]`` with
  ``p = (length (1 - cos bend) / bend, 0, length sin bend / bend)``: the plane rotation is *not*
  undone at the tip (seed 001 eq. 20; only a segment's first section carries the plane angle), so
  the next segment's plane is measured in the rotated frame.

Discretization (seed 001 eqs. 7-9). A segment cut into N equal-arc sections has N chords of length
``c = (length / N) sinc(bend / 2N)``. Chord k leaves the base tangent at the absolute angle
``(2k - 1) bend / 2N`` (eq. 7), so as relative joint angles of the RRP chain
``Rz(plane_k) Ry(bend_k) Tz(c_k)`` the bends are ``bend / 2N`` for the first section and ``bend / N``
for the others. After the last chord the frame still lags the arc's tip tangent by ``bend / 2N``; one
extra revolute joint about y per segment (the *tip joint*) closes that gap, which makes the chain's tip
frame equal to the arc's exactly for every N. A segment's joint vector is therefore ``(3N + 1,)``::

    [plane_1, bend_1, chord_1, ..., plane_N, bend_N, chord_N, tip_bend]

with ``plane_1 = plane`` and ``plane_k = 0`` for k > 1 in pure PCC.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform


@dataclass(frozen=True, slots=True)
class PccConfig:
    """One segment's constant-curvature configuration: bend (rad), plane (rad), length (m)."""

    bend: float
    plane: float
    length: float


def bend_from_paper_theta(theta: float) -> float:
    """Seed 001's chord angle theta (rad) -> our total arc angle ``bend = 2 theta`` (rad)."""
    return 2.0 * theta


def paper_theta_from_bend(bend: float) -> float:
    """Our total arc angle ``bend`` (rad) -> seed 001's chord angle ``theta = bend / 2`` (rad)."""
    return 0.5 * bend


def sinc(x: float) -> float:
    """``sin(x) / x`` with the limit 1 at 0 (unnormalized, unlike ``numpy.sinc``)."""
    if abs(x) < 1e-4:
        x2 = x * x
        return 1.0 - x2 / 6.0 + x2 * x2 / 120.0
    return math.sin(x) / x


def rot_z(a: float) -> FloatArray:
    """Rotation about z by ``a`` (rad), ``(3, 3) float``."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rot_y(a: float) -> FloatArray:
    """Rotation about y by ``a`` (rad), ``(3, 3) float``."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_x(a: float) -> FloatArray:
    """Rotation about x by ``a`` (rad), ``(3, 3) float``."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rpy_matrix(roll: float, pitch: float, yaw: float) -> FloatArray:
    """URDF roll-pitch-yaw (fixed axes x, y, z) -> rotation ``Rz(yaw) Ry(pitch) Rx(roll)``, ``(3, 3)``."""
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def arc_transform(bend: float, plane: float, length: float) -> Transform:
    """Tip frame of a constant-curvature arc in its base frame, ``(4, 4) float``.

    Args:
        bend: total arc angle (rad); 0 is straight (handled without division by zero).
        plane: bending-plane angle about base z, from x (rad).
        length: arc length (m).
    """
    half = 0.5 * bend
    # (1 - cos b)/b = sin(b/2) sinc(b/2); sin(b)/b = sinc(b): both finite at b = 0.
    x = length * math.sin(half) * sinc(half)
    z = length * sinc(bend)
    # Rz(plane) Ry(bend) and Rz(plane) (x, 0, z) written out: one array instead of four and two
    # products (the teleoperation IK evaluates this ~20 times a tick)
    c, s = math.cos(plane), math.sin(plane)
    cb, sb = math.cos(bend), math.sin(bend)
    return np.array(
        [
            [c * cb, -s, c * sb, c * x],
            [s * cb, c, s * sb, s * x],
            [-sb, 0.0, cb, z],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def arc_points(bend: float, plane: float, length: float, s: FloatArray) -> FloatArray:
    """Backbone points at arc lengths ``s`` ``(n,) float`` (m) -> ``(n, 3) float`` in the base frame."""
    s = np.asarray(s, dtype=float)
    if abs(bend) < 1e-12 or length == 0.0:
        return np.stack([np.zeros_like(s), np.zeros_like(s), s], axis=1)
    kappa = bend / length
    radial = (1.0 - np.cos(kappa * s)) / kappa
    return np.stack([radial * math.cos(plane), radial * math.sin(plane), np.sin(kappa * s) / kappa], axis=1)


def section_transform(plane: float, bend: float, chord: float) -> Transform:
    """One RRP section ``Rz(plane) Ry(bend) Tz(chord)``, ``(4, 4) float``."""
    T = np.eye(4)
    R = rot_z(plane) @ rot_y(bend)
    T[:3, :3] = R
    T[:3, 3] = R[:, 2] * chord
    return T


def segment_joints(bend: float, plane: float, length: float, sections: int) -> FloatArray:
    """PCC -> RRP chain joint values of one segment, ``(3N + 1,) float`` (see module docstring).

    Args:
        bend: total arc angle (rad). plane: bending plane (rad). length: arc length (m).
        sections: N >= 1.
    """
    if sections < 1:
        raise ConfigurationError(f"sections = {sections!r} is invalid; allowed: an integer >= 1")
    return np.array(_segment_values(bend, plane, length, sections))


def _segment_values(bend: float, plane: float, length: float, sections: int) -> list[float]:
    """:func:`segment_joints` as a list (``sections`` >= 1); lists are the fastest way to build the
    vector, which the dynamic mode does for every limb at 1 kHz."""
    step = bend / sections
    q = [0.0, step, (length / sections) * sinc(0.5 * step)] * sections
    q[0] = plane
    q[1] = 0.5 * step
    q.append(0.5 * step)
    return q


def chain_frames(q: FloatArray) -> FloatArray:
    """Frames of a segment's RRP chain in the segment base frame, ``(N + 1, 4, 4) float``.

    Frame k (k = 0..N-1) is the end of section k + 1 (after its chord); frame N is the segment tip
    after the tip joint.

    Args:
        q: segment joint vector ``(3N + 1,) float``.
    """
    n = (len(q) - 1) // 3
    out = np.empty((n + 1, 4, 4))
    T = np.eye(4)
    for k in range(n):
        T = T @ section_transform(q[3 * k], q[3 * k + 1], q[3 * k + 2])
        out[k] = T
    tip = np.eye(4)
    tip[:3, :3] = rot_y(q[-1])
    out[n] = T @ tip
    return out


def chain_transform(q: FloatArray) -> Transform:
    """Tip frame of a segment's RRP chain in its base frame, ``(4, 4) float``; ``q`` is ``(3N + 1,)``."""
    return chain_frames(q)[-1]


def pcc_from_joints(q: FloatArray) -> PccConfig:
    """Inverse of :func:`segment_joints`: ``(3N + 1,)`` joint values -> (bend, plane, length).

    Exact for joint vectors made by :func:`segment_joints`. For other vectors (e.g. read back from a
    dynamic simulation) it returns the least-squares PCC fit: bend = sum of the bend joints,
    plane = first plane joint, length from the mean chord.
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 1 or len(q) < 4 or (len(q) - 1) % 3:
        raise ConfigurationError(
            f"joint vector of shape {q.shape} is invalid; allowed: (3N + 1,) with N >= 1"
        )
    n = (len(q) - 1) // 3
    bend = float(q[1:-1:3].sum() + q[-1])
    chord_sum = float(q[2:-1:3].sum())
    length = chord_sum / sinc(0.5 * bend / n)
    return PccConfig(bend=bend, plane=float(q[0]), length=length)


class RestLength(Protocol):
    """A segment as :func:`rest_configs` reads it (a :class:`~pccbullet.urdf_gen.specs.SegmentSpec`)."""

    @property
    def length(self) -> float:
        """Rest arc length (m)."""
        ...


def rest_configs(segments: Sequence[RestLength]) -> list[PccConfig]:
    """Straight configurations at rest length, one per segment (``SegmentSpec``-like: ``.length``)."""
    return [PccConfig(0.0, 0.0, seg.length) for seg in segments]


def check_config(config: PccConfig, segment: Any, where: str) -> None:
    """Raise :class:`ConfigurationError` if ``config`` leaves ``segment``'s limits (a
    :class:`~pccbullet.urdf_gen.specs.SegmentSpec`: ``bend_max``, ``plane_max``, ``length_min``,
    ``length_max``); the message starts with ``where`` (e.g. ``limb 'camera' segment 1``) and gives the
    value and the range in degrees or metres. NaN fails too."""
    bend_max, plane_max = math.degrees(segment.bend_max), math.degrees(segment.plane_max)
    if not abs(config.bend) <= segment.bend_max + 1e-12:  # written as "not within" so that NaN fails too
        raise ConfigurationError(
            f"{where}: bend = {math.degrees(config.bend):.6g} deg is out of range; "
            f"allowed: [-{bend_max:g}, {bend_max:g}] deg"
        )
    if not abs(config.plane) <= segment.plane_max + 1e-12:
        raise ConfigurationError(
            f"{where}: plane = {math.degrees(config.plane):.6g} deg is out of range; "
            f"allowed: [-{plane_max:g}, {plane_max:g}] deg"
        )
    if not segment.length_min - 1e-12 <= config.length <= segment.length_max + 1e-12:
        raise ConfigurationError(
            f"{where}: length = {config.length:.6g} m is out of range; "
            f"allowed: [{segment.length_min:g}, {segment.length_max:g}] m"
        )


def limb_transform(configs: Sequence[PccConfig]) -> Transform:
    """Tip frame of a multi-segment limb (PCC arcs in series) in the limb base frame, ``(4, 4) float``."""
    T = None
    for c in configs:
        A = arc_transform(c.bend, c.plane, c.length)
        T = A if T is None else T @ A
    return np.eye(4) if T is None else T


def limb_joints(configs: Sequence[PccConfig], sections: Sequence[int]) -> FloatArray:
    """Joint vector of a whole limb: the segments' vectors concatenated, ``(sum(3 N_s + 1),) float``."""
    if len(configs) != len(sections):
        raise ConfigurationError(
            f"{len(configs)} configurations given for a limb of {len(sections)} segments"
        )
    q: list[float] = []
    for c, n in zip(configs, sections, strict=True):  # called for every limb at 1 kHz
        if n < 1:
            raise ConfigurationError(f"sections = {list(sections)} is invalid; allowed: integers >= 1")
        q += _segment_values(c.bend, c.plane, c.length, n)
    return np.fromiter(q, float, len(q))


def rotation_angle(R: FloatArray) -> float:
    """Angle (rad) of a rotation matrix ``(3, 3)``; used to compare orientations."""
    cos = 0.5 * (np.trace(R) - 1.0)
    sin = 0.5 * np.linalg.norm([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return math.atan2(sin, cos)
