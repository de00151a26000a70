"""A limb's movable joints in PyBullet, over one body or several: read, reset and drive them in chain order.

PyBullet's client-server state holds 128 entries per body (``MAX_DEGREE_OF_FREEDOM`` of its shared-memory
commands; bullet3 #4621): 127 links besides the root, 121 joint positions after the base's 7 and 122
velocities after its 6. A joint beyond them is neither read, reset nor driven, silently. A limb that does
not fit is loaded as several bodies, *parts*, each a run of whole segments, joined by fixed constraints
(:mod:`pccbullet.sim.limb.parts`); :class:`LimbJoints` hides the parts: its vectors run over the whole
limb in chain order.

Two layouts of a limb's joints: PyBullet's (*positions*: a quaternion ``x, y, z, w`` per spherical joint,
one value per revolute or prismatic one; *velocities*: three per spherical joint, child axes), which the
dynamics kernels use (:mod:`pccbullet.sim.limb.chain`), and the user's *joint vector* (one entry per velocity
entry, a spherical joint as x-y-z Euler angles; :mod:`pccbullet.urdf_gen.rod`). The conversions between
the two follow from each joint's kind alone (:attr:`LimbJoints.spherical`), whatever the chain's topology.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.bullet import pb
from pccbullet.urdf_gen.rod import rates_from_states, states_from_vector, vector_from_states

MAX_LINKS = 127  # links besides the root per body
MAX_POSITIONS = 121  # joint position entries per body (a spherical joint takes 4)
MAX_VELOCITIES = 122  # joint velocity entries per body (a spherical joint takes 3)


@dataclass(frozen=True)
class Attachment:
    """How part ``child`` hangs on its parent part: the fixed constraint ``constraint`` holds its base on
    link ``link`` of body ``parent``, whose link frame the child's base link frame equals."""

    parent: int
    link: int
    child: int
    constraint: int
    base_inertial: tuple[tuple[float, float, float], tuple[float, float, float, float]]
    """The child base's local inertial frame (position, quaternion) in its link frame."""


