"""Model-mediated teleoperation (MMT): a local model at 1 kHz, the soft robot behind a slow, lossy link.

**Slave (the remote robot)**: :class:`pccbullet.teleop.slave.Slave`, the dynamic soft squid in seawater; its
state reports (:mod:`pccbullet.teleop.mmt.packets`) carry the PCC fitted to its chain, its sensor's contact
force, the rock located by touch and the command it tracks.

**Master (the local model).** :class:`MmtSession` runs a kinematic world with the model of the robot
and the rock where the master believes it is. The operator's device drives
:class:`~pccbullet.teleop.mapping.OperatorMapping`; the model the IK solves for and the world shows is
``command + prediction + residual`` per segment (offsets on the bend vector,
:mod:`pccbullet.urdf_gen.pcc_fit`):

* prediction (``predict=True``): the Newton–Euler model of each limb driven by the command
  (:class:`~pccbullet.teleop.predict.SagPredictor`) predicts the sag; offset = model shape - command;
* residual: what the slave measured minus what the master predicted for the same command and time
  (a ring buffer of the master's predictions per tick, indexed by the command the slave reports and
  its age), blended in over ``blend_time`` with a cosine ramp so the operator feels no step. The haptic
  limb's residual is learned only in free space (no reported force): in contact the slave's shape
  differs by the contact itself, which the contact model renders.

**Contact.** The operator feels ``k_env d``: ``d`` the penetration of the model's sensor ball (where the
slave measures its force) into the modelled rock and seabed, from the model's pose (analytic),
``k_env`` learned from the slave's reports (``|F_slave| / depth`` at the same ring index). The
force-aware command keeps the target no deeper than ``command_force / k_env`` (README: "The squid demo").

All times are simulated: :meth:`MmtSession.run` steps everything in lockstep (bit-identical reruns) or
paced to the wall clock; ``slave="process"`` runs the slave in its own process
(:mod:`pccbullet.teleop.slave_process`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from pccbullet.sim.bullet import pb
from pccbullet.sim.loop import SPIN_WINDOW_S, Loop
from pccbullet.sim.world import World
from pccbullet.teleop.channel import Channel
from pccbullet.teleop.devices.base import InputDevice
from pccbullet.teleop.haptics import HapticParams, HapticRenderer, ball_penetration
from pccbullet.teleop.mapping import OperatorMapping
from pccbullet.teleop.mmt.config import K_ENV_RANGE, MmtConfig
from pccbullet.teleop.mmt.packets import (
    CMD_HEADER,
    STATE_HEADER,
    STATE_TAIL,
    decode_configs,
    decode_shape,
    encode_configs,
    encode_shape,
)
from pccbullet.teleop.predict import SagPredictor
from pccbullet.teleop.session_log import SessionLog
from pccbullet.teleop.slave import CONTACT_FORCE_N, Slave, add_environment, sensor_limb
from pccbullet.teleop.slave_process import SlaveProcess
from pccbullet.urdf_gen.errors import ConfigurationError
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform, rest_configs
from pccbullet.urdf_gen.pcc_fit import add_offset, bend_vectors, canonical_limb

__all__ = [  # the link's packets, the setup and the robot live in their own modules; here for callers
    "CMD_HEADER",
    "CONTACT_FORCE_N",
    "MmtConfig",
    "MmtSession",
    "SessionLog",
    "Slave",
    "add_environment",
    "decode_configs",
    "decode_shape",
    "encode_configs",
    "encode_shape",
]

K_RENDER_TAU = 0.3  # s, the rendered stiffness follows the learned one with this time constant
DEPTH_MAX = 0.04  # m, deepest the force-aware command lets the model into the modelled surface
IK_OFFSET_TAU = 0.2  # s, low-pass of the offsets the operator's IK solves through
IK_MAX_STEP = 1e-3  # rad or m per tick: the command moves at most ~1 rad/s or 1 m/s
SHOW_TOLERANCE = 1e-6  # rad or m: smaller changes of a limb's model are not shown (tip moves < 2 um)
SHOW_EVERY = 20  # ticks between two poses of the limbs that only show (50 Hz); the haptic one: every tick
RECOVER_TICKS = 1000  # deadlines met in a row (1 s) that clear a missed-deadline haptic fault
RING_TICKS = 8192  # master predictions kept for residuals (8.2 s at 1 kHz; > the link's round trip)


def _smooth(u: float) -> float:
    return 0.0 if u <= 0 else 1.0 if u >= 1 else 0.5 - 0.5 * math.cos(math.pi * u)


class MmtSession:
    """Master model + channels + slave, stepped together in simulated time at the master's 1 kHz.

    Args:
        cfg: the setup. robot: bundled name or TOML path. haptic: renderer settings.
        gui: open the master world in the PyBullet GUI.
        slave: ``"local"`` (in this process, lockstep) or ``"process"`` (its own process, real time).
        record_poses: with ``slave="process"``, the robot sends its limbs' joints at 10 Hz (the GIF).
    """

    def __init__(
        self,
        cfg: MmtConfig | None = None,
        *,
        robot: str = "ursula",
        haptic: HapticParams | None = None,
        gui: bool = False,
        slave: str = "local",
        record_poses: bool = False,
    ) -> None:
        from pccbullet.urdf_gen.spec_loader import load_robot

        if slave not in ("local", "process"):
            raise ConfigurationError(f"slave = {slave!r} is invalid; allowed: 'local', 'process'")
        self.cfg = cfg = cfg or MmtConfig()
        spec = load_robot(robot, sections=cfg.sections)
        self.spec = spec
        self.world = World(gui=gui, mode="kinematic")
        self.robot = self.world.load_robot(spec)
        seabed, self.rock = add_environment(self.world, cfg.rock_estimate, cfg.rock_radius, cfg.seabed_z)
        self.env = [self.rock, seabed]
        names = [limb.name for limb in spec.limbs]
        T_base = {n: self.robot.T_world_limbbase(n) for n in names}
        self.mapping = OperatorMapping(spec, T_world_base=T_base, ik_iters=1)
        self.mapping.target_filter = self._limit_target
        # the IK moves the command at most ~1 rad/s: it solves through the predicted sag, which relaxes
        # to a new command in ~0.3 s; faster steps chased it and made the command (and the slave) jitter
        self.mapping.ik_max_step = IK_MAX_STEP
        self.haptics = HapticRenderer(haptic)
        self.down = Channel(cfg.downlink, seed=cfg.seed)
        self.up = Channel(cfg.uplink, seed=cfg.seed + 1)
        if slave == "process":
            self.slave: Slave | SlaveProcess = SlaveProcess(robot, cfg, record_poses=record_poses)
        else:
            self.slave = Slave(spec, cfg)
        self.shape = [(limb.name, len(limb.segments)) for limb in spec.limbs]
        self._order = [n for n, _ in self.shape]
        self.predictor = (
            SagPredictor(spec, T_base, cfg.medium, self.world.gravity, every_tick=cfg.haptic_limb)
            if cfg.predict
            else None
        )
        self._seg_index: dict[str, slice] = {}
        k = 0
        for n, s in self.shape:
            self._seg_index[n] = slice(k, k + s)
            k += s
        # per segment of every limb, stacked (one array operation a tick for all limbs); the dicts hold
        # each limb's rows (views, updated in place)
        self._pred_all, self._res_all, self._ik_all, self._cmd_u_all = np.zeros((4, k, 3))
        self.pred_offset = {n: self._pred_all[sl] for n, sl in self._seg_index.items()}
        self.residual = {n: self._res_all[sl] for n, sl in self._seg_index.items()}
        self.ik_offset = {n: self._ik_all[sl] for n, sl in self._seg_index.items()}  # what the IK solves with
        self._cmd_u = {n: self._cmd_u_all[sl] for n, sl in self._seg_index.items()}
        # the residuals' blends, stacked like them: from A to B, ramp value per row, start per limb
        self._blend_a, self._blend_b, self._blend_rows = np.zeros((3, k, 3))
        self._blend_t0 = {n: -1.0 for n, _ in self.shape}
        # the limbs are posed in turns on ticks k % 4 == 3, when the predictor steps none of the other
        # limbs (with URSULA's four they take k % 4 = 0, 1, 2): no tick does both
        self._show_slot = {n: (4 * i + 3) % SHOW_EVERY for i, n in enumerate(self._order)}
        self._cmd_key: dict[str, tuple[PccConfig, ...]] = {}
        self._cmd_canon: dict[str, list[PccConfig]] = {}
        self._blend_u: dict[str, float] = {}
        self._blends_done = False
        self._rock_u = -1.0  # the rock blend's last ramp value
        self.rock_model = np.asarray(cfg.rock_estimate, dtype=float)
        self._rock_blend = (self.rock_model.copy(), self.rock_model.copy(), -1.0)
        self.rock_located = False
        self.k_env = cfg.k_env_prior
        self.k_render = cfg.k_env_prior  # the stiffness rendered now (N/m), following k_env
        haptic_limb, sensor = sensor_limb(spec, cfg.haptic_limb)
        self._r_tip = haptic_limb.segments[-1].radius_tip  # the sensor: a ball of the tip's radius
        self._sensor_offset = np.asarray(sensor.offset, dtype=float)  # in the tip frame
        self._T_haptic = T_base[cfg.haptic_limb]
        self._shown: dict[str, list[PccConfig]] = {}
        self.model: dict[str, list[PccConfig]] = {n: rest_configs(spec.limb(n).segments) for n in names}
        self._ring_u = np.zeros((RING_TICKS, k, 3))  # predicted model (no residual) per tick
        self._ring_depth = np.zeros(RING_TICKS)
        self._ring_rest = np.zeros(RING_TICKS, dtype=np.uint8)  # bit i: limb i's prediction at rest
        self._sent_tick: dict[int, int] = {0: 0}
        self._k = 0
        self._seq_down = 0
        self._seq_up = 0
        self.updates = 0
        self.over_budget = 0
        self.haptic_recoveries = 0  # missed-deadline faults cleared after the loop was back on time
        self._on_time = 0
        self.log = SessionLog(1)

    # ------------------------------------------------------------------ the model
    def _limit_target(self, limb: str, p: np.ndarray) -> np.ndarray:
        """Force-aware command: keep the haptic limb's target out of the modelled rock and seabed deeper
        than ``command_force / k_env``."""
        if limb != self.cfg.haptic_limb:
            return p
        depth_max = min(self.cfg.command_force / self.k_env, DEPTH_MAX)
        c = self.rock_model
        reach = self.cfg.rock_radius + self._r_tip - depth_max
        v = p - c
        dist = float(np.linalg.norm(v))
        if 1e-9 < dist < reach:
            p = c + v * (reach / dist)
        floor = self.cfg.seabed_z + self._r_tip - depth_max
        if p[2] < floor:
            p = p.copy()
            p[2] = floor
        return p

    def _blend(self, t: float) -> bool:
        """Advance the corrections' blends to time ``t``; whether one is under way."""
        if self._blends_done:  # every blend at its end: nothing changes until a report starts one
            return False
        active = False
        done = True
        T = self.cfg.blend_time
        changed = False
        for n, t0 in self._blend_t0.items():
            u = _smooth((t - t0) / T)
            if self._blend_u.get(n) != u:
                self._blend_rows[self._seg_index[n]] = u
                self._blend_u[n] = u
                changed = True
            active |= 0.0 < u < 1.0
            done &= u == 1.0
        if changed:  # every limb's residual a + (b - a) u in one go
            np.add(self._blend_a, (self._blend_b - self._blend_a) * self._blend_rows, out=self._res_all)
        a, b, t0 = self._rock_blend
        u = _smooth((t - t0) / T)
        if u != self._rock_u:
            self._rock_u = u
            rock = a + (b - a) * u
            if not np.array_equal(rock, self.rock_model):
                self.rock_model = rock
                pb.resetBasePositionAndOrientation(
                    self.rock, rock.tolist(), [0, 0, 0, 1], physicsClientId=self.world.client
                )
        self._blends_done = done and u == 1.0
        return active or 0.0 < u < 1.0

    def _on_state(self, payload: bytes, t: float) -> None:
        n_body = 6 * len(self._res_all)  # 6 bytes a segment
        if len(payload) != STATE_HEADER.size + n_body + STATE_TAIL.size:
            return
        version, kind, seq, _, cmd_seq, age, settled = STATE_HEADER.unpack_from(payload)
        if version != 1 or kind != 2 or seq <= self._seq_up:
            return
        self._seq_up = seq
        self.updates += 1
        measured = decode_shape(payload[STATE_HEADER.size : STATE_HEADER.size + n_body], self.shape)
        tail = np.array(STATE_TAIL.unpack(payload[-STATE_TAIL.size :]), dtype=float)
        force, rock = tail[:3], tail[3:6]
        f = float(np.linalg.norm(force))
        contact = f > CONTACT_FORCE_N
        tick = self._sent_tick.get(cmd_seq)
        idx = None if tick is None else tick + int(round(age / self.world.dt))
        if idx is not None and not (self._k - RING_TICKS < idx <= self._k):
            idx = None
        if idx is not None:
            ring = self._ring_u[idx % RING_TICKS]
            rest = int(self._ring_rest[idx % RING_TICKS])
            for i, (n, _) in enumerate(self.shape):
                if not (settled >> i & 1 and rest >> i & 1):
                    continue  # learned from steady states only: a swinging limb is not a model error
                if n == self.cfg.haptic_limb and (contact or self._ring_depth[idx % RING_TICKS] > 0):
                    continue  # in contact the shape differs by the contact itself: learned in free space
                new = measured[n] - ring[self._seg_index[n]]
                sl = self._seg_index[n]
                if not np.allclose(new, self._blend_b[sl], atol=1e-4):
                    self._blend_a[sl], self._blend_b[sl], self._blend_t0[n] = self.residual[n], new, t
                    self._blend_u.pop(n, None)
                    self._blends_done = False
            depth = float(self._ring_depth[idx % RING_TICKS])
            if contact and depth > 5e-4:
                k_new = f / depth
                k = self.k_env + 0.5 * (k_new - self.k_env)
                self.k_env = min(max(k, K_ENV_RANGE[0]), K_ENV_RANGE[1])
        if contact and np.isfinite(rock).all() and not np.allclose(rock, self._rock_blend[1], atol=1e-4):
            self._rock_blend = (self.rock_model.copy(), rock, t)
            self._rock_u = -1.0
            self._blends_done = False
            self.rock_located = True

    def _update_model(self, cmd: dict[str, list[PccConfig]]) -> None:
        """Predict the slave's shape for the new command and pose the master world's limbs.

        The haptic limb's model is updated every tick (its contact is rendered from it, analytically);
        the limbs are posed in the master world, which only shows them, in turns every ``SHOW_EVERY``
        ticks."""
        k, dt = self._k, self.world.dt
        for name in self._order:
            key = tuple(cmd[name])
            if self._cmd_key.get(name) != key:  # canonical command and its bend vectors, once a change
                self._cmd_key[name] = key
                self._cmd_canon[name] = canonical_limb(cmd[name])
                self._cmd_u[name][:] = bend_vectors(self._cmd_canon[name])
        if self.predictor is not None:
            for name in self._order:
                u = self.predictor.update(name, cmd[name], k, dt)
                if u is not None:
                    self.pred_offset[name][:] = u - self._cmd_u[name]
        # the IK solves through the offsets low-passed (IK_OFFSET_TAU): the fixed point command -> static
        # sag -> command, under-relaxed (solved offline it converged by a factor ~0.55-0.8 an iteration
        # for the palpation arm above the rock). Through the live prediction every tick, its motion fed
        # back into the command and the loop did not settle.
        offsets = self._pred_all + self._res_all
        self._ik_all += (dt / IK_OFFSET_TAU) * (offsets - self._ik_all)
        haptic = self.cfg.haptic_limb
        for name in self._order:
            show = k % SHOW_EVERY == self._show_slot[name]  # the limbs take turns: one reset a tick
            if name != haptic and not show:
                continue
            offset = offsets[self._seg_index[name]]
            model = [add_offset(c, o) for c, o in zip(self._cmd_canon[name], offset, strict=True)]
            self.model[name] = model
            if not show:
                continue
            shown = self._shown.get(name)
            if (
                shown is None
                or max(
                    max(abs(a.bend - b.bend), abs(a.plane - b.plane), abs(a.length - b.length))
                    for a, b in zip(model, shown, strict=True)
                )
                > SHOW_TOLERANCE
            ):  # a joint reset costs ~50 us: not for sub-micrometre changes
                self.robot.set_joints(name, self.robot.pcc_joints(name, model, check_limits=False))
                self._shown[name] = model
        rest = 0
        for i, name in enumerate(self._order):
            if self.predictor is None or self.predictor.settled(name):
                rest |= 1 << i
        self._ring_rest[k % RING_TICKS] = rest
        # the prediction (no residual) as bend vectors: command + offset
        np.add(self._cmd_u_all, self._pred_all, out=self._ring_u[k % RING_TICKS])

    # ------------------------------------------------------------------ the tick
    def tick(self, device: InputDevice, *, deadline_met: bool = True) -> np.ndarray:
        """One 1 ms master tick (and the slave's and the channels'); returns the device force ``(3,)`` (N)."""
        w0 = time.perf_counter()
        t, dt, cfg = self.world.time, self.world.dt, self.cfg
        sample = device.read(t)
        blending = self._blend(t)
        cmd = self.mapping.update(sample, dt, self.ik_offset)
        self._update_model(cmd)
        self.world.step(contacts=False)  # the master world only shows: no contacts in it
        # the contact rendered: the palpation sensor's ball (the link the slave measures its force on,
        # and the haptic limb's deepest point into the rock in every tick of the scripted session)
        # against the modelled rock and seabed, at the model's pose this tick
        T_tip = self._T_haptic @ limb_transform(self.model[cfg.haptic_limb])
        tip = T_tip[:3, 3]
        sensor = T_tip[:3, :3] @ self._sensor_offset + tip
        d = ball_penetration(sensor, self._r_tip, self.rock_model, cfg.rock_radius, cfg.seabed_z)
        depth = float(np.linalg.norm(d))
        self._ring_depth[self._k % RING_TICKS] = depth
        # the coupling renders k d, k following the learned k_env smoothly (no force step when a report
        # changes it); the penetration is scaled to the renderer's stiffness
        self.k_render += (dt / K_RENDER_TAU) * (self.k_env - self.k_render)
        scale = self.k_render / self.haptics.params.stiffness
        force = self.haptics.tick(d * scale, deadline_met=deadline_met, device_ok=sample.ok)
        self._recover_deadline_fault(deadline_met)
        device.send_force(force)
        if self._k % max(1, round(1.0 / (cfg.cmd_rate * dt))) == 0:
            self._seq_down += 1
            self._sent_tick[self._seq_down] = self._k
            self._sent_tick.pop(self._seq_down - 2 * RING_TICKS, None)
            self.down.send(t, CMD_HEADER.pack(1, 1, self._seq_down, t) + encode_configs(cmd, self._order))
        if time.perf_counter() - w0 > dt:
            self.over_budget += 1
        for _, p in self.down.deliver(t):
            self.slave.receive(p)
        self.slave.tick(dt)  # in its own process: collects what the robot sent
        if isinstance(self.slave, Slave):
            if self._k % max(1, round(1.0 / (cfg.state_rate * dt))) == 0:
                self.up.send(t, self.slave.state_packet(self._k + 1, t))
        else:
            for packet in self.slave.take_states():
                self.up.send(t, packet)
        for _, p in self.up.deliver(t):
            self._on_state(p, t)
        if self.log.due(self._k):
            self.log.add(
                t=t,
                tip_m=tip,
                tip_s=self.slave.tip(),
                f_m=force,
                f_s=self.slave.force,
                blending=blending,
                depth_m=depth,
                k_env=self.k_env,
            )
        self._k += 1
        return force

    def run(
        self,
        device: InputDevice,
        duration: float,
        *,
        realtime: bool = False,
        on_visual: Callable[[int, float], None] | None = None,
        visual_every: int = 20,
        spin_window: float = SPIN_WINDOW_S,
        catch_sigint: bool = False,
        stop: Callable[[], bool] | None = None,
    ) -> dict[str, float]:
        """Tick for ``duration`` s on a :class:`pccbullet.sim.loop.Loop`; ``on_visual(frame, t)`` every
        ``visual_every`` ticks. Returns the loop statistics (``real_time_factor``, p50/p99 tick, ...).

        ``catch_sigint``: Ctrl-C ends the run cleanly (the statistics say ``interrupted``)."""
        if not spin_window >= 0:  # Loop checks it too, but only after the session's log was replaced
            raise ConfigurationError(f"spin_window = {spin_window!r} s is invalid; allowed: >= 0")
        if not (duration > 0 and math.isfinite(duration)):
            raise ConfigurationError(f"duration = {duration!r} s is invalid; allowed: a finite number > 0")
        self.log = SessionLog(int(round(duration / self.world.dt)))
        frames = [0]

        def visual(t: float) -> None:
            if on_visual is not None:
                on_visual(frames[0], t)
            frames[0] += 1

        loop = Loop(
            self.world,
            visual_rate=1.0 / (visual_every * self.world.dt),
            realtime=realtime,
            on_visual=visual,
            spin_window=spin_window,
            step=lambda: self._tick_none(device, loop),
            stop=stop,
        )
        if isinstance(self.slave, SlaveProcess):
            self.slave.start()
        stats: dict[str, object] = dict(loop.run(duration, catch_sigint=catch_sigint).as_dict())
        stats["deadline_misses"] = stats["overruns"] if realtime else 0
        stats["ticks_over_budget"] = self.over_budget
        if isinstance(self.slave, SlaveProcess):  # the robot's own loop, in its process
            stats["slave"] = self.slave.close()
        return stats  # type: ignore[return-value]

    def _recover_deadline_fault(self, deadline_met: bool) -> None:
        """A missed-deadline fault (latched by the renderer: 0 N from then on) is cleared once the loop
        has met :data:`RECOVER_TICKS` deadlines in a row; the force then ramps back in (the renderer's
        0.5 s ramp). Faults of other kinds (a bad penetration) stay latched."""
        fault = self.haptics.fault
        if fault is None or not fault.startswith("missed deadlines"):
            self._on_time = 0
            return
        self._on_time = self._on_time + 1 if deadline_met else 0
        if self._on_time >= RECOVER_TICKS:
            self.haptics.reset()
            self.haptic_recoveries += 1
            self._on_time = 0

    def _tick_none(self, device: InputDevice, loop: Loop) -> None:
        # a missed deadline for the renderer: a tick that ended > 1 ms late with the loop losing ground;
        # the ticks catching up after a stall of a few ms (the VM preempts the loop for ~4 ms about
        # once a second) deliver their forces within the stall's aftermath and are not each a miss
        self.tick(device, deadline_met=not loop.losing_ground)

    def metrics(self) -> dict[str, float]:
        """Tip and force errors, forces, contact agreement, traffic (see the README's metrics table)."""
        from pccbullet.teleop.mmt.metrics import session_metrics

        return session_metrics(self)

    def close(self) -> None:
        """Close both worlds."""
        self.slave.close()
        self.world.close()

    def __enter__(self) -> MmtSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
