"""The rod chain: a dynamic limb whose sections bend about both cross-section axes, twist, stretch and shear.

Why. The RRP section ``Rz(plane) Ry(bend) Tz(chord)`` of :mod:`pccbullet.urdf_gen.pcc` is exact for PCC
kinematics, but as a body it is not a rod: nothing bends about a section's own x axis at first order, so
a load out of the commanded bending plane is taken by the plane joints (torsion springs) and twists the
limb, and the chain is singular when straight. A real rod bends about both axes, twists and stretches
everywhere along its length; the rod chain does the same.

Topology of a segment cut into N sections of rest arc length ``h = L / N``. *Nodes* sit at the section
boundaries: node 0 at the segment base (it represents ``[0, h/2]`` of the rod), nodes k = 1..N-1 at
``k h`` (``[k h - h/2, k h + h/2]``) and the tip node at ``L`` (``[L - h/2, L]``). A node is one
spherical joint (PyBullet's ``JOINT_SPHERICAL``: a quaternion, the child's angular velocity in its own
axes); each section a prismatic joint along its chord. Why a spherical joint and not three revolutes
(bend x, bend y, twist): it has no singularity at all (no Euler axis ever lines up), it is two links a
section instead of four, so two-segment limbs fit PyBullet's 128 links per body up to N = 30, and
PyBullet's step and the kernels' recursions cost per link; the kernels (:mod:`pccbullet.sim.limb.chain`) solve
its three degrees of freedom together, which also lets its stiffness act in the frame halfway through
the node's rest turn (:mod:`pccbullet.sim.limb.chain.solve`). PyBullet joints per segment: ``N`` nodes and
chords, the tip node.

The joint vector users read and write (``Robot.joints``, ``pcc_joints``, spring targets) has ``4 N + 3``
entries per segment::

    [a_1, b_1, c_1, chord_1, ..., a_N, b_N, c_N, chord_N, a_tip, b_tip, c_tip]

where ``a_k, b_k, c_k`` are the x-y-z Euler angles of the node at the base of section k (its rotation
``Rx(a) Ry(b) Rz(c)``: two bends and a twist, regular for the small turns of a node), converted to and
from the spherical joints' quaternions by :func:`node_quaternions` and :func:`node_angles_from_quaternions`.
Stiffness: ``E I / l``, ``E I / l``, ``G J / l`` per node (``l`` the length it represents) and ``E A / h``
per chord (:func:`pccbullet.sim.limb.topology.joint_stiffness`); shear ``kappa G A`` per chord
(:mod:`pccbullet.sim.limb.chain.solve`).

Rest shape. Chord k of the PCC discretization leaves the base tangent at ``(2k - 1) bend / 2N``, so
consecutive chords turn by ``bend / N`` about the bending plane's normal, and the first and the tip node by
``bend / 2N``. A tendon-driven limb changes its bending plane by pulling other tendons, not by twisting:
the rod's *material frames* do not turn with the commanded plane. Every node's rest rotation is therefore
a pure bend about the in-plane axis ``Rz(P) y``, expressed in the material frame, ``Rz(P) Ry(turn)
Rz(-P)``, with ``P`` the accumulated plane angle (the sum of the planes of the segment and of those
before it: the next segment's plane is measured in the previous segment's PCC tip frame), decomposed
exactly into its x-y-z Euler angles (:func:`node_angles`). The PCC frame of a section end is its material
frame turned by ``Rz(P)`` about the backbone: ``T_pcc = T_material Rz(P)`` (:func:`material_twist`). Chord
lengths are the PCC chords, ``(L / N) sinc(bend / 2N)``.

Link count: ``2 N + 1`` links per segment (a nearly massless link after each node, the slice body after
its chord; the segment's end link after the tip node), plus the tip frame and a payload; PyBullet reads
back at most 128 links per body (:func:`pccbullet.urdf_gen.urdf_writer.limb_link_count`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.urdf_gen.pcc import PccConfig, rot_x, rot_y, rot_z, sinc


def node_angles(turn: float, plane: float) -> tuple[float, float, float]:
    """x-y-z Euler angles ``(a, b, c)`` (rad) of a bend by ``turn`` (rad) about the in-plane axis
    ``Rz(plane) y``: ``Rx(a) Ry(b) Rz(c) = Rz(plane) Ry(turn) Rz(-plane)``, exactly; smooth for
    ``|turn| < 90 deg``. Plain ``math`` on floats: :mod:`pccbullet.sim.limb.chain.positions` compiles this
    function with numba into its kernel (the same operations, the same numbers)."""
    s, c = math.sin(plane), math.cos(plane)
    st, ct = math.sin(turn), math.cos(turn)
    t = 1.0 - ct
    # entries of the rotation by `turn` about (-s, c, 0): R02 = st c, R12 = st s, R22 = ct,
    # R01 = -t s c, R00 = 1 - t c^2
    return (
        math.atan2(-st * s, ct),
        math.asin(max(-1.0, min(1.0, st * c))),
        math.atan2(t * s * c, 1.0 - t * c * c),
    )


def _segment_values(bend: float, plane: float, length: float, sections: int) -> list[float]:
    """One segment's rod joint vector (``4 N + 3`` values) for a PCC arc whose accumulated plane is
    ``plane`` (rad)."""
    step = bend / sections
    half = node_angles(0.5 * step, plane)
    full = node_angles(step, plane)
    chord = (length / sections) * sinc(0.5 * step)
    q = [*full, chord] * sections
    q[0:3] = half
    q += half
    return q


def rod_limb_joints(configs: Sequence[PccConfig], sections: Sequence[int]) -> FloatArray:
    """Rod-chain joint vector of a whole limb at the PCC ``configs``, ``(sum(4 N_s + 3),) float``: the
    spring targets of ``set_pcc(..., mode="target")`` and the pose of ``mode="reset"``."""
    if len(configs) != len(sections):
        raise ConfigurationError(
            f"{len(configs)} configurations given for a limb of {len(sections)} segments"
        )
    q: list[float] = []
    plane = 0.0
    for c, n in zip(configs, sections, strict=True):  # called for every limb at 1 kHz
        if n < 1:
            raise ConfigurationError(f"sections = {list(sections)} is invalid; allowed: integers >= 1")
        plane += c.plane
        q += _segment_values(c.bend, plane, c.length, n)
    return np.fromiter(q, float, len(q))


def material_twist(configs: Sequence[PccConfig]) -> float:
    """Angle (rad) about the tip tangent from a rod limb's material tip frame to its PCC tip frame:
    ``T_pcc = T_material Rz(material_twist(configs))``; the sum of the segments' planes."""
    return float(sum(c.plane for c in configs))


