"""``pccbullet/UrsulaTrack-v1``: the tip of one URSULA limb follows a moving point."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from pccbullet.core.types import FloatArray
from pccbullet.sim.rl.base import BEND_RATE, LENGTH_RATE, PLANE_RATE, LimbEnv, positive
from pccbullet.urdf_gen.pcc import limb_transform

TRACK_RADIUS = 0.02  # m, default distance within which the tip tracks the target (the success flag)
TRACK_SCALE = 0.1  # m: reward 1 at the target, 0 at this distance, -1 at twice it or more
FREQUENCY_HZ = (0.1, 0.25)  # range of the target's PCC oscillation frequencies
SPEED_SHARE = 0.5  # the target's PCC parameters move at most this share of the action's full rates


class UrsulaTrackEnv(LimbEnv):
    """Keep the tip of one limb (URSULA's camera tentacle unless told otherwise) on a target that moves
    through the limb's workspace.

    ## Description

    The target is the PCC tip of a configuration that oscillates about a random centre: per segment and
    parameter ``c + A sin(2 pi f t + phi)`` with ``f`` uniform in 0.1-0.25 Hz and amplitudes small enough
    that each parameter moves at most half as fast as the action's full rate (bend 2 rad/s, plane 3 rad/s,
    length 0.05 m/s) and stays in the limb's limits, so a policy can keep up. Action, modes and time step:
    :class:`~pccbullet.sim.rl.base.LimbEnv`.

    ## Observation Space

    ``(15 + 3 S + 3 N S,)``: tip (3), target (3), target minus tip (3), the target in the tip frame (3), the
    target's velocity (3, m/s), all in the head frame; then the commanded PCC configuration and the section
    velocities as in :class:`~pccbullet.sim.rl.reach.UrsulaReachEnv`.

    ## Rewards

    Normalized, in ``[-1, 1]``: ``1 - d / 0.1 m`` clipped, with ``d`` the tip-to-target distance after the
    step (1 on the target, 0 at 100 mm, -1 at 200 mm or more).

    ## Episode End

    Never terminated; truncated after 200 steps (4 s) by the ``TimeLimit`` that ``gymnasium.make`` adds.

    ## Info

    ``distance_m``, ``is_success`` (``d < track_radius``, default 20 mm, at this step), ``time_s``.

    ## Arguments

    Those of :class:`~pccbullet.sim.rl.base.LimbEnv` and ``track_radius`` (m).
    """

    def __init__(self, *, track_radius: float = TRACK_RADIUS, **kwargs: Any) -> None:
        self.track_radius = positive("track_radius", track_radius, "m")
        super().__init__(**kwargs)
        limb_low, limb_high = self.limb_bounds()
        speed = (BEND_RATE + PLANE_RATE) * self.length_max + LENGTH_RATE * len(self.segments)  # m/s, a bound
        head = np.concatenate([np.full(6, self.reach), np.full(6, 2 * self.reach), np.full(3, speed)])
        low, high = np.concatenate([-head, limb_low]), np.concatenate([head, limb_high])
        self.observation_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        n = len(self.pcc)
        self._centre, self._amplitude, self._phase = np.zeros(n), np.zeros(n), np.zeros(n)
        self._frequency = 0.0
        self.target = np.zeros(3)
        self._velocity = np.zeros(3)

    def target_at(self, t: float) -> FloatArray:
        """The target (head frame, m) at time ``t`` (s) after the reset, ``(3,)``."""
        pcc = self._centre + self._amplitude * np.sin(2.0 * math.pi * self._frequency * t + self._phase)
        return np.asarray((self.T_head_base @ limb_transform(self.configs(pcc)))[:3, 3])

    def _move_target(self) -> None:
        t = self.steps * self.control_dt
        self.target = self.target_at(t)
        self._velocity = (self.target_at(t + self.control_dt) - self.target) / self.control_dt

    def _obs(self, T_tip: FloatArray) -> np.ndarray:
        tip = T_tip[:3, 3]
        to_target = self.target - tip
        goal = np.concatenate([tip, self.target, to_target, T_tip[:3, :3].T @ to_target, self._velocity])
        return np.concatenate([goal, self.limb_obs()]).astype(np.float32)

    def _report(self, T_tip: FloatArray) -> tuple[float, dict[str, Any]]:
        d = float(np.linalg.norm(self.target - T_tip[:3, 3]))
        return d, self.info(distance_m=d, is_success=bool(d < self.track_radius))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw the target's motion and a start near straight (from ``seed`` if given)."""
        super().reset(seed=seed)
        rng = self.np_random
        self._frequency = float(rng.uniform(*FREQUENCY_HZ))
        w = 2.0 * math.pi * self._frequency
        rates = SPEED_SHARE * np.tile([BEND_RATE, PLANE_RATE, LENGTH_RATE], len(self.segments))
        centre = self.random_pcc(rng, 0.3, 0.7)
        room = np.minimum(centre - self.pcc_low, self.pcc_high - centre)
        self._centre = centre
        self._amplitude = np.minimum(rates / w, room) * rng.uniform(0.5, 1.0, len(centre))
        self._phase = rng.uniform(-math.pi, math.pi, len(centre))
        start = [
            v for s in self.segments for v in (rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), s.length)
        ]
        self._start(np.array(start))
        self._move_target()
        self.place_markers([self.target])
        T_tip = self.tip_pose()
        return self._obs(T_tip), self._report(T_tip)[1]

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move the PCC parameters at ``action`` for one control step while the target moves; returns the
        observation, the normalized reward, ``False``, ``False`` and the info."""
        self._advance(action)
        self._move_target()
        self.place_markers([self.target])
        T_tip = self.tip_pose()
        d, info = self._report(T_tip)
        reward = float(np.clip(1.0 - d / TRACK_SCALE, -1.0, 1.0))
        return self._obs(T_tip), reward, False, False, info
