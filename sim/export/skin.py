"""A smooth skin for a PCC limb: a watertight tapered tube swept along the backbone, with end caps.

The backbone is sampled exactly on each segment's arc (:func:`pccbullet.urdf_gen.pcc.arc_points`); rings lie
in the planes normal to the exact tangent and are oriented by parallel transport (the double-reflection
method of Wang et al., ACM TOG 2008), so the tube does not twist. The radius tapers linearly along each
segment from ``radius_base`` to ``radius_tip`` of its frustum, by arc-length fraction (a stretched or
shortened segment keeps its end radii); where the radius steps between two segments, two rings share the
junction and a flat annulus joins them. Each ring is a regular polygon whose radius is enlarged so that
its area equals the circle's (``rho = r sqrt(2 pi / (m sin(2 pi / m)))``); the tube's volume then
matches the frustum's up to the sampling error of the taper and the curvature, O(1/n^2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import trimesh

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.urdf_gen.pcc import PccConfig, arc_points, arc_transform
from pccbullet.urdf_gen.specs import LimbSpec


@dataclass(frozen=True, slots=True)
class Backbone:
    """Samples along a limb's backbone in the frame of ``T_world_base``.

    Attributes:
        points: ``(n, 3) float`` (m).
        tangents: unit ``(n, 3) float``.
        normals: parallel-transported unit normals ``(n, 3) float``.
        radii: skin radius ``(n,) float`` (m).
        s: arc length from the base ``(n,) float`` (m).
    """

    points: FloatArray
    tangents: FloatArray
    normals: FloatArray
    radii: FloatArray
    s: FloatArray


def backbone(
    limb: LimbSpec,
    configs: Sequence[PccConfig],
    T_world_base: Transform | None = None,
    samples_per_segment: int = 32,
) -> Backbone:
    """Sample a limb's backbone for per-segment ``configs`` (bend rad, plane rad, length m)."""
    if len(configs) != len(limb.segments):
        raise ConfigurationError(
            f"limb '{limb.name}' has {len(limb.segments)} segments; got {len(configs)} configs"
        )
    if samples_per_segment < 1:
        raise ConfigurationError(f"samples_per_segment = {samples_per_segment} is invalid; allowed: >= 1")
    T = np.eye(4) if T_world_base is None else np.asarray(T_world_base, dtype=float)
    pts, tans, radii, arc = [], [], [], []
    s0 = 0.0
    for i, (seg, c) in enumerate(zip(limb.segments, configs, strict=True)):
        # a segment starts with a ring of its own where the radius steps (two rings at one point)
        stepped = i == 0 or seg.radius_base != limb.segments[i - 1].radius_tip
        frac = np.linspace(0.0, 1.0, samples_per_segment + 1)[(0 if stepped else 1) :]
        s = frac * c.length
        ks = (c.bend / c.length if c.length > 0 else 0.0) * s
        local = arc_points(c.bend, c.plane, c.length, s)  # (m, 3) in the segment base frame
        tangent = np.stack(
            [np.sin(ks) * math.cos(c.plane), np.sin(ks) * math.sin(c.plane), np.cos(ks)], axis=1
        )
        pts.append(local @ T[:3, :3].T + T[:3, 3])
        tans.append(tangent @ T[:3, :3].T)
        radii.append(seg.radius_at(frac))
        arc.append(s0 + s)
        s0 += c.length
        T = T @ arc_transform(c.bend, c.plane, c.length)
    points, tangents = np.concatenate(pts), np.concatenate(tans)
    tangents /= np.linalg.norm(tangents, axis=1, keepdims=True)
    first = np.eye(3)[0] if T_world_base is None else np.asarray(T_world_base, dtype=float)[:3, 0]
    normals = _parallel_transport(points, tangents, first)
    return Backbone(points, tangents, normals, np.concatenate(radii), np.concatenate(arc))


