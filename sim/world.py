"""The PyBullet world: connect, load a PCC robot, pose its limbs, step at 1 ms, read poses.

Kinematic mode: :meth:`World.set_pcc` with ``mode="reset"`` writes the section joints directly (PCC is
the truth). Position mode: ``mode="position"`` sets position-motor targets and lets PyBullet step.

Example::

    with World() as world:
        robot = world.load_robot("ursula")
        robot.set_pcc("camera", [PccConfig(bend=math.pi / 2, plane=0.5, length=0.6)])
        T_world_tip = robot.tip_pose("camera")
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from sim.bullet import pb
from sim.bullet_internals import BROADPHASE_SYMBOL, CONTACT_BREAKING_SYMBOL, BulletGlobals
from sim.dynamics import CompliantLimb
from sim.dynamics import medium as medium_by_name
from urdf_gen import naming
from urdf_gen.errors import ConfigurationError
from urdf_gen.pcc import PccConfig, limb_joints, rest_configs
from urdf_gen.spec_loader import load_robot
from urdf_gen.specs import LimbSpec, RobotSpec
from urdf_gen.types import FloatArray, Transform
from urdf_gen.urdf_writer import UrdfOutput, write_urdf

PHYSICS_DT = 1e-3  # s, physics time step
STANDARD_GRAVITY = 9.80665  # m/s^2
SOLVER_ITERATIONS = 20
CONTACT_BREAKING_THRESHOLD = 0.005  # m
BROADPHASE_MARGIN = 0.005  # m, Bullet's AABB-tree margin (PyBullet sets 0; see sim.bullet_internals)

log = logging.getLogger(__name__)


@dataclass
class StepTiming:
    """Wall time spent inside :meth:`World.step`, summed over steps (s).

    Attributes:
        controller_s: computing and sending the compliant limbs' torques (reads included).
        physics_s: PyBullet's ``stepSimulation`` (dynamic) or ``performCollisionDetection`` (kinematic).
        steps: steps counted.
    """

    controller_s: float = 0.0
    physics_s: float = 0.0
    steps: int = 0


def pose_matrix(position: Sequence[float], quaternion_xyzw: Sequence[float]) -> Transform:
    """PyBullet position + quaternion (x, y, z, w) -> ``(4, 4) float``."""
    T = np.eye(4)
    T[:3, :3] = np.asarray(pb.getMatrixFromQuaternion(quaternion_xyzw)).reshape(3, 3)
    T[:3, 3] = position
    return T


def limit_free_urdf(urdf: Path, folder: Path) -> Path:
    """A copy of limb ``urdf`` in ``folder`` that PyBullet loads without joint-limit constraints.

    PyBullet adds a limit constraint for every revolute and prismatic joint whose lower limit is <=
    its upper one, and keeps it even when the limits are opened later. A compliant chain never uses
    them: its springs are the physics and the spec's limits bound the targets. Yet all of them are
    sorted into islands on every step (with one joint motor per joint, which PyBullet also adds).
    In the copy every such joint gets ``lower = 1 > upper = -1``; mesh paths become absolute.
    Measured with callgrind, four URSULA limbs at N = 10, 200 steps: 314 -> 268 M instructions.
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


