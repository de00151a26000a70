"""Workspaces of PCC limbs: tip point clouds from seeded random configurations and their convex hulls.

Configurations are drawn uniformly per segment: bend in [-bend_max, bend_max], plane in
[-min(plane_max, pi), min(plane_max, pi)] (a wider plane range only repeats poses), length in
[length_min, length_max]. Tips are computed with the PCC geometry, no PyBullet.
"""

from __future__ import annotations

import math

import numpy as np
import trimesh

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.specs import LimbSpec


def sample_configs(limb: LimbSpec, n: int, seed: int = 0) -> FloatArray:
    """``n`` random configurations, ``(n, segments, 3) float``: bend (rad), plane (rad), length (m)."""
    if n < 1:
        raise ConfigurationError(f"n = {n} is invalid; allowed: an integer >= 1")
    rng = np.random.default_rng(seed)
    out = np.empty((n, len(limb.segments), 3))
    for s, seg in enumerate(limb.segments):
        pmax = min(seg.plane_max, math.pi)
        out[:, s, 0] = rng.uniform(-seg.bend_max, seg.bend_max, n)
        out[:, s, 1] = rng.uniform(-pmax, pmax, n)
        out[:, s, 2] = rng.uniform(seg.length_min, seg.length_max, n)
    return out


def workspace_points(
    limb: LimbSpec, n: int, seed: int = 0, T_world_base: Transform | None = None
) -> FloatArray:
    """Tip positions ``(n, 3) float`` (m) of ``n`` seeded random configurations in ``T_world_base``."""
    T0 = np.eye(4) if T_world_base is None else np.asarray(T_world_base, dtype=float)
    pts = np.empty((n, 3))
    for i, row in enumerate(sample_configs(limb, n, seed)):
        pts[i] = (T0 @ limb_transform([PccConfig(*map(float, c)) for c in row]))[:3, 3]
    return pts


def workspace_hull(points: FloatArray) -> trimesh.Trimesh:
    """Convex hull of a point cloud ``(n, 3)``, a watertight mesh (volume in m^3)."""
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[1] != 3 or len(points) < 4:
        raise ConfigurationError(f"points of shape {points.shape} are invalid; allowed: (n, 3) with n >= 4")
    return trimesh.convex.convex_hull(points)


def point_cloud(points: FloatArray) -> trimesh.PointCloud:
    """A trimesh point cloud (export it as ``.ply``)."""
    return trimesh.PointCloud(np.asarray(points, dtype=float))
