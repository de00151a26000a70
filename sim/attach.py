"""Our material on anyone's body: a limb, or a whole robot, in your own PyBullet client, mounted on a body
and link of yours that may move, its springs, damping, fluid forces and payloads acting every step.

Example (a camera tentacle on a KUKA's flange, in water)::

    import pybullet as p
    import pccbullet as pcb

    cid = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81)
    kuka = p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True)
    camera = pcb.attach(cid, "ursula", kuka, 6, limb="camera", medium="water")
    for _ in range(2000):
        camera.apply()  # our joint torques for this step, then your step
        p.stepSimulation()

How. :func:`attach` loads the limb's dynamic chain (the rod chain of a dynamic
:class:`~pccbullet.sim.world.World`, without joint-limit rows) with a **floating** base and welds that base to
the parent link with a fixed constraint, so the limb's weight and motion load your body and your body carries
the limb. The base link is the limb's mounting **flange** (an 80 mm aluminium disk, 5 mm thick, 68 g:
:mod:`pccbullet.sim.body.flange`), whose rotational inertia is at least ``FLANGE_INERTIA_RATE`` times the
step: on a lighter base the weld does not hold the chain (measured thresholds:
docs/guide/mujoco-and-attach.md); above, it settles as in a World. Every :meth:`Attached.apply` reads the
base's pose and velocity, takes its accelerations from the velocity change of the last step (so call it once
before every ``stepSimulation``; after teleporting your body call :meth:`Attached.forget`), and runs the
implicit spring-damper step of :mod:`pccbullet.sim.limb.dynamics` on the moving base
(:func:`pccbullet.sim.limb.chain.solve.moving_spring_torques`: the base's acceleration enters like gravity,
its rotation through the velocity products, the drag sees absolute velocities, the fluid is at rest in the
world), then sends the joint torques through PyBullet's Python calls. Gravity and the step are read from the
client at :func:`attach` (``Attached.gravity``, ``Attached.dt`` if you change them later).

A whole robot (``limb=None``): its head is welded to the parent link at the given pose and every limb to the
head at its mount. Payloads (camera, light, force sensor) are links of the limb files and ride along;
dead loads go into ``attached.compliant[limb].offset`` as in a World.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import types
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.body.flange import FLANGE_MASS, flange_dynamics
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.chain.solve import moving_spring_torques
from pccbullet.sim.limb.dynamics import CompliantLimb
from pccbullet.sim.limb.joints import LimbJoints
from pccbullet.sim.limb.parts import CONSTRAINT_FORCE, load_limb
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.medium import Medium
from pccbullet.sim.medium import medium as medium_by_name
from pccbullet.sim.robot import body_link_pose, limit_free_urdf, pose_matrix
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_writer import write_urdf


def _xyzw(T: Transform) -> tuple[list[float], list[float]]:
    """``T (4, 4)`` as PyBullet's position and quaternion ``x, y, z, w``."""
    from scipy.spatial.transform import Rotation

    return T[:3, 3].tolist(), Rotation.from_matrix(T[:3, :3]).as_quat().tolist()


def _weld(client: int, parent: int, link: int, child: int, T_link_child: Transform) -> int:
    """A fixed constraint holding body ``child``'s base at ``T_link_child`` in the link frame of ``link`` of
    ``parent`` (-1, -1: the world); the frames PyBullet takes are in each link's inertial frame."""
    c_pos, c_orn = pb.invertTransform(*pb.getDynamicsInfo(child, -1, physicsClientId=client)[3:5])
    if parent < 0:  # the world is the child side of a constraint
        w_pos, w_orn = _xyzw(T_link_child)
        constraint = pb.createConstraint(
            child, -1, -1, -1, pb.JOINT_FIXED, [0.0, 0.0, 0.0], c_pos, w_pos, c_orn, w_orn,
            physicsClientId=client,
        )  # fmt: skip
    else:
        p_pos, p_orn = pb.getDynamicsInfo(parent, link, physicsClientId=client)[3:5]
        T_frame = np.linalg.inv(pose_matrix(p_pos, p_orn)) @ T_link_child
        f_pos, f_orn = _xyzw(T_frame)
        constraint = pb.createConstraint(
            parent, link, child, -1, pb.JOINT_FIXED, [0.0, 0.0, 0.0], f_pos, c_pos, f_orn, c_orn,
            physicsClientId=client,
        )  # fmt: skip
    pb.changeConstraint(constraint, maxForce=CONSTRAINT_FORCE, physicsClientId=client)
    return int(constraint)


