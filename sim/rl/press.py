"""``pccbullet/UrsulaPress-v1``: the palpation arm presses its force sensor on a rock at a target force, in
dynamic mode (water)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.environment import add_sphere, force_sensor
from pccbullet.sim.rl.base import SUCCESS_BONUS, LimbEnv, positive, robot_with_sections
from pccbullet.sim.world import WorldMode

ROCK_RADIUS = 0.06  # m
ROCK_GAP = 0.005  # m, from the tip at rest in the goal shape to the rock's surface
SETTLE_STEPS = 3000  # physics steps (3 s) for the goal shape to come to rest, sagging in the medium
TARGET_SHARE = (0.2, 0.8)  # the target force's range, as shares of the force that pressing fully gives
FORCE_MIN = 0.02  # N, least force pressing fully must give; goals that give less are drawn again
FORCE_TOLERANCE = 0.1  # default largest |force - target| that counts, as a share of the target
FORCE_RESOLUTION = 0.002  # N, the tolerance's floor
HOLD_STEPS = 10  # control steps (0.2 s) the force must stay within tolerance for a success
PRESS_LENGTH = 0.1  # m/N: the error is gap + PRESS_LENGTH * |force error|
FORCE_BOUND = 10.0  # N, forces are clipped to +- this in observations
MAX_DRAWS = 100  # goal draws at a reset before the last one is kept whatever force pressing gives


class UrsulaPressEnv(LimbEnv):
    """Press the palpation arm's force sensor on a rock with a target force, in dynamic mode.

    ## Description

    The palpation arm (two PCC segments, force sensor at the tip) on the fixed head, in water; the action,
    dynamic mode and time step are those of :class:`~pccbullet.sim.rl.base.LimbEnv`. A rock (a static
    sphere of radius 60 mm) lies 5 mm in front of the force sensor of the arm at rest in a random goal
    shape, and the episode starts there: the harder the command pushes into the rock, the larger the
    force the material springs exert on the sensor.

    At a reset the goal configuration (``|bend|`` 0.15-0.45 of its limit per segment, every arc at its
    shortest) is given to the springs for 3 s with the rock away; the tip comes to rest sagging in the
    medium, and the rock is placed in front of its sensor (along the tip's z axis). The arm then rests 1 s
    against it (:attr:`force_rest`), and pressing fully, every arc lengthened to its maximum
    (:attr:`push`), is simulated 3 s more from a saved state to measure the force it gives
    (:attr:`force_max`); goals where that gains less than 20 mN are drawn again (at most 100 draws). The
    target force is uniform between 20 % and 80 % of the way from ``force_rest`` to ``force_max``. A reset
    takes 0.3-5 s of computing. :attr:`goal_pcc` and :attr:`push` serve scripted policies and tests.

    ## Observation Space

    ``(17 + 3 S + 3 N S,)``: tip (3), rock centre (3), centre minus tip (3), the centre in the tip frame (3)
    (head frame, m), the gap from the tip to the rock's surface (m), the sensor's force in its frame (3,
    N), its magnitude (N), the target force (N), magnitude minus target (N); then the commanded PCC
    configuration and the section velocities as in :class:`~pccbullet.sim.rl.reach.UrsulaReachEnv`.

    ## Rewards

    Normalized, in ``[-1, 2]``: the decrease of the error ``gap + 0.1 m/N * |force - target|`` over the
    step divided by the most the tip moves in one step, clipped to ``[-1, 1]``; plus 1 on success.

    ## Episode End

    Terminated (success) when the force has stayed within ``force_tolerance`` (default 10 %, at least 2 mN)
    of the target for 10 steps (0.2 s); truncated after 200 steps (4 s) by the ``TimeLimit``.

    ## Info

    ``distance_m`` (the gap), ``force_n``, ``target_force_n``, ``is_success``, ``time_s``.

    ## Arguments

    ``robot``, ``limb`` (a limb with a ``force_sensor`` payload; default: the robot's first, URSULA's
    ``"palpation"``), ``sections``, ``medium`` and ``render_mode`` as in
    :class:`~pccbullet.sim.rl.base.LimbEnv` (``mode`` is ``"dynamic"``: forces need dynamics);
    ``force_tolerance`` (a share of the target force).
    """

    def __init__(
        self, *, force_tolerance: float = FORCE_TOLERANCE, limb: str | None = None, **kwargs: Any
    ) -> None:
        self.force_tolerance = positive("force_tolerance", force_tolerance, "(a share of the target force)")
        mode = kwargs.pop("mode", WorldMode.DYNAMIC)
        if mode != WorldMode.DYNAMIC:
            raise ConfigurationError(
                f"mode = {mode!r} is invalid for the press task; allowed: 'dynamic' (forces need dynamics)"
            )
        spec = robot_with_sections(kwargs.pop("robot", "ursula"), kwargs.pop("sections", 5))
        sensing = [limb.name for limb in spec.limbs if limb.payload and limb.payload.kind == "force_sensor"]
        if limb is None and sensing:
            limb = sensing[0]
        if limb not in sensing:
            allowed = ", ".join(repr(n) for n in sensing) or "none: the robot has no force sensor"
            raise ConfigurationError(
                f"limb = {limb!r} is invalid for the press task on robot '{spec.name}'; allowed: the limbs "
                f"with a force sensor ({allowed})"
            )
        super().__init__(mode=WorldMode.DYNAMIC, robot=spec, limb=limb, **kwargs)
        limb_low, limb_high = self.limb_bounds()
        head = np.concatenate([np.full(6, self.reach), np.full(6, 2 * self.reach), [2 * self.reach]])
        forces = np.array([FORCE_BOUND] * 6)
        low = np.concatenate([-head, -forces, limb_low])
        low[12] = 0.0  # the gap
        low[16:18] = [0.0, 0.0]  # force magnitude and target
        high = np.concatenate([head, forces, limb_high])
        self.observation_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.rock_centre = self.T_head_base[:3, 3] + [0.0, 0.0, -10.0]  # far away until the first reset
        self.rock = add_sphere(self.world, self._world(self.rock_centre), ROCK_RADIUS)
        self.target_force = 0.0
        self.goal_pcc = self.pcc.copy()
        """The configuration whose rest point lies 5 mm from the rock (for scripted policies and tests)."""
        self.push = np.concatenate([[0.0, 0.0, s.length_max - s.length_min] for s in self.segments])
        """Pressing fully: :attr:`goal_pcc` plus this (every arc lengthened to its maximum)."""
        self.force_max = 0.0
        """The sensor's force (N) at rest when pressing fully, measured at the reset."""
        self.force_rest = 0.0
        """The sensor's force (N) at rest in the goal shape (the rock may touch it), measured at the reset."""
        self._held = 0
        self._error = 0.0

    def _world(self, point: FloatArray) -> list[float]:
        return list((self.robot.T_world_head @ np.append(point, 1.0))[:3])

    def _measure(self, T_tip: FloatArray) -> tuple[float, FloatArray]:
        gap = max(float(np.linalg.norm(self.rock_centre - T_tip[:3, 3])) - ROCK_RADIUS, 0.0)
        force = np.clip(force_sensor(self.robot, self.limb), -FORCE_BOUND, FORCE_BOUND)
        return gap, force

    def _obs(self, T_tip: FloatArray, gap: float, force: FloatArray) -> np.ndarray:
        tip, magnitude = T_tip[:3, 3], float(np.linalg.norm(force))
        to_rock = self.rock_centre - tip
        head = np.concatenate([tip, self.rock_centre, to_rock, T_tip[:3, :3].T @ to_rock, [gap]])
        forces = np.concatenate([force, [magnitude, self.target_force, magnitude - self.target_force]])
        return np.concatenate([head, forces, self.limb_obs()]).astype(np.float32)

    def _settled_tip(self, pcc: FloatArray) -> FloatArray:
        """The tip frame at rest, ``(4, 4)`` in the head frame, with ``pcc`` as the springs' target."""
        far = self._world(self.T_head_base[:3, 3] + [0.0, 0.0, -10.0])
        pb.resetBasePositionAndOrientation(self.rock, far, [0, 0, 0, 1], physicsClientId=self.world.client)
        self.robot.set_pcc(self.limb, self.configs(pcc), mode="reset")
        self.world.step(SETTLE_STEPS)
        return self.tip_pose()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw the goal shape, the rock and the target force (from ``seed`` if given); start at rest."""
        super().reset(seed=seed)
        rng = self.np_random
        cid = self.world.client
        for _ in range(MAX_DRAWS):
            self.goal_pcc = self.random_pcc(rng, 0.15, 0.45)
            for i, seg in enumerate(self.segments):  # the shortest arcs: lengthening them presses
                self.goal_pcc[3 * i + 2] = seg.length_min
            rest = self._settled_tip(self.goal_pcc)  # (4, 4): the arm rests there, its sensor facing the rock
            r_tip = self.segments[-1].radius_tip
            self.rock_centre = rest[:3, 3] + (ROCK_RADIUS + r_tip + ROCK_GAP) * rest[:3, 2]
            pos = self._world(self.rock_centre)
            pb.resetBasePositionAndOrientation(self.rock, pos, [0, 0, 0, 1], physicsClientId=cid)
            self.world.mark_moved()
            self.world.step(SETTLE_STEPS // 3)  # at rest against the rock, if it touches
            self.force_rest = float(np.linalg.norm(force_sensor(self.robot, self.limb)))
            state = pb.saveState(physicsClientId=cid)
            self.robot.set_pcc(self.limb, self.configs(self.goal_pcc + self.push), mode="target")
            self.world.step(SETTLE_STEPS)
            self.force_max = float(np.linalg.norm(force_sensor(self.robot, self.limb)))
            pb.restoreState(state, physicsClientId=cid)
            pb.removeState(state, physicsClientId=cid)
            self.robot.set_pcc(self.limb, self.configs(self.goal_pcc), mode="target")
            if self.force_max - self.force_rest >= FORCE_MIN:
                break
        self.pcc = self.goal_pcc.copy()
        self.steps = 0
        self._p = self.section_points()
        self._v = np.zeros_like(self._p)  # at rest against the rock
        share = float(rng.uniform(*TARGET_SHARE))
        self.target_force = self.force_rest + share * (self.force_max - self.force_rest)
        self._held = 0
        T_tip = self.tip_pose()
        gap, force = self._measure(T_tip)
        self._error = gap + PRESS_LENGTH * abs(float(np.linalg.norm(force)) - self.target_force)
        return self._obs(T_tip, gap, force), self._info(gap, force)

    def _info(self, gap: float, force: FloatArray) -> dict[str, Any]:
        return self.info(
            distance_m=gap,
            force_n=float(np.linalg.norm(force)),
            target_force_n=self.target_force,
            is_success=self._held >= HOLD_STEPS,
        )

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move the PCC targets at ``action`` for one control step; returns the observation, the normalized
        reward, whether the force was held (terminated), ``False`` and the info."""
        self._advance(action)
        T_tip = self.tip_pose()
        gap, force = self._measure(T_tip)
        miss = abs(float(np.linalg.norm(force)) - self.target_force)
        within = max(self.force_tolerance * self.target_force, FORCE_RESOLUTION)
        self._held = self._held + 1 if miss < within else 0
        error = gap + PRESS_LENGTH * miss
        info = self._info(gap, force)
        reward = self.progress(self._error, error) + (SUCCESS_BONUS if info["is_success"] else 0.0)
        self._error = error
        return self._obs(T_tip, gap, force), reward, info["is_success"], False, info
