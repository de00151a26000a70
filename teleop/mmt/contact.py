"""The contact the operator feels: the model's sensor ball against the modelled rock and seabed.

:class:`ContactModel` renders ``k_env d``. ``d`` is the penetration of the haptic limb's sensor ball (a
ball of the tip's radius where the robot's force sensor sits) into the modelled rock and seabed, from the
model's pose (analytic: :func:`~pccbullet.teleop.haptics.ball_penetration`, no PyBullet query). ``k_env``
is learned from the robot's reports: ``|F| / depth`` with the reported force and the depth the model had
at the tick the report answers, half-way each report, within
:data:`~pccbullet.teleop.mmt.config.K_ENV_RANGE`. The rendered stiffness follows ``k_env`` with the time
constant :data:`K_RENDER_TAU`, so a report never steps the force. The modelled rock moves to where the
robot located it by touch, blended over ``blend_time`` like the residuals
(:func:`~pccbullet.teleop.mmt.corrections.blend_ramp`). The force-aware command
(:meth:`ContactModel.limit_target`) keeps the haptic limb's target no deeper in the modelled surfaces than
``command_force / k_env``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pccbullet.teleop.mmt.config import K_ENV_RANGE, RING_TICKS, MmtConfig
from pccbullet.teleop.mmt.corrections import blend_ramp
from pccbullet.teleop.mmt.transport import StateReport
from pccbullet.teleop.penetration import ball_penetration
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.specs import RobotSpec

K_RENDER_TAU = 0.3  # s, the rendered stiffness follows the learned one with this time constant
DEPTH_MAX = 0.04  # m, deepest the force-aware command lets the model into the modelled surface
LEARN_DEPTH = 5e-4  # m, shallowest model depth a stiffness is learned at (|F| / depth)


class ContactModel:
    """The modelled rock and seabed, the haptic limb's sensor ball in them and the learned stiffness.

    Args:
        spec: the robot; its haptic limb (``cfg.haptic_limb``) must carry a force sensor.
        cfg: the setup (``rock_estimate``, ``rock_radius``, ``seabed_z``, ``k_env_prior``,
            ``command_force``, ``blend_time``).
        T_world_base: ``(4, 4) float``, the haptic limb's base frame in the world.
        on_rock_moved: called with the new centre ``(3,) float`` (m, world) whenever the modelled rock
            moves (e.g. to move the rock a world shows).

    Attributes:
        rock: the modelled rock centre ``(3,) float`` (m, world).
        rock_located: whether a report has located the rock.
        k_env: the learned contact stiffness (N/m). k_render: the stiffness rendered now (N/m).
        radius: the sensor ball's radius (m, the haptic limb's tip radius).
    """

    def __init__(
        self,
        spec: RobotSpec,
        cfg: MmtConfig,
        T_world_base: np.ndarray,
        on_rock_moved: Callable[[np.ndarray], None] | None = None,
    ) -> None:
        limb, sensor = cfg.sensor_limb(spec)
        self.cfg = cfg
        self.limb = limb.name
        self.radius = limb.segments[-1].radius_tip
        self._sensor_offset = np.asarray(sensor.offset, dtype=float)  # in the tip frame
        self._T_base = T_world_base
        self.rock = np.asarray(cfg.rock_estimate, dtype=float)
        self._rock_blend = (self.rock.copy(), self.rock.copy(), -1.0)  # from, to, start (s)
        self._rock_u = -1.0  # the rock blend's last ramp value
        self._rock_done = False
        self.rock_located = False
        self.k_env = cfg.k_env_prior
        self.k_render = cfg.k_env_prior
        self._depth = np.zeros(RING_TICKS)  # the sensor ball's depth per tick
        self._on_rock_moved = on_rock_moved

    def limit_target(self, limb: str, p: np.ndarray) -> np.ndarray:
        """Force-aware command (a :attr:`~pccbullet.teleop.mapping.OperatorMapping.target_filter`): the
        haptic limb's tip target ``p`` ``(3,)`` (m, world) moved out of the modelled rock and seabed to at
        most ``command_force / k_env`` deep (and :data:`DEPTH_MAX`); other limbs' targets unchanged."""
        if limb != self.limb:
            return p
        depth_max = min(self.cfg.command_force / self.k_env, DEPTH_MAX)
        c = self.rock
        reach = self.cfg.rock_radius + self.radius - depth_max
        v = p - c
        dist = float(np.linalg.norm(v))
        if 1e-9 < dist < reach:
            p = c + v * (reach / dist)
        floor = self.cfg.seabed_z + self.radius - depth_max
        if p[2] < floor:
            p = p.copy()
            p[2] = floor
        return p

    def penetration(self, configs: list[PccConfig]) -> tuple[np.ndarray, np.ndarray]:
        """The haptic limb posed as ``configs`` (per segment): its tip ``(3,)`` (m, world) and the sensor
        ball's penetration ``d`` ``(3,)`` (m, world) into the modelled rock and seabed, zero out of them
        (:func:`~pccbullet.teleop.haptics.ball_penetration`)."""
        T_tip = self._T_base @ limb_transform(configs)
        tip = T_tip[:3, 3]
        sensor = T_tip[:3, :3] @ self._sensor_offset + tip
        d = ball_penetration(sensor, self.radius, self.rock, self.cfg.rock_radius, self.cfg.seabed_z)
        return tip, d

    def record(self, k: int, d: np.ndarray) -> float:
        """Keep the depth ``|d|`` (m) of master tick ``k`` (the reports are matched to it); returns it."""
        depth = float(np.linalg.norm(d))
        self._depth[k % RING_TICKS] = depth
        return depth

    def depth_at(self, tick: int | None) -> float:
        """The depth (m) recorded at master tick ``tick`` (within the last
        :data:`~pccbullet.teleop.mmt.config.RING_TICKS`); 0 for ``None``."""
        return 0.0 if tick is None else float(self._depth[tick % RING_TICKS])

    def render_stiffness(self, dt: float) -> float:
        """One tick of ``dt`` (s): :attr:`k_render` follows :attr:`k_env`; returns it (N/m), the stiffness
        the haptic renderer is asked to render (:meth:`~pccbullet.teleop.haptics.HapticRenderer.tick`)."""
        self.k_render += (dt / K_RENDER_TAU) * (self.k_env - self.k_render)
        return self.k_render

    def advance(self, t: float) -> bool:
        """Move the modelled rock along its blend to time ``t`` (s); returns whether the blend is on."""
        if self._rock_done:  # at its end: nothing changes until a report starts one
            return False
        a, b, t0 = self._rock_blend
        u = blend_ramp((t - t0) / self.cfg.blend_time)
        if u != self._rock_u:
            self._rock_u = u
            rock = a + (b - a) * u
            if not np.array_equal(rock, self.rock):
                self.rock = rock
                if self._on_rock_moved is not None:
                    self._on_rock_moved(rock)
        self._rock_done = u == 1.0
        return 0.0 < u < 1.0

    def learn(self, report: StateReport, t: float) -> None:
        """Learn from a state report that arrived at time ``t`` (s): the stiffness from its force and the
        depth the model had at its tick; a blend of the modelled rock towards the rock it located."""
        contact = report.contact
        if report.tick is not None:
            depth = self.depth_at(report.tick)
            if contact and depth > LEARN_DEPTH:
                k_new = report.force_magnitude / depth
                k = self.k_env + 0.5 * (k_new - self.k_env)
                self.k_env = min(max(k, K_ENV_RANGE[0]), K_ENV_RANGE[1])
        rock = report.rock
        if contact and np.isfinite(rock).all() and not np.allclose(rock, self._rock_blend[1], atol=1e-4):
            self._rock_blend = (self.rock.copy(), rock, t)
            self._rock_u = -1.0
            self._rock_done = False
            self.rock_located = True
