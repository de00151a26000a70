"""Model-mediated teleoperation (MMT): a local replica at 1 kHz, a remote slave behind a slow link.

The master runs a :class:`~sim.world.World` with the PCC model and an environment model (seabed and a
rock whose position it knows only approximately). The operator's device drives
:class:`~teleop.mapping.OperatorMapping`; the haptic force comes from the *local* model's contacts
(:class:`~teleop.haptics.HapticRenderer`), so it has no delay. Commands (absolute, quantized PCC per
segment, ``cmd_rate`` Hz) go down a :class:`~teleop.channel.Channel`; the simulated slave (its own World,
its own "true" calibration and rock) tracks them at bounded rates and sends sparse state back
(``state_rate`` Hz): per-segment residuals measured - setpoint, its force sensor, the rock position
it located by touching it (NaN before the first contact) and its palpation tip. The master blends each
correction in over ``blend_time`` (>= 100 ms) with a cosine ramp, so the operator feels no force
step. All times are simulated; the loop can also be paced to the wall clock (``realtime``).
"""

from __future__ import annotations

import math
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sim.bullet import pb
from sim.environment import add_seabed, add_sphere
from sim.loop import SPIN_WINDOW_S, Loop
from sim.world import World
from teleop.channel import Channel, LinkSpec, acoustic_link
from teleop.devices.base import InputDevice
from teleop.haptics import HapticParams, HapticRenderer, penetration
from teleop.mapping import OperatorMapping, apply_offset
from urdf_gen.errors import ConfigurationError
from urdf_gen.pcc import PccConfig
from urdf_gen.specs import RobotSpec

CMD_HEADER = struct.Struct("<BBId")  # version, type, seq, send time (s): 14 bytes
STATE_HEADER = struct.Struct("<BBIdI")  # version, type, seq, send time, last command seq: 18 bytes
STATE_TAIL = struct.Struct("<9f")  # force (N), rock position (m), palpation tip (m)
SCALES = np.array([1e-4, 2e-4, 1e-5])  # quantization of bend (rad), plane (rad), length (m)


def encode_configs(configs: dict[str, list[PccConfig]], order: list[str], offset: bool = False) -> bytes:
    """Per-segment (bend, plane, length) as int16/int16/uint16 (or int16 for offsets), limbs in ``order``."""
    vals = np.array([[c.bend, c.plane, c.length] for n in order for c in configs[n]]) / SCALES
    q = np.rint(vals)
    lim = np.array([32767, 32767, 32767 if offset else 65535])
    if (np.abs(q) > lim).any() or (not offset and (q[:, 2] < 0).any()):
        raise ConfigurationError(
            f"configuration {vals * SCALES} cannot be encoded; allowed: |bend| < 3.27 rad"
        )
    fmt = "<" + ("hhh" if offset else "hhH") * len(q)
    return struct.pack(fmt, *q.astype(int).ravel())


def decode_configs(data: bytes, shape: list[tuple[str, int]], offset: bool = False) -> dict[str, np.ndarray]:
    """Inverse of :func:`encode_configs`: limb -> ``(S, 3)`` array (bend, plane, length)."""
    n = sum(s for _, s in shape)
    vals = np.array(struct.unpack("<" + ("hhh" if offset else "hhH") * n, data), dtype=float).reshape(n, 3)
    vals *= SCALES
    out, k = {}, 0
    for name, s in shape:
        out[name] = vals[k : k + s]
        k += s
    return out


def add_environment(
    world: World, rock: tuple[float, float, float], radius: float, seabed_z: float
) -> tuple[int, int]:
    """A seabed plane at ``seabed_z`` (m) and a rock sphere; returns their body ids."""
    return add_seabed(world, seabed_z, half_extent=2.0), add_sphere(world, rock, radius)


def _smooth(u: float) -> float:
    return 0.0 if u <= 0 else 1.0 if u >= 1 else 0.5 - 0.5 * math.cos(math.pi * u)


