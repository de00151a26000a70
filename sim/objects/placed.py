"""A placed object's handle: its body, size, mass and material, pose, velocity, contact forces per limb, and
the medium's forces on it each step (:meth:`PlacedObject.apply`). Objects are made by
:mod:`pccbullet.sim.objects.place`, which says how the fluid acts on them."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError, WorldClosedError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.bullet import pb
from pccbullet.sim.medium import Medium
from pccbullet.sim.objects.environment import contact_point_force
from pccbullet.sim.objects.fluid import ShapeFluid
from pccbullet.sim.robot import pose_matrix

if TYPE_CHECKING:
    from pccbullet.sim.robot import Robot


class ObjectWorld(Protocol):
    """What a :class:`PlacedObject` uses of its world (:class:`pccbullet.sim.world.World` has all of it)."""

    client: int
    """PyBullet physics client id."""
    dt: float
    """Physics step (s)."""
    gravity: tuple[float, ...]
    """Gravity ``(3,)`` in the world frame (m/s^2)."""
    medium: Medium
    """The surrounding fluid."""
    objects: list[PlacedObject]
    """The placed objects, stepped with the world."""

    @property
    def closed(self) -> bool:
        """Whether the world was closed."""
        ...

    def mark_moved(self) -> None:
        """Tell a kinematic world that a body moved."""
        ...

    def holding_globals(self) -> AbstractContextManager[None]:
        """Hold the world's Bullet globals for a block (around body creation)."""
        ...


