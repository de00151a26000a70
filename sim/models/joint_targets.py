"""Newton–Euler model state -> joint targets of the URDF's RRP chain (layout of
:mod:`pccbullet.urdf_gen.pcc`).

Per segment the chain has N sections ``Rz(plane_k) Ry(bend_k) Tz(chord_k)`` and a tip joint ``Ry``:
``[plane_1, bend_1, chord_1, ..., plane_N, bend_N, chord_N, tip_bend]`` (``(3N + 1,)``).

Mapping. The backbone points at the section ends are taken from the model (piece tips when the model's
pieces per segment equal N; otherwise points at arc fractions k/N of the segment, interpolated along the
constant-strain pieces: *resampling*). Walking the chain, each section's ``(plane_k, bend_k)`` points its
z axis along the chord to the next point and ``chord_k`` is the chord length, so every section end lies
exactly on the model's backbone; the tip joint turns the last frame's z axis towards the segment's tip
tangent (exactly when the shape is planar within the segment). For k > 1 the representation with
``|plane_k| <= pi/2`` is chosen (a negative bend instead of a half-turn of the plane), which reproduces
:func:`pccbullet.urdf_gen.pcc.segment_joints` for a pure PCC state.

Frames. The model's piece frames are material frames (bending plane undone, seed 000); the URDF's arc
frames keep the plane rotation. For a pure PCC limb built by :func:`state_from_pcc` the URDF tip frame is
``T_model_tip @ Rz(sum of planes)``; the positions agree exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler.kinematics import chain_rotations, piece_pose
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.urdf_gen.pcc import PccConfig, rot_y, rot_z


def piece_pcc(model: LimbModel, q: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per-piece (bend, plane, length) in each piece's base (material) frame, ``(n,)`` each.

    ``bend`` = total arc angle (rad, >= 0), ``plane`` = bending-plane angle from x (rad), ``length`` = arc
    length (m). Torsion is not part of a PCC arc and is dropped.
    """
    qs = np.asarray(q, dtype=float).reshape(model.n, 4)
    rx, ry = model.l0 * qs[:, 1], model.l0 * qs[:, 2]
    return np.hypot(rx, ry), np.arctan2(-rx, ry), model.l0 * (1.0 + qs[:, 0])


def state_from_pcc(model: LimbModel, configs: Sequence[PccConfig]) -> FloatArray:
    """A model state ``(4n,)`` whose segments are the PCC arcs ``configs`` (URDF convention, module doc)."""
    if len(configs) != len(model.limb.segments):
        raise ConfigurationError(
            f"{len(configs)} configurations for a limb of {len(model.limb.segments)} segments"
        )
    q = np.zeros((model.n, 4))
    offset = 0.0
    for s, c in enumerate(configs):
        idx = model.segment == s
        rest = float(model.l0[idx].sum())
        psi = c.plane + offset
        q[idx, 0] = c.length / rest - 1.0
        q[idx, 1] = -math.sin(psi) * c.bend / rest
        q[idx, 2] = math.cos(psi) * c.bend / rest
        offset = psi
    return q.ravel()


def _backbone(model: LimbModel, q: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Piece base positions/rotations and local poses: Rw ``(n+1, 3, 3)``, o ``(n+1, 3)``, R, p."""
    qs = np.asarray(q, dtype=float).reshape(model.n, 4)
    R, p = piece_pose(qs, model.l0)
    Rw = chain_rotations(R)
    o = np.zeros((model.n + 1, 3))
    o[1:] = np.cumsum(np.einsum("nij,nj->ni", Rw[:-1], p), axis=0)
    return Rw, o, qs, p


def _segment_points(model: LimbModel, q: FloatArray, s: int, sections: int, Rw, o, qs) -> FloatArray:
    """Backbone points at arc fractions k/N, k = 1..N, of segment s, ``(N, 3)``."""
    idx = np.flatnonzero(model.segment == s)
    if len(idx) == sections:
        return o[idx + 1]
    frac = np.arange(1, sections + 1) / sections * len(idx)  # in piece units
    out = np.empty((sections, 3))
    for k, f in enumerate(frac):
        j = min(int(math.floor(f - 1e-12)), len(idx) - 1)
        t = f - j
        i = idx[j]
        part = qs[i : i + 1].copy()
        # a fraction t of a constant-strain piece is a piece of rest length t l0 with the same strains
        _, p = piece_pose(part, model.l0[i : i + 1] * t)
        out[k] = o[i] + Rw[i] @ p[0]
    return out


def joint_targets(model: LimbModel, q: FloatArray, sections: Sequence[int] | None = None) -> FloatArray:
    """RRP joint vector of the whole limb, ``(sum(3 N_s + 1),)``, from the model state ``q`` ``(4n,)``.

    Args:
        model: the limb model. q: its state.
        sections: N per segment; default the limb spec's ``SegmentSpec.sections``.
    """
    segs = model.limb.segments
    ns = [sp.sections for sp in segs] if sections is None else list(sections)
    if len(ns) != len(segs):
        raise ConfigurationError(f"{len(ns)} section counts given for a limb of {len(segs)} segments")
    Rw, o, qs, _ = _backbone(model, q)
    R = np.eye(3)
    p = np.zeros(3)
    out = []
    for s, N in enumerate(ns):
        pts = _segment_points(model, q, s, N, Rw, o, qs)
        joints = np.empty(3 * N + 1)
        for k in range(N):
            d = R.T @ (pts[k] - p)
            chord = float(np.linalg.norm(d))
            bend = math.atan2(math.hypot(d[0], d[1]), d[2])
            plane = math.atan2(d[1], d[0]) if bend > 0.0 else 0.0
            if k > 0 and abs(plane) > 0.5 * math.pi:
                plane -= math.copysign(math.pi, plane)
                bend = -bend
            joints[3 * k : 3 * k + 3] = plane, bend, chord
            R = R @ rot_z(plane) @ rot_y(bend)
            p = p + R[:, 2] * chord
        tip_index = int(np.flatnonzero(model.segment == s)[-1]) + 1
        t = R.T @ Rw[tip_index][:, 2]
        joints[-1] = math.atan2(t[0], t[2])
        R = R @ rot_y(joints[-1])
        out.append(joints)
    return np.concatenate(out)
