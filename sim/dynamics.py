"""Dynamic mode: every chain joint is a spring-damper towards its PCC target, with material stiffness.

Mechanism and why: joint torques from an *implicit* (backward-Euler, "stable PD" after Tan, Liu and
Turk 2011) spring-damper, sent once per step with one batched ``setJointMotorControlArray(TORQUE_CONTROL)``
call per limb, PyBullet's velocity motors disabled (force 0). Per step and limb::

    (M + dt C + dt^2 K) qdd = -K (q + dt qd - q*) - C qd - h(q, qd) + tau_b
    tau = -K (q + dt qd + dt^2 qdd - q*) - C (qd + dt qdd) + tau_b

with ``M`` PyBullet's joint-space inertia, ``h`` its Coriolis and gravity terms (inverse dynamics) and
``tau_b`` the buoyancy. Explicit springs ``-K (q - q*)`` cannot do this: a beam stiff enough to sag
little has discrete modes far above ``2 / dt`` at N = 20. PyBullet's position motors are implicit too,
but their gains have no material meaning and cost O(rows x dofs) per solver iteration.

Stiffness per joint (section arc length ``h = L / N``, radius ``r(s)`` of the frustum at the joint):

* bend joints (revolute y): ``E I / h`` with ``I = pi r^4 / 4``; the first and the tip joint of a
  segment represent half a section: ``E I / (h / 2)`` (midpoint rule of the curvature integral);
* plane joints (revolute z): torsion ``G J / h`` with ``J = pi r^4 / 2`` (the first: ``h / 2``);
* chord joints (prismatic z): axial ``E A / h`` with the slice's mean area.

The inertia ``M`` in the left-hand side (with the system's inverse) and the buoyancy torques are
refreshed every ``MASS_REFRESH_STEPS`` steps; ``h`` and the springs are evaluated every step. A
slightly stale ``M`` only changes the predicted ``qdd``, not the equilibrium. Drag is recomputed every
``DRAG_REFRESH_STEPS`` steps and applied every step: the limbs' first modes are near 0.3 Hz.

Damping: stiffness-proportional (Rayleigh) ``C = (2 zeta / omega_1) K``, with ``omega_1`` the first
natural frequency of ``M q'' + K q = 0`` at the straight pose and ``zeta`` the material's damping ratio:
the first bending mode gets exactly ``zeta``, higher modes more (the implicit step stays stable).

Medium: buoyancy ``-rho_w / rho`` times the elastomer's gravity torques (slices are uniform, so their
centre of volume is their centre of mass; payloads get no buoyancy, their volume being unknown, as in
the Newton–Euler model), and Morison-style
quadratic drag on each slice, ``-1/2 rho_w Cd d l |v_n| v_n`` across its axis and
``-1/2 rho_w Cd_axial pi d l |v_a| v_a`` along it, applied as external forces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.bullet import pb
from urdf_gen import naming
from urdf_gen.errors import ConfigurationError
from urdf_gen.geometry import frustum_mass_properties
from urdf_gen.pcc import rest_configs
from urdf_gen.specs import LimbSpec
from urdf_gen.types import FloatArray


@dataclass(frozen=True, slots=True)
class Medium:
    """The fluid around the robot.

    Attributes:
        name: ``"air"`` or ``"water"``.
        density: (kg/m^3).
        drag_normal: drag coefficient across a slice (-), cylinder in cross-flow.
        drag_axial: skin-friction coefficient along a slice (-).
    """

    name: str
    density: float
    drag_normal: float = 1.1
    drag_axial: float = 0.01


AIR = Medium("air", 1.204, 1.1, 0.01)  # 20 degC
WATER = Medium("water", 1000.0, 1.1, 0.01)  # fresh water; use SEAWATER for the ocean
SEAWATER = Medium("seawater", 1025.0, 1.1, 0.01)
MEDIA = {m.name: m for m in (AIR, WATER, SEAWATER)}
MASS_REFRESH_STEPS = 10  # joint-space inertia (and the implicit system's inverse) refreshed every 10 ms
DRAG_REFRESH_STEPS = 5  # drag forces recomputed every 5 ms, applied every step


def medium(name: str) -> Medium:
    """A medium by name; raises :class:`ConfigurationError` listing the names."""
    if name not in MEDIA:
        raise ConfigurationError(f"medium = {name!r} is invalid; allowed: {', '.join(MEDIA)}")
    return MEDIA[name]


def joint_stiffness(limb: LimbSpec) -> FloatArray:
    """Stiffness of every joint of ``limb`` in joint-vector order, ``(n,) float`` (N·m/rad or N/m)."""
    E = limb.material.youngs_modulus
    G = limb.material.shear_modulus
    out: list[float] = []
    for seg in limb.segments:
        n, L = seg.sections, seg.length
        h = L / n
        for k in range(n):
            s_joint = h / 4 if k == 0 else k * h  # the first joint covers [0, h/2]
            arm = h / 2 if k == 0 else h
            r = seg.radius_at(s_joint / L)
            i_area = math.pi * r**4 / 4.0
            r_mid = seg.radius_at((k + 0.5) * h / L)
            out += [G * 2 * i_area / arm, E * i_area / arm, E * math.pi * r_mid**2 / h]
        r_tip = seg.radius_at((L - h / 4) / L)
        out.append(E * math.pi * r_tip**4 / 4.0 / (h / 2))
    return np.array(out)


def first_natural_frequency(K: FloatArray, M: FloatArray) -> float:
    """Lowest ``omega`` (rad/s) of ``M q'' + diag(K) q = 0``; ``K`` ``(n,)``, ``M`` ``(n, n)``."""
    from scipy.linalg import eigh

    ev = eigh(np.diag(K), M, eigvals_only=True, subset_by_index=[0, 0])
    return float(math.sqrt(max(ev[0], 1e-12)))


def slice_volumes(limb: LimbSpec) -> FloatArray:
    """Volume of each slice body of ``limb``, base to tip, ``(N_total,) float`` (m^3)."""
    vols = []
    for seg in limb.segments:
        n, L = seg.sections, seg.length
        for k in range(n):
            r0, r1 = seg.radius_at(k / n), seg.radius_at((k + 1) / n)
            vols.append(frustum_mass_properties(r0, r1, L / n, 1.0).mass)
    return np.array(vols)


class CompliantLimb:
    """Spring-damper joints of one limb body, plus buoyancy and drag of its slices.

    Args:
        robot: the loaded robot (``sim.world.Robot``).
        limb: limb name.
        medium_: the surrounding fluid.
        phase: offset (steps) of this limb's inertia refresh, so that limbs refresh on different steps.
    """

    def __init__(self, robot: object, limb: str, medium_: Medium, phase: int = 0) -> None:
        self.spec = robot.limb(limb)  # type: ignore[attr-defined]
        self.body: int = robot.bodies[limb]  # type: ignore[attr-defined]
        self.client: int = robot.world.client  # type: ignore[attr-defined]
        self.dt: float = robot.world.dt  # type: ignore[attr-defined]
        self.medium = medium_
        self.idx = robot.joint_indices(limb).tolist()  # type: ignore[attr-defined]
        rest = robot.pcc_joints(limb, rest_configs(self.spec.segments))  # type: ignore[attr-defined]
        n_joints = pb.getNumJoints(self.body, physicsClientId=self.client)
        info = [pb.getJointInfo(self.body, j, physicsClientId=self.client) for j in range(n_joints)]
        movable = [j for j in range(n_joints) if info[j][2] != pb.JOINT_FIXED]
        if movable != self.idx:
            raise ConfigurationError(f"limb '{limb}': URDF joint order differs from the joint vector")
        self.K = joint_stiffness(self.spec)
        self.omega_1 = first_natural_frequency(self.K, self._mass_matrix(rest))
        self.C = (2.0 * self.spec.material.damping_ratio / self.omega_1) * self.K
        self.target = rest.copy()
        self.offset = np.zeros_like(rest)  # extra torque (e.g. actuators, gravity compensation)
        links = robot._links  # type: ignore[attr-defined]
        self.slice_links = [links[name][1] for name in naming.section_body_links(self.spec)]
        self.volumes = slice_volumes(self.spec)
        self._zero = [0.0] * len(self.idx)
        self._steps_since_factor = MASS_REFRESH_STEPS
        self._first_refresh = True
        self.phase = phase % MASS_REFRESH_STEPS
        self._A_inv = np.eye(len(self.idx))
        self._buoyancy = np.zeros(len(self.idx))
        self._drag: list[list[float]] = []
        self._com: list[list[float]] = []
        self._steps_since_drag = DRAG_REFRESH_STEPS
        self.gravity_world = [float(g) for g in robot.world.gravity]  # type: ignore[attr-defined]
        R_world_base = robot.T_world_limbbase(limb)[:3, :3]  # type: ignore[attr-defined]
        self.gravity_base = (R_world_base.T @ np.asarray(self.gravity_world)).tolist()
        payload = self.spec.payload
        self.payload_link = links[payload.frame][1] if payload is not None else None
        self.payload_weight_base = (payload.mass if payload else 0.0) * np.asarray(self.gravity_base)
        # air's buoyancy (0.1 % of the weight) is left out: it would cost an inverse-dynamics call a step
        self.buoyancy_ratio = medium_.density / self.spec.material.density if medium_.density > 10.0 else 0.0
        self.lengths = np.concatenate([[s.length / s.sections] * s.sections for s in self.spec.segments])
        self.diameters = 2.0 * np.sqrt(self.volumes / (math.pi * self.lengths))
        self._drag_n = 0.5 * medium_.density * medium_.drag_normal * self.diameters * self.lengths
        self._drag_a = 0.5 * medium_.density * medium_.drag_axial * math.pi * self.diameters * self.lengths
        pb.setJointMotorControlArray(
            self.body,
            self.idx,
            pb.VELOCITY_CONTROL,
            forces=[0.0] * len(self.idx),
            physicsClientId=self.client,
        )
        # The material springs are the physics; the spec's limits bound the *targets* (Robot.pcc_joints).
        # A hard limit row, e.g. at a chord resting on its upper limit, would fight the implicit spring.
        for j in self.idx:
            pb.changeDynamics(
                self.body, j, jointLowerLimit=-1e3, jointUpperLimit=1e3, physicsClientId=self.client
            )

    def _mass_matrix(self, q: FloatArray) -> FloatArray:
        """Joint-space inertia at joint vector ``q``, ``(n, n) float``."""
        return np.asarray(pb.calculateMassMatrix(self.body, q.tolist(), physicsClientId=self.client))

    def apply(self) -> None:
        """Compute and send this step's joint torques and fluid forces."""
        cid = self.client
        states = pb.getJointStates(self.body, self.idx, physicsClientId=cid)
        q = np.fromiter((s[0] for s in states), float, len(self.idx))
        qd = np.fromiter((s[1] for s in states), float, len(self.idx))
        tau = self.torques(q, qd)
        pb.setJointMotorControlArray(
            self.body, self.idx, pb.TORQUE_CONTROL, forces=tau.tolist(), physicsClientId=cid
        )
        if self.medium.drag_normal > 0.0 and self.medium.density > 10.0:
            self._fluid_forces()

    def torques(self, q: FloatArray, qd: FloatArray) -> FloatArray:
        """Implicit spring-damper torques for joint state ``q``, ``qd`` (see module docstring), ``(n,)``."""
        cid, dt = self.client, self.dt
        ql, qdl, zero = q.tolist(), qd.tolist(), self._zero
        refresh = self._steps_since_factor >= MASS_REFRESH_STEPS
        if refresh:
            M = np.asarray(pb.calculateMassMatrix(self.body, ql, physicsClientId=cid))
            self._A_inv = np.linalg.inv(M + np.diag(dt * self.C + dt * dt * self.K))
            # after the first refresh, limbs refresh on different steps (spreads the cost: lower p99)
            self._steps_since_factor = -self.phase if self._first_refresh else 0
            self._first_refresh = False
        self._steps_since_factor += 1
        # PyBullet's inverse dynamics puts a fixed base at the identity pose: give it gravity in base axes.
        pb.setGravity(*self.gravity_base, physicsClientId=cid)
        h = np.asarray(pb.calculateInverseDynamics(self.body, ql, qdl, zero, physicsClientId=cid))
        if self.buoyancy_ratio and refresh:
            gravity = np.asarray(pb.calculateInverseDynamics(self.body, ql, zero, zero, physicsClientId=cid))
            if self.payload_link is not None:  # payloads get no buoyancy (their volume is unknown)
                jac, _ = pb.calculateJacobian(
                    self.body, self.payload_link, [0.0, 0.0, 0.0], ql, zero, zero, physicsClientId=cid
                )
                gravity += np.asarray(jac).T @ self.payload_weight_base
            self._buoyancy = self.buoyancy_ratio * gravity  # ID gives the torque that holds gravity
        pb.setGravity(*self.gravity_world, physicsClientId=cid)
        tau_ext = self.offset + self._buoyancy
        spring = -self.K * (q + dt * qd - self.target) - self.C * qd
        qdd = self._A_inv @ (spring - h + tau_ext)
        return spring - dt * (self.C + dt * self.K) * qdd + tau_ext

    def _fluid_forces(self) -> None:
        """Morison drag on every slice, refreshed every ``DRAG_REFRESH_STEPS``, applied every step."""
        cid = self.client
        if self._steps_since_drag >= DRAG_REFRESH_STEPS:
            self._steps_since_drag = 0
            states = pb.getLinkStates(self.body, self.slice_links, computeLinkVelocity=1, physicsClientId=cid)
            com = np.array([st[0] for st in states])
            quat = np.array([st[1] for st in states])
            v = np.array([st[6] for st in states])
            x, y, z, w = quat.T
            axis = np.stack(
                [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=1
            )  # R[:, 2]
            v_a = np.einsum("ij,ij->i", v, axis)
            v_n = v - v_a[:, None] * axis
            drag = -self._drag_n[:, None] * np.linalg.norm(v_n, axis=1)[:, None] * v_n
            drag -= (self._drag_a * np.abs(v_a) * v_a)[:, None] * axis
            self._drag, self._com = drag.tolist(), com.tolist()
        self._steps_since_drag += 1
        for link, f, p in zip(self.slice_links, self._drag, self._com, strict=True):
            pb.applyExternalForce(self.body, link, f, p, pb.WORLD_FRAME, physicsClientId=cid)
