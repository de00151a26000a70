"""PCC fitted to a measured shape, and PCC differences that stay well defined near straight.

**Fit.** A robot that knows where each segment ends (from its own chain, markers or a shape sensor) can
describe its shape as one constant-curvature arc per segment. :func:`pcc_from_points` fits them in
series: each arc starts at the previous arc's end frame, tangent to its z axis, and passes exactly
through the segment's measured end point. For an end point ``p`` in the arc's base frame the arc is
unique: ``plane = atan2(p_y, p_x)``, the chord makes the angle ``theta = atan2(|p_xy|, p_z)`` with z
(seed 001's theta), ``bend = 2 theta`` and ``length = |p| / sinc(theta)``. The fitted limb's tip
position equals the measured one exactly; its tip orientation is the arcs' (what a chain bent away
from constant curvature shows beyond that is dropped).

**Differences.** ``(bend, plane)`` is a polar coordinate: near bend = 0 the plane is undefined and a
component-wise difference jumps by pi when a bend changes sign. Offsets between two configurations
are therefore taken on the *bend vector* ``u = bend (cos plane, sin plane)``, which is continuous:
:func:`config_offset` returns ``(du_x, du_y, d length)`` and :func:`add_offset` adds it back,
returning the configuration with the sign convention of the one it was added to. An offset describes
the arc's end point and tangent: ``(-b, phi)`` and ``(b, phi + pi)`` are the same arc, but their end
frames differ by a half turn about the tangent (the plane rotation is not undone at a segment's tip),
so the sign is kept rather than normalized.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen.pcc import PccConfig, arc_transform, sinc


def arc_through(p: FloatArray) -> PccConfig:
    """The arc tangent to z at the origin whose end is at ``p`` ``(3,)`` (m, arc base frame)."""
    x, y, z = float(p[0]), float(p[1]), float(p[2])
    rho = math.hypot(x, y)
    theta = math.atan2(rho, z)
    plane = math.atan2(y, x) if rho > 0.0 else 0.0
    return PccConfig(bend=2.0 * theta, plane=plane, length=math.sqrt(rho * rho + z * z) / sinc(theta))


def pcc_from_points(ends: FloatArray) -> list[PccConfig]:
    """Per-segment arcs through the segment end points ``ends`` ``(S, 3)`` (m, limb base frame), fitted
    in series from the base (see the module docstring); the last arc ends exactly at ``ends[-1]``."""
    T = np.eye(4)
    out = []
    for p in np.asarray(ends, dtype=float):
        local = T[:3, :3].T @ (p - T[:3, 3])
        c = arc_through(local)
        out.append(c)
        T = T @ arc_transform(c.bend, c.plane, c.length)
    return out


def bend_vector(c: PccConfig) -> tuple[float, float]:
    """``bend (cos plane, sin plane)`` (rad): the bend as a vector in the segment's base xy plane."""
    return c.bend * math.cos(c.plane), c.bend * math.sin(c.plane)


def bend_vectors(configs: Sequence[PccConfig]) -> FloatArray:
    """Every segment's bend vector and length, ``(S, 3)``: x, y (rad), length (m)."""
    return np.array([[*bend_vector(c), c.length] for c in configs], dtype=float).reshape(-1, 3)


def config_offset(a: Sequence[PccConfig], b: Sequence[PccConfig]) -> FloatArray:
    """``a - b`` per segment as ``(S, 3)``: bend-vector difference (rad, rad) and length difference (m)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} segments: an offset needs the same count")
    return bend_vectors(a) - bend_vectors(b)


def add_offset(c: PccConfig, offset: Sequence[float]) -> PccConfig:
    """``c + offset`` with ``offset = (du_x, du_y, d length)`` (:func:`config_offset`). The result keeps
    the sign of ``c``'s bend: a negative bend stays negative with the plane it had (``c`` = (-b, phi)
    is the arc (b, phi + pi))."""
    ux, uy = bend_vector(c)
    ux += float(offset[0])
    uy += float(offset[1])
    bend = math.hypot(ux, uy)
    plane = math.atan2(uy, ux) if bend > 0.0 else c.plane
    if c.bend < 0.0:  # same arc written with a negative bend and the plane turned by pi
        bend = -bend
        plane = math.atan2(-uy, -ux) if bend != 0.0 else c.plane
    elif bend > 0.0 and c.bend > 0.0:  # keep the plane on c's branch (no jump across +-pi)
        plane = c.plane + math.remainder(plane - c.plane, 2.0 * math.pi)
    return PccConfig(bend=bend, plane=plane, length=c.length + float(offset[2]))


def canonical_limb(configs: Sequence[PccConfig]) -> list[PccConfig]:
    """The same limb shape with every bend >= 0 and every plane in [-pi, pi]. A segment written
    ``(-b, phi)`` is the arc ``(b, phi + pi)`` whose end frame is turned by a further ``-pi`` about the
    tangent: ``A(-b, phi) = A(b, phi + pi) Rz(-pi)``; the next segment's plane takes that turn up, so
    every segment end and its tangent stay where they were (the tip frame keeps a half turn about the
    tangent when the last segment was flipped: no later plane takes it up)."""
    carry = 0.0
    out = []
    for c in configs:
        plane = c.plane + carry
        bend = c.bend
        carry = 0.0
        if bend < 0.0:  # A(-b, phi) = A(b, phi + pi) Rz(-pi); the next plane absorbs Rz(-pi)
            bend, plane = -bend, plane + math.pi
            carry = -math.pi
        out.append(PccConfig(bend, math.remainder(plane, 2.0 * math.pi), c.length))
    return out


def continue_limb(
    canonical: Sequence[PccConfig], previous: Sequence[PccConfig], max_turn: float
) -> list[PccConfig]:
    """``canonical`` (every bend >= 0) written continuously from ``previous``: per segment the plane turns
    by at most ``max_turn`` (rad) from the previous plane, towards the target plane or towards it minus pi
    with the bend's sign flipped, whichever is nearer; the bend is the bend vector projected onto that
    plane (signed). A flipped segment turns its end frame by pi, which the next plane takes up
    (:func:`canonical_limb` in reverse).

    A bend vector passing near zero has an undefined direction; in (bend, plane) its plane could jump by
    pi from one tick to the next, and on a chain the plane is a twist of the whole segment (and of the
    segments after it) about its base axis. Turning planes at a bounded rate and letting bends change
    sign instead keeps a command continuous."""
    carry = 0.0
    out = []
    for c, prev in zip(canonical, previous, strict=True):
        ux, uy = bend_vector(PccConfig(c.bend, c.plane + carry, c.length))
        target = math.atan2(uy, ux) if (ux or uy) else prev.plane
        turn = math.remainder(target - prev.plane, 2.0 * math.pi)
        if abs(turn) > 0.5 * math.pi:  # nearer with the bend's sign flipped
            turn = math.remainder(turn - math.pi, 2.0 * math.pi)
        plane = prev.plane + max(-max_turn, min(max_turn, turn))
        bend = ux * math.cos(plane) + uy * math.sin(plane)
        out.append(PccConfig(bend=bend, plane=plane, length=c.length))
        carry = math.pi if bend < 0.0 else 0.0
    return out