def node_rotation(a: float, b: float, c: float) -> FloatArray:
    """``Rx(a) Ry(b) Rz(c)``, ``(3, 3) float``."""
    return rot_x(a) @ rot_y(b) @ rot_z(c)


def rod_frames(q: FloatArray, sections: Sequence[int]) -> FloatArray:
    """Material frames of a rod limb's slice ends in the limb base frame, then each segment's tip:
    ``(sum(N_s + 1), 4, 4) float`` (per segment N section ends, then its tip after the tip node).

    Args:
        q: the limb's rod joint vector ``(sum(4 N_s + 3),)``.
        sections: N per segment.
    """
    q = np.asarray(q, dtype=float)
    if q.shape != (sum(4 * n + 3 for n in sections),):
        raise ConfigurationError(
            f"joint vector of shape {q.shape} is invalid; allowed: ({sum(4 * n + 3 for n in sections)},)"
        )
    out = []
    T = np.eye(4)
    i = 0
    for n in sections:
        for _ in range(n):
            step = np.eye(4)
            step[:3, :3] = node_rotation(*q[i : i + 3])
            step[:3, 3] = step[:3, 2] * q[i + 3]
            T = T @ step
            out.append(T)
            i += 4
        tip = np.eye(4)
        tip[:3, :3] = node_rotation(*q[i : i + 3])
        T = T @ tip
        out.append(T)
        i += 3
    return np.stack(out)


def pcc_frame(T_material: Transform, configs: Sequence[PccConfig]) -> Transform:
    """The PCC tip frame ``(4, 4)`` of a rod limb whose material tip frame is ``T_material`` ``(4, 4)``,
    for the PCC ``configs`` it was commanded to (see :func:`material_twist`)."""
    out = np.array(T_material, dtype=float)
    out[:3, :3] = out[:3, :3] @ rot_z(material_twist(configs))
    return out