class _Mounted:
    """One attached limb: its joints, its :class:`CompliantLimb` (material, targets, offsets) and the
    base's last velocities."""

    def __init__(self, joints: LimbJoints, compliant: CompliantLimb) -> None:
        self.joints = joints
        self.compliant = compliant
        self.base = np.zeros((4, 3))
        self.last: tuple[FloatArray, FloatArray] | None = None
        self.tau = np.zeros(joints.n_dof)
        self.no_tendons = (np.zeros((0, joints.n_dof)), np.zeros(0), np.zeros((0, 0)))  # joint drive only


class Attached:
    """What :func:`attach` loaded into a client: limbs by name, driven like a dynamic
    :class:`~pccbullet.sim.robot.Robot`'s. Call :meth:`apply` before every ``stepSimulation``."""

    def __init__(self, client: int, spec: RobotSpec, chain: Topology, medium_: Medium, folder: Path) -> None:
        params = pb.getPhysicsEngineParameters(physicsClientId=client)
        self.client = client
        self.spec = spec
        self.chain = chain
        self.medium = medium_
        self.dt: float = float(params["fixedTimeStep"])
        """The client's step (s), read at :func:`attach`."""
        self.gravity = np.array([params[f"gravityAcceleration{a}"] for a in "XYZ"], dtype=float)
        """The client's gravity ``(3,)`` (m/s^2, world frame), read at :func:`attach`."""
        self.world = types.SimpleNamespace(client=client, dt=self.dt, gravity=tuple(self.gravity))
        self.head: int | None = None
        """The head's body (a whole robot), else ``None``."""
        self.bodies: dict[str, int] = {}
        """Each limb's body (its first part, the one welded to its mount)."""
        self.constraints: list[int] = []
        """The fixed constraints :func:`attach` made (mounts and the parts of limbs)."""
        self.compliant: dict[str, CompliantLimb] = {}
        """Each limb's material springs: targets, offsets (dead loads), ``K``, ``C``, its chain model."""
        self.urdfs = types.SimpleNamespace(limbs={})
        self._links: dict[str, tuple[int, int]] = {}
        self._joints: dict[str, LimbJoints] = {}
        self._mounted: dict[str, _Mounted] = {}
        self._folder: Path | None = folder

    # -- what CompliantLimb reads of a robot --------------------------------------------------------
    def limb(self, name: str) -> LimbSpec:
        """The spec of limb ``name``."""
        return self.spec.limb(name)

    def limb_joints(self, limb: str) -> LimbJoints:
        """The limb's joints in PyBullet, over its parts (:mod:`pccbullet.sim.limb.joints`)."""
        return self._joints[self.limb(limb).name]

    def pcc_joints(self, limb: str, configs: Sequence[PccConfig]) -> FloatArray:
        """Joint vector of ``limb`` for per-segment PCC ``configs`` (unchecked)."""
        return limb_topology(self.chain).joint_vector(self.limb(limb), configs)

    def T_world_limbbase(self, limb: str) -> Transform:
        """World pose of the limb's base (flange) frame, ``(4, 4) float``."""
        return self.link_pose(naming.base_link(self.limb(limb).name))

    # -- driving ----------------------------------------------------------------------------------------
    def apply(self) -> None:
        """Compute and send every limb's joint torques for the next step (springs, damping, fluid, on the
        moving base). Call once before every ``stepSimulation``."""
        g = self.gravity
        for mounted in self._mounted.values():
            c = mounted.compliant
            body = mounted.joints.bodies[0]
            T = body_link_pose(self.client, body, -1)
            v, w = (np.asarray(x) for x in pb.getBaseVelocity(body, physicsClientId=self.client))
            R = T[:3, :3]
            base = mounted.base
            base[0], base[1] = R.T @ w, R.T @ v
            if mounted.last is not None:
                base[2] = R.T @ (w - mounted.last[1]) / self.dt
                base[3] = R.T @ (v - mounted.last[0]) / self.dt
            mounted.last = (v, w)
            (q, qd), ch = mounted.joints.read(), c.chain
            offset = c.offset_with_loads(q, R) if c.loads else c.offset
            moving_spring_torques(
                ch.parent, ch.jtype, ch.dof, ch.qpos, ch.params, q, qd, R.T @ g, base, c.target, offset,
                c.K, c.C, self.dt, mounted.tau, c.qdd, c.memory, *mounted.no_tendons,
            )  # fmt: skip
            if not c.external_loads:
                c.memory[0, 0] = np.nan
            mounted.joints.send_torques(mounted.tau)

    def step(self, n: int = 1) -> None:
        """``n`` times :meth:`apply` and ``stepSimulation`` (a client with nothing else to drive)."""
        for _ in range(n):
            self.apply()
            pb.stepSimulation(physicsClientId=self.client)

    def forget(self) -> None:
        """Drop the last velocities (after you teleported the parent: they say nothing of an acceleration)."""
        for mounted in self._mounted.values():
            mounted.last = None
            mounted.base[2:] = 0.0
            mounted.compliant.forget()

    def set_pcc(self, limb: str, configs: Sequence[PccConfig], *, mode: str = "target") -> None:
        """Move ``limb``'s spring targets to PCC ``configs`` (``"target"``), or also put its joints there at
        rest (``"reset"``)."""
        self.set_joints(limb, self.pcc_joints(limb, configs), mode=mode)

    def set_joints(self, limb: str, q: FloatArray, *, mode: str = "target") -> None:
        """Spring targets (``"target"``), or targets and joints at rest (``"reset"``), at ``limb``'s joint
        vector ``q``."""
        mounted = self._mounted[self.limb(limb).name]
        q = np.asarray(q, dtype=float)
        if q.shape != (mounted.joints.n_dof,) or not np.isfinite(q).all():
            raise ConfigurationError(
                f"limb '{limb}' takes {mounted.joints.n_dof} finite joint values; got shape {q.shape}"
            )
        if mode not in ("target", "reset"):
            raise ConfigurationError(f"mode = {mode!r} is invalid; allowed: 'target', 'reset'")
        mounted.compliant.target = q.copy()
        if mode == "reset":
            mounted.joints.reset(q)
            mounted.compliant.forget()

    def joints(self, limb: str) -> FloatArray:
        """Current joint vector of ``limb`` (a rod node's x-y-z Euler angles)."""
        return self.limb_joints(limb).vector()

    def link_pose(self, link: str) -> Transform:
        """World pose of a URDF link frame of the attached robot, ``(4, 4) float``."""
        if link not in self._links:
            raise ConfigurationError(f"robot '{self.spec.name}' has no link {link!r}")
        return body_link_pose(self.client, *self._links[link])

    def tip_pose(self, limb: str) -> Transform:
        """World pose of ``limb``'s tip frame (its material frame on a rod chain), ``(4, 4) float``."""
        return self.link_pose(naming.tip_link(self.limb(limb).name))

    def detach(self) -> None:
        """Remove the constraints and bodies :func:`attach` added and its temporary files (again: nothing)."""
        if pb.isConnected(self.client):
            for constraint in self.constraints:
                pb.removeConstraint(constraint, physicsClientId=self.client)
            for joints in self._joints.values():
                for body in joints.bodies:
                    pb.removeBody(body, physicsClientId=self.client)
            if self.head is not None:
                pb.removeBody(self.head, physicsClientId=self.client)
        self.constraints.clear()
        self._mounted.clear()
        self._joints.clear()
        self.head = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def __enter__(self) -> Attached:
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()


