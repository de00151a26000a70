"""A compliant limb on a moving base (a free or moved robot body): :class:`MovingBase`.

Every step, before the implicit step of :mod:`pccbullet.sim.limb.dynamics`, the limb's flange (its first
part's floating base, welded to the body) is read: its pose, velocity and, from the velocity change over
the last step, its accelerations. They enter the implicit step through
:func:`pccbullet.sim.limb.chain.solve.moving_spring_torques` (the base's acceleration like gravity, its
rotation through the velocity products, the drag on absolute velocities;
:func:`pccbullet.sim.limb.chain.tendons.moving_limb_torques` adds the tendons, chambers and held ends as
:func:`~pccbullet.sim.limb.chain.tendons.limb_torques` does on a fixed base), as
:mod:`pccbullet.sim.attach` drives limbs on a user's body.

The fluid's loads on the limb (buoyancy, drag) enter the implicit step as joint torques ``J^T f``, which
on a floating base leave out the base's rows of ``J^T f``: the resultant wrench of those loads at the base.
:meth:`MovingBase.apply` adds that wrench on the flange (buoyancy ``-b_i g`` at each link's centre of mass,
drag ``-c_n |v_n| v_n - c_a |v_a| v_a t`` on each slice of axis ``t``, the kernel's coefficients), so that
the whole robot floats, sinks and is slowed as the same loads on the same links say: the generalized force
of the distributed loads, base rows and joint rows. The limbs' added mass acts on their joints only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.chain.rigid import MASS_COLUMN
from pccbullet.sim.limb.chain.tendons import moving_limb_torques

BUOYANCY_COLUMN = MASS_COLUMN + 13  # the chain's buoyancy column (kg): rho_w / rho * mass
DRAG_NORMAL_COLUMN = MASS_COLUMN + 14  # 1/2 rho_w Cd d l (kg/m)
DRAG_AXIAL_COLUMN = MASS_COLUMN + 15  # 1/2 rho_w Cd_axial pi d l (kg/m)


class MovingBase:
    """The moving base of one compliant limb: its flange's motion into the limb's implicit step, the fluid's
    resultant on the flange.

    Args:
        limb: the limb (a :class:`pccbullet.sim.limb.dynamics.CompliantLimb`, which holds this: its chain,
            joints, material, targets and drive arrays).
        links: the PyBullet ``(body, index)`` of each of the chain's links, chain order.
    """

    def __init__(self, limb: Any, links: list[tuple[int, int]]) -> None:
        self.limb = limb
        self.flange: int = limb.joints.bodies[0]
        """The limb's first part, whose floating base is the flange welded to the body."""
        self.base = np.zeros((4, 3))
        """The flange's motion the last step used: angular velocity, velocity, angular acceleration,
        acceleration (absolute, flange axes)."""
        self._last: tuple[FloatArray, FloatArray] | None = None
        self._tau = np.zeros(limb.chain.n_dof)
        params = limb.chain.params
        self._bodies: dict[int, tuple[list[int], list[int]]] = {}  # body -> (its link indices, chain rows)
        for row, (body, index) in enumerate(links):
            indices, rows = self._bodies.setdefault(body, ([], []))
            indices.append(index)
            rows.append(row)
        self._buoy = params[:, BUOYANCY_COLUMN].copy()
        self._drag_n = params[:, DRAG_NORMAL_COLUMN].copy()
        self._drag_a = params[:, DRAG_AXIAL_COLUMN].copy()
        self._fluid = bool(np.any(self._buoy) or np.any(self._drag_n) or np.any(self._drag_a))

    def forget(self) -> None:
        """Drop the last velocities (after a reset: they say nothing of an acceleration)."""
        self._last = None
        self.base[2:] = 0.0

    def apply(self) -> None:
        """Read the flange's motion, compute and send the limb's joint torques on it, push the fluid's
        resultant onto the flange; torques that are not finite raise :class:`FloatingPointError`."""
        c = self.limb
        cid, dt = c.client, c.dt
        pos, orn = pb.getBasePositionAndOrientation(self.flange, physicsClientId=cid)
        R = np.asarray(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        v, w = (np.asarray(x) for x in pb.getBaseVelocity(self.flange, physicsClientId=cid))
        com = np.asarray(pb.getDynamicsInfo(self.flange, -1, physicsClientId=cid)[3])
        v = v - np.cross(w, R @ com)  # the flange frame's origin, not its centre of mass
        base = self.base
        base[0], base[1] = R.T @ w, R.T @ v
        if self._last is not None:
            base[2] = R.T @ (w - self._last[1]) / dt
            base[3] = R.T @ (v - self._last[0]) / dt
        self._last = (v, w)
        g = np.asarray(c.gravity_world)
        c.gravity_base = R.T @ g
        q, qd = c.joints.read()
        ch, tau = c.chain, self._tau
        moving_limb_torques(
            ch.parent, ch.jtype, ch.dof, ch.qpos, ch.params, q, qd, c.gravity_base, base, c.target,
            c.offset, c.K, c.C, dt, tau, c.qdd, c.memory, c.drive_arrays,
        )  # fmt: skip
        if not c.external_loads:
            c.memory[0, 0] = np.nan
        if not np.isfinite(tau).all():
            raise FloatingPointError("joint torques are not finite")
        c.joints.send_torques(tau)
        if self._fluid:
            self._push(np.asarray(pos), g)

    def _push(self, origin: FloatArray, g: FloatArray) -> None:
        """Apply the fluid's resultant force and moment on the limb's links to the flange (at ``origin``,
        its centre of mass), world frame; ``g`` gravity ``(3,)``."""
        cid = self.limb.client
        force, moment = np.zeros(3), np.zeros(3)
        for body, (indices, rows) in self._bodies.items():
            states = pb.getLinkStates(
                body, indices, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=cid
            )
            x = np.array([s[0] for s in states])  # centres of mass
            vel = np.array([s[6] for s in states])
            axis = np.array([pb.getMatrixFromQuaternion(s[5])[2::3] for s in states])  # link z axes
            along = np.einsum("ij,ij->i", vel, axis)
            normal = vel - along[:, None] * axis
            f = -self._buoy[rows, None] * g[None, :]
            f -= (self._drag_n[rows] * np.linalg.norm(normal, axis=1))[:, None] * normal
            f -= (self._drag_a[rows] * np.abs(along) * along)[:, None] * axis
            force += f.sum(axis=0)
            moment += np.cross(x - origin, f).sum(axis=0)
        pb.applyExternalForce(
            self.flange, -1, force.tolist(), origin.tolist(), pb.WORLD_FRAME, physicsClientId=cid
        )
        pb.applyExternalTorque(self.flange, -1, moment.tolist(), pb.WORLD_FRAME, physicsClientId=cid)