def node_quaternions(angles: FloatArray) -> FloatArray:
    """Quaternions ``(..., 4)`` (x, y, z, w, PyBullet's order) of ``Rx(a) Ry(b) Rz(c)`` for x-y-z Euler angles
    ``angles (..., 3)`` (rad)."""
    half = 0.5 * np.asarray(angles, dtype=float)
    sa, ca = np.sin(half[..., 0]), np.cos(half[..., 0])
    sb, cb = np.sin(half[..., 1]), np.cos(half[..., 1])
    sc, cc = np.sin(half[..., 2]), np.cos(half[..., 2])
    return np.stack(
        [
            sa * cb * cc + ca * sb * sc,
            ca * sb * cc - sa * cb * sc,
            ca * cb * sc + sa * sb * cc,
            ca * cb * cc - sa * sb * sc,
        ],
        axis=-1,
    )


def node_angles_from_quaternions(quaternions: FloatArray) -> FloatArray:
    """x-y-z Euler angles ``(..., 3)`` (rad) of unit quaternions ``(..., 4)`` (x, y, z, w): the inverse of
    :func:`node_quaternions` for ``|b| < 90 deg``."""
    x, y, z, w = np.moveaxis(np.asarray(quaternions, dtype=float), -1, 0)
    r02 = 2.0 * (x * z + y * w)
    r12 = 2.0 * (y * z - x * w)
    r22 = 1.0 - 2.0 * (x * x + y * y)
    r01 = 2.0 * (x * y - z * w)
    r00 = 1.0 - 2.0 * (y * y + z * z)
    return np.stack(
        [np.arctan2(-r12, r22), np.arcsin(np.clip(r02, -1.0, 1.0)), np.arctan2(-r01, r00)], axis=-1
    )


def node_angle_rates(angles: FloatArray, omega: FloatArray) -> FloatArray:
    """Rates ``(..., 3)`` (rad/s) of a node's x-y-z Euler angles ``angles (..., 3)`` for the child's relative
    angular velocity ``omega (..., 3)`` in child axes (a spherical joint's velocity):
    ``omega = [[cb cc, sc, 0], [-cb sc, cc, 0], [sb, 0, 1]] rates``."""
    angles = np.asarray(angles, dtype=float)
    w = np.asarray(omega, dtype=float)
    b, c = angles[..., 1], angles[..., 2]
    cb, sb, cc, sc = np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    a_rate = (cc * w[..., 0] - sc * w[..., 1]) / cb
    b_rate = sc * w[..., 0] + cc * w[..., 1]
    return np.stack([a_rate, b_rate, w[..., 2] - sb * a_rate], axis=-1)


def rod_joint_kinds(sections: Sequence[int]) -> list[str]:
    """The URDF joint types of a rod limb's movable joints in chain order: per segment ``N`` times
    ``"spherical", "prismatic"``, then ``"spherical"`` (the tip node)."""
    kinds: list[str] = []
    for n in sections:
        kinds += ["spherical", "prismatic"] * n + ["spherical"]
    return kinds


def states_from_vector(q: FloatArray, spherical: Sequence[bool]) -> list[list[float]]:
    """A joint vector ``(n_dof,)`` as PyBullet's per-joint positions, chain order: a quaternion ``[x, y, z,
    w]`` per spherical joint (``spherical``: per movable joint, whether it is one; its three x-y-z Euler
    angles in the vector), ``[value]`` per other joint (``resetJointStatesMultiDof``)."""
    q = np.asarray(q, dtype=float)
    out: list[list[float]] = []
    i = 0
    for sph in spherical:
        if sph:
            out.append(node_quaternions(q[i : i + 3]).tolist())
            i += 3
        else:
            out.append([float(q[i])])
            i += 1
    return out


def vector_from_states(positions: Sequence[Sequence[float]], spherical: Sequence[bool]) -> FloatArray:
    """The inverse of :func:`states_from_vector`: PyBullet's per-joint positions (a quaternion per
    spherical joint, a value per other) as the joint vector."""
    out: list[float] = []
    for sph, value in zip(spherical, positions, strict=True):
        out += node_angles_from_quaternions(np.asarray(value)).tolist() if sph else [value[0]]
    return np.array(out)


def rates_from_states(
    positions: Sequence[Sequence[float]], velocities: Sequence[Sequence[float]], spherical: Sequence[bool]
) -> FloatArray:
    """Rates of the joint vector from PyBullet's per-joint positions and velocities (a spherical joint's
    angular velocity in child axes turned into Euler-angle rates, :func:`node_angle_rates`)."""
    out: list[float] = []
    for sph, value, rate in zip(spherical, positions, velocities, strict=True):
        if sph:
            out += node_angle_rates(
                node_angles_from_quaternions(np.asarray(value)), np.asarray(rate)
            ).tolist()
        else:
            out.append(rate[0])
    return np.array(out)
