"""The PyBullet world: connect, load a PCC robot, pose its limbs, step at 1 ms, read poses.

A world runs in one of two modes (:class:`WorldMode`). ``"kinematic"``: nothing is integrated; a limb is where
:meth:`pccbullet.sim.robot.Robot.set_pcc` put its section joints (PCC is the truth) and a step refreshes
contacts. ``"dynamic"``: PyBullet integrates the chains, each joint a material spring-damper towards the
target that ``set_pcc`` sets (:mod:`pccbullet.sim.limb.dynamics`), or a PyBullet position motor when the robot
is loaded with ``compliant=False`` (``set_pcc(..., mode="position")``).

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pccbullet.core.errors import ConfigurationError, SimulationDivergedError, WorldClosedError
from pccbullet.core.types import Choice, is_integer, is_real
from pccbullet.sim.body.mode import BaseMode
from pccbullet.sim.body.trajectory import Trajectory
from pccbullet.sim.bullet import pb
from pccbullet.sim.bullet_internals.process_globals import (
    BROADPHASE_SYMBOL,
    CONTACT_BREAKING_SYMBOL,
    BulletGlobals,
)
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.limb.dynamics import CompliantLimb
from pccbullet.sim.medium import Medium
from pccbullet.sim.medium import medium as medium_by_name
from pccbullet.sim.robot import Robot
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import RobotSpec
from pccbullet.urdf_gen.topology import Topology
from pccbullet.urdf_gen.urdf_writer import write_urdf

if TYPE_CHECKING:
    from pccbullet.sim.objects.placed import PlacedObject
    from pccbullet.sim.views.web.view import WebView

PHYSICS_DT = 1e-3  # s, physics time step
STANDARD_GRAVITY = 9.80665  # m/s^2
MAX_DT = 0.1  # s, longest physics step a World takes
MAX_GRAVITY = 1e3  # m/s^2, largest |component| of a World's gravity
SOLVER_ITERATIONS = 20
CONTACT_BREAKING_THRESHOLD = 0.005  # m
BROADPHASE_MARGIN = 0.005  # m, Bullet's AABB-tree margin (PyBullet sets 0; see sim.bullet_internals)

log = logging.getLogger(__name__)


class WorldMode(Choice):
    """What a world's step does (see the module docstring); parse a user's name with :meth:`of`. A
    ``str``: it prints and serializes as its name."""

    KINEMATIC = "kinematic"
    """Nothing is integrated: PCC (or a model) is the truth, the joints are set."""
    DYNAMIC = "dynamic"
    """PyBullet integrates the chains, their joints material springs."""

    @classmethod
    def field(cls) -> str:
        """``mode``: the name users write it under."""
        return "mode"

    @property
    def integrates(self) -> bool:
        """Whether a step integrates the dynamics (a robot's limbs are compliant by default then)."""
        return self is WorldMode.DYNAMIC

    @property
    def default_chain(self) -> Topology:
        """The limbs' chain unless one is asked for: the rod where the dynamics are integrated (a rod
        bends, twists and stretches), the paper's RRP sections where PCC is the truth."""
        return Topology.ROD if self.integrates else Topology.RRP


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


class World:
    """A PyBullet physics client at a fixed 1 ms step. Use as a context manager or call :meth:`close`.

    Args:
        gui: open the PyBullet GUI (needs a display) instead of DIRECT.
        dt: physics step (s).
        gravity: gravity vector ``(3,)`` in the world frame (m/s^2).
        mode: a :class:`WorldMode` or its name. ``"kinematic"``: the limbs are where their joints were set
            (PCC is the truth); a step advances time and refreshes contacts without integrating dynamics.
            ``"dynamic"``: PyBullet integrates the chains: every joint a material spring-damper towards
            its target (:mod:`pccbullet.sim.limb.dynamics`), or PyBullet position motors with
            ``load_robot(..., compliant=False)``.
        medium: ``"air"``, ``"water"``, ``"seawater"``, ``"vacuum"`` or a
            :class:`~pccbullet.sim.medium.Medium`: buoyancy, drag and added mass in dynamic mode (none in a
            vacuum, where a limb loses energy to its material damping only).
        chain: the limbs' topology (a :class:`~pccbullet.urdf_gen.topology.Topology` or its name):
            ``"rod"``, sections that bend about both axes, twist, stretch and shear
            (:mod:`pccbullet.urdf_gen.rod`; the default in dynamic mode), or ``"rrp"``, the paper's
            sections (exact for PCC kinematics, not a rod: the default in kinematic mode, kept in dynamic
            mode for comparison).
    """

    def __init__(
        self,
        *,
        gui: bool = False,
        dt: float = PHYSICS_DT,
        gravity: Sequence[float] = (0.0, 0.0, -STANDARD_GRAVITY),
        mode: WorldMode | str = WorldMode.DYNAMIC,
        medium: str | Medium = "air",
        chain: Topology | str | None = None,
    ) -> None:
        if not (is_real(dt) and 0.0 < dt <= MAX_DT):  # NaN fails too
            raise ConfigurationError(f"dt = {dt!r} is invalid; allowed: a time step in (0, {MAX_DT:g}] s")
        g = tuple(gravity)
        if len(g) != 3 or not all(is_real(v) and abs(v) <= MAX_GRAVITY for v in g):
            raise ConfigurationError(
                f"gravity = {g!r} is invalid; allowed: 3 finite numbers of at most {MAX_GRAVITY:g} m/s^2"
            )
        self.mode: WorldMode = WorldMode.of(mode)
        """What a step does, ``"kinematic"`` or ``"dynamic"``."""
        self.chain: Topology = self.mode.default_chain if chain is None else Topology.of(chain)
        """The limbs' topology, ``"rod"`` or ``"rrp"`` (:mod:`pccbullet.urdf_gen.topology`)."""
        self.gravity = tuple(float(v) for v in g)
        self._closed = False
        self.medium = medium_by_name(medium)
        self.client = pb.connect(pb.GUI if gui else pb.DIRECT)
        if self.client < 0:
            raise ConfigurationError(
                "could not connect to PyBullet" + (" GUI (is there a display?)" if gui else "")
            )
        self.dt = dt
        self.time = 0.0
        pb.setTimeStep(dt, physicsClientId=self.client)
        # Chosen for speed at unchanged contacts (figures: docs/measurements/performance.md): 20 solver
        # iterations, no pair sorting, Bullet's 5 mm margin and contact threshold held only during this
        # world's own calls.
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
        self.objects: list[PlacedObject] = []  # placed by pccbullet.sim.objects.place, stepped with the world
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
        external_loads: bool | Mapping[str, bool] = False,
        drive: Drive | str | Mapping[str, Drive | str] = Drive.JOINTS,
        orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
        base: BaseMode | str | None = None,
        trajectory: Trajectory | None = None,
    ) -> Robot:
        """Generate the robot's URDF and load it, its body (head) fixed, free or moved.

        Args:
            robot: bundled name, TOML path or an already loaded spec.
            urdf_dir: where the URDF and meshes go; a temporary folder removed on :meth:`close` if ``None``.
            sections: override N (only when ``robot`` is a name or path).
            position, orientation: the head frame's world pose (m; quaternion ``x, y, z, w``).
            compliant: material spring-damper joints (default: in dynamic mode).
            limbs: load only these limbs (names, in this order); ``None`` loads all. The returned
                robot's ``spec`` then holds these limbs only.
            external_loads: compliant limbs put the loads PyBullet adds (``applyExternalForce``,
                contacts), estimated from the last step, into their implicit step
                (:class:`pccbullet.sim.limb.dynamics.CompliantLimb`; off by default: see there); a mapping
                limb name -> bool sets it per limb (limbs left out: off).
            drive: what moves compliant limbs: ``"joints"`` (spring targets), ``"tendons"`` (every limb
                through its tendons, :mod:`pccbullet.sim.limb.tendons`; each must declare tendons, on the rod
                chain) or ``"chambers"`` (through its pressurized chambers,
                :mod:`pccbullet.sim.limb.chambers`; each must declare chambers, on the rod chain;
                pressures through ``robot.compliant[limb].chambers``); a mapping limb name -> drive sets
                it per limb (limbs left out: ``"joints"``).
                ``Robot.set_pcc(..., mode="target")`` commands it either way.
            base, trajectory: ``"fixed"``, ``"free"`` (mass, buoyancy, drag, added mass in the medium) or
                ``"moved"`` (along ``trajectory``, :class:`~pccbullet.sim.body.trajectory.Trajectory`), with
                compliant limbs (:mod:`pccbullet.sim.body`); ``None``: the file's ``[head] base`` (with
                compliant limbs; else fixed).

        Raises:
            ConfigurationError: ``limbs`` repeats a name or names a limb the robot lacks (``[]``: the body
                alone); a free or moved body where nothing is integrated.
        """
        if self._closed:
            raise WorldClosedError()
        spec = robot if isinstance(robot, RobotSpec) else load_robot(robot, sections=sections)
        if limbs is not None:
            names = list(limbs)
            if len(set(names)) != len(names):
                raise ConfigurationError(
                    f"limbs = {names!r} is invalid; allowed: distinct names out of "
                    + ", ".join(limb.name for limb in spec.limbs)
                )
            spec = replace(spec, limbs=tuple(spec.limb(name) for name in names))
        if urdf_dir is None:
            urdf_dir = self.scratch_dir()
        loaded = {limb.name for limb in spec.limbs}
        for field, given in (("drive", drive), ("external_loads", external_loads)):
            if isinstance(given, Mapping) and not set(given) <= loaded:
                raise ConfigurationError(
                    f"{field} = {dict(given)!r} is invalid; allowed: limb names out of {sorted(loaded)}"
                )
        drives = drive if isinstance(drive, Mapping) else dict.fromkeys(loaded, drive)
        loads = external_loads
        estimates = loads if isinstance(loads, Mapping) else dict.fromkeys(loaded, loads)
        compliant = compliant if compliant is not None else self.mode.integrates
        mode = BaseMode.of(base if base is not None else spec.head.base if compliant else "fixed")
        if mode.moves and not compliant:
            raise ConfigurationError(f"base = '{mode}' needs compliant limbs; allowed: 'fixed'")
        urdfs = write_urdf(spec, urdf_dir, chain=self.chain)
        with self.holding_globals():  # Bullet sizes a body's first tree box with the threshold
            handle = Robot(
                self, spec, urdfs, position, joint_limits=not compliant, chain=self.chain,
                orientation=orientation, base=mode, trajectory=trajectory,
            )  # fmt: skip
        if compliant:
            handle.compliant = {
                limb.name: CompliantLimb(
                    handle,
                    limb.name,
                    self.medium,
                    external_loads=bool(estimates.get(limb.name, False)),
                    drive=drives.get(limb.name, Drive.JOINTS),
                )
                for limb in spec.limbs
            }
            handle.carry()
        self.robots.append(handle)
        log.info(
            "loaded robot %s: limbs %s, %d joints, %s mode%s, %s chain",
            spec.name,
            ", ".join(limb.name for limb in spec.limbs),
            sum(handle.joint_count(limb.name) for limb in spec.limbs),
            self.mode,
            ", compliant" if compliant else "",
            self.chain,
        )
        return handle

    @contextmanager
    def holding_globals(self) -> Iterator[None]:
        """Hold this world's broadphase margin and contact threshold (Bullet's process-wide globals,
        :class:`pccbullet.sim.bullet_internals.process_globals.BulletGlobals`) for the block, as :meth:`step`
        and :meth:`load_robot` do; put back what was found after. Wrap the creation of bodies of your own in
        this world's client in it to give them the tree boxes the world's bodies get."""
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
        if self._closed:
            raise WorldClosedError()
        if not (is_integer(n) and n >= 0):
            raise ConfigurationError(f"n = {n!r} steps is invalid; allowed: an integer >= 0")
        if not contacts and self.mode.integrates:
            raise ConfigurationError(
                "contacts = False is invalid in dynamic mode; allowed: True (integration collides)"
            )
        limbs = [c for robot in self.robots for c in robot.compliant.values()]
        clock, timing = time.perf_counter, self.timing
        enter, leave = self.bullet_globals.enter, self.bullet_globals.leave
        for _ in range(n):
            t0 = clock()
            if not self.mode.integrates:
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
                for robot in self.robots:  # a free body's fluid forces, a moved one's pose
                    robot.body.apply()
                for limb in limbs:
                    try:
                        limb.apply()
                    except (np.linalg.LinAlgError, FloatingPointError) as exc:  # a NaN or an infinity
                        raise SimulationDivergedError(limb.spec.name, self.time) from exc
                for obj in self.objects:  # the medium's forces on placed objects
                    obj.apply()
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

    def show(self, **options: Any) -> WebView:
        """Show this world live in the browser or a notebook cell; returns the web view
        (:func:`pccbullet.sim.views.web.show`, ``options``: its ``view``, ``host``, ``port``, ``token``)."""
        from pccbullet.sim.views.web import show

        return show(self, **options)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called: every later use raises
        :class:`~pccbullet.core.errors.WorldClosedError`."""
        return self._closed

    def close(self) -> None:
        """Disconnect and remove temporary URDF folders (again: nothing)."""
        self._closed = True
        if self.client >= 0 and pb.isConnected(self.client):
            pb.disconnect(self.client)
        for tmp in self._tmpdirs:
            shutil.rmtree(tmp, ignore_errors=True)
        self._tmpdirs.clear()

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