@dataclass(frozen=True, slots=True)
class MmtConfig:
    """Master/slave setup (SI units).

    Attributes:
        downlink / uplink: the two directions of the link.
        cmd_rate / state_rate: packets per second down / up (Hz).
        blend_time: duration of a correction blend (s), >= 0.1.
        rock_true / rock_estimate: rock centre at the slave / in the master's model (m, world).
        rock_radius: (m). seabed_z: (m). env_stiffness: slave's contact stiffness for its force sensor (N/m).
        calibration: limb -> per-segment (d bend, d plane, d length) the slave really shows vs its setpoint.
        slave_rates: slave tracking rates: bend (rad/s), plane (rad/s), length (m/s).
        haptic_limb: limb whose contacts are rendered. sections: N override for both worlds (speed).
        seed: seed of the channels.
    """

    downlink: LinkSpec = field(default_factory=acoustic_link)
    uplink: LinkSpec = field(default_factory=acoustic_link)
    cmd_rate: float = 10.0
    state_rate: float = 5.0
    blend_time: float = 0.2
    rock_true: tuple[float, float, float] = (0.45, 0.03, -0.54)
    rock_estimate: tuple[float, float, float] = (0.47, 0.02, -0.545)
    rock_radius: float = 0.06
    seabed_z: float = -0.6
    env_stiffness: float = 400.0
    calibration: dict[str, tuple[tuple[float, float, float], ...]] = field(
        default_factory=lambda: {"palpation": ((0.03, 0.0, -0.002), (-0.02, 0.01, 0.0))}
    )
    slave_rates: tuple[float, float, float] = (1.0, 2.0, 0.05)
    haptic_limb: str = "palpation"
    sections: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.blend_time < 0.1 or self.cmd_rate <= 0 or self.state_rate <= 0:
            raise ConfigurationError(
                f"blend_time = {self.blend_time!r} s, cmd_rate = {self.cmd_rate!r} Hz, state_rate = "
                f"{self.state_rate!r} Hz are invalid; allowed: blend_time >= 0.1 s, rates > 0"
            )


class Slave:
    """The remote robot: its own World, true rock and calibration; tracks commands at bounded rates."""

    def __init__(self, spec: RobotSpec, cfg: MmtConfig) -> None:
        self.cfg = cfg
        self.world = World(mode="kinematic")
        self.robot = self.world.load_robot(spec)
        seabed, self.rock = add_environment(self.world, cfg.rock_true, cfg.rock_radius, cfg.seabed_z)
        self.env = [self.rock, seabed]
        self.shape = [(limb.name, len(limb.segments)) for limb in spec.limbs]
        self.setpoint = {
            n: np.array([[0.0, 0.0, seg.length] for seg in spec.limb(n).segments]) for n, _ in self.shape
        }
        self.target = {n: v.copy() for n, v in self.setpoint.items()}
        self._settled: set[str] = set()  # limbs posed at their target: nothing to do until a new command
        self.cmd_seq = 0
        self.force = np.zeros(3)
        self.measured: dict[str, list[PccConfig]] = {}

    def receive(self, payload: bytes) -> None:
        """Accept a command packet if it is newer than the last one."""
        version, kind, seq, _ = CMD_HEADER.unpack_from(payload)
        if version != 1 or kind != 1 or seq <= self.cmd_seq:
            return
        self.cmd_seq = seq
        self.target = decode_configs(payload[CMD_HEADER.size :], self.shape)
        self._settled.clear()

    def tick(self, dt: float) -> None:
        """Track the target at bounded rates, pose the arms (setpoint + calibration), read the sensor."""
        rates = np.array(self.cfg.slave_rates) * dt
        spec = self.robot.spec
        for name, _ in self.shape:
            if name in self._settled:  # its setpoint, pose and measurement stay as they are
                continue
            sp = self.setpoint[name]
            sp += np.clip(self.target[name] - sp, -rates, rates)
            cal = np.asarray(self.cfg.calibration.get(name, np.zeros_like(sp)))
            configs = [PccConfig(*row) for row in sp]
            meas = apply_offset(configs, cal, spec.limb(name))
            if meas != self.measured.get(name):
                self.robot.set_pcc(name, meas)
                self.measured[name] = meas
            if np.array_equal(sp, self.target[name]):
                self._settled.add(name)
        self.world.step(contacts=False)  # penetration() asks for its own bodies
        body = self.robot.bodies[self.cfg.haptic_limb]
        self.force = self.cfg.env_stiffness * penetration(self.world.client, body, self.env)

    def state_packet(self, seq: int, t: float) -> bytes:
        """Residuals (measured - setpoint), force sensor, rock position and palpation tip."""
        res = {
            n: [
                PccConfig(*(np.array([m.bend, m.plane, m.length]) - s))
                for m, s in zip(self.measured[n], self.setpoint[n], strict=True)
            ]
            for n, _ in self.shape
        }
        tip = self.robot.tip_pose(self.cfg.haptic_limb)[:3, 3]
        rock = self.cfg.rock_true if self.force.any() else (math.nan,) * 3  # located by touching it
        tail = STATE_TAIL.pack(*self.force, *rock, *tip)
        return (
            STATE_HEADER.pack(1, 2, seq, t, self.cmd_seq)
            + encode_configs(res, [n for n, _ in self.shape], offset=True)
            + tail
        )

    def close(self) -> None:
        """Disconnect the slave world."""
        self.world.close()


