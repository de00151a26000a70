"""Reach tasks: the tip of one limb (URSULA's unless ``robot=`` names another robot file) reaches a point
(``pccbullet/UrsulaReach-v1``), or the camera tentacle reaches a point while looking at a mark
(``pccbullet/UrsulaAim-v1``).

Both draw the goal from a random reachable PCC configuration
(:meth:`~pccbullet.sim.rl.base.LimbEnv.random_pcc`), so a solution always exists, and start the limb near
straight at its rest length.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from pccbullet.core.types import FloatArray
from pccbullet.sim.rl.base import SUCCESS_BONUS, LimbEnv, positive
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform

SUCCESS_RADIUS = 0.01  # m, default tip-to-target distance of a success
LOOK_DISTANCE = 0.3  # m, from the goal pose along its camera axis to the mark it looks at
AIM_LENGTH = 0.1  # m/rad: the aim task's error is distance + AIM_LENGTH * angle
AIM_TOLERANCE = math.radians(10.0)  # rad, default largest angle between the camera axis and the mark
GOAL_OBS = 16  # entries of the reach observation before the limb's


class UrsulaReachEnv(LimbEnv):
    """Reach a target point with the tip of one limb, acting on its PCC parameters.

    ## Description

    One limb of a robot file (default URSULA's 600 mm camera tentacle, one PCC segment) on the fixed head;
    the action, modes and time step are those of :class:`~pccbullet.sim.rl.base.LimbEnv`. The target is the
    tip of a random reachable PCC configuration.

    ## Action Space

    ``Box(-1, 1, (3 S,), float32)`` for a limb of ``S`` segments: per segment bend, plane and length rates
    as fractions of 2 rad/s, 3 rad/s and 0.05 m/s, integrated over the 20 ms step and clipped to the limb's
    limits.

    ## Observation Space

    ``Box(low, high, (16 + 3 S + 3 N S,), float32)`` for ``N`` sections a segment, the same in both modes;
    positions in the head frame (URSULA's: x forward along the head, z up); the bounds are the limb's
    reach, its PCC limits and +-100 m/s:

    ====================  =====  ======================================================================
    index                 unit   value
    ====================  =====  ======================================================================
    0-2                   m      tip position
    3-5                   m      target position
    6-8                   m      target minus tip
    9-11                  m      the target in the tip frame (where the tip sees it)
    12-14                 -      its direction (a unit vector; zero on the target)
    15                    m      the distance ``d`` from tip to target
    16 .. 16 + 3 S        rad/m  commanded PCC configuration per segment: bend (rad), plane (rad),
                                 length (m)
    16 + 3 S .. end       m/s    the velocities of the limb's ``N S`` section ends (x, y, z each, base to
                                 tip): their change over the step divided by 20 ms, in both modes
                                 (``LimbEnv.limb_obs``); clipped to +-100
    ====================  =====  ======================================================================

    ## Rewards

    Normalized, in ``[-1, 2]``: the decrease of the tip's distance ``d`` to the target over the step,
    divided by the most the tip moves in one step (``LimbEnv.tip_step``, 25 mm for the camera), clipped to
    ``[-1, 1]``; plus 1 on the step that ends within the success radius.

    ## Starting State

    The limb at rest length, each segment's bend and plane uniform in ``[-0.05, 0.05]`` rad; the target
    is the PCC tip of a configuration with ``|bend|`` uniform in ``[0.2, 0.8] bend_max``, ``plane``
    uniform in ``[-pi, pi]`` and ``length`` uniform in the segment's range. Both come from the
    environment's random generator (``reset(seed=...)``); equal seeds give equal episodes.

    ## Episode End

    Terminated when ``d < success_radius`` (default 10 mm); truncated after 200 steps (4 s) by the
    ``TimeLimit`` that ``gymnasium.make`` adds.

    ## Info

    ``distance_m`` (``d``), ``is_success`` (``d < success_radius``), ``time_s`` (steps times 20 ms).

    ## Arguments

    ``mode``, ``robot``, ``limb``, ``sections``, ``medium``, ``render_mode`` (green sphere: the target) as in
    :class:`~pccbullet.sim.rl.base.LimbEnv`; ``success_radius`` (m).
    """

    def __init__(self, *, success_radius: float = SUCCESS_RADIUS, **kwargs: Any) -> None:
        self.success_radius = positive("success_radius", success_radius, "m")
        super().__init__(**kwargs)
        low, high = self._bounds()
        self.observation_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.target = np.zeros(3)
        self._target_pcc = self.pcc.copy()
        self._distance = 0.0

    def _bounds(self) -> tuple[FloatArray, FloatArray]:
        limb_low, limb_high = self.limb_bounds()
        head = np.concatenate(
            [np.full(6, self.reach), np.full(6, 2 * self.reach), np.ones(3), [2 * self.reach]]
        )
        low = -head
        low[-1] = 0.0  # the distance
        return np.concatenate([low, limb_low]), np.concatenate([head, limb_high])

    def target_pcc(self) -> list[PccConfig]:
        """The configuration whose tip is the target (for scripted policies and tests)."""
        return self.configs(self._target_pcc)

    def goal_pose(self, pcc: FloatArray) -> FloatArray:
        """The tip frame of configuration ``pcc`` in the head frame, ``(4, 4) float``."""
        return np.asarray(self.T_head_base @ limb_transform(self.configs(pcc)))

    def _goal_obs(self, T_tip: FloatArray) -> FloatArray:
        tip = T_tip[:3, 3]
        seen = T_tip[:3, :3].T @ (self.target - tip)
        d = float(np.linalg.norm(seen))
        direction = seen / d if d > 0.0 else np.zeros(3)
        return np.concatenate([tip, self.target, self.target - tip, seen, direction, [d]])

    def _obs(self, T_tip: FloatArray) -> np.ndarray:
        return np.concatenate([self._goal_obs(T_tip), self.limb_obs()]).astype(np.float32)

    def _draw_goal(self, rng: np.random.Generator) -> None:
        self._target_pcc = self.random_pcc(rng)
        self.target = self.goal_pose(self._target_pcc)[:3, 3]

    def _error(self, T_tip: FloatArray) -> float:
        return float(np.linalg.norm(self.target - T_tip[:3, 3]))

    def _report(self, T_tip: FloatArray) -> dict[str, Any]:
        d = self._error(T_tip)
        return self.info(distance_m=d, is_success=bool(d < self.success_radius))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw a new goal and a start near straight (from ``seed`` if given); returns the first
        observation and the info."""
        super().reset(seed=seed)
        rng = self.np_random
        self._draw_goal(rng)
        start = [
            v for s in self.segments for v in (rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), s.length)
        ]
        self._start(np.array(start))
        self.place_markers(self._marker_points())
        T_tip = self.tip_pose()
        self._distance = self._error(T_tip)
        return self._obs(T_tip), self._report(T_tip)

    def _marker_points(self) -> list[FloatArray]:
        return [self.target]

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move the PCC parameters at ``action`` for one control step; returns the observation, the
        normalized reward, whether the goal is reached (terminated), ``False`` and the info."""
        self._advance(action)
        T_tip = self.tip_pose()
        info = self._report(T_tip)
        error = self._error(T_tip)
        reward = self.progress(self._distance, error) + (SUCCESS_BONUS if info["is_success"] else 0.0)
        self._distance = error
        return self._obs(T_tip), reward, info["is_success"], False, info


class UrsulaAimEnv(UrsulaReachEnv):
    """Reach a point with the camera tentacle's tip while its camera (the tip's z axis) looks at a mark.

    The goal is a random reachable configuration's tip frame: the point is its origin, the mark lies
    :data:`LOOK_DISTANCE` (0.3 m) ahead of it along its z axis. With one segment's three PCC parameters
    for five goal coordinates the solution is (generically) that configuration alone.

    Observation ``(28 + 3 S + 3 N S,)``: as :class:`UrsulaReachEnv`'s first 16 entries, then the camera axis
    (3, head frame), the mark (3, m, head frame), the mark in the tip frame (3, m), the cosine of the
    angle between the camera axis and the direction to the mark, the angle (rad) and the combined error
    ``d + 0.1 m/rad * angle`` (m), then the PCC configuration and the section velocities.

    Reward: as :class:`UrsulaReachEnv` on the combined error. Success (terminates): ``d <
    success_radius`` (default 10 mm) and the angle below ``aim_tolerance`` (default 10 deg). Info:
    ``distance_m``, ``angle_rad``, ``is_success``, ``time_s``.

    Arguments: those of :class:`UrsulaReachEnv` (``limb``: default URSULA's ``"camera"``, any limb whose tip
    z axis is its camera's on another robot) and ``aim_tolerance`` (rad).
    """

    def __init__(self, *, aim_tolerance: float = AIM_TOLERANCE, **kwargs: Any) -> None:
        self.aim_tolerance = positive("aim_tolerance", aim_tolerance, "rad")
        self.mark = np.zeros(3)
        super().__init__(**kwargs)

    def _bounds(self) -> tuple[FloatArray, FloatArray]:
        low, high = super()._bounds()
        far = self.reach + LOOK_DISTANCE
        extra = np.array([1, 1, 1, far, far, far, 2 * far, 2 * far, 2 * far, 1, math.pi, 2 * far + math.pi])
        extra_low = -extra
        extra_low[-2:] = 0.0
        n = GOAL_OBS
        return np.concatenate([low[:n], extra_low, low[n:]]), np.concatenate([high[:n], extra, high[n:]])

    def _draw_goal(self, rng: np.random.Generator) -> None:
        super()._draw_goal(rng)
        T_goal = self.goal_pose(self._target_pcc)
        self.mark = T_goal[:3, 3] + LOOK_DISTANCE * T_goal[:3, 2]

    def _angle(self, T_tip: FloatArray) -> tuple[float, float]:
        to_mark = self.mark - T_tip[:3, 3]
        cos = float(np.dot(T_tip[:3, 2], to_mark) / max(float(np.linalg.norm(to_mark)), 1e-9))
        return cos, math.acos(min(1.0, max(-1.0, cos)))

    def _error(self, T_tip: FloatArray) -> float:
        return super()._error(T_tip) + AIM_LENGTH * self._angle(T_tip)[1]

    def _obs(self, T_tip: FloatArray) -> np.ndarray:
        cos, angle = self._angle(T_tip)
        to_mark = T_tip[:3, :3].T @ (self.mark - T_tip[:3, 3])
        aim = np.concatenate([T_tip[:3, 2], self.mark, to_mark, [cos, angle, self._error(T_tip)]])
        return np.concatenate([self._goal_obs(T_tip), aim, self.limb_obs()]).astype(np.float32)

    def _report(self, T_tip: FloatArray) -> dict[str, Any]:
        d = float(np.linalg.norm(self.target - T_tip[:3, 3]))
        angle = self._angle(T_tip)[1]
        ok = bool(d < self.success_radius and angle < self.aim_tolerance)
        return self.info(distance_m=d, angle_rad=angle, is_success=ok)

    def _marker_points(self) -> list[FloatArray]:
        return [self.target, self.mark]