class PlacedObject:
    """A sphere, cylinder or box in a world (made by :func:`place_sphere`, :func:`place_cylinder`,
    :func:`place_box`). Poses and forces are in the world frame, SI units.

    Attributes:
        world: the world it is in.
        body: its PyBullet body id.
        kind: ``"sphere"``, ``"cylinder"`` or ``"box"``.
        size: ``(radius,)``, ``(radius, length)`` (axis along body z) or the edge lengths ``(x, y, z)`` (m).
        volume: V (m^3).
        mass: its true mass m (kg); PyBullet's body has ``m + added_mass``.
        added_mass: ``C_a rho V`` of the world's medium (kg; 0 for a fixed object).
        fixed: static (PyBullet mass 0): nothing moves it.
        material: its material's name (:data:`pccbullet.sim.objects.friction.MATERIALS`).
        friction: its Coulomb coefficient against a limb (-).
        rolling_friction: the rolling lever arm against a limb (m).
        spinning_friction: the spinning lever arm against a limb (m).
        fluid: its drag and added-mass constants (:class:`pccbullet.sim.objects.fluid.ShapeFluid`).
    """

    def __init__(
        self,
        world: ObjectWorld,
        body: int,
        kind: str,
        size: tuple[float, ...],
        volume: float,
        mass: float,
        added_mass: float,
        fixed: bool,
        material: str,
        friction: tuple[float, float, float],
        fluid: ShapeFluid,
    ) -> None:
        self.world = world
        self.body = body
        self.kind = kind
        self.size = size
        self.volume = volume
        self.mass = mass
        self.fixed = fixed
        self.material = material
        self.friction, self.rolling_friction, self.spinning_friction = friction
        self.fluid = fluid
        self.added_mass = added_mass
        rho = world.medium.density
        g = np.asarray(world.gravity, dtype=float)
        # buoyancy and the added mass's gravity taken back: constant (world frame, N)
        self._lift = -(rho * volume + self.added_mass) * g
        self._drag_k = 0.5 * rho * np.asarray(fluid.drag) * np.asarray(fluid.area)  # kg/m per axis
        self._removed = False

    def _check(self) -> None:
        if self.world.closed:
            raise WorldClosedError("PlacedObject")
        if self._removed:
            raise ConfigurationError(f"the {self.kind} of body {self.body} was removed from its world")

    def pose(self) -> Transform:
        """World pose of its centre (of mass and volume), ``(4, 4) float``."""
        self._check()
        pos, orn = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.world.client)
        return pose_matrix(pos, orn)

    def position(self) -> FloatArray:
        """World position of its centre, ``(3,) float`` (m)."""
        self._check()
        return np.asarray(pb.getBasePositionAndOrientation(self.body, physicsClientId=self.world.client)[0])

    def linear_velocity(self) -> FloatArray:
        """Velocity of its centre, ``(3,) float`` (m/s)."""
        self._check()
        return np.asarray(pb.getBaseVelocity(self.body, physicsClientId=self.world.client)[0])

    def angular_velocity(self) -> FloatArray:
        """Angular velocity, world frame, ``(3,) float`` (rad/s)."""
        self._check()
        return np.asarray(pb.getBaseVelocity(self.body, physicsClientId=self.world.client)[1])

    def _contacts(self) -> list[tuple[int, FloatArray]]:
        """``(other body, force on this object)`` for every contact point of the last step (N, world frame).
        Read unfiltered: with a body filter PyBullet turns a point round (A for B) by flipping its normal but
        not its friction directions, so a filtered row gives the friction the wrong way round whenever this
        body is the second of Bullet's pair (e.g. an object made after the robot, against a limb)."""
        out = []
        for c in pb.getContactPoints(physicsClientId=self.world.client):
            if c[1] == self.body:
                out.append((c[2], contact_point_force(c)))
            elif c[2] == self.body:
                out.append((c[1], -contact_point_force(c)))
        return out

    def contact_force(self, other: int | None = None) -> FloatArray:
        """Total contact force on the object from body ``other`` (all other bodies if ``None``) at the last
        step, world frame, ``(3,) float`` (N): the sum over PyBullet's contact points."""
        self._check()
        return sum((f for body, f in self._contacts() if other is None or body == other), np.zeros(3))

    def limb_forces(self, robot: Robot) -> dict[str, FloatArray]:
        """The contact force each limb of ``robot`` exerts on the object at the last step, world frame:
        ``{limb name: (3,) float}`` (N), every limb listed (zero where it does not touch). A limb loaded in
        several parts (:mod:`pccbullet.sim.limb.parts`) counts all of them."""
        self._check()
        limb_of = {
            body: limb.name for limb in robot.spec.limbs for body, _ in robot.limb_joints(limb.name).parts
        }
        out = {limb.name: np.zeros(3) for limb in robot.spec.limbs}
        for body, force in self._contacts():
            if body in limb_of:
                out[limb_of[body]] += force
        return out

    def apply(self) -> None:
        """Apply this step's fluid forces (buoyancy, drag, the added mass's gravity taken back) at the
        centre; a no-op for a fixed object. :meth:`pccbullet.sim.world.World.step` calls it before every
        dynamic step. The drag never exceeds what stops the object's velocity along an axis in one step."""
        if self.fixed:
            return
        cid = self.world.client
        pos, orn = pb.getBasePositionAndOrientation(self.body, physicsClientId=cid)
        v = np.asarray(pb.getBaseVelocity(self.body, physicsClientId=cid)[0])
        R = np.asarray(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
        v_body = R.T @ v
        # -1/2 rho C_d A |v| v_i, limited to the impulse that stops v_i within one step (stable at any speed)
        k = np.minimum(self._drag_k * float(np.linalg.norm(v)), (self.mass + self.added_mass) / self.world.dt)
        force = self._lift + R @ (-k * v_body)
        pb.applyExternalForce(self.body, -1, force.tolist(), pos, pb.WORLD_FRAME, physicsClientId=cid)

    def remove(self) -> None:
        """Take the object out of its world (its body is removed; the handle is of no further use)."""
        self._check()
        self._removed = True
        if self in self.world.objects:
            self.world.objects.remove(self)
        pb.removeBody(self.body, physicsClientId=self.world.client)
        self.world.mark_moved()
