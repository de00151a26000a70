"""A robot's body in a world, fixed, free or moved (:class:`~pccbullet.sim.body.mode.BaseMode`), and how
its limbs are mounted on it: :class:`Body`.

Fixed: the head is loaded with a fixed base and every limb's first part too, at its mount (nothing joins
them: neither moves). Free or moved: the head is a floating body and every limb is loaded with a floating
base, its flange (the limb's base link) welded to the head at its mount by a fixed constraint, as
:func:`pccbullet.sim.attach.attach` mounts limbs on a user's body; each limb's dynamics then take the
flange's measured motion (:mod:`pccbullet.sim.limb.moving`). A flange's rotational inertia is at least
:mod:`pccbullet.sim.body.flange`'s rate times the step (a lighter flange does not hold the chain), its
mass that module's ``FLANGE_MASS`` at most, taken out of the head's so that the robot weighs what its file
says.

Free: the head's own fluid forces, as a placed object's (:mod:`pccbullet.sim.objects.fluid`): buoyancy
``-rho V g`` at its centre, quadratic drag per body axis ``-1/2 rho C_d,i A_i |v| v_i`` (the shape's
coefficients: a cylinder's across and along its axis, a sphere's, a box's faces; a mesh as the box of its
extents, an estimate), and the mean added mass ``C_a rho V`` put into the PyBullet mass with ``-m_a g`` so
that gravity acts on the true mass only. No rotary drag or added inertia on the head (the limbs' fluid
forces act about it). Moved: before every step the head is put at the trajectory's pose at that time with
its velocity (central differences), so the limbs ride on a body that goes exactly where it is told.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from scipy.spatial.transform import Rotation

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.body.flange import FLANGE_INERTIA_RATE, FLANGE_MASS, flange_dynamics
from pccbullet.sim.body.mode import BaseMode
from pccbullet.sim.body.trajectory import Trajectory
from pccbullet.sim.bullet import pb
from pccbullet.sim.medium import Medium
from pccbullet.sim.objects.fluid import ShapeFluid, box_fluid, cylinder_fluid, sphere_fluid
from pccbullet.urdf_gen.body_shape import body_inertia, mesh_extents
from pccbullet.urdf_gen.specs import HeadSpec

WELD_FORCE = 1e6  # N, a weld's force limit: rigid for any robot here


class BodyWorld(Protocol):
    """What a :class:`Body` reads of its world (:class:`pccbullet.sim.world.World`)."""

    client: int
    dt: float
    time: float
    gravity: tuple[float, ...]
    medium: Medium


def head_fluid(head: HeadSpec) -> ShapeFluid | None:
    """The fluid constants of the head's shape in head axes, ``None`` for a body without a shape: a
    cylinder lies along the head's x axis, a mesh is taken as the box of its extents (an estimate)."""
    if head.shape == "cylinder":
        f = cylinder_fluid(0.5 * head.diameter, head.length)  # axis z -> head x
        order = (2, 0, 1)
        return ShapeFluid(
            tuple(f.drag[i] for i in order),  # type: ignore[arg-type]
            tuple(f.area[i] for i in order),  # type: ignore[arg-type]
            tuple(f.added_mass[i] for i in order),  # type: ignore[arg-type]
        )
    if head.shape == "sphere":
        return sphere_fluid(0.5 * head.diameter)
    if head.shape == "box":
        return box_fluid(head.size)
    if head.shape == "mesh":
        x, y, z = (float(v) for v in mesh_extents(head))
        return box_fluid((x, y, z))
    return None


def _xyzw(T: Transform) -> tuple[list[float], list[float]]:
    """``T (4, 4)`` as PyBullet's position and quaternion ``x, y, z, w``."""
    return T[:3, 3].tolist(), Rotation.from_matrix(T[:3, :3]).as_quat().tolist()


def weld(client: int, parent: int, child: int, T_parent_child: Transform) -> int:
    """A fixed constraint holding body ``child``'s base frame at ``T_parent_child`` in body ``parent``'s base
    frame (PyBullet takes both in the bodies' inertial frames)."""
    info = pb.getDynamicsInfo
    c_pos, c_orn = pb.invertTransform(*info(child, -1, physicsClientId=client)[3:5])
    p_pos, p_orn = info(parent, -1, physicsClientId=client)[3:5]
    T_inertial = np.eye(4)
    T_inertial[:3, :3] = np.asarray(pb.getMatrixFromQuaternion(p_orn)).reshape(3, 3)
    T_inertial[:3, 3] = p_pos
    f_pos, f_orn = _xyzw(np.linalg.inv(T_inertial) @ T_parent_child)
    constraint = pb.createConstraint(
        parent, -1, child, -1, pb.JOINT_FIXED, [0.0, 0.0, 0.0], f_pos, c_pos, f_orn, c_orn,
        physicsClientId=client,
    )  # fmt: skip
    pb.changeConstraint(constraint, maxForce=WELD_FORCE, physicsClientId=client)
    return int(constraint)