@dataclass
class LimbJoints:
    """The movable joints of one limb, chain order, over its parts.

    Attributes:
        client: PyBullet client.
        parts: per part (base first) its body and the PyBullet indices of its movable joints.
        spherical: per movable joint (chain order), whether it is spherical.
        attachments: how each part after the first hangs on the part before.
        files: the URDF each part was loaded from.
    """

    client: int
    parts: tuple[tuple[int, tuple[int, ...]], ...]
    spherical: tuple[bool, ...]
    attachments: tuple[Attachment, ...] = ()
    files: tuple[str, ...] = ()
    n_q: int = field(init=False)
    n_dof: int = field(init=False)

    def __post_init__(self) -> None:
        self.n_q = sum(4 if s else 1 for s in self.spherical)
        self.n_dof = sum(3 if s else 1 for s in self.spherical)

    @property
    def bodies(self) -> tuple[int, ...]:
        """The parts' body ids, base first."""
        return tuple(body for body, _ in self.parts)

    def read(self) -> tuple[FloatArray, FloatArray]:
        """Positions ``(n_q,)`` and velocities ``(n_dof,)`` in PyBullet's layout, over all parts."""
        cid = self.client
        if not any(self.spherical):
            qs, qds = [], []
            for body, idx in self.parts:
                states = pb.getJointStates(body, idx, physicsClientId=cid)
                qs += [s[0] for s in states]
                qds += [s[1] for s in states]
            return np.array(qs), np.array(qds)
        q, qd = [], []
        for body, idx in self.parts:
            for state in pb.getJointStatesMultiDof(body, idx, physicsClientId=cid):
                q += state[0]
                qd += state[1]
        return np.array(q), np.array(qd)

    def vector(self) -> FloatArray:
        """The user's joint vector (a spherical joint's x-y-z Euler angles)."""
        if not any(self.spherical):
            return self.read()[0]
        return vector_from_states(self._positions(), self.spherical)

    def rates(self) -> FloatArray:
        """Rates of the user's joint vector (a spherical joint's Euler-angle rates)."""
        if not any(self.spherical):
            return self.read()[1]
        positions, velocities = [], []
        for body, idx in self.parts:
            for state in pb.getJointStatesMultiDof(body, idx, physicsClientId=self.client):
                positions.append(state[0])
                velocities.append(state[1])
        return rates_from_states(positions, velocities, self.spherical)

    def _positions(self) -> list[Sequence[float]]:
        out: list[Sequence[float]] = []
        for body, idx in self.parts:
            out += [s[0] for s in pb.getJointStatesMultiDof(body, idx, physicsClientId=self.client)]
        return out

    def _per_joint(self, q: FloatArray) -> list[list[float]]:
        """The user's joint vector as PyBullet's per-joint positions, chain order."""
        if any(self.spherical):
            return states_from_vector(q, self.spherical)
        return [[float(v)] for v in q]

    def _split(self, values: Sequence[list[float]]) -> list[list[list[float]]]:
        """Per-joint values cut into the parts."""
        out, i = [], 0
        for _, idx in self.parts:
            out.append(list(values[i : i + len(idx)]))
            i += len(idx)
        return out

    def reset(self, q: FloatArray) -> None:
        """Put the joints at the user's joint vector ``q``, at rest; parts after the first are placed on
        the links they hang on."""
        cid = self.client
        per_part = self._split(self._per_joint(q))
        for p, ((body, idx), positions) in enumerate(zip(self.parts, per_part, strict=True)):
            if p > 0:
                self._place(self.attachments[p - 1])
            rates = [[0.0] * (3 if len(v) == 4 else 1) for v in positions]
            pb.resetJointStatesMultiDof(body, list(idx), positions, rates, physicsClientId=cid)

    def _place(self, at: Attachment) -> None:
        """Put part ``at.child``'s base on its parent's link, at rest."""
        cid = self.client
        state = pb.getLinkState(at.parent, at.link, computeForwardKinematics=True, physicsClientId=cid)
        pos, orn = pb.multiplyTransforms(state[4], state[5], *at.base_inertial)
        pb.resetBasePositionAndOrientation(at.child, pos, orn, physicsClientId=cid)
        pb.resetBaseVelocity(at.child, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=cid)

    def send_torques(self, tau: FloatArray) -> None:
        """``TORQUE_CONTROL`` of the velocity-layout torques ``tau (n_dof,)``."""
        cid = self.client
        if not any(self.spherical):
            i = 0
            for body, idx in self.parts:
                n = len(idx)
                pb.setJointMotorControlArray(
                    body, idx, pb.TORQUE_CONTROL, forces=tau[i : i + n].tolist(), physicsClientId=cid
                )
                i += n
            return
        forces, i = [], 0
        for sph in self.spherical:
            width = 3 if sph else 1
            forces.append(tau[i : i + width].tolist())
            i += width
        for (body, idx), part in zip(self.parts, self._split(forces), strict=True):
            pb.setJointMotorControlMultiDofArray(
                body, idx, pb.TORQUE_CONTROL, forces=part, physicsClientId=cid
            )

    def position_targets(self, q: FloatArray, force: float) -> None:
        """PyBullet position motors towards the user's joint vector ``q``, at most ``force`` (N, N m)."""
        cid = self.client
        for (body, idx), positions in zip(self.parts, self._split(self._per_joint(q)), strict=True):
            pb.setJointMotorControlMultiDofArray(
                body,
                idx,
                pb.POSITION_CONTROL,
                targetPositions=positions,
                forces=[[force] * (3 if len(v) == 4 else 1) for v in positions],
                physicsClientId=cid,
            )

    def release_motors(self) -> None:
        """Switch off the motor PyBullet gives every joint: velocity motors of force 0 (revolute,
        prismatic), position motors of zero gains and force (spherical, which PyBullet otherwise holds)."""
        cid = self.client
        i = 0
        for body, idx in self.parts:
            flags = self.spherical[i : i + len(idx)]
            i += len(idx)
            single = [j for j, s in zip(idx, flags, strict=True) if not s]
            nodes = [j for j, s in zip(idx, flags, strict=True) if s]
            if single:
                pb.setJointMotorControlArray(
                    body, single, pb.VELOCITY_CONTROL, forces=[0.0] * len(single), physicsClientId=cid
                )
            if nodes:
                pb.setJointMotorControlMultiDofArray(
                    body,
                    nodes,
                    pb.POSITION_CONTROL,
                    targetPositions=[[0.0, 0.0, 0.0, 1.0]] * len(nodes),
                    positionGains=[0.0] * len(nodes),
                    velocityGains=[0.0] * len(nodes),
                    forces=[[0.0, 0.0, 0.0]] * len(nodes),
                    physicsClientId=cid,
                )

    def state_indices(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """For the C API's joint I/O (:mod:`pccbullet.sim.bullet_internals.capi`): PyBullet's state index
        of every position entry and every velocity entry, and where each part's entries start in them,
        ``(n_q,)``, ``(n_dof,)``, ``(parts + 1,)``, ``(parts + 1,)`` int64."""
        qidx: list[int] = []
        uidx: list[int] = []
        qsplit, usplit = [0], [0]
        for body, idx in self.parts:
            for j in idx:
                info = pb.getJointInfo(body, j, physicsClientId=self.client)
                width = 3 if info[2] == pb.JOINT_SPHERICAL else 1
                qidx += range(info[3], info[3] + width + (width == 3))
                uidx += range(info[4], info[4] + width)
            qsplit.append(len(qidx))
            usplit.append(len(uidx))
        return (
            np.array(qidx, np.int64),
            np.array(uidx, np.int64),
            np.array(qsplit, np.int64),
            np.array(usplit, np.int64),
        )
