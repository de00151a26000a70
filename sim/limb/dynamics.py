"""Dynamic mode: every chain joint is a spring-damper towards its PCC target, with material stiffness.

Mechanism and why: joint torques from an *implicit* (backward-Euler, "stable PD" after Tan, Liu and
Turk 2011) spring-damper, sent once per step with one batched ``setJointMotorControlArray(TORQUE_CONTROL)``
call per limb, PyBullet's velocity motors disabled (force 0). Per step and limb::

    (M + dt C + dt^2 K) qdd = -K (q + dt qd - q*) - C qd - h(q, qd) + tau_f
    tau = -K (q + dt qd + dt^2 qdd - q*) - C (qd + dt qdd) + tau_f

with ``M`` the joint-space inertia, ``h`` the Coriolis and gravity terms and ``tau_f`` the fluid's
generalized forces (buoyancy and drag, ``J^T f``). Explicit springs ``-K (q - q*)`` cannot do this: a
beam stiff enough to sag little has discrete modes far above ``2 / dt`` at N = 20. PyBullet's position
motors are implicit too, but their gains have no material meaning and cost O(rows x dofs) per solver
iteration; its ``STABLE_PD_CONTROL`` diverges (NaN) on these fixed-base chains even at 1e-3 of the gains.

Speed: ``h`` and ``tau_f`` come from :mod:`pccbullet.sim.limb.chain.rigid`, compiled kernels on the same URDF
(they equal PyBullet's ``calculateInverseDynamics`` to 1e-15), and the linear system is solved there by the
articulated-body algorithm with ``dt C + dt^2 K`` as joint armature: the exact ``M(q)`` every step in
O(n), no factorization to refresh (so no slow steps). Per step and limb PyBullet is called twice,
to read the joint states and to send the torques; where PyBullet's C API is found
(:mod:`pccbullet.sim.bullet_internals.capi`) both calls and the torque kernel run in one compiled function,
else ``getJointStates`` and ``setJointMotorControlArray`` are used (the same numbers, bit for bit).

Two chains (``World(chain=...)``, :class:`~pccbullet.urdf_gen.topology.Topology`). ``"rrp"``: the paper's
sections ``Rz(plane) Ry(bend) Tz(chord)``, exact for PCC kinematics but not a rod (nothing bends about a
section's own x axis at first order, so a load out of the commanded plane twists the limb through the
plane joints; the straight chain is singular). ``"rod"`` (:mod:`pccbullet.urdf_gen.rod`): spherical nodes
(two bends and a twist) at the section boundaries and a prismatic chord per section, so every part of
the limb bends about both axes, twists and stretches, with rest rotations that are exactly the PCC arc's.
The joints' material stiffness per chain: :mod:`pccbullet.sim.limb.topology`.

Damping: stiffness-proportional (Rayleigh) ``C = (2 zeta / omega_1) K``, with ``omega_1`` the first
natural frequency of ``M q'' + K q = 0`` at the straight pose and ``zeta`` the material's damping ratio:
the first bending mode gets exactly ``zeta``, higher modes more (the implicit step stays stable).

Medium (air too): buoyancy ``-rho_w / rho m g`` at the centre of mass of every link (slices are
uniform, so their centre of volume is their centre of mass; payloads get no buoyancy, their volume
being unknown, as in the Newton–Euler model), and Morison-style quadratic drag on each slice at its
centre of mass, ``-1/2 rho_w Cd d l |v_n| v_n`` across its axis and ``-1/2 rho_w Cd_axial pi d l
|v_a| v_a`` along it; both enter as joint torques ``J^T f`` (the base is fixed, so this is exact). Added
mass (strip theory of a cylinder, per slice of volume ``V`` and length ``l``): ``C_a rho_w V`` across
the slice's axis at its centre and the rotary inertia ``C_a rho_w V l^2 / 12`` about its transverse
axes, nothing along or about the axis; it enters the implicit solve's inertia only
(:mod:`pccbullet.sim.limb.chain.solve`), so it is stable for any fluid, while gravity and buoyancy act on the
true masses; its own velocity terms are left out, and payloads get none. The fluid is a
:class:`pccbullet.sim.medium.Medium` (``Cd`` its ``drag_normal``, ``Cd_axial`` its ``drag_axial``, ``C_a``
its ``added_mass_coefficient``), the same record the Newton–Euler model reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.bullet import pb
from pccbullet.sim.bullet_internals import capi
from pccbullet.sim.limb.chain.ends import EndHold, end_rows, hold_arrays, read_reactions
from pccbullet.sim.limb.chain.kernels import ADDED_MASS
from pccbullet.sim.limb.chain.loads import PointLoad, count_down, load_torques
from pccbullet.sim.limb.chain.rigid import ChainModel
from pccbullet.sim.limb.chain.tendons import limb_torques
from pccbullet.sim.limb.chambers import ChamberDrive, declares_chambers, wall_stiffness
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.limb.host import LimbHost
from pccbullet.sim.limb.joints import LimbJoints
from pccbullet.sim.limb.material import chord_shear_compliance, fluid_chain, rayleigh_damping
from pccbullet.sim.limb.moving import MovingBase
from pccbullet.sim.limb.tendons import TendonDrive
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.medium import Medium
from pccbullet.urdf_gen.pcc import PccConfig, rest_configs
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.topology import Topology


class CompliantLimb:
    """Spring-damper joints of one limb body, plus buoyancy and drag of its slices.

    Args:
        robot: the loaded robot (:class:`~pccbullet.sim.limb.host.LimbHost`: a
            :class:`~pccbullet.sim.robot.Robot`).
        limb: limb name.
        medium_: the surrounding fluid.
        shear: give a rod chain's chords their shear compliance (:mod:`pccbullet.sim.limb.chain.springs`);
            ignored on the RRP chain.
        external_loads: put the loads PyBullet adds itself (``applyExternalForce``, contacts), estimated
            from the last step, into the implicit solve
            (:func:`pccbullet.sim.limb.chain.solve.spring_torques`). Without them the springs hold ``(1 + (dt
            C + dt^2 K) M^-1) J^T f`` against a load ``f`` instead of ``J^T f``: too compliant wherever ``dt C
            + dt^2 K`` is not small against the joint's inertia (a rod's twist and chords at its thin tip).
            Off by default: a steady load (a dead torque, a limb resting on a static body) converges to exact,
            but an impact between two limbs that both estimate diverges within a few steps.
        drive: what moves the limb (:class:`~pccbullet.sim.limb.drive.Drive` or its name): ``"joints"``, the
            springs' targets (:attr:`target`; the tendons stay slack unless commanded), or ``"tendons"``, its
            tendons (:attr:`tendons`; the springs keep the rest shape as their targets and :meth:`command`
            sets the tendons' controller), or ``"chambers"``, its pressurized chambers (:attr:`chambers`,
            :mod:`pccbullet.sim.limb.chambers`; the springs keep the rest shape as their targets, the
            chords take the chamber walls' axial stiffness where the robot file gives their area).

    Vectors (``target``, ``offset``, ``K``, ``C``) have one entry per velocity entry of the chain: on the
    rod chain a node's three are its x-y-z Euler angles in ``target`` (:mod:`pccbullet.urdf_gen.rod`) and
    its torque's child-axis components in ``offset``.
    """

    def __init__(
        self,
        robot: LimbHost,
        limb: str,
        medium_: Medium,
        *,
        shear: bool = True,
        external_loads: bool = False,
        drive: Drive | str = Drive.JOINTS,
    ) -> None:
        self.spec: LimbSpec = robot.limb(limb)
        self.joints: LimbJoints = robot.limb_joints(limb)
        """The limb's joints in PyBullet, over its bodies (:mod:`pccbullet.sim.limb.joints`)."""
        self.body: int = robot.bodies[limb]
        self.client: int = robot.world.client
        self.dt: float = robot.world.dt
        self.medium = medium_
        rest = robot.pcc_joints(limb, rest_configs(self.spec.segments))
        names = []
        for body, idx in self.joints.parts:
            n_joints = pb.getNumJoints(body, physicsClientId=self.client)
            info = [pb.getJointInfo(body, j, physicsClientId=self.client) for j in range(n_joints)]
            movable = [j for j in range(n_joints) if info[j][2] != pb.JOINT_FIXED]
            if movable != list(idx):
                raise ConfigurationError(f"limb '{limb}': URDF joint order differs from the joint vector")
            # The material springs are the physics; the spec's limits bound the *targets*
            # (Robot.pcc_joints). A hard limit row, e.g. at a chord resting on its upper limit, would fight
            # the implicit spring: the limb is loaded without limit constraints (robot.limit_free_urdf).
            if any(info[j][8] <= info[j][9] for j in idx):  # lower <= upper: PyBullet made a limit row
                raise ConfigurationError(
                    f"limb '{limb}': PyBullet holds joint-limit constraints; a compliant limb needs the "
                    "limit-free URDF of pccbullet.sim.robot.limit_free_urdf (World.load_robot loads it)"
                )
            names += [info[j][1].decode() for j in idx]
        self.gravity_world = [float(g) for g in robot.world.gravity]
        R_world_base = robot.T_world_limbbase(limb)[:3, :3]
        self.R_world_base: FloatArray = R_world_base
        self.T_world_base: FloatArray = robot.T_world_limbbase(limb)
        """The limb base's axes in the world's ``(3, 3)``: the chain's frame, which world loads turn into."""
        self.gravity_base: FloatArray = R_world_base.T @ np.asarray(self.gravity_world)
        self.kind: Topology = robot.chain
        """The chain's topology (:mod:`pccbullet.urdf_gen.topology`)."""
        topology = limb_topology(self.kind)
        self.chain: ChainModel = self._chain(robot.urdfs.limbs[limb], names)
        self.shear: bool = bool(shear) and topology.shears
        """Whether the chords shear (rod chains; :mod:`pccbullet.sim.limb.chain.solve`)."""
        if self.shear:
            self.chain = self.chain.with_shear(chord_shear_compliance(self.spec))
        self.K: FloatArray = topology.stiffness(self.spec)
        robot_spec = getattr(robot, "spec", None)
        if Drive.of(drive) is Drive.CHAMBERS and topology.tendons:
            self.K = wall_stiffness(robot_spec, self.spec, self.chain, self.K)
        self.omega_1, self.C = rayleigh_damping(self.spec, self.chain, self.K, rest)
        self.rest: FloatArray = rest
        """The joint vector of the limb's rest shape (the spec's rest arcs): the springs' targets of a
        limb its tendons drive."""
        self.target = rest.copy()
        self.offset = np.zeros_like(rest)  # extra torque (e.g. actuators, gravity compensation)
        self.qdd = np.zeros_like(rest)
        """The accelerations ``(n_dof,)`` the last step solved for (PyBullet integrates the same)."""
        self.ends: list[EndHold] = []
        """Held ends (:mod:`pccbullet.sim.limb.chain.ends`; ``Robot.hold_end``)."""
        self.loads: list[PointLoad] = []
        """Point loads the steps read (:mod:`pccbullet.sim.limb.chain.loads`; ``Robot.add_load``)."""
        self.external_loads = bool(external_loads)
        """Whether the loads PyBullet adds are estimated and put into the implicit solve."""
        self.memory = np.full((2, len(rest)), np.nan)
        """The step's memory: the last step's joint velocities (row 0; NaN: none) and the external
        generalized force estimated from it (row 1; NaN: none)."""
        self.pcc_vector: Callable[[Sequence[PccConfig]], FloatArray] = partial(robot.pcc_joints, limb)
        """The joint vector of per-segment PCC configurations (checked against the segments' limits)."""
        measured = getattr(robot, "measured_pcc", None)
        self.measure: Callable[[], list[PccConfig]] | None = (
            partial(measured, limb) if measured is not None else None
        )
        """The limb's shape as one PCC arc per segment through the segments' end points (``None`` for a
        limb outside a :class:`~pccbullet.sim.robot.Robot`: :func:`pccbullet.sim.attach.attach`)."""
        self.moving: MovingBase | None = None
        """The limb's moving base on a free or moved body (:mod:`pccbullet.sim.limb.moving`; set by the
        robot that welds the limb on), else ``None``: a fixed base."""
        self.drive: Drive = Drive.of(drive)
        """What :meth:`command` moves (:class:`~pccbullet.sim.limb.drive.Drive`)."""
        self.drive.check(limb, bool(self.spec.tendons), self.kind, declares_chambers(self.spec))
        pressure = self.drive is Drive.CHAMBERS
        self.tendons: TendonDrive | None = (
            TendonDrive(self) if self.spec.tendons and topology.tendons and not pressure else None
        )
        """The limb's tendons and their actuators (:mod:`pccbullet.sim.limb.tendons`); ``None`` for a limb
        without tendons, on the RRP chain or driven by its chambers. Slack until commanded."""
        self.chambers: ChamberDrive | None = ChamberDrive(self, robot_spec) if pressure else None
        """The limb's chambers and their lines (:mod:`pccbullet.sim.limb.chambers`) under drive
        ``"chambers"``, else ``None``. At zero pressure until commanded."""
        self._td = self.tendons.arrays if self.tendons is not None else TendonDrive.empty(self.chain.n_dof)
        if self.chambers is not None:
            self._td = self.chambers.arrays
        self.drive.start(self)  # hold the rest shape
        self.joints.release_motors()
        self._direct = self._direct_io()
        self.direct_io: bool = self._direct is not None
        """Whether :meth:`apply` talks to PyBullet's C API directly
        (:mod:`pccbullet.sim.bullet_internals.capi`), else through ``getJointStates`` and
        ``setJointMotorControlArray`` (their multi-dof forms on a rod chain); the torques are the same."""

    def command(self, vector: FloatArray) -> None:
        """Move towards the joint vector ``vector``: the springs' targets (drive ``"joints"``) or the
        tendons' lengths at it with the statics' tensions (drive ``"tendons"``,
        :meth:`pccbullet.sim.limb.tendons.TendonDrive.command_vector`)."""
        self.drive.command(self, vector)

    def command_pcc(self, configs: Sequence[PccConfig], vector: FloatArray) -> None:
        """Move towards the per-segment PCC ``configs`` (``vector``: their joint vector): the springs'
        targets (drive ``"joints"``) or the tendon controller's goal, its shape loop's too (drive
        ``"tendons"``, :meth:`pccbullet.sim.limb.tendons.TendonDrive.set_pcc`)."""
        self.drive.command_pcc(self, configs, vector)

    def forget(self) -> None:
        """Drop the last step's state (after a reset: its velocities say nothing about external loads)."""
        self.memory[:] = np.nan
        if self.tendons is not None:
            self.tendons.forget()
        if self.moving is not None:
            self.moving.forget()

    @property
    def drive_arrays(self) -> tuple:
        """The tendon arrays the compiled step takes (:attr:`TendonDrive.arrays`; empty ones without
        tendons)."""
        return self._td

    @property
    def idx(self) -> list[int]:
        """PyBullet indices of the limb's movable joints in :attr:`body`, chain order (a limb in one body;
        a limb loaded in parts has them in :attr:`joints`)."""
        if len(self.joints.parts) > 1:
            raise ConfigurationError(
                f"limb '{self.spec.name}' is loaded as {len(self.joints.parts)} bodies; its joints are in "
                "CompliantLimb.joints.parts"
            )
        return list(self.joints.parts[0][1])

    @property
    def added_mass(self) -> float:
        """The medium's added mass on the limb's slices, summed (kg): ``C_a rho_w`` times their volume."""
        return float(self.chain.params[:, ADDED_MASS].sum())

    def read_state(self) -> tuple[FloatArray, FloatArray]:
        """The chain's position vector ``(n_q,)`` (quaternions for a rod's nodes) and velocities
        ``(n_dof,)``, through PyBullet's Python functions."""
        return self.joints.read()

    def _direct_io(self) -> tuple | None:
        """The fixed arguments of :func:`pccbullet.sim.bullet_internals.capi.limb_step` for this limb, or
        ``None`` where the C API is unavailable, does not read back exactly what ``getJointStates`` reads or
        refuses a torque command."""
        api = capi.c_api()
        if api is None:
            return None
        ch = self.chain
        slot, handle = np.uint64(api.slot(self.client)), np.uint64(api.handle(self.client))
        out = np.zeros(capi.OUT_SLOTS, np.uint64)
        q, qd = np.empty(ch.n_q), np.empty(ch.n_dof)
        qidx, uidx, qsplit, usplit = self.joints.state_indices()
        bodies = np.array(self.joints.bodies, np.int64)
        io = (api.functions, slot, handle, bodies, qidx, uidx, qsplit, usplit, out)
        code = capi.read_joint_state(*io, q, qd)
        q_py, qd_py = self.read_state()
        if code != capi.OK or q.tolist() != q_py.tolist() or qd.tolist() != qd_py.tolist():
            return None
        # the command path too, with zero torques for the next step (apply sends new ones before it)
        if capi.send_joint_torques(*io[:4], uidx, usplit, np.zeros(ch.n_dof)) != capi.OK:
            return None
        return (*io, ch.parent, ch.jtype, ch.dof, ch.qpos, ch.params, q, qd, np.empty(ch.n_dof))

    def _chain(self, urdf: Path, joint_names: list[str]) -> ChainModel:
        """The limb's URDF as a compiled chain, with this medium's buoyancy, slice drag and added mass."""
        return fluid_chain(ChainModel.from_urdf(urdf, joint_names), self.spec, self.medium)

    def apply(self) -> None:
        """Read the joint state, compute and send this step's joint torques (springs, fluid); torques that
        are not finite raise :class:`FloatingPointError` (the World: the simulation diverged), none sent.
        Chambers' lines advance first (:meth:`pccbullet.sim.limb.chambers.ChamberDrive.advance`); on a
        moving base (:attr:`moving`) the base's motion enters too."""
        if self.chambers is not None:
            self.chambers.advance(self.dt)
        if self.moving is not None:
            self.moving.apply()
            return
        direct = self._direct
        if direct is not None:
            *head, q, qd, tau = direct
            offset = self.offset
            if self.loads or self.ends:
                if capi.read_joint_state(*head[:9], q, qd) != capi.OK:  # type: ignore[call-arg]
                    raise pb.error(f"limb body {self.body}, client {self.client}: joint state unreadable")
                offset = self.offset_with_loads(q, qd=qd)
            code = capi.limb_step(  # type: ignore[call-arg]  # numba's Dispatcher stub takes no args
                *head, self.gravity_base, self.target, offset, self.K, self.C, self.dt, q, qd, tau,
                self.qdd, self.memory, self._td,
            )  # fmt: skip
            if not self.external_loads:
                self.memory[0, 0] = np.nan
            if self.ends:
                read_reactions(self.ends, self._td[31], self.R_world_base, self.dt)
            if code != capi.OK:
                error = FloatingPointError if code == capi.ERR_NOT_FINITE else pb.error
                raise error(f"limb body {self.body}, client {self.client}: {capi.ERRORS[code]}")
            return
        tau = self.torques(*self.read_state())
        if not np.isfinite(tau).all():
            raise FloatingPointError(capi.ERRORS[capi.ERR_NOT_FINITE])
        self.joints.send_torques(tau)

    def offset_with_loads(
        self, q: FloatArray, R_world_base: FloatArray | None = None, qd: FloatArray | None = None
    ) -> FloatArray:
        """:attr:`offset` plus :attr:`loads`' generalized forces at ``q`` ``(n_q,)`` for one step (counted;
        ``R_world_base`` the base's axes now); with ``qd`` ``(n_dof,)`` held :attr:`ends`' rows too."""
        R = self.R_world_base if R_world_base is None else R_world_base
        out = self.offset + load_torques(self.chain, q, self.loads, R) if self.loads else self.offset.copy()
        count_down(self.loads)
        if self.ends and qd is not None:
            td, T = self._td, self.T_world_base
            out += end_rows(self.chain, q, qd, self.ends, T, self.dt, td[30], td[31], td[32])
        return out

    def hold_ends(self, ends: list[EndHold]) -> None:
        """Hold these ends (:mod:`pccbullet.sim.limb.chain.ends`), replacing any held before."""
        self._td, self.ends = hold_arrays(self._td, ends), list(ends)

    def torques(self, q: FloatArray, qd: FloatArray) -> FloatArray:
        """Implicit spring-damper torques ``(n_dof,)`` for ``q (n_q,)``, ``qd (n_dof,)`` (module docstring),
        the fluid's generalized forces included; the step's accelerations are left in :attr:`qdd`."""
        ch = self.chain
        tau = np.empty(ch.n_dof)
        offset = self.offset_with_loads(q, qd=qd) if self.loads or self.ends else self.offset
        limb_torques(
            ch.parent, ch.jtype, ch.dof, ch.qpos, ch.params, q, qd, self.gravity_base,
            self.target, offset, self.K, self.C, self.dt, tau, self.qdd, self.memory, self._td,
        )  # fmt: skip
        if not self.external_loads:
            self.memory[0, 0] = np.nan
        if self.ends:
            read_reactions(self.ends, self._td[31], self.R_world_base, self.dt)
        return tau
