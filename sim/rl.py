"""Gymnasium environments of pccbullet (``pip install "pccbullet[rl]"``).

``pccbullet/UrsulaReach-v0``: one URSULA limb's tip reaches a target. Importing this module registers the id
(Gymnasium 1.x's convention for third-party environments)::

    import gymnasium as gym
    import pccbullet.sim.rl

    gym.register_envs(pccbullet.sim.rl)  # a no-op that keeps the import from looking unused
    env = gym.make("pccbullet/UrsulaReach-v0", mode="dynamic")

``gym.make("pccbullet.sim.rl:pccbullet/UrsulaReach-v0")`` imports the module itself. The package also
declares :func:`register_envs` under Gymnasium's ``gymnasium.envs`` entry-point group, which Gymnasium
0.26-0.29 load on import; Gymnasium 1.x reads no entry points."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError as exc:  # pragma: no cover (the rl extra is in the test extra)
    raise ImportError("pccbullet.sim.rl needs Gymnasium: pip install 'pccbullet[rl]'") from exc

from pccbullet.sim.bullet import pb
from pccbullet.sim.world import PHYSICS_DT, World
from pccbullet.urdf_gen.errors import ConfigurationError
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.types import FloatArray

if TYPE_CHECKING:
    from pccbullet.sim.webview.view import WebView

ENV_ID = "pccbullet/UrsulaReach-v0"
MAX_EPISODE_STEPS = 200  # control steps of 20 ms: 4 s
BEND_RATE = 2.0  # rad/s at action +-1
PLANE_RATE = 3.0  # rad/s at action +-1
LENGTH_RATE = 0.05  # m/s at action +-1
RENDER_SIZE = (320, 240)  # pixels (w, h)
VELOCITY_BOUND = 100.0  # rad/s or m/s: joint velocities are clipped to +- this in observations


class UrsulaReachEnv(gym.Env[np.ndarray, np.ndarray]):
    """Reach a target point with the tip of one URSULA limb, acting on its PCC parameters.

    ## Description

    One limb of the URSULA squid (default the 600 mm camera tentacle, one PCC segment) is loaded on the
    fixed head with :meth:`pccbullet.sim.world.World.load_robot` (``limbs=[limb]``). Each segment is described
    by ``bend`` (total arc angle, rad), ``plane`` (bending-plane angle about the segment's base z, rad) and
    ``length`` (arc length, m). The agent changes them at bounded rates; the target is the tip of a
    random reachable PCC configuration. In ``"kinematic"`` mode the limb is where its PCC commands put it;
    in ``"dynamic"`` mode (water) the commands are the targets of the material spring-dampers and
    gravity, buoyancy and drag bend the limb away from them. One step is 20 ms: 20 physics steps of 1 ms.

    ## Action Space

    ``Box(-1, 1, (3 S,), float32)`` for a limb of ``S`` segments, per segment ``(bend rate, plane rate,
    length rate)`` as fractions of 2 rad/s, 3 rad/s and 0.05 m/s. The commanded PCC configuration is
    integrated over the 20 ms step and clipped to the limb's limits (``bend`` in ``[-bend_max,
    bend_max]``, ``plane`` in ``[-plane_max, plane_max]``, ``length`` in ``[length_min, length_max]``).

    ## Observation Space

    ``Box(low, high, (9 + 3 S + J,), float32)``, in the head frame (x forward along the head, z up); the
    bounds are the limb's reach (positions), its PCC limits and +-100 rad/s (m/s) for the velocities:

    ====================  =====  ======================================================================
    index                 unit   value
    ====================  =====  ======================================================================
    0-2                   m      tip position
    3-5                   m      target position
    6-8                   m      target minus tip
    9 .. 9 + 3 S          rad/m  commanded PCC configuration per segment: bend (rad), plane (rad),
                                 length (m)
    9 + 3 S .. end        rad/s  the limb's ``J = 3 N S + S`` joint velocities (``Robot.joint_velocities``
                                 in dynamic mode; the change of the joint vector over the step divided by
                                 20 ms in kinematic mode), chord joints in m/s; clipped to +-100
    ====================  =====  ======================================================================

    ## Rewards

    ``-d`` per step, with ``d`` the distance from tip to target (m).

    ## Starting State

    The limb at rest length, each segment's bend and plane uniform in ``[-0.05, 0.05]`` rad; the target
    is the PCC tip of a configuration with ``|bend|`` uniform in ``[0.2, 0.8] bend_max``, ``plane``
    uniform in ``[-pi, pi]`` and ``length`` uniform in the segment's range. Both come from the
    environment's random generator (``reset(seed=...)``); equal seeds give equal episodes.

    ## Episode End

    Terminated when ``d < success_radius`` (default 5 mm); truncated after 200 steps (4 s) by the
    ``TimeLimit`` that ``gymnasium.make`` adds.

    ## Arguments

    - ``mode``: ``"kinematic"`` (default) or ``"dynamic"``.
    - ``limb``: ``"camera"`` (default), ``"light"``, ``"grasper"`` or ``"palpation"``.
    - ``sections``: sections per segment ``N`` (default 5).
    - ``success_radius``: (m), default 0.005.
    - ``render_mode``: ``None``, ``"rgb_array"`` (``(240, 320, 3) uint8`` from PyBullet's software
      renderer; the target is a green sphere) or ``"web"`` (a live web view of the world, shown as the
      steps go: :attr:`view`, its address logged; :mod:`pccbullet.sim.webview`).
    """

    metadata = {"render_modes": ["rgb_array", "web"], "render_fps": 50}

    def __init__(
        self,
        *,
        mode: str = "kinematic",
        limb: str = "camera",
        sections: int = 5,
        success_radius: float = 0.005,
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ConfigurationError(
                f"render_mode = {render_mode!r} is invalid; allowed: None, 'rgb_array', 'web'"
            )
        if not success_radius > 0.0:
            raise ConfigurationError(
                f"success_radius = {success_radius!r} is invalid; allowed: a length > 0 m"
            )
        self.render_mode = render_mode
        self.success_radius = float(success_radius)
        self.frame_skip = round(0.02 / PHYSICS_DT)  # physics steps per control step
        self.control_dt = self.frame_skip * PHYSICS_DT  # s
        self.world = World(mode=mode, medium="water")
        self.robot = self.world.load_robot("ursula", sections=sections, limbs=[limb])
        self.limb = limb
        self.segments = self.robot.limb(limb).segments
        n_seg, n_joints = len(self.segments), len(self.robot.joint_indices(limb))
        self._T_head_base = self.robot.limb(limb).T_head_base()
        self._rates = np.tile([BEND_RATE, PLANE_RATE, LENGTH_RATE], n_seg)
        self._lo = np.array([v for s in self.segments for v in (-s.bend_max, -s.plane_max, s.length_min)])
        self._hi = np.array([v for s in self.segments for v in (s.bend_max, s.plane_max, s.length_max)])
        self.action_space = spaces.Box(-1.0, 1.0, (3 * n_seg,), np.float32)
        reach = float(np.linalg.norm(self._T_head_base[:3, 3])) + sum(s.length_max for s in self.segments)
        high = np.concatenate(
            [
                np.full(6, reach),
                np.full(3, 2 * reach),
                np.maximum(-self._lo, self._hi),
                np.full(n_joints, VELOCITY_BOUND),
            ]
        )
        low = -high
        low[9 : 9 + 3 * n_seg] = self._lo
        self.observation_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self._pcc = np.array([v for s in self.segments for v in (0.0, 0.0, s.length)])
        self._target = np.zeros(3)
        self._q = self.robot.joints(limb)
        self._qd = np.zeros(n_joints)
        self._marker = -1
        self._t0 = 0.0
        self.view: WebView | None = None
        """``render_mode="web"``: the :class:`~pccbullet.sim.webview.view.WebView` showing the world."""
        if render_mode == "web":
            from pccbullet.sim.webview.live import attach

            self.view = attach(self.world, "web")[0]

    # ----------------------------------------------------------------------------------------- helpers

    def _configs(self, x: FloatArray) -> list[PccConfig]:
        return [
            PccConfig(float(x[3 * i]), float(x[3 * i + 1]), float(x[3 * i + 2])) for i in range(len(x) // 3)
        ]

    def _tip(self) -> FloatArray:
        """Tip position in the head frame (m), ``(3,)``."""
        T = np.linalg.solve(self.robot.T_world_head, self.robot.tip_pose(self.limb))
        return np.asarray(T[:3, 3], dtype=float)

    def _obs(self, tip: FloatArray) -> np.ndarray:
        qd = np.clip(self._qd, -VELOCITY_BOUND, VELOCITY_BOUND)
        parts = [tip, self._target, self._target - tip, self._pcc, qd]
        return np.concatenate(parts).astype(np.float32)

    def _info(self, tip: FloatArray) -> dict[str, Any]:
        return {
            "distance_m": float(np.linalg.norm(self._target - tip)),
            "time_s": self.world.time - self._t0,
        }

    def target_pcc(self) -> list[PccConfig]:
        """The configuration whose tip is the target (for scripted policies and tests)."""
        return self._configs(self._target_pcc)

    # -------------------------------------------------------------------------------------------- API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        """Draw a new target configuration and a start near straight (from ``seed`` if given); returns the
        first observation and the info (``distance_m``, ``time_s``)."""
        super().reset(seed=seed)
        rng = self.np_random
        target = []
        start = []
        for s in self.segments:
            sign = rng.choice([-1.0, 1.0])
            target += [sign * rng.uniform(0.2, 0.8) * s.bend_max, rng.uniform(-math.pi, math.pi)]
            target.append(rng.uniform(s.length_min, s.length_max))
            start += [rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), s.length]
        self._target_pcc = np.array(target)
        self._target = (self._T_head_base @ limb_transform(self._configs(self._target_pcc)))[:3, 3]
        self._pcc = np.array(start)
        self.robot.set_pcc(self.limb, self._configs(self._pcc), mode="reset")
        self._q = self.robot.joints(self.limb)
        self._qd = np.zeros_like(self._q)
        self._t0 = self.world.time
        if self.render_mode is not None:
            self._place_marker()
        tip = self._tip()
        return self._obs(tip), self._info(tip)

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move the PCC parameters at ``action`` (in [-1, 1], scaled by the rates) for one control period;
        returns the observation, the reward (minus the tip's distance to the target, m), whether the tip is
        within the success radius, ``False`` (no truncation here) and the info."""
        a = np.clip(np.asarray(action, dtype=float).reshape(self.action_space.shape), -1.0, 1.0)
        self._pcc = np.clip(self._pcc + a * self._rates * self.control_dt, self._lo, self._hi)
        configs = self._configs(self._pcc)
        if self.world.mode == "dynamic":
            self.robot.set_pcc(self.limb, configs, mode="target")
            self.world.step(self.frame_skip)
            self._qd = self.robot.joint_velocities(self.limb)
        else:
            self.robot.set_pcc(self.limb, configs, mode="reset")
            self.world.step(self.frame_skip, contacts=False)
            q = self.robot.joints(self.limb)
            self._qd = (q - self._q) / self.control_dt
            self._q = q
        tip = self._tip()
        info = self._info(tip)
        reward = -info["distance_m"]
        return self._obs(tip), reward, info["distance_m"] < self.success_radius, False, info

    def _place_marker(self) -> None:
        cid = self.world.client
        position = (self.robot.T_world_head @ np.append(self._target, 1.0))[:3].tolist()
        if self._marker < 0:
            shape = pb.createVisualShape(
                pb.GEOM_SPHERE, radius=0.02, rgbaColor=[0.2, 0.8, 0.3, 1.0], physicsClientId=cid
            )
            self._marker = pb.createMultiBody(0.0, -1, shape, position, physicsClientId=cid)
        else:
            pb.resetBasePositionAndOrientation(self._marker, position, [0, 0, 0, 1], physicsClientId=cid)
        self.world.mark_moved()

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """``(240, 320, 3) uint8`` RGB image of the head, limb and target (``render_mode="rgb_array"``)."""
        if self.render_mode != "rgb_array":
            return None
        w, h = RENDER_SIZE
        cid = self.world.client
        head = self.robot.T_world_head[:3, 3]
        view = pb.computeViewMatrix(
            (head + [0.5, -0.6, 0.95]).tolist(),
            (head + [0.3, 0.0, 0.0]).tolist(),
            [0, 0, 1],
            physicsClientId=cid,
        )
        proj = pb.computeProjectionMatrixFOV(50.0, w / h, 0.05, 5.0, physicsClientId=cid)
        _, _, rgba, _, _ = pb.getCameraImage(
            w, h, viewMatrix=view, projectionMatrix=proj, renderer=pb.ER_TINY_RENDERER, physicsClientId=cid
        )
        return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3].copy()

    def close(self) -> None:
        """Close the environment's PyBullet world (and its web view)."""
        if self.view is not None:
            self.view.close()
        self.world.close()


def register_envs() -> None:
    """Register ``pccbullet/UrsulaReach-v0`` with Gymnasium (idempotent). This is the package's
    ``gymnasium.envs`` entry point."""
    # from the submodule: Gymnasium 0.29 calls this while ``gymnasium.envs`` is still being imported
    from gymnasium.envs.registration import register, registry

    if ENV_ID not in registry:
        register(
            id=ENV_ID, entry_point="pccbullet.sim.rl:UrsulaReachEnv", max_episode_steps=MAX_EPISODE_STEPS
        )


register_envs()  # importing the module registers the id