def _parallel_transport(points: FloatArray, tangents: FloatArray, first: FloatArray) -> FloatArray:
    """Rotation-minimizing normals by double reflection; ``first`` is projected normal to tangent 0."""
    normals = np.empty_like(points)
    r = first - tangents[0] * (first @ tangents[0])
    normals[0] = r / np.linalg.norm(r)
    for i in range(len(points) - 1):
        v1 = points[i + 1] - points[i]
        c1 = v1 @ v1
        ri, ti = normals[i], tangents[i]
        if c1 < 1e-30:
            normals[i + 1] = ri
            continue
        r_l = ri - (2.0 / c1) * (v1 @ ri) * v1
        t_l = ti - (2.0 / c1) * (v1 @ ti) * v1
        v2 = tangents[i + 1] - t_l
        c2 = v2 @ v2
        r_next = r_l - (2.0 / c2) * (v2 @ r_l) * v2 if c2 > 1e-30 else r_l
        r_next -= tangents[i + 1] * (r_next @ tangents[i + 1])  # remove round-off drift
        normals[i + 1] = r_next / np.linalg.norm(r_next)
    return normals


def tube_mesh(bb: Backbone, ring: int = 32) -> trimesh.Trimesh:
    """Watertight tube around a :class:`Backbone` with flat end caps; ``ring`` polygon sides (>= 3).

    Vertices: ``n * ring + 2`` (rings, then the base and tip cap centres); faces: ``2 ring n``.
    """
    if ring < 3:
        raise ConfigurationError(f"ring = {ring} is invalid; allowed: an integer >= 3")
    n = len(bb.points)
    angles = 2.0 * math.pi * np.arange(ring) / ring
    area_fix = math.sqrt(2.0 * math.pi / (ring * math.sin(2.0 * math.pi / ring)))
    binormals = np.cross(bb.tangents, bb.normals)
    offsets = (
        np.cos(angles)[None, :, None] * bb.normals[:, None, :]
        + np.sin(angles)[None, :, None] * binormals[:, None, :]
    )
    verts = bb.points[:, None, :] + (bb.radii * area_fix)[:, None, None] * offsets
    verts = np.concatenate([verts.reshape(-1, 3), bb.points[[0, -1]]])
    i = np.arange(n - 1)[:, None]
    j = np.arange(ring)[None, :]
    a = i * ring + j
    b = i * ring + (j + 1) % ring
    c = a + ring
    d = b + ring
    side = np.concatenate([np.stack([a, b, d], -1).reshape(-1, 3), np.stack([a, d, c], -1).reshape(-1, 3)])
    base_c, tip_c = n * ring, n * ring + 1
    jj = np.arange(ring)
    cap0 = np.stack([np.full(ring, base_c), (jj + 1) % ring, jj], axis=1)
    cap1 = np.stack([np.full(ring, tip_c), (n - 1) * ring + jj, (n - 1) * ring + (jj + 1) % ring], axis=1)
    mesh = trimesh.Trimesh(verts, np.concatenate([side, cap0, cap1]), process=False)
    if mesh.volume < 0.0:
        mesh.invert()
    return mesh


def skin_mesh(
    limb: LimbSpec,
    configs: Sequence[PccConfig],
    T_world_base: Transform | None = None,
    *,
    ring: int = 32,
    samples_per_segment: int = 32,
) -> trimesh.Trimesh:
    """Skin of ``limb`` posed at ``configs`` in the frame of ``T_world_base`` ``(4, 4)`` (default: base)."""
    return tube_mesh(backbone(limb, configs, T_world_base, samples_per_segment), ring)


def frustum_volume(limb: LimbSpec, configs: Sequence[PccConfig] | None = None) -> float:
    """Analytic volume (m^3) of the limb's frustums at the configs' lengths (rest lengths if ``None``)."""
    total = 0.0
    for i, seg in enumerate(limb.segments):
        length = seg.length if configs is None else configs[i].length
        r0, r1 = seg.radius_base, seg.radius_tip
        total += math.pi * length / 3.0 * (r0 * r0 + r0 * r1 + r1 * r1)
    return total
