"""Opt-in transverse shear for a compliant chain in dynamic mode (Timoshenko, quasi-static).

The RRP chain has no transverse degree of freedom: between two bend joints a section's chord stays
normal to its cross-sections, so a thick, soft limb comes out too stiff (the URSULA camera tentacle hanging
in air: its tip ~8 mm too high, 1.5 % of its length). :class:`ChainShear` adds the shear compliance by
moving the spring targets of the bend joints: chord k carries the dead load ``F_k`` of everything beyond
it (gravity minus buoyancy, the payload's full weight) and shears by ``gamma_k = F_perp,k / (kappa G
A_k)`` (``kappa = 6 (1 + nu) / (7 + 6 nu)``, ``A_k`` at the chord's mid radius). A shear strain turns the
chord by ``gamma_k`` but not the sections after it, so bend joint k's target moves by ``+phi_k`` and bend
joint k + 1's by ``-phi_k``, with ``phi_k`` the component of ``gamma_k`` about joint k's axis. The bend
springs then carry the bending part of the joint angles only, as in a Timoshenko beam.

The shear follows the chain's pose through :meth:`ChainShear.update`, called between steps (explicit,
so meant for slow motion and settling: statics, quasi-static loading). Default off: nothing changes
unless an update is called. Single-segment limbs of the RRP chain and in-plane shear (the component about
the bend joints' axes) only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.dynamics import CompliantLimb
from pccbullet.sim.limb.host import LimbWorld
from pccbullet.sim.models.newton_euler.statics import shear_coefficient
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.topology import Topology


class ShearHost(Protocol):
    """What a :class:`ChainShear` uses of a robot in dynamic mode (:class:`pccbullet.sim.robot.Robot`)."""

    @property
    def world(self) -> LimbWorld:
        """The world (its client)."""
        ...

    @property
    def bodies(self) -> Mapping[str, int]:
        """Each limb's (first) body."""
        ...

    @property
    def compliant(self) -> Mapping[str, CompliantLimb]:
        """The compliant limbs by name."""
        ...

    def limb(self, name: str) -> LimbSpec:
        """The spec of limb ``name``."""
        ...


class ChainShear:
    """Shear compliance of one compliant limb of a robot loaded in dynamic mode.

    Args:
        robot: the loaded robot (:class:`ShearHost`: a :class:`~pccbullet.sim.robot.Robot`) with compliant
            limbs.
        limb: limb name (one segment).
        coefficient: shear coefficient kappa (-); default ``6 (1 + nu) / (7 + 6 nu)`` (solid circle).
    """

    def __init__(self, robot: ShearHost, limb: str, coefficient: float | None = None) -> None:
        compliant = robot.compliant
        if limb not in compliant:
            raise ConfigurationError(f"limb '{limb}' is not a compliant limb; ChainShear needs dynamic mode")
        if compliant[limb].kind is not Topology.RRP:  # the bend joints' layout is the RRP chain's
            raise ConfigurationError(
                f"limb '{limb}' is a {compliant[limb].kind} chain; ChainShear supports the rrp chain"
            )
        spec = robot.limb(limb)
        if len(spec.segments) != 1:
            raise ConfigurationError(
                f"limb '{limb}' has {len(spec.segments)} segments; ChainShear supports 1 segment"
            )
        mat = spec.material
        kappa = shear_coefficient(mat.poisson_ratio, coefficient)
        self.limb = compliant[limb]
        self.body: int = robot.bodies[limb]
        self.client: int = robot.world.client
        seg = spec.segments[0]
        n = seg.sections
        self.n = n
        idx = self.limb.idx  # joint indices: [z_0, y_0, p_0, ..., z_(n-1), y_(n-1), p_(n-1), y_tip]
        self.bend_pos = [3 * k + 1 for k in range(n)] + [3 * n]  # positions in the joint vector
        self.chord_joint = [idx[3 * k + 2] for k in range(n)]  # PyBullet joint of chord k
        h = seg.length / n
        fractions = np.asarray((np.arange(n) + 0.5) * h / seg.length, dtype=np.float64)
        r_mid = np.asarray(seg.radius_at(fractions), dtype=np.float64)
        self.compliance = 1.0 / (kappa * mat.shear_modulus * np.pi * r_mid**2)  # rad/N
        # net dead load of every link (N, world frame): the chain's gravity minus buoyancy
        g = np.asarray(self.limb.gravity_world, dtype=float)
        ratio = self.limb.medium.density / mat.density
        payload = spec.payload.frame if spec.payload is not None else None
        n_links = pb.getNumJoints(self.body, physicsClientId=self.client)
        loads = []
        for j in range(n_links):
            mass = pb.getDynamicsInfo(self.body, j, physicsClientId=self.client)[0]
            name = pb.getJointInfo(self.body, j, physicsClientId=self.client)[12].decode()
            loads.append(mass * (1.0 if name == payload else 1.0 - ratio) * g)
        loads_arr = np.asarray(loads)
        # F_k: loads of all links from chord k's child on (a serial chain: link index >= joint index)
        self.F = np.array([loads_arr[j:].sum(axis=0) for j in self.chord_joint])
        self.base_target = self.limb.target.copy()
        self.shift = np.zeros_like(self.base_target)

    def angles(self) -> FloatArray:
        """``phi_k`` (rad) of chords 0..n-1 for the current pose, ``(n,)``."""
        states = pb.getLinkStates(
            self.body, self.chord_joint, computeForwardKinematics=True, physicsClientId=self.client
        )
        phi = np.empty(self.n)
        for k, st in enumerate(states):
            R = np.asarray(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
            t, a = R[:, 2], R[:, 1]  # chord direction; the bend axis (y of the section frame)
            F = self.F[k]
            perp = F - (F @ t) * t
            phi[k] = self.compliance[k] * (np.cross(a, t) @ perp)
        return phi

    def update(self, base_target: FloatArray | None = None) -> None:
        """Move the bend targets by the shear of the current pose (call between steps).

        Args:
            base_target: the limb's spring targets without shear ``(n_joints,)``; default the targets
                the limb had when this object was made.
        """
        if base_target is not None:
            self.base_target = np.asarray(base_target, dtype=float).copy()
        phi = self.angles()
        shift = np.zeros_like(self.base_target)
        bend = self.bend_pos
        for k in range(self.n):
            shift[bend[k]] += phi[k]
            shift[bend[k + 1]] -= phi[k]
        self.shift = shift
        self.limb.target = self.base_target + shift
