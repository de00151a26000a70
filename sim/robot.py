"""A PCC robot loaded into a :class:`pccbullet.sim.world.World`: its bodies, limbs by name, poses and joints.

:class:`Robot` is what :meth:`pccbullet.sim.world.World.load_robot` returns; :func:`limit_free_urdf` is the
URDF copy compliant limbs are loaded from. A robot sees its world through :class:`RobotWorld`, the few
members of a :class:`~pccbullet.sim.world.World` it uses, so that this module does not import the world's.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

import numpy as np
from scipy.spatial.transform import Rotation

from pccbullet.core.errors import ConfigurationError, WorldClosedError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.body.carrier import Body, weld
from pccbullet.sim.body.mode import BaseMode
from pccbullet.sim.body.trajectory import Trajectory
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.dynamics import CompliantLimb
from pccbullet.sim.limb.joints import LimbJoints
from pccbullet.sim.limb.loading import LimbLoading
from pccbullet.sim.limb.moving import MovingBase
from pccbullet.sim.limb.parts import load_limb
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.medium import Medium
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig, check_config, rest_configs
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_writer import UrdfOutput


class RobotWorld(Protocol):
    """What a :class:`Robot` and the code around it use of the world the robot is loaded in
    (:class:`pccbullet.sim.world.World` has all of it)."""

    client: int
    """PyBullet physics client id."""
    dt: float
    """Physics step (s)."""
    time: float
    """Simulated time (s)."""
    gravity: tuple[float, ...]
    """Gravity ``(3,)`` in the world frame (m/s^2)."""
    medium: Medium
    """The surrounding fluid."""
    step_hooks: list[Callable[[], None]]
    """Called after every step."""

    @property
    def closed(self) -> bool:
        """Whether the world was closed (a robot in it can no longer be used)."""
        ...

    def scratch_dir(self) -> Path:
        """A temporary folder removed when the world closes."""
        ...

    def mark_moved(self) -> None:
        """Tell a kinematic world that a body moved, so that its next step refreshes contacts."""
        ...

    def holding_globals(self) -> AbstractContextManager[None]:
        """Hold the world's Bullet globals for a block (around joint resets)."""
        ...

    def step(self, n: int = 1, *, contacts: bool = True) -> None:
        """Advance by ``n`` steps of ``dt``."""
        ...


def pose_matrix(position: Sequence[float], quaternion_xyzw: Sequence[float]) -> Transform:
    """PyBullet position + quaternion (x, y, z, w) -> ``(4, 4) float``."""
    T = np.eye(4)
    T[:3, :3] = np.asarray(pb.getMatrixFromQuaternion(quaternion_xyzw)).reshape(3, 3)
    T[:3, 3] = position
    return T


def body_link_pose(client: int, body: int, index: int) -> Transform:
    """World pose ``(4, 4) float`` of the URDF link frame (not its centre of mass) of link ``index`` of
    ``body`` (-1: its base; PyBullet gives a base's inertial frame, turned back to its link frame here)."""
    if index == -1:
        pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=client)
        info = pb.getDynamicsInfo(body, -1, physicsClientId=client)
        pos, orn = pb.multiplyTransforms(pos, orn, *pb.invertTransform(info[3], info[4]))
        return pose_matrix(pos, orn)
    state = pb.getLinkState(body, index, computeForwardKinematics=True, physicsClientId=client)
    return pose_matrix(state[4], state[5])


def limit_free_urdf(urdf: Path, folder: Path) -> Path:
    """A copy of limb ``urdf`` in ``folder`` that PyBullet loads without joint-limit constraints.

    PyBullet adds a limit constraint for every revolute and prismatic joint whose lower limit is <=
    its upper one, and keeps it even when the limits are opened later. A compliant chain never uses
    them: its springs are the physics and the spec's limits bound the targets. Yet all of them are
    sorted into islands on every step (with one joint motor per joint, which PyBullet also adds).
    In the copy every such joint gets ``lower = 1 > upper = -1``; mesh paths become absolute. A step then
    costs less (figures: docs/measurements/performance.md).
    """
    tree = ET.parse(urdf)
    for joint in tree.getroot().iter("joint"):
        limit = joint.find("limit")
        if joint.get("type") in ("revolute", "prismatic") and limit is not None:
            limit.set("lower", "1")
            limit.set("upper", "-1")
    for mesh in tree.getroot().iter("mesh"):
        name = mesh.get("filename", "")
        if name and not Path(name).is_absolute() and "://" not in name:
            mesh.set("filename", str((urdf.parent / name).resolve()))
    out = folder / urdf.name
    tree.write(out, encoding="unicode")
    return out