class Robot:
    """A PCC robot loaded into a :class:`World`; limbs addressed by name."""

    def __init__(
        self,
        world: World,
        spec: RobotSpec,
        urdfs: UrdfOutput,
        position: Sequence[float],
        *,
        joint_limits: bool = True,
    ) -> None:
        self.world = world
        self.spec = spec
        self.urdfs = urdfs
        cid = world.client
        # Compliant limbs are loaded without PyBullet's joint-limit constraints (see limit_free_urdf).
        loaded = dict(urdfs.limbs)
        if not joint_limits:
            folder = world.scratch_dir()
            loaded = {name: limit_free_urdf(path, folder) for name, path in loaded.items()}
        # Slices collide as Bullet's own cylinders, not as the convex hulls PyBullet makes of URDF
        # cylinders by default: exact, and one support point costs O(1) instead of O(hull vertices).
        flags = pb.URDF_USE_INERTIA_FROM_FILE | pb.URDF_USE_IMPLICIT_CYLINDER
        self.T_world_head = np.eye(4)
        self.T_world_head[:3, 3] = position
        self.head = pb.loadURDF(
            str(urdfs.head), position, useFixedBase=True, flags=flags, physicsClientId=cid
        )
        self.bodies: dict[str, int] = {}
        self.compliant: dict[str, CompliantLimb] = {}
        self._links: dict[str, tuple[int, int]] = {naming.HEAD_LINK: (self.head, -1)}
        self._limb_joints: dict[str, FloatArray] = {}
        for limb in spec.limbs:
            T = self.T_world_head @ limb.T_head_base()
            quat = Rotation.from_matrix(T[:3, :3]).as_quat()  # x, y, z, w like PyBullet
            body = pb.loadURDF(
                str(loaded[limb.name]),
                T[:3, 3].tolist(),
                quat.tolist(),
                useFixedBase=True,
                flags=flags,
                physicsClientId=cid,
            )
            self.bodies[limb.name] = body
            # Bullet damps every multibody link by default (linear and angular 0.04: a freely spinning
            # limb lost 21 % of its kinetic energy per second). The material and the fluid are the
            # damping here; none is added.
            pb.changeDynamics(body, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=cid)
            self._links[naming.base_link(limb.name)] = (body, -1)
            joints = {}
            for j in range(pb.getNumJoints(body, physicsClientId=cid)):
                info = pb.getJointInfo(body, j, physicsClientId=cid)
                joints[info[1].decode()] = j
                self._links[info[12].decode()] = (body, j)
            self._limb_joints[limb.name] = np.array([joints[n] for n in naming.limb_joint_names(limb)])
            # The first section's slice sits on the bow plate: it cannot collide with its own mount.
            first = naming.section_prefix(limb.name, 1, 1)
            for link in (f"{first}_a", f"{first}_b", first):
                pb.setCollisionFilterPair(self.head, body, -1, self._links[link][1], 0, physicsClientId=cid)
            # Start straight at rest length: all-zero joints would mean chords of length 0.
            self.set_pcc(limb.name, rest_configs(limb.segments))

    def limb(self, name: str) -> LimbSpec:
        """The spec of limb ``name``."""
        return self.spec.limb(name)

    def joint_indices(self, limb: str) -> FloatArray:
        """PyBullet joint indices in the limb's body, joint-vector order, ``(3 N_total + segments,) int``."""
        self.limb(limb)
        return self._limb_joints[limb]

    def pcc_joints(self, limb: str, configs: Sequence[PccConfig], *, check_limits: bool = True) -> FloatArray:
        """Joint vector of ``limb`` for per-segment PCC ``configs`` (validated against the spec's limits)."""
        spec = self.limb(limb)
        if len(configs) != len(spec.segments):
            raise ConfigurationError(
                f"limb '{limb}' has {len(spec.segments)} segment(s); {len(configs)} configuration(s) given"
            )
        if check_limits:
            for s, (c, seg) in enumerate(zip(configs, spec.segments, strict=True), start=1):
                # written as "not within" so that NaN fails too
                if not abs(c.bend) <= seg.bend_max + 1e-12:
                    raise ConfigurationError(
                        f"limb '{limb}' segment {s}: bend = {np.degrees(c.bend):.6g} deg is out of range; "
                        f"allowed: [-{np.degrees(seg.bend_max):g}, {np.degrees(seg.bend_max):g}] deg"
                    )
                if not abs(c.plane) <= seg.plane_max + 1e-12:
                    raise ConfigurationError(
                        f"limb '{limb}' segment {s}: plane = {np.degrees(c.plane):.6g} deg is out of range; "
                        f"allowed: [-{np.degrees(seg.plane_max):g}, {np.degrees(seg.plane_max):g}] deg"
                    )
                if not seg.length_min - 1e-12 <= c.length <= seg.length_max + 1e-12:
                    raise ConfigurationError(
                        f"limb '{limb}' segment {s}: length = {c.length:.6g} m is out of range; "
                        f"allowed: [{seg.length_min:g}, {seg.length_max:g}] m"
                    )
        return limb_joints(configs, [seg.sections for seg in spec.segments])

    def set_pcc(
        self, limb: str, configs: Sequence[PccConfig], *, mode: str = "reset", force: float = 1e3
    ) -> None:
        """Pose ``limb`` to per-segment PCC ``configs``.

        Args:
            mode: ``"reset"`` writes joint states instantly (and the spring targets of a compliant
                limb); ``"target"`` moves only the spring targets of a compliant limb; ``"position"``
                sets PyBullet position-motor targets reached by stepping.
            force: motor force/torque limit for ``"position"`` (N or N·m).
        """
        if mode == "target" and limb in self.compliant:
            # the per-tick path: pcc_joints returns a fresh vector of the limb's length, nothing to copy
            self.compliant[limb].target = self.pcc_joints(limb, configs)
            return
        self.set_joints(limb, self.pcc_joints(limb, configs), mode=mode, force=force)

    def set_joints(self, limb: str, q: FloatArray, *, mode: str = "reset", force: float = 1e3) -> None:
        """Write a limb's joint vector ``q`` (joint-vector order of :mod:`urdf_gen.pcc`)."""
        idx = self.joint_indices(limb)
        body = self.bodies[limb]
        q = np.asarray(q, dtype=float)
        if q.shape != idx.shape:
            raise ConfigurationError(f"limb '{limb}' takes {idx.shape[0]} joint values; got shape {q.shape}")
        cid = self.world.client
        if mode in ("reset", "target") and limb in self.compliant:
            self.compliant[limb].target = q.copy()
            if mode == "target":
                return
        elif mode == "target":
            raise ConfigurationError(
                f"limb '{limb}' has no spring joints; mode 'target' needs a compliant robot"
            )
        if mode == "reset":
            self.world.mark_moved()
            # the reset moves the links' tree boxes: with the world's broadphase margin held, as in its
            # steps (without it: 90 us instead of 20 us for a 62-joint URSULA limb whose pose changes)
            with self.world.holding_globals():
                pb.resetJointStatesMultiDof(
                    body, idx.tolist(), [[v] for v in q], [[0.0]] * len(q), physicsClientId=cid
                )
        elif mode == "position":
            pb.setJointMotorControlArray(
                body,
                idx.tolist(),
                pb.POSITION_CONTROL,
                targetPositions=q.tolist(),
                forces=[force] * len(q),
                physicsClientId=cid,
            )
        else:
            raise ConfigurationError(f"mode = {mode!r} is invalid; allowed: 'reset', 'position', 'target'")

    def joints(self, limb: str) -> FloatArray:
        """Current joint vector of ``limb`` (rad for revolute, m for chord joints), joint-vector order."""
        idx = self.joint_indices(limb).tolist()
        states = pb.getJointStates(self.bodies[limb], idx, physicsClientId=self.world.client)
        return np.array([s[0] for s in states])

    def joint_velocities(self, limb: str) -> FloatArray:
        """Current joint velocities of ``limb`` (rad/s, chord joints m/s), joint-vector order,
        ``(3 N_total + segments,) float``. PyBullet's: a kinematic reset sets them to 0."""
        idx = self.joint_indices(limb).tolist()
        states = pb.getJointStates(self.bodies[limb], idx, physicsClientId=self.world.client)
        return np.array([s[1] for s in states])

    def link_pose(self, link: str) -> Transform:
        """World pose of a URDF link frame (not its centre of mass), ``(4, 4) float``."""
        if link not in self._links:
            raise ConfigurationError(f"robot '{self.spec.name}' has no link {link!r}")
        body, idx = self._links[link]
        cid = self.world.client
        if idx == -1:
            # Root links have their inertial frame at the link origin (flange and head: COM at 0).
            pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=cid)
            return pose_matrix(pos, orn)
        state = pb.getLinkState(body, idx, computeForwardKinematics=True, physicsClientId=cid)
        return pose_matrix(state[4], state[5])

    def tip_pose(self, limb: str) -> Transform:
        """World pose of a limb's tip frame, ``(4, 4) float``."""
        return self.link_pose(naming.tip_link(self.limb(limb).name))

    def section_poses(self, limb: str) -> FloatArray:
        """World poses of a limb's slice bodies base to tip, ``(N_total, 4, 4) float``."""
        return np.stack([self.link_pose(n) for n in naming.section_body_links(self.limb(limb))])

    def T_world_limbbase(self, limb: str) -> Transform:
        """World pose of the limb's base frame, ``(4, 4) float``."""
        return self.link_pose(naming.base_link(self.limb(limb).name))