class MmtSession:
    """Master replica + channels + slave, stepped together in simulated time at the master's 1 kHz.

    Args:
        cfg: the setup. robot: bundled name or TOML path. haptic: renderer settings.
        gui: open the master world in the PyBullet GUI.
    """

    def __init__(
        self,
        cfg: MmtConfig | None = None,
        *,
        robot: str = "ursula",
        haptic: HapticParams | None = None,
        gui: bool = False,
    ) -> None:
        from urdf_gen.spec_loader import load_robot

        self.cfg = cfg = cfg or MmtConfig()
        spec = load_robot(robot, sections=cfg.sections)
        self.world = World(gui=gui, mode="kinematic")
        self.robot = self.world.load_robot(spec)
        seabed, self.rock = add_environment(self.world, cfg.rock_estimate, cfg.rock_radius, cfg.seabed_z)
        self.env = [self.rock, seabed]
        names = [limb.name for limb in spec.limbs]
        self.mapping = OperatorMapping(
            spec, T_world_base={n: self.robot.T_world_limbbase(n) for n in names}, ik_iters=1
        )
        self.haptics = HapticRenderer(haptic)
        self.down = Channel(cfg.downlink, seed=cfg.seed)
        self.up = Channel(cfg.uplink, seed=cfg.seed + 1)
        self.slave = Slave(spec, cfg)
        self.shape = self.slave.shape
        self.offsets = {n: np.zeros((s, 3)) for n, s in self.shape}
        self._offset_blend = {n: (v.copy(), v.copy(), -1.0) for n, v in self.offsets.items()}
        self._blend_u: dict[str, float] = {}  # limb -> blend weight its offsets were last computed at
        self.rock_model = np.asarray(cfg.rock_estimate, dtype=float)
        self._rock_blend = (self.rock_model.copy(), self.rock_model.copy(), -1.0)
        self._shown: dict[str, list[PccConfig]] = {}
        self._k = 0
        self._seq_down = 0
        self._seq_up = 0
        self.updates = 0
        self.over_budget = 0
        self.deadline_misses = 0
        self.log: dict[str, list] = {k: [] for k in ("t", "tip_m", "tip_s", "f_m", "f_s", "blending")}

    def _blend(self, t: float) -> bool:
        active = False
        T = self.cfg.blend_time
        for n, (a, b, t0) in self._offset_blend.items():
            u = _smooth((t - t0) / T)
            if self._blend_u.get(n) != u:  # same blend, same weight: the same offsets
                self.offsets[n] = a + (b - a) * u
                self._blend_u[n] = u
            active |= 0.0 < u < 1.0
        a, b, t0 = self._rock_blend
        u = _smooth((t - t0) / T)
        rock = a + (b - a) * u
        if not np.array_equal(rock, self.rock_model):
            self.rock_model = rock
            pb.resetBasePositionAndOrientation(
                self.rock, rock.tolist(), [0, 0, 0, 1], physicsClientId=self.world.client
            )
            self.world.mark_moved()
        return active or 0.0 < u < 1.0

    def _on_state(self, payload: bytes, t: float) -> None:
        if len(payload) < STATE_HEADER.size + STATE_TAIL.size:
            return
        version, kind, seq, _, _ = STATE_HEADER.unpack_from(payload)
        if version != 1 or kind != 2 or seq <= self._seq_up:
            return
        self._seq_up = seq
        self.updates += 1
        res = decode_configs(payload[STATE_HEADER.size : -STATE_TAIL.size], self.shape, offset=True)
        tail = STATE_TAIL.unpack(payload[-STATE_TAIL.size :])
        for n, new in res.items():
            if not np.allclose(new, self._offset_blend[n][1]):
                self._offset_blend[n] = (self.offsets[n].copy(), new, t)
                self._blend_u.pop(n, None)
        rock = np.array(tail[3:6], dtype=float)
        if np.isfinite(rock).all() and not np.allclose(rock, self._rock_blend[1], atol=1e-6):
            self._rock_blend = (self.rock_model.copy(), rock, t)

    def tick(self, device: InputDevice, *, deadline_met: bool = True) -> np.ndarray:
        """One 1 ms master tick (and the slave's and the channels'); returns the device force ``(3,)`` (N)."""
        w0 = time.perf_counter()
        t, dt, cfg = self.world.time, self.world.dt, self.cfg
        sample = device.read(t)
        blending = self._blend(t)
        cmd = self.mapping.update(sample, dt, self.offsets)
        for name, configs in self.mapping.model(self.offsets).items():
            if configs != self._shown.get(name):
                self.robot.set_pcc(name, configs)
                self._shown[name] = configs
        self.world.step(contacts=False)  # penetration() asks for its own bodies
        d = penetration(self.world.client, self.robot.bodies[cfg.haptic_limb], self.env)
        force = self.haptics.tick(d, deadline_met=deadline_met, device_ok=sample.ok)
        device.send_force(force)
        if self._k % max(1, round(1.0 / (cfg.cmd_rate * dt))) == 0:
            self._seq_down += 1
            self.down.send(
                t, CMD_HEADER.pack(1, 1, self._seq_down, t) + encode_configs(cmd, [n for n, _ in self.shape])
            )
        if time.perf_counter() - w0 > dt:
            self.over_budget += 1
        for _, p in self.down.deliver(t):
            self.slave.receive(p)
        self.slave.tick(dt)
        if self._k % max(1, round(1.0 / (cfg.state_rate * dt))) == 0:
            self.up.send(t, self.slave.state_packet(self._k + 1, t))
        for _, p in self.up.deliver(t):
            self._on_state(p, t)
        lg = self.log
        lg["t"].append(t)
        lg["tip_m"].append(self.robot.tip_pose(cfg.haptic_limb)[:3, 3])
        lg["tip_s"].append(self.slave.robot.tip_pose(cfg.haptic_limb)[:3, 3])
        lg["f_m"].append(force.copy())
        lg["f_s"].append(self.slave.force.copy())
        lg["blending"].append(blending)
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
    ) -> dict[str, float]:
        """Tick for ``duration`` s on a :class:`sim.loop.Loop` (pacing, statistics, the garbage collector
        kept off the objects alive at the start, waits that spin their last ``spin_window`` s; 0 sleeps
        the whole wait, leaving the core to other processes such as a GUI viewer). Calls
        ``on_visual(frame, t)`` every ``visual_every`` ticks. ``catch_sigint``: Ctrl-C ends the run
        cleanly after the current tick (the statistics say ``interrupted``). Returns the loop statistics."""
        if not spin_window >= 0:
            raise ConfigurationError(f"spin_window = {spin_window!r} s is invalid; allowed: >= 0")
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
            step=lambda: self.tick(device, deadline_met=loop.deadline_met),
        )
        stats = loop.run(duration, catch_sigint=catch_sigint).as_dict()
        self.deadline_misses += int(stats["overruns"]) if realtime else 0
        stats["overruns"] = self.deadline_misses if realtime else self.over_budget
        return stats

    def metrics(self) -> dict[str, float]:
        """RMS tip and force errors (master shifted by the nominal one-way delay), force steps, traffic."""
        lg = {k: np.asarray(v) for k, v in self.log.items()}
        n = len(lg["t"])
        duration = max(n * self.world.dt, self.world.dt)
        lag = int(
            round(self.cfg.downlink.expected_delay(CMD_HEADER.size + 6 * len(self.shape)) / self.world.dt)
        )
        lag = min(lag, max(n - 1, 0))
        tip_err = np.linalg.norm(lg["tip_m"][: n - lag] - lg["tip_s"][lag:], axis=1) if n else np.zeros(1)
        f_err = np.linalg.norm(lg["f_m"][: n - lag] - lg["f_s"][lag:], axis=1) if n else np.zeros(1)
        steps = np.linalg.norm(np.diff(lg["f_m"], axis=0), axis=1) if n > 1 else np.zeros(1)
        blend = lg["blending"][1:] if n > 1 else np.zeros(1, dtype=bool)
        return {
            "tip_error_rms_m": float(np.sqrt(np.mean(tip_err**2))),
            "tip_error_final_m": float(np.linalg.norm(lg["tip_m"][-1] - lg["tip_s"][-1])) if n else 0.0,
            "force_error_rms_n": float(np.sqrt(np.mean(f_err**2))),
            "max_force_n": float(np.linalg.norm(lg["f_m"], axis=1).max()) if n else 0.0,
            "max_force_step_n": float(steps.max()),
            "max_force_step_during_correction_n": float(steps[blend].max()) if blend.any() else 0.0,
            "down_packets_per_s": self.down.sent / duration,
            "down_bytes_per_s": self.down.bytes_sent / duration,
            "up_packets_per_s": self.up.sent / duration,
            "up_bytes_per_s": self.up.bytes_sent / duration,
            "down_loss_rate": self.down.loss_rate,
            "up_loss_rate": self.up.loss_rate,
            "mean_down_delay_s": float(np.mean(self.down.delays)) if self.down.delays else 0.0,
            "state_updates": self.updates,
            "deadline_misses": self.deadline_misses,
            "ticks_over_budget": self.over_budget,
        }

    def close(self) -> None:
        """Close both worlds."""
        self.slave.close()
        self.world.close()

    def __enter__(self) -> MmtSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