def attach(
    client: int,
    robot: str | Path | RobotSpec,
    parent: int,
    link: int = -1,
    *,
    limb: str | None = None,
    position: Sequence[float] = (0.0, 0.0, 0.0),
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
    sections: int | None = None,
    chain: Topology | str = Topology.ROD,
    medium: str | Medium = "air",
    flange_mass: float = FLANGE_MASS,
    external_loads: bool = False,
) -> Attached:
    """Load ``robot`` (or only its ``limb``) into your PyBullet ``client``, welded to link ``link`` of body
    ``parent`` (-1, -1: the world), with our material acting through :meth:`Attached.apply`.

    Args:
        robot: bundled name, TOML path or a spec.
        parent, link: the body and link it is mounted on (``link`` -1: the base).
        limb: one limb only, its base (flange) frame at the mount; ``None``: the whole robot, its head
            frame at the mount and every limb at its mount on the head.
        position, orientation: the mount frame in the parent's link frame (m; quaternion ``x, y, z, w``).
        sections: N per segment (default: the robot file's).
        chain: ``"rod"`` (default) or ``"rrp"``.
        medium: ``"air"``, ``"water"``, ``"seawater"`` or a :class:`~pccbullet.sim.medium.Medium`.
        flange_mass: each limb's mounting flange (kg; ``FLANGE_MASS`` of
            :mod:`pccbullet.sim.body.flange`), an 80 mm disk welded to the mount.
        external_loads: estimate the loads PyBullet adds (contacts) into the implicit step, as
            :class:`~pccbullet.sim.limb.dynamics.CompliantLimb` does.

    Raises:
        ConfigurationError: a client, body, link, limb or flange that is not there or not allowed.
    """
    _check_mount(client, parent, link, flange_mass)
    chain = Topology.of(chain)
    medium_ = medium if isinstance(medium, Medium) else medium_by_name(medium)
    spec = robot if isinstance(robot, RobotSpec) else load_robot(robot, sections=sections)
    if limb is not None:
        spec = replace(spec, limbs=(spec.limb(limb),))
    folder = Path(tempfile.mkdtemp(prefix="pccbullet_attach_"))
    out = Attached(client, spec, chain, medium_, folder)
    T_link_mount = pose_matrix(position, orientation)
    T_world_mount = (body_link_pose(client, parent, link) if parent >= 0 else np.eye(4)) @ T_link_mount
    urdfs = write_urdf(spec, folder, chain=chain)
    mount_on = (parent, link)
    if limb is None:
        flags = pb.URDF_USE_INERTIA_FROM_FILE | pb.URDF_USE_IMPLICIT_CYLINDER
        head = pb.loadURDF(
            str(urdfs.head), *_xyzw(T_world_mount), useFixedBase=False, flags=flags, physicsClientId=client
        )
        out.head = head
        out._links[naming.HEAD_LINK] = (head, -1)
        out.constraints.append(_weld(client, parent, link, head, T_link_mount))
        _follow(client, head, mount_on)
        mount_on = (head, -1)
    (folder / "limit_free").mkdir()
    for spec_limb in spec.limbs:
        urdf = limit_free_urdf(urdfs.limbs[spec_limb.name], folder / "limit_free")
        T_on = spec_limb.T_head_base() if limb is None else T_link_mount  # the flange on its mount
        _mount(out, spec_limb, urdf, mount_on, T_on, T_world_mount @ (T_on if limb is None else np.eye(4)))
        compliant = CompliantLimb(out, spec_limb.name, medium_, external_loads=external_loads)
        out._mounted[spec_limb.name] = _Mounted(out._joints[spec_limb.name], compliant)
        out.compliant[spec_limb.name] = compliant
        # straight at rest length (all-zero joints would mean chords of length 0), moving with the mount
        out._joints[spec_limb.name].reset(compliant.target)
        _follow(client, out.bodies[spec_limb.name], mount_on)
        flange_dynamics(client, out.bodies[spec_limb.name], flange_mass, out.dt)
    return out