class World:
    """A PyBullet physics client at a fixed 1 ms step. Use as a context manager or call :meth:`close`.

    Args:
        gui: open the PyBullet GUI (needs a display) instead of DIRECT.
        dt: physics step (s).
        gravity: gravity vector ``(3,)`` in the world frame (m/s^2).
        mode: ``"kinematic"``: the limbs are where their joints were set (PCC is the truth); a step
            advances time and refreshes contacts without integrating dynamics. ``"dynamic"``: PyBullet
            integrates the chains: every joint a material spring-damper towards its target
            (:mod:`sim.dynamics`), or PyBullet position motors with ``load_robot(..., compliant=False)``.
        medium: ``"air"``, ``"water"`` or ``"seawater"``: buoyancy and drag in dynamic mode.
    """

    def __init__(
        self,
        *,
        gui: bool = False,
        dt: float = PHYSICS_DT,
        gravity: Sequence[float] = (0.0, 0.0, -STANDARD_GRAVITY),
        mode: str = "dynamic",
        medium: str = "air",
    ) -> None:
        if dt <= 0.0:
            raise ConfigurationError(f"dt = {dt!r} is invalid; allowed: a time step > 0 s")
        if mode not in ("kinematic", "dynamic"):
            raise ConfigurationError(f"mode = {mode!r} is invalid; allowed: 'kinematic', 'dynamic'")
        self.mode = mode
        self.gravity = tuple(float(g) for g in gravity)
        self.medium = medium_by_name(medium)
        self.client = pb.connect(pb.GUI if gui else pb.DIRECT)
        if self.client < 0:
            raise ConfigurationError(
                "could not connect to PyBullet" + (" GUI (is there a display?)" if gui else "")
            )
        self.dt = dt
        self.time = 0.0
        pb.setTimeStep(dt, physicsClientId=self.client)
        # No motor rows in dynamic mode (explicit torques): 20 iterations serve contacts; measured
        # 1.59 -> 1.06 ms per URSULA step against PyBullet's default 50.
        # Bullet inflates every collider's bounding box by the contact-breaking threshold (default
        # 20 mm): each 30 mm slice then overlaps several neighbours in the broadphase every step.
        # The limbs move < 1 mm per step, so 5 mm keeps contacts persistent. One A/B run gave 0.59 ->
        # 0.49 ms per URSULA N = 10 step in water; repeated runs differ by less than the machine's noise.
        # PyBullet sorts every overlapping pair every step (deterministicOverlappingPairs=1), so that
        # a scene gives the same contacts whatever order its bodies were added in. A world here is
        # always built the same way, and Bullet's pair cache is then deterministic on its own (tested
        # across processes); with the 5 mm broadphase margin below, the sort was 13-14 % of PyBullet's
        # step (URSULA N = 10 in water, 30 interleaved A/B blocks, twice).
        # Both the threshold and the broadphase margin are process-wide globals of Bullet's: this
        # world holds its values only during its own physics calls (sim.bullet_internals.BulletGlobals), so
        # other PyBullet code in the process never sees them, and a connect elsewhere (which zeroes
        # the margin) cannot change this world mid-run. With PyBullet's margin of 0 every moving
        # collider leaves its tree box on every step and is re-inserted and re-tested (measured: 97 %
        # of the 198 URSULA colliders per step). A 5 mm box holds a slice for ~10 steps; 50 mm
        # (Bullet's default) adds so many close pairs that the narrowphase costs more than it saves.
        self.bullet_globals = BulletGlobals(
            {BROADPHASE_SYMBOL: BROADPHASE_MARGIN, CONTACT_BREAKING_SYMBOL: CONTACT_BREAKING_THRESHOLD}
        )
        params = {}
        if CONTACT_BREAKING_SYMBOL in self.bullet_globals.missing:  # PyBullet's own, process-wide way
            params["contactBreakingThreshold"] = CONTACT_BREAKING_THRESHOLD
        pb.setPhysicsEngineParameter(
            numSolverIterations=SOLVER_ITERATIONS,
            deterministicOverlappingPairs=0,
            physicsClientId=self.client,
            **params,
        )
        self.broadphase_margin = self.bullet_globals.held(BROADPHASE_SYMBOL) or 0.0
        """Bullet's broadphase margin during this world's steps (m); 0 where it cannot be set."""
        self.contact_breaking_threshold = CONTACT_BREAKING_THRESHOLD
        """Bullet's contact-breaking threshold during this world's steps (m)."""
        pb.setGravity(*gravity, physicsClientId=self.client)
        self._tmpdirs: list[Path] = []
        self._moved = True  # kinematic mode: contacts need refreshing
        self.step_hooks: list[Callable[[], None]] = []  # called after every step (e.g. a model twin)
        self.robots: list[Robot] = []
        self.timing = StepTiming()  # reset by assigning a new StepTiming()

    def load_robot(
        self,
        robot: str | Path | RobotSpec,
        *,
        urdf_dir: str | Path | None = None,
        sections: int | None = None,
        position: Sequence[float] = (0.0, 0.0, 0.0),
        compliant: bool | None = None,
        limbs: Sequence[str] | None = None,
    ) -> Robot:
        """Generate the robot's URDF and load it with a fixed head.

        Args:
            robot: bundled name, TOML path or an already loaded spec.
            urdf_dir: where the URDF and meshes go; a temporary folder removed on :meth:`close` if ``None``.
            sections: override N (only when ``robot`` is a name or path).
            position: world position of the head (m).
            compliant: material spring-damper joints (default: in dynamic mode).
            limbs: load only these limbs (names, in this order); ``None`` loads all. The returned
                robot's ``spec`` then holds these limbs only.

        Raises:
            ConfigurationError: ``limbs`` is empty, repeats a name or names a limb the robot lacks.
        """
        spec = robot if isinstance(robot, RobotSpec) else load_robot(robot, sections=sections)
        if limbs is not None:
            names = list(limbs)
            if not names or len(set(names)) != len(names):
                raise ConfigurationError(
                    f"limbs = {names!r} is invalid; allowed: distinct names out of "
                    + ", ".join(limb.name for limb in spec.limbs)
                )
            spec = replace(spec, limbs=tuple(spec.limb(name) for name in names))
        if urdf_dir is None:
            urdf_dir = self.scratch_dir()
        compliant = compliant if compliant is not None else self.mode == "dynamic"
        urdfs = write_urdf(spec, urdf_dir)
        with self.holding_globals():  # Bullet sizes a body's first tree box with the threshold
            handle = Robot(self, spec, urdfs, position, joint_limits=not compliant)
        if compliant:
            handle.compliant = {
                limb.name: CompliantLimb(handle, limb.name, self.medium) for limb in spec.limbs
            }
        self.robots.append(handle)
        log.info(
            "loaded robot %s: limbs %s, %d joints, %s mode%s",
            spec.name,
            ", ".join(limb.name for limb in spec.limbs),
            sum(len(handle.joint_indices(limb.name)) for limb in spec.limbs),
            self.mode,
            ", compliant" if compliant else "",
        )
        return handle

    @contextmanager
    def holding_globals(self) -> Iterator[None]:
        """Hold this world's broadphase margin and contact threshold (Bullet's process-wide globals,
        :class:`sim.bullet_internals.BulletGlobals`) for the block, as :meth:`step` and :meth:`load_robot` do;
        put back what was found after. Wrap the creation of bodies of your own in this world's
        client in it to give them the tree boxes the world's bodies get."""
        found = self.bullet_globals.enter()
        try:
            yield
        finally:
            self.bullet_globals.leave(found)

    def scratch_dir(self) -> Path:
        """A temporary folder of this world's, removed on :meth:`close`."""
        tmp = Path(tempfile.mkdtemp(prefix="pccbullet_"))
        self._tmpdirs.append(tmp)
        return tmp

    def mark_moved(self) -> None:
        """Tell a kinematic world that a body was moved outside :meth:`Robot.set_joints` (e.g. by
        ``resetBasePositionAndOrientation``), so the next step refreshes contacts."""
        self._moved = True

    def step(self, n: int = 1, *, contacts: bool = True) -> None:
        """Advance by ``n`` steps of ``dt``: integrate (dynamic), or refresh contacts if anything moved
        since the last step (kinematic). Step hooks run after every step.

        Args:
            contacts: kinematic mode only: ``False`` advances time without the contact refresh, for
                callers that query only the bodies they need (``getClosestPoints``); a later step with
                ``True`` catches up. Refreshing costs ~130 us a step while limbs move (URSULA, N = 10).
        """
        if not contacts and self.mode != "kinematic":
            raise ConfigurationError(
                "contacts = False is invalid in dynamic mode; allowed: True (integration collides)"
            )
        limbs = [c for robot in self.robots for c in robot.compliant.values()]
        clock, timing = time.perf_counter, self.timing
        enter, leave = self.bullet_globals.enter, self.bullet_globals.leave
        for _ in range(n):
            t0 = clock()
            if self.mode == "kinematic":
                # Nothing is integrated: contacts can only change when something was moved.
                if self._moved and contacts:
                    found = enter()
                    try:
                        pb.performCollisionDetection(physicsClientId=self.client)
                    finally:
                        leave(found)
                    self._moved = False
                t1 = t0
            else:
                for limb in limbs:
                    limb.apply()
                t1 = clock()
                found = enter()
                try:
                    pb.stepSimulation(physicsClientId=self.client)
                finally:
                    leave(found)
            t2 = clock()
            timing.controller_s += t1 - t0
            timing.physics_s += t2 - t1
            timing.steps += 1
            self.time += self.dt
            for hook in self.step_hooks:
                hook()

    def close(self) -> None:
        """Disconnect and remove temporary URDF folders."""
        if self.client >= 0 and pb.isConnected(self.client):
            pb.disconnect(self.client)
        for tmp in self._tmpdirs:
            shutil.rmtree(tmp, ignore_errors=True)
        self._tmpdirs.clear()

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
