"""What a compliant limb (:class:`~pccbullet.sim.limb.dynamics.CompliantLimb`) uses of the robot it is in.

A :class:`~pccbullet.sim.robot.Robot` is the usual host, :class:`~pccbullet.sim.attach.Attached` (limbs in a
user's own client) the other; both sit above :mod:`pccbullet.sim.limb`, so the limb names what it reads
of them as protocols here instead of importing them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.limb.joints import LimbJoints
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.topology import Topology


class LimbWorld(Protocol):
    """What a compliant limb reads of the world it is in (:class:`pccbullet.sim.world.World`)."""

    @property
    def client(self) -> int:
        """PyBullet physics client id."""
        ...

    @property
    def dt(self) -> float:
        """Physics step (s)."""
        ...

    @property
    def gravity(self) -> Sequence[float]:
        """Gravity ``(3,)`` in the world frame (m/s^2)."""
        ...


class LimbFiles(Protocol):
    """The URDF files a host loaded its limbs from (:class:`pccbullet.urdf_gen.urdf_writer.UrdfOutput`)."""

    @property
    def limbs(self) -> Mapping[str, Path]:
        """Each limb's URDF, by name."""
        ...


class LimbHost(Protocol):
    """What a compliant limb uses of the robot it is loaded in (:class:`pccbullet.sim.robot.Robot`,
    :class:`pccbullet.sim.attach.Attached`)."""

    @property
    def world(self) -> LimbWorld:
        """The world (client, step, gravity)."""
        ...

    @property
    def chain(self) -> Topology:
        """The limbs' chain topology."""
        ...

    @property
    def bodies(self) -> Mapping[str, int]:
        """Each limb's (first) body."""
        ...

    @property
    def urdfs(self) -> LimbFiles:
        """The URDFs the limbs were loaded from."""
        ...

    def limb(self, name: str) -> LimbSpec:
        """The spec of limb ``name``."""
        ...

    def limb_joints(self, limb: str) -> LimbJoints:
        """The limb's movable joints in PyBullet (:mod:`pccbullet.sim.limb.joints`)."""
        ...

    def pcc_joints(self, limb: str, configs: Sequence[PccConfig]) -> FloatArray:
        """The limb's joint vector for per-segment PCC ``configs``."""
        ...

    def T_world_limbbase(self, limb: str) -> Transform:
        """World pose ``(4, 4)`` of the limb's base frame."""
        ...