class Body:
    """A robot's head in a world, held as ``mode`` says; :meth:`apply` before every dynamic step.

    Args:
        world: the world (:class:`BodyWorld`).
        head: the body's spec.
        urdf: the head's URDF.
        mode: fixed, free or moved.
        T_world_head: where it is loaded, ``(4, 4) float``.
        trajectory: the moved body's pose over time (``None`` unless ``mode`` is moved).
        flanges: how many limbs will be welded on (their flanges' mass is taken out of the head's).
    """

    def __init__(
        self,
        world: BodyWorld,
        head: HeadSpec,
        urdf: str,
        mode: BaseMode,
        T_world_head: Transform,
        trajectory: Trajectory | None,
        flanges: int,
    ) -> None:
        if (mode is BaseMode.MOVED) != (trajectory is not None):
            raise ConfigurationError(
                f"trajectory = {trajectory!r} is invalid with base = '{mode}'; allowed: a trajectory for a "
                "moved body only"
            )
        self.world = world
        self.spec = head
        self.mode = mode
        self.trajectory = trajectory
        cid = world.client
        flags = pb.URDF_USE_INERTIA_FROM_FILE | pb.URDF_USE_IMPLICIT_CYLINDER
        pos, orn = _xyzw(T_world_head)
        self.id: int = pb.loadURDF(
            urdf, pos, orn, useFixedBase=mode is BaseMode.FIXED, flags=flags, physicsClientId=cid
        )
        """The head's PyBullet body."""
        pb.changeDynamics(self.id, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=cid)
        self.flange_mass = min(FLANGE_MASS, 0.25 * head.mass / max(flanges, 1))
        """Each welded limb's flange mass (kg), taken out of the head's."""
        fluid = head_fluid(head) if mode is BaseMode.FREE else None
        rho = world.medium.density
        self.added_mass = 0.0 if fluid is None else fluid.added_mass_mean * rho * head.volume
        """The medium's added mass on the head (kg), in its PyBullet mass (free bodies)."""
        g = np.asarray(world.gravity, dtype=float)
        self._lift = -(rho * head.volume + self.added_mass) * g if fluid is not None else np.zeros(3)
        self._drag = 0.5 * rho * np.asarray(fluid.drag) * np.asarray(fluid.area) if fluid else np.zeros(3)
        if mode.moves:
            mass = head.mass - flanges * self.flange_mass + self.added_mass
            _, inertia = body_inertia(head)
            diagonal = np.maximum(np.diag(inertia), FLANGE_INERTIA_RATE * world.dt)
            pb.changeDynamics(
                self.id, -1, mass=mass, localInertiaDiagonal=diagonal.tolist(), physicsClientId=cid
            )
        if trajectory is not None:
            self._put(world.time)

    def flange(self, body: int) -> None:
        """Give a welded limb's base link (``body``'s base) the flange's mass and its least inertia
        (:func:`~pccbullet.sim.body.flange.flange_dynamics`)."""
        flange_dynamics(self.world.client, body, self.flange_mass, self.world.dt)

    def _put(self, t: float) -> None:
        """Put a moved head at the trajectory's pose and velocity at time ``t`` (s)."""
        if self.trajectory is None:
            return
        T = self.trajectory(t)
        v, w = self.trajectory.velocity(t)
        cid = self.world.client
        com = pb.getDynamicsInfo(self.id, -1, physicsClientId=cid)[3]
        pos, orn = _xyzw(T)
        pos, orn = pb.multiplyTransforms(pos, orn, com, [0.0, 0.0, 0.0, 1.0])
        pb.resetBasePositionAndOrientation(self.id, pos, orn, physicsClientId=cid)
        v_com = v + np.cross(w, T[:3, :3] @ np.asarray(com))
        pb.resetBaseVelocity(self.id, v_com.tolist(), w.tolist(), physicsClientId=cid)

    def apply(self) -> None:
        """This step's body forces: a free head's buoyancy, drag and added mass's gravity taken back; a moved
        head put where the trajectory is now. Nothing for a fixed head."""
        if self.mode is BaseMode.MOVED:
            self._put(self.world.time)
            return
        if self.mode is not BaseMode.FREE:
            return
        cid = self.world.client
        pos, orn = pb.getBasePositionAndOrientation(self.id, physicsClientId=cid)
        v = np.asarray(pb.getBaseVelocity(self.id, physicsClientId=cid)[0])
        R = np.asarray(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        mass = pb.getDynamicsInfo(self.id, -1, physicsClientId=cid)[0]
        # -1/2 rho C_d A |v| v_i, at most what stops v_i within one step (stable at any speed)
        k = np.minimum(self._drag * float(np.linalg.norm(v)), mass / self.world.dt)
        force = self._lift + R @ (-k * (R.T @ v))
        pb.applyExternalForce(self.id, -1, force.tolist(), pos, pb.WORLD_FRAME, physicsClientId=cid)

    def pose(self) -> Transform:
        """The head frame's world pose ``(4, 4) float`` (not its centre of mass)."""
        cid = self.world.client
        pos, orn = pb.getBasePositionAndOrientation(self.id, physicsClientId=cid)
        com, com_orn = pb.getDynamicsInfo(self.id, -1, physicsClientId=cid)[3:5]
        pos, orn = pb.multiplyTransforms(pos, orn, *pb.invertTransform(com, com_orn))
        T = np.eye(4)
        T[:3, :3] = np.asarray(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        T[:3, 3] = pos
        return T

    def velocity(self) -> tuple[FloatArray, FloatArray]:
        """The head's centre-of-mass velocity and angular velocity ``(3,)``, ``(3,)`` (m/s, rad/s, world)."""
        v, w = pb.getBaseVelocity(self.id, physicsClientId=self.world.client)
        return np.asarray(v, dtype=float), np.asarray(w, dtype=float)
