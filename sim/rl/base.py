"""What every pccbullet Gymnasium task shares: one limb of any robot file driven by PCC parameter rates.

:class:`LimbEnv` loads one limb of a robot (URSULA's camera tentacle unless told otherwise: ``robot=`` a
bundled name, a TOML path or a loaded spec, ``limb=`` one of its limbs) on the fixed head
(:meth:`~pccbullet.sim.world.World.load_robot` with ``limbs=[limb]``) and turns an action
``Box(-1, 1, (3 S,))`` (per segment: bend, plane and length rates as fractions of :data:`BEND_RATE`,
:data:`PLANE_RATE`, :data:`LENGTH_RATE`) into a commanded PCC configuration, integrated over one 20 ms control
step and clipped to the limb's limits. In ``"kinematic"`` mode the limb is where its command puts it; in
``"dynamic"`` mode the command is the target of the material spring-dampers and the medium, gravity and
contact bend the limb away from it. The limb's part of every observation (:meth:`LimbEnv.limb_obs`) is the
commanded configuration and the velocities of its sections, the same size in both modes (the two modes' chains
have different joints but the same sections). Tasks (:mod:`pccbullet.sim.rl.reach`,
:mod:`~pccbullet.sim.rl.track`, :mod:`~pccbullet.sim.rl.press`) add the goal, the observation's head, the
reward and the success flag.

Normalized rewards: a task's reward is its error's decrease over the step divided by the most the limb can
decrease it in one step (:meth:`LimbEnv.progress`), clipped to ``[-1, 1]``, plus :data:`SUCCESS_BONUS` on
a step that ends in success. ``info["time_s"]`` counts control steps (steps times 20 ms), so two equal
episodes give bit-equal infos whatever ran before them in the same world.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.bullet import pb
from pccbullet.sim.medium import Medium
from pccbullet.sim.world import PHYSICS_DT, World, WorldMode
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import RobotSpec

if TYPE_CHECKING:
    from pccbullet.sim.views.web.view import WebView

BEND_RATE = 2.0  # rad/s at action +-1
PLANE_RATE = 3.0  # rad/s at action +-1
LENGTH_RATE = 0.05  # m/s at action +-1
CONTROL_DT = 0.02  # s, one control step
SUCCESS_BONUS = 1.0  # reward added on a step that ends in success
RENDER_SIZE = (320, 240)  # pixels (w, h)
VELOCITY_BOUND = 100.0  # m/s: section velocities are clipped to +- this in observations
URSULA_LIMB = "camera"  # the default limb of URSULA (bundled robot "ursula"); other robots: their first
FRAMED_REACH = 0.8  # m: a robot reaching this far from its head fills the rgb_array render


def positive(name: str, value: float, unit: str) -> float:
    """``value`` as a float if it is a finite number > 0, else :class:`ConfigurationError` naming it."""
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0.0):
        raise ConfigurationError(f"{name} = {value!r} is invalid; allowed: a number > 0 {unit}")
    return float(value)


class LimbEnv(gym.Env[np.ndarray, np.ndarray]):
    """One limb of a robot on the fixed head, acting on its PCC parameter rates (see the module docstring).

    Subclasses set :attr:`observation_space` and implement :meth:`reset` and :meth:`step` with
    :meth:`_start` and :meth:`_advance`.

    Args:
        mode: ``"kinematic"`` (default) or ``"dynamic"``.
        robot: a bundled robot name (default ``"ursula"``), a robot TOML path or a loaded
            :class:`~pccbullet.urdf_gen.specs.RobotSpec`.
        limb: one of the robot's limbs; ``None`` (default): URSULA's ``"camera"`` tentacle (its others:
            ``"light"``, ``"grasper"``, ``"palpation"``), another robot's first limb. A name the robot
            does not have is a :class:`~pccbullet.core.errors.ConfigurationError` naming its limbs.
        sections: sections per segment ``N`` (default 5), for every segment of the robot.
        medium: ``"water"`` (default), ``"seawater"``, ``"air"``, ``"vacuum"`` or a
            :class:`~pccbullet.sim.medium.Medium` (dynamic mode's buoyancy and drag).
        render_mode: ``None``, ``"rgb_array"`` (``(240, 320, 3) uint8`` from PyBullet's software renderer)
            or ``"web"`` (a live web view of the world, shown as the steps go: :attr:`view`, its address
            logged; :mod:`pccbullet.sim.views.web`).
    """

    metadata = {"render_modes": ["rgb_array", "web"], "render_fps": 50}

    def __init__(
        self,
        *,
        mode: WorldMode | str = WorldMode.KINEMATIC,
        robot: str | Path | RobotSpec = "ursula",
        limb: str | None = None,
        sections: int = 5,
        medium: str | Medium = "water",
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigurationError(
                f"render_mode = {render_mode!r} is invalid; allowed: None, 'rgb_array', 'web'"
            )
        mode = WorldMode.of(mode)
        self.render_mode = render_mode
        self.frame_skip = round(CONTROL_DT / PHYSICS_DT)  # physics steps per control step
        self.control_dt = self.frame_skip * PHYSICS_DT  # s
        spec = robot_with_sections(robot, sections)
        if limb is None:
            limb = URSULA_LIMB if spec.name == "ursula" else spec.limbs[0].name
        spec.limb(limb)  # an unknown limb: one line naming the robot's limbs
        self.robot_spec = spec
        """The robot file's spec (every limb; the world holds ``limb`` only)."""
        self.world = World(mode=mode, medium=medium)
        try:
            self.robot = self.world.load_robot(spec, limbs=[limb])
        except BaseException:
            self.world.close()
            raise
        self.limb = limb
        self.segments = self.robot.limb(limb).segments
        self.n_sections = sum(s.sections for s in self.segments)
        """The limb's sections ``N S`` (every segment's ``N`` summed)."""
        self.T_head_base = self.robot.limb(limb).T_head_base()
        """The limb base in the head frame, ``(4, 4) float``."""
        self.length_max = sum(s.length_max for s in self.segments)  # m
        self.reach = float(np.linalg.norm(self.T_head_base[:3, 3])) + self.length_max  # m, from the head
        n_seg = len(self.segments)
        self._rates = np.tile([BEND_RATE, PLANE_RATE, LENGTH_RATE], n_seg)
        self.pcc_low = np.array([v for s in self.segments for v in (-s.bend_max, -s.plane_max, s.length_min)])
        self.pcc_high = np.array([v for s in self.segments for v in (s.bend_max, s.plane_max, s.length_max)])
        self.action_space = spaces.Box(-1.0, 1.0, (3 * n_seg,), np.float32)
        self.tip_step = self.control_dt * (BEND_RATE * self.length_max + LENGTH_RATE * n_seg)
        """The most the tip moves in one control step at full bend and length rates (m): the scale of
        the normalized rewards."""
        self.pcc = np.array([v for s in self.segments for v in (0.0, 0.0, s.length)])
        """The commanded PCC configuration, per segment bend (rad), plane (rad), length (m)."""
        self.steps = 0
        self._p = self.section_points()
        self._v = np.zeros_like(self._p)
        self._markers: list[int] = []
        self.view: WebView | None = None
        """``render_mode="web"``: the :class:`~pccbullet.sim.views.web.view.WebView` showing the world."""
        if render_mode == "web":
            from pccbullet.sim.views.web.live import attach

            self.view = attach(self.world, "web")[0]

    # ----------------------------------------------------------------------------------------- helpers

    def configs(self, x: FloatArray) -> list[PccConfig]:
        """``(3 S,)`` bend, plane, length values -> one :class:`PccConfig` per segment."""
        return [
            PccConfig(float(x[3 * i]), float(x[3 * i + 1]), float(x[3 * i + 2])) for i in range(len(x) // 3)
        ]

    def random_pcc(self, rng: np.random.Generator, low: float = 0.2, high: float = 0.8) -> FloatArray:
        """A random configuration: per segment ``|bend|`` uniform in ``[low, high] bend_max`` with a random
        sign, ``plane`` uniform in ``[-pi, pi]``, ``length`` uniform in the segment's range."""
        values = []
        for s in self.segments:
            sign = rng.choice([-1.0, 1.0])
            values += [sign * rng.uniform(low, high) * s.bend_max, rng.uniform(-np.pi, np.pi)]
            values.append(rng.uniform(s.length_min, s.length_max))
        return np.array(values)

    def tip_pose(self) -> FloatArray:
        """The tip frame in the head frame, ``(4, 4) float``."""
        return np.asarray(np.linalg.solve(self.robot.T_world_head, self.robot.tip_pose(self.limb)))

    def section_points(self) -> FloatArray:
        """The ends of the limb's sections (its slice bodies' frames) in the head frame, ``(N S, 3) float``
        (m), base to tip."""
        T = np.linalg.solve(self.robot.T_world_head, self.robot.section_poses(self.limb))
        return np.asarray(T[:, :3, 3])

    def limb_obs(self) -> FloatArray:
        """The commanded PCC configuration ``(3 S,)`` and the sections' velocities ``(3 N S,)`` (head frame,
        m/s, section by section x, y, z: the change of :meth:`section_points` over the last control step
        divided by its 20 ms, in both modes), clipped to +-:data:`VELOCITY_BOUND`."""
        return np.concatenate([self.pcc, np.clip(self._v.ravel(), -VELOCITY_BOUND, VELOCITY_BOUND)])

    def limb_bounds(self) -> tuple[FloatArray, FloatArray]:
        """Observation bounds of :meth:`limb_obs`."""
        high = np.concatenate(
            [np.maximum(-self.pcc_low, self.pcc_high), np.full(3 * self.n_sections, VELOCITY_BOUND)]
        )
        low = -high
        low[: len(self.pcc)] = self.pcc_low
        return low, high

    def progress(self, before: float, after: float, scale: float | None = None) -> float:
        """``(before - after) / scale`` clipped to ``[-1, 1]``: an error's decrease in one step, normalized
        by the most one step can decrease it (default :attr:`tip_step`)."""
        return float(np.clip((before - after) / (scale or self.tip_step), -1.0, 1.0))

    def info(self, **values: Any) -> dict[str, Any]:
        """The step's info: ``values`` and ``time_s`` (control steps since the reset times 20 ms)."""
        return {**values, "time_s": self.steps * self.control_dt}

    # ----------------------------------------------------------------------------------------- stepping

    def _start(self, pcc: FloatArray) -> None:
        """Put the limb at ``pcc`` at rest (a reset), with the step count at 0."""
        self.pcc = np.clip(np.asarray(pcc, dtype=float), self.pcc_low, self.pcc_high)
        self.robot.set_pcc(self.limb, self.configs(self.pcc), mode="reset")
        self._p = self.section_points()
        self._v = np.zeros_like(self._p)
        self.steps = 0

    def _advance(self, action: np.ndarray) -> None:
        """Integrate the action's rates over one control step and move the limb (see the module docstring)."""
        a = np.clip(np.asarray(action, dtype=float).reshape(self.action_space.shape), -1.0, 1.0)
        self.pcc = np.clip(self.pcc + a * self._rates * self.control_dt, self.pcc_low, self.pcc_high)
        configs = self.configs(self.pcc)
        if self.world.mode.integrates:
            self.robot.set_pcc(self.limb, configs, mode="target")
            self.world.step(self.frame_skip)
        else:
            self.robot.set_pcc(self.limb, configs, mode="reset")
            self.world.step(self.frame_skip, contacts=False)
        p = self.section_points()
        self._v = (p - self._p) / self.control_dt
        self._p = p
        self.steps += 1

    # ------------------------------------------------------------------------------------------ render

    def place_markers(self, points: list[FloatArray], colours: list[list[float]] | None = None) -> None:
        """Show ``points`` (head frame, m) as small spheres in the render (green, then blue, ...)."""
        if self.render_mode is None:
            return
        cid = self.world.client
        palette = colours or [[0.2, 0.8, 0.3, 1.0], [0.2, 0.4, 0.9, 1.0], [0.9, 0.2, 0.6, 1.0]]
        for i, point in enumerate(points):
            position = (self.robot.T_world_head @ np.append(point, 1.0))[:3].tolist()
            if i >= len(self._markers):
                shape = pb.createVisualShape(
                    pb.GEOM_SPHERE, radius=0.02, rgbaColor=palette[i % len(palette)], physicsClientId=cid
                )
                self._markers.append(pb.createMultiBody(0.0, -1, shape, position, physicsClientId=cid))
            else:
                pb.resetBasePositionAndOrientation(
                    self._markers[i], position, [0, 0, 0, 1], physicsClientId=cid
                )
        self.world.mark_moved()

    def render(self) -> np.ndarray | None:
        """``(240, 320, 3) uint8`` RGB image of the head, limb and goal markers (``rgb_array`` mode)."""
        if self.render_mode != "rgb_array":
            return None
        w, h = RENDER_SIZE
        cid = self.world.client
        head = self.robot.T_world_head[:3, 3]
        scale = max(1.0, self.reach / FRAMED_REACH)  # a larger robot: the camera backs off
        view = pb.computeViewMatrix(
            (head + scale * np.array([0.5, -0.6, 0.95])).tolist(),
            (head + scale * np.array([0.3, 0.0, 0.0])).tolist(),
            [0, 0, 1],
            physicsClientId=cid,
        )
        proj = pb.computeProjectionMatrixFOV(50.0, w / h, 0.05, 5.0 * scale, physicsClientId=cid)
        _, _, rgba, _, _ = pb.getCameraImage(
            w, h, viewMatrix=view, projectionMatrix=proj, renderer=pb.ER_TINY_RENDERER, physicsClientId=cid
        )
        return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3].copy()

    def close(self) -> None:
        """Close the environment's PyBullet world (and its web view)."""
        if self.view is not None:
            self.view.close()
        self.world.close()


def robot_with_sections(robot: str | Path | RobotSpec, sections: int) -> RobotSpec:
    """``robot`` (a bundled name, a TOML path or a spec) with ``sections`` sections in every segment;
    a missing file or a bad field is one line (:class:`~pccbullet.core.errors.RobotNotFoundError`,
    :class:`~pccbullet.core.errors.SpecError`)."""
    if not isinstance(robot, RobotSpec):
        return load_robot(robot, sections=sections)
    _check_sections(sections)
    limbs = tuple(
        replace(limb, segments=tuple(replace(s, sections=sections) for s in limb.segments))
        for limb in robot.limbs
    )
    return replace(robot, limbs=limbs)


def _check_sections(sections: int) -> None:
    """Raise :class:`ConfigurationError` unless ``sections`` is an integer in [1, 200]."""
    if isinstance(sections, bool) or not isinstance(sections, int) or not 1 <= sections <= 200:
        raise ConfigurationError(f"sections = {sections!r} is invalid; allowed: an integer in [1, 200]")