class Robot(LimbLoading):
    """A PCC robot loaded into a world (:class:`RobotWorld`); limbs addressed by name.

    ``chain`` is the limbs' topology, ``"rrp"`` or ``"rod"`` (a
    :class:`~pccbullet.urdf_gen.topology.Topology` or its name; the URDFs in ``urdfs`` must be written for
    it). Joint vectors (:meth:`joints`, :meth:`pcc_joints`) are the chain's. Link frames are the chain's
    link frames: on a rod chain the slices, segment ends, the tip and payloads report *material* frames,
    which do not turn with the commanded bending plane; their PCC frame is the material frame times
    ``Rz(sum of the planes)`` about the backbone (:func:`pccbullet.urdf_gen.rod.pcc_frame`). Positions
    are the same either way.
    """

    def __init__(
        self,
        world: RobotWorld,
        spec: RobotSpec,
        urdfs: UrdfOutput,
        position: Sequence[float],
        *,
        joint_limits: bool = True,
        chain: Topology | str = Topology.RRP,
        orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
        base: BaseMode | str = BaseMode.FIXED,
        trajectory: Trajectory | None = None,
    ) -> None:
        self.world = world
        self.spec = spec
        self.urdfs = urdfs
        self.chain: Topology = Topology.of(chain)
        """The limbs' topology (:mod:`pccbullet.urdf_gen.topology`)."""
        self.base: BaseMode = BaseMode.of(base)
        """How the body is held: fixed, free or moved (:mod:`pccbullet.sim.body`)."""
        self._topology = limb_topology(self.chain)
        cid = world.client
        # Compliant limbs are loaded without PyBullet's joint-limit constraints (see limit_free_urdf).
        loaded = dict(urdfs.limbs)
        if not joint_limits:
            folder = world.scratch_dir()
            loaded = {name: limit_free_urdf(path, folder) for name, path in loaded.items()}
        self.T_world_head: Transform = (
            trajectory(world.time) if trajectory is not None else pose_matrix(position, orientation)
        )
        """Where the head was loaded, ``(4, 4) float`` (:meth:`head_pose`: where it is)."""
        self.body = Body(
            world, spec.head, str(urdfs.head), self.base, self.T_world_head, trajectory, len(spec.limbs)
        )
        """The head in the world (:class:`pccbullet.sim.body.carrier.Body`)."""
        self.head: int = self.body.id
        self.bodies: dict[str, int] = {}
        """Each limb's body (its first part's, the one fixed to the head)."""
        self.compliant: dict[str, CompliantLimb] = {}
        self._links: dict[str, tuple[int, int]] = {naming.HEAD_LINK: (self.head, -1)}
        self._joints: dict[str, LimbJoints] = {}
        for limb in spec.limbs:
            T = self.T_world_head @ limb.T_head_base()
            quat = Rotation.from_matrix(T[:3, :3]).as_quat()  # x, y, z, w like PyBullet
            joints = load_limb(
                cid, limb, loaded[limb.name], self.chain, (T[:3, 3].tolist(), quat.tolist()), self._links,
                folder=world.scratch_dir(), owner=world, fixed_base=not self.base.moves,
            )  # fmt: skip
            self._joints[limb.name] = joints
            parts = joints.bodies
            self.bodies[limb.name] = parts[0]
            if self.base.moves:  # the flange welded to the head at its mount
                weld(cid, self.head, parts[0], limb.T_head_base())
                self.body.flange(parts[0])
                pb.setCollisionFilterPair(self.head, parts[0], -1, -1, 0, physicsClientId=cid)
            # The first section's slice sits on the bow plate: it cannot collide with its own mount.
            first = self._links[naming.section_prefix(limb.name, 1, 1)][1]
            pb.setCollisionFilterPair(self.head, parts[0], -1, first, 0, physicsClientId=cid)
            # Start straight at rest length: all-zero joints would mean chords of length 0.
            self.set_pcc(limb.name, rest_configs(limb.segments))

    def carry(self) -> None:
        """On a free or moved body, give every compliant limb its moving base
        (:class:`pccbullet.sim.limb.moving.MovingBase`); nothing on a fixed one. The world calls it once
        the limbs are compliant."""
        if not self.base.moves:
            return
        for compliant in self.compliant.values():
            rows = [self._links[name] for name in compliant.chain.links]
            compliant.moving = MovingBase(compliant, rows)

    def head_pose(self) -> Transform:
        """The head frame's world pose now, ``(4, 4) float``."""
        if self.world.closed:
            raise WorldClosedError("Robot")
        return self.body.pose()

    def limb(self, name: str) -> LimbSpec:
        """The spec of limb ``name``."""
        return self.spec.limb(name)

    def limb_joints(self, limb: str) -> LimbJoints:
        """The limb's movable joints in PyBullet, over its parts (:mod:`pccbullet.sim.limb.joints`)."""
        self.limb(limb)
        return self._joints[limb]

    def joint_indices(self, limb: str) -> FloatArray:
        """PyBullet indices of the limb's movable joints, chain order: ``(3 N_total + segments,) int`` on the
        RRP chain (one per joint-vector entry), ``(2 N_total + segments,) int`` on the rod chain (a spherical
        node stands for three entries of the joint vector). A limb loaded as several bodies (parts) has
        indices in each of them: :meth:`limb_joints` says which."""
        return np.array([j for _, idx in self.limb_joints(limb).parts for j in idx])

    def joint_count(self, limb: str) -> int:
        """Length of the limb's joint vector: ``3 N_total + segments`` (RRP), ``4 N_total + 3 segments``
        (rod)."""
        return self.limb_joints(limb).n_dof

    def pcc_joints(self, limb: str, configs: Sequence[PccConfig], *, check_limits: bool = True) -> FloatArray:
        """Joint vector of ``limb`` for per-segment PCC ``configs`` (validated against the spec's limits)."""
        spec = self.limb(limb)
        if len(configs) != len(spec.segments):
            raise ConfigurationError(
                f"limb '{limb}' has {len(spec.segments)} segment(s); {len(configs)} configuration(s) given"
            )
        if check_limits:
            for s, (c, seg) in enumerate(zip(configs, spec.segments, strict=True), start=1):
                check_config(c, seg, f"limb '{limb}' segment {s}")
        return self._topology.joint_vector(spec, configs)

    def set_pcc(
        self, limb: str, configs: Sequence[PccConfig], *, mode: str = "reset", force: float = 1e3
    ) -> None:
        """Pose ``limb`` to per-segment PCC ``configs``.

        Args:
            mode: ``"reset"`` writes joint states instantly (and commands a compliant limb there: its
                spring targets, or its tendons if they drive it); ``"target"`` only commands a compliant
                limb (:meth:`pccbullet.sim.limb.dynamics.CompliantLimb.command`); ``"position"`` sets
                PyBullet position-motor targets reached by stepping.
            force: motor force/torque limit for ``"position"`` (N or N·m).
        """
        if self.world.closed:
            raise WorldClosedError("Robot")
        compliant = self.compliant.get(limb)
        if compliant is not None and mode in ("reset", "target"):
            # the per-tick path: pcc_joints returns a fresh vector of the limb's length, nothing to copy
            q = self.pcc_joints(limb, configs)
            if mode == "reset":
                self.set_joints(limb, q, mode="reset")
            compliant.command_pcc(configs, q)  # the springs' targets or the tendons' goal
            return
        self.set_joints(limb, self.pcc_joints(limb, configs), mode=mode, force=force)

    def set_joints(self, limb: str, q: FloatArray, *, mode: str = "reset", force: float = 1e3) -> None:
        """Write a limb's joint vector ``q`` (joint-vector order of :mod:`pccbullet.urdf_gen.pcc`); every
        value must be finite."""
        if self.world.closed:
            raise WorldClosedError("Robot")
        joints = self.limb_joints(limb)
        q = np.asarray(q, dtype=float)
        count = joints.n_dof
        if q.shape != (count,):
            raise ConfigurationError(f"limb '{limb}' takes {count} joint values; got shape {q.shape}")
        if not np.isfinite(q).all():
            bad = int(np.flatnonzero(~np.isfinite(q))[0])
            raise ConfigurationError(
                f"limb '{limb}' joint value {bad} = {float(q[bad])!r} is invalid; allowed: finite numbers"
            )
        if mode in ("reset", "target") and limb in self.compliant:
            self.compliant[limb].command(q.copy())
            if mode == "target":
                return
        elif mode == "target":
            raise ConfigurationError(
                f"limb '{limb}' has no spring joints; mode 'target' needs a compliant robot"
            )
        if mode == "reset":
            if limb in self.compliant:
                self.compliant[limb].forget()
            self.world.mark_moved()
            # the reset moves the links' tree boxes: with the world's broadphase margin held, as in its
            # steps (without it: 90 us instead of 20 us for a 62-joint URSULA limb whose pose changes)
            with self.world.holding_globals():
                joints.reset(q)
        elif mode == "position":
            joints.position_targets(q, force)
        else:
            raise ConfigurationError(f"mode = {mode!r} is invalid; allowed: 'reset', 'position', 'target'")

    def joints(self, limb: str) -> FloatArray:
        """Current joint vector of ``limb`` (rad for revolute, m for chord joints; a rod node's x-y-z Euler
        angles), joint-vector order."""
        if self.world.closed:
            raise WorldClosedError("Robot")
        return self.limb_joints(limb).vector()

    def joint_velocities(self, limb: str) -> FloatArray:
        """Current joint velocities of ``limb`` (rad/s, chord joints m/s), joint-vector order (the rates of
        a rod node's Euler angles). PyBullet's: a kinematic reset sets them to 0."""
        if self.world.closed:
            raise WorldClosedError("Robot")
        return self.limb_joints(limb).rates()

    def link_pose(self, link: str) -> Transform:
        """World pose of a URDF link frame (not its centre of mass), ``(4, 4) float``."""
        if self.world.closed:
            raise WorldClosedError("Robot")
        if link not in self._links:
            raise ConfigurationError(f"robot '{self.spec.name}' has no link {link!r}")
        return body_link_pose(self.world.client, *self._links[link])

    def link_index(self, link: str) -> tuple[int, int]:
        """The body and PyBullet link index (-1: the body's base) of a URDF link."""
        if link not in self._links:
            raise ConfigurationError(f"robot '{self.spec.name}' has no link {link!r}")
        return self._links[link]

    def tip_pose(self, limb: str) -> Transform:
        """World pose of a limb's tip frame, ``(4, 4) float``: on a rod chain its material frame (see
        :class:`Robot`)."""
        return self.link_pose(naming.tip_link(self.limb(limb).name))

    def measured_pcc(self, limb: str) -> list[PccConfig]:
        """One PCC arc per segment of the limb's current shape: on the RRP chain the fit of its joints
        (:func:`pccbullet.urdf_gen.pcc.pcc_from_joints`), on the rod chain the arcs through the segments'
        end points (:func:`pccbullet.urdf_gen.pcc_fit.pcc_from_points`; exact for a PCC shape)."""
        return self._topology.measure(self, limb)

    def section_poses(self, limb: str) -> FloatArray:
        """World poses of a limb's slice bodies base to tip, ``(N_total, 4, 4) float``."""
        return np.stack([self.link_pose(n) for n in naming.section_body_links(self.limb(limb))])

    def T_world_limbbase(self, limb: str) -> Transform:
        """World pose of the limb's base frame, ``(4, 4) float``."""
        return self.link_pose(naming.base_link(self.limb(limb).name))