def _check_mount(client: int, parent: int, link: int, flange_mass: float) -> None:
    """Refuse a client, parent, link or flange that is not there or not allowed (one line each)."""
    if not pb.isConnected(client):
        raise ConfigurationError(f"client = {client!r} is invalid; allowed: a connected PyBullet client")
    if parent >= 0 and _missing(client, parent):
        raise ConfigurationError(f"parent = {parent!r} is invalid; allowed: a body of client {client} or -1")
    if parent < 0 and link != -1:
        raise ConfigurationError(f"link = {link!r} is invalid with parent -1 (the world); allowed: -1")
    if parent >= 0 and not -1 <= link < pb.getNumJoints(parent, physicsClientId=client):
        n = pb.getNumJoints(parent, physicsClientId=client)
        raise ConfigurationError(f"link = {link!r} is invalid for body {parent}; allowed: -1..{n - 1}")
    if not (isinstance(flange_mass, int | float) and 0.0 < flange_mass < math.inf):
        raise ConfigurationError(f"flange_mass = {flange_mass!r} kg is invalid; allowed: a mass > 0")


def _mount(
    out: Attached, limb: LimbSpec, urdf: Path, on: tuple[int, int], T_on: Transform, T_world_base: Transform
) -> None:
    """Load ``limb`` from ``urdf`` with a floating base at ``T_world_base`` and weld its flange at ``T_on`` in
    the link frame of ``on`` (body, link); the first slice does not collide with the mount."""
    client = out.client
    joints = load_limb(
        client, limb, urdf, out.chain, _xyzw(T_world_base), out._links, folder=urdf.parent, owner=out,
        fixed_base=False,
    )  # fmt: skip
    body = joints.bodies[0]
    out.bodies[limb.name] = body
    out._joints[limb.name] = joints
    out.urdfs.limbs[limb.name] = urdf
    out.constraints += [a.constraint for a in joints.attachments]
    out.constraints.append(_weld(client, on[0], on[1], body, T_on))
    if on[0] >= 0:
        first = out._links[naming.section_prefix(limb.name, 1, 1)]
        pb.setCollisionFilterPair(on[0], first[0], on[1], first[1], 0, physicsClientId=client)


def _missing(client: int, body: int) -> bool:
    """Whether ``body`` is not a body of ``client``."""
    return body not in {
        pb.getBodyUniqueId(i, physicsClientId=client) for i in range(pb.getNumBodies(physicsClientId=client))
    }


def _follow(client: int, body: int, mount_on: tuple[int, int]) -> None:
    """Give a just-loaded limb's base the velocity of the point of its mount where it sits."""
    parent, link = mount_on
    if parent < 0:
        return
    if link == -1:
        v, w = (np.asarray(x) for x in pb.getBaseVelocity(parent, physicsClientId=client))
        c = np.asarray(pb.getBasePositionAndOrientation(parent, physicsClientId=client)[0])
    else:
        state = pb.getLinkState(parent, link, computeLinkVelocity=True, physicsClientId=client)
        v, w, c = np.asarray(state[6]), np.asarray(state[7]), np.asarray(state[0])
    here = np.asarray(pb.getBasePositionAndOrientation(body, physicsClientId=client)[0])
    pb.resetBaseVelocity(body, (v + np.cross(w, here - c)).tolist(), w.tolist(), physicsClientId=client)
