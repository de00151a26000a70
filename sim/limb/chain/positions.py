"""Compiled (numba) conversion of a joint vector to a chain's position vector.

A user's joint vector has one entry per velocity entry: the rod chain's spherical nodes appear in it as
three x-y-z Euler angles (:mod:`pccbullet.urdf_gen.rod`); PyBullet and the kernels keep a node's rotation as
a quaternion (four entries). :func:`positions_from_vector` turns the first into the second;
:func:`rod_targets` is the rod joint vector of PCC arcs, compiled, and :func:`rod_joint_vector` a rod limb's
(each topology's in :mod:`pccbullet.sim.limb.topology`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain.kernels import FIXED, SPHERICAL
from pccbullet.sim.limb.chain.rotation import euler_xyz_quat
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.rod import node_angles
from pccbullet.urdf_gen.specs import LimbSpec


@numba.njit(cache=True)
def positions_from_vector(jtype, dof, qpos, vector, out) -> None:
    """Write the position vector ``out (n_q,)`` of the joint vector ``vector (n_dof,)``."""
    for i in range(jtype.shape[0]):
        kind = jtype[i]
        if kind == FIXED:
            continue
        d, k = dof[i], qpos[i]
        if kind == SPHERICAL:
            out[k], out[k + 1], out[k + 2], out[k + 3] = euler_xyz_quat(
                vector[d], vector[d + 1], vector[d + 2]
            )
        else:
            out[k] = vector[d]


_node_angles = numba.njit(inline="always")(node_angles)  # compiled into rod_targets, cached with it


@numba.njit(cache=True)
def rod_targets(bends, planes, lengths, sections, out) -> None:
    """:func:`pccbullet.urdf_gen.rod.rod_limb_joints` compiled: the rod joint vector of per-segment PCC
    arcs (``bends``, ``planes``, ``lengths``, ``sections``, each ``(S,)``) into ``out (sum(4 N_s + 3),)``;
    the per-tick path of spring targets (``Robot.pcc_joints``)."""
    i = 0
    plane = 0.0
    for s in range(bends.shape[0]):
        n = sections[s]
        plane += planes[s]
        step = bends[s] / n
        ha, hb, hc = _node_angles(0.5 * step, plane)
        fa, fb, fc = _node_angles(step, plane)
        x = 0.5 * step
        if abs(x) < 1e-4:
            x2 = x * x
            sinc = 1.0 - x2 / 6.0 + x2 * x2 / 120.0
        else:
            sinc = math.sin(x) / x
        chord = (lengths[s] / n) * sinc
        for k in range(n):
            if k == 0:
                out[i], out[i + 1], out[i + 2] = ha, hb, hc
            else:
                out[i], out[i + 1], out[i + 2] = fa, fb, fc
            out[i + 3] = chord
            i += 4
        out[i], out[i + 1], out[i + 2] = ha, hb, hc
        i += 3


def rod_joint_vector(limb: LimbSpec, configs: Sequence[PccConfig]) -> FloatArray:
    """Rod-chain joint vector of ``limb`` for per-segment PCC ``configs`` (unchecked: one configuration a
    segment), ``(sum(4 N_s + 3),) float``, through :func:`rod_targets` (spring targets are set at 1 kHz,
    ~20 us a limb in Python)."""
    sections = [seg.sections for seg in limb.segments]
    out = np.empty(sum(4 * n + 3 for n in sections))
    arcs = np.array([(c.bend, c.plane, c.length) for c in configs], dtype=float).reshape(-1, 3)
    rod_targets(arcs[:, 0], arcs[:, 1], arcs[:, 2], np.array(sections, dtype=np.int64), out)
    return out
