"""A prescribed motion of a robot's body: :class:`Trajectory`, a pose for every time.

Either a function of time, ``pose(t)`` returning a ``(4, 4)`` pose or a ``(position (3,), quaternion x, y, z,
w (4,))`` pair, or waypoints: times, positions and orientations, linear in position and spherical-linear
(slerp) in orientation between them, held before the first and after the last.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform


def as_pose(value: Any, what: str = "pose") -> Transform:
    """A ``(4, 4)`` pose, or a ``(position (3,), quaternion x, y, z, w (4,))`` pair, as a finite
    ``(4, 4) float`` rigid transform; anything else raises :class:`ConfigurationError`."""
    try:
        if isinstance(value, tuple | list) and len(value) == 2:
            p, q = np.asarray(value[0], dtype=float), np.asarray(value[1], dtype=float)
            if p.shape != (3,) or q.shape != (4,) or not np.isfinite(q).all() or np.linalg.norm(q) < 1e-9:
                raise ValueError
            T = np.eye(4)
            T[:3, :3] = Rotation.from_quat(q).as_matrix()
            T[:3, 3] = p
        else:
            T = np.asarray(value, dtype=float)
            if T.shape != (4, 4):
                raise ValueError
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"{what} = {repr(value)[:80]} is invalid; allowed: a (4, 4) pose or (position, quaternion)"
        ) from None
    if not np.isfinite(T).all() or not np.allclose(T[:3, :3].T @ T[:3, :3], np.eye(3), atol=1e-6):
        raise ConfigurationError(f"{what} = {repr(value)[:80]} is invalid; allowed: a finite rigid transform")
    return T


class Trajectory:
    """A body's pose as a function of time (s).

    Args:
        pose: a function of time returning a pose (see the module docstring), or ``None`` with waypoints.
        times: waypoint times ``(k,)`` (s), increasing.
        positions: waypoint positions ``(k, 3)`` (m).
        orientations: waypoint quaternions ``(k, 4)`` (x, y, z, w); ``None``: the identity.
    """

    def __init__(
        self,
        pose: Callable[[float], Any] | None = None,
        *,
        times: Sequence[float] | None = None,
        positions: Sequence[Sequence[float]] | None = None,
        orientations: Sequence[Sequence[float]] | None = None,
    ) -> None:
        if (pose is None) == (times is None):
            raise ConfigurationError(
                "trajectory is invalid; allowed: a function of time or waypoints (times, positions)"
            )
        self._pose = pose
        if times is not None:
            t = np.asarray(times, dtype=float)
            p = np.asarray(positions, dtype=float)
            if t.ndim != 1 or len(t) < 1 or not np.isfinite(t).all() or (np.diff(t) <= 0).any():
                raise ConfigurationError(
                    f"times = {list(t)[:8]!r} is invalid; allowed: increasing finite times"
                )
            if p.shape != (len(t), 3) or not np.isfinite(p).all():
                raise ConfigurationError(f"positions has shape {p.shape}; allowed: ({len(t)}, 3) finite (m)")
            q = (
                np.tile([0.0, 0.0, 0.0, 1.0], (len(t), 1))
                if orientations is None
                else np.asarray(orientations)
            )
            if q.shape != (len(t), 4) or not np.isfinite(q).all():
                raise ConfigurationError(
                    f"orientations has shape {q.shape}; allowed: ({len(t)}, 4) quaternions"
                )
            self._t, self._p = t, p
            rotations = Rotation.from_quat(q)
            self._slerp = Slerp(t, rotations) if len(t) > 1 else None
            self._r0 = rotations[0]

    def __call__(self, t: float) -> Transform:
        """The body's pose ``(4, 4) float`` at time ``t`` (s)."""
        if self._pose is not None:
            return as_pose(self._pose(t), "trajectory(t)")
        tc = min(max(t, float(self._t[0])), float(self._t[-1]))
        T = np.eye(4)
        T[:3, 3] = [np.interp(tc, self._t, self._p[:, k]) for k in range(3)]
        rot = self._slerp([tc])[0] if self._slerp is not None else self._r0
        T[:3, :3] = rot.as_matrix()
        return T

    def velocity(self, t: float, h: float = 1e-4) -> tuple[FloatArray, FloatArray]:
        """Linear and angular velocity ``(3,)``, ``(3,)`` (m/s, rad/s, world axes) at ``t`` by central
        differences over ``h`` (s)."""
        A, B = self(t - h), self(t + h)
        v = (B[:3, 3] - A[:3, 3]) / (2.0 * h)
        w = Rotation.from_matrix(B[:3, :3] @ A[:3, :3].T).as_rotvec() / (2.0 * h)
        return v, w


def circle(radius: float, period: float, centre: Sequence[float] = (0.0, 0.0, 0.0)) -> Trajectory:
    """A body carried on a horizontal circle of ``radius`` (m) about ``centre``, once per ``period`` (s),
    turning with it (its x axis along the radius): a rotation at ``2 pi / period`` about the vertical."""
    c = np.asarray(centre, dtype=float)

    def pose(t: float) -> Transform:
        a = 2.0 * math.pi * t / period
        T = np.eye(4)
        T[:3, :3] = Rotation.from_euler("z", a).as_matrix()
        T[:3, 3] = c + radius * np.array([math.cos(a), math.sin(a), 0.0])
        return T

    return Trajectory(pose)
