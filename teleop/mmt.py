"""Model-mediated teleoperation (MMT): a local model at 1 kHz, the soft robot behind a slow, lossy link.

**Slave (the remote robot).** :class:`Slave` is the dynamic soft squid: its own :class:`~sim.world.World`
in dynamic mode, in seawater, with the seabed and the true rock. Commands from the link (absolute PCC per
segment, ``cmd_rate`` Hz) become the compliant limbs' spring targets (``set_pcc(..., mode="target")``),
moved towards each new command at bounded actuator rates; gravity, buoyancy, drag and contact make the
real shape differ from the command. Every ``1 / state_rate`` s it reports what a real robot could
measure: per segment, the PCC arc through the segment's end point (its chain's own link poses, the
fit of :mod:`urdf_gen.pcc_fit`), the palpation sensor's contact force (PyBullet's contact points on the
sensor link, low-passed at :data:`SENSOR_CUTOFF_HZ`), the rock centre located by touch (mean of
``tip - (R_rock + r_tip) F / |F|`` while touching: where a sphere of the known radius must be to push
back along the measured force) and which command it is tracking and for how long. A force above the
slave's own limit (``force_limit``) freezes the haptic limb's targets (a reflex a real robot has
on board); they follow the commands again once the force is below it.

**Master (the local model).** :class:`MmtSession` runs a kinematic world with the model of the robot
and the rock where the master believes it is. The operator's device drives
:class:`~teleop.mapping.OperatorMapping`; the model the IK solves for and the world shows is
``command + prediction + residual`` per segment (offsets on the bend vector, :mod:`urdf_gen.pcc_fit`):

* prediction (``predict=True``): the Newton–Euler model of each limb driven by the command
  (:class:`~teleop.predict.SagPredictor`) predicts the sag; offset = model shape - command;
* residual: what the slave measured minus what the master predicted for the same command and time
  (a ring buffer of the master's predictions per tick, indexed by the command the slave reports and
  its age), blended in over ``blend_time`` with a cosine ramp so the operator feels no step. The haptic
  limb's residual is learned only in free space (no reported force): in contact the slave's shape
  differs by the contact itself, which the contact model renders.

**Contact.** The operator feels ``k_env d`` (through :class:`~teleop.haptics.HapticRenderer`), with
``d`` the local model's penetration into the modelled rock and seabed and ``k_env`` the contact
stiffness learned from the slave: each report in contact gives ``|F_slave| / depth``, with the
master's depth taken at the same ring-buffer index, low-passed. The command is force-aware: the
operator's tip target is kept out of the modelled rock and seabed deeper than
``command_force / k_env``, so the steady force the slave is asked for stays at or below
``command_force`` (below the device's continuous limit); the slave's reflex bounds transients.

All times are simulated. :meth:`MmtSession.run` steps everything in lockstep (bit-identical reruns) or
paced to the wall clock (``realtime``); with ``slave="process"`` the slave runs in its own process
(:mod:`teleop.slave_process`), the link emulation staying on the master side.
"""

from __future__ import annotations

import math
import struct
import time
from collections.abc import Callable
from dataclasses import astuple, dataclass, field

import numpy as np

from sim.bullet import pb
from sim.environment import add_seabed, add_sphere, contact_forces
from sim.loop import SPIN_WINDOW_S, Loop
from sim.world import World
from teleop.channel import Channel, LinkSpec, acoustic_link
from teleop.devices.base import InputDevice
from teleop.haptics import HapticParams, HapticRenderer, penetration
from teleop.ik import clamp_config
from teleop.mapping import OperatorMapping
from teleop.predict import SagPredictor
from teleop.slave_process import SlaveProcess
from urdf_gen import naming
from urdf_gen.errors import ConfigurationError
from urdf_gen.pcc import PccConfig, rest_configs
from urdf_gen.pcc_fit import add_offset, bend_vector, canonical_limb, pcc_from_points
from urdf_gen.specs import RobotSpec

CMD_HEADER = struct.Struct("<BBId")  # version, type, seq, send time (s): 14 bytes
STATE_HEADER = struct.Struct("<BBIdIfB")  # version, type, seq, send time, command seq, its age (s),
# settled limbs (bit i: limb i's joints all slower than SETTLED_RATE): 23 bytes
STATE_TAIL = struct.Struct("<9f")  # force (N, world), rock centre (m, NaN until touched), haptic tip (m)
SCALES = np.array([1e-4, 2e-4, 1e-5])  # command quantization: bend (rad), plane (rad), length (m)
SHAPE_SCALES = np.array([2e-4, 2e-4, 1e-5])  # measured shape: bend vector x, y (rad), length (m)
SETTLED_RATE = 0.05  # rad/s or m/s: a limb whose joints are all slower than this is settled
SENSOR_CUTOFF_HZ = 30.0  # low-pass of the slave's force sensor (a strain-gauge sensor's bandwidth)
CONTACT_FORCE_N = 0.02  # |F| above which the slave reports contact (N)
K_ENV_RANGE = (1.0, 2000.0)  # N/m, bounds of the learned contact stiffness
K_RENDER_TAU = 0.3  # s, the rendered stiffness follows the learned one with this time constant
DEPTH_MAX = 0.04  # m, deepest the force-aware command lets the model into the modelled surface
LOG_ROWS = 120_000  # rows of the session log at most (bounded memory: longer sessions are decimated)
IK_OFFSET_TAU = 0.2  # s, low-pass of the offsets the operator's IK solves through
IK_MAX_STEP = 1e-3  # rad or m per tick: the command moves at most ~1 rad/s or 1 m/s
SHOW_TOLERANCE = 1e-6  # rad or m: smaller changes of a limb's model are not shown (tip moves < 2 um)
SHOW_EVERY = 20  # ticks between two poses of the limbs that only show (50 Hz); the haptic one: every tick
RING_TICKS = 8192  # master predictions kept for residuals (8.2 s at 1 kHz; > the link's round trip)


def encode_configs(configs: dict[str, list[PccConfig]], order: list[str]) -> bytes:
    """Per-segment (bend, plane, length) as int16/int16/uint16, limbs in ``order``."""
    vals = np.array([[c.bend, c.plane, c.length] for n in order for c in configs[n]]) / SCALES
    q = np.rint(vals)
    bad_length = (q[:, 2] < 0) | (q[:, 2] > 65535)
    if not np.isfinite(q).all() or (np.abs(q[:, :2]) > 32767).any() or bad_length.any():
        raise ConfigurationError(
            "a command cannot be encoded; allowed: |bend| <= 3.27 rad, |plane| <= 6.55 rad, "
            "0 <= length <= 0.655 m"
        )
    return struct.pack("<" + "hhH" * len(q), *q.astype(int).ravel())


def decode_configs(data: bytes, shape: list[tuple[str, int]]) -> dict[str, list[PccConfig]]:
    """Inverse of :func:`encode_configs`: limb -> per-segment configurations."""
    n = sum(s for _, s in shape)
    vals = np.array(struct.unpack("<" + "hhH" * n, data), dtype=float).reshape(n, 3) * SCALES
    out, k = {}, 0
    for name, s in shape:
        out[name] = [PccConfig(*map(float, row)) for row in vals[k : k + s]]
        k += s
    return out


def encode_shape(shapes: dict[str, list[PccConfig]], order: list[str]) -> bytes:
    """Measured shapes as bend vectors and lengths (int16, int16, uint16 per segment)."""
    vals = np.array([[*bend_vector(c), c.length] for n in order for c in shapes[n]]) / SHAPE_SCALES
    q = np.rint(np.nan_to_num(vals))
    q[:, :2] = np.clip(q[:, :2], -32767, 32767)
    q[:, 2] = np.clip(q[:, 2], 0, 65535)
    return struct.pack("<" + "hhH" * len(q), *q.astype(int).ravel())


def decode_shape(data: bytes, shape: list[tuple[str, int]]) -> dict[str, np.ndarray]:
    """Inverse of :func:`encode_shape`: limb -> ``(S, 3)`` (bend vector x, y (rad), length (m))."""
    n = sum(s for _, s in shape)
    vals = np.array(struct.unpack("<" + "hhH" * n, data), dtype=float).reshape(n, 3) * SHAPE_SCALES
    out, k = {}, 0
    for name, s in shape:
        out[name] = vals[k : k + s]
        k += s
    return out


def _as_u(configs: list[PccConfig]) -> np.ndarray:
    """``(S, 3)``: bend vector x, y (rad) and length (m) of each segment."""
    return np.array([[*bend_vector(c), c.length] for c in configs])


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
        rock_true / rock_estimate: rock centre at the slave / in the master's model before it is located
            (m, world). rock_radius: (m). seabed_z: (m).
        medium: the slave's water (``"seawater"``, ``"water"`` or ``"air"``); the prediction uses it too.
        slave_rates: the slave's actuator rates towards a new command: bend (rad/s), plane (rad/s),
            length (m/s).
        haptic_limb: the limb whose contacts are rendered and whose tip carries the force sensor.
        sections: N for both worlds (default the robot file's).
        predict: the master predicts the slave's sag with the Newton–Euler model.
        command_force: steady force (N) the force-aware command lets the operator ask for.
        force_limit: the slave's reflex threshold (N).
        k_env_prior: contact stiffness (N/m) rendered before the slave has reported a contact.
        seed: seed of the channels.
    """

    downlink: LinkSpec = field(default_factory=acoustic_link)
    uplink: LinkSpec = field(default_factory=acoustic_link)
    cmd_rate: float = 10.0
    state_rate: float = 5.0
    blend_time: float = 0.2
    rock_true: tuple[float, float, float] = (0.45, 0.06, -0.54)
    rock_estimate: tuple[float, float, float] = (0.47, 0.06, -0.545)
    rock_radius: float = 0.06
    seabed_z: float = -0.6
    medium: str = "seawater"
    slave_rates: tuple[float, float, float] = (1.0, 2.0, 0.05)
    haptic_limb: str = "palpation"
    sections: int | None = None
    predict: bool = True
    command_force: float = 0.6
    force_limit: float = 3.0
    k_env_prior: float = 20.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not (self.blend_time >= 0.1 and self.cmd_rate > 0 and self.state_rate > 0):
            raise ConfigurationError(
                f"blend_time = {self.blend_time!r} s, cmd_rate = {self.cmd_rate!r} Hz, state_rate = "
                f"{self.state_rate!r} Hz are invalid; allowed: blend_time >= 0.1 s, rates > 0"
            )
        if not (0 < self.command_force <= self.force_limit and math.isfinite(self.force_limit)):
            raise ConfigurationError(
                f"command_force = {self.command_force!r} N, force_limit = {self.force_limit!r} N are "
                "invalid; allowed: 0 < command_force <= force_limit, finite"
            )
        if not K_ENV_RANGE[0] <= self.k_env_prior <= K_ENV_RANGE[1]:
            raise ConfigurationError(
                f"k_env_prior = {self.k_env_prior!r} N/m is invalid; allowed: {K_ENV_RANGE[0]:g} to "
                f"{K_ENV_RANGE[1]:g} N/m"
            )


class Slave:
    """The remote robot: the dynamic soft squid in water with the seabed and the true rock."""

    def __init__(self, spec: RobotSpec, cfg: MmtConfig) -> None:
        self.cfg = cfg
        self.world = World(mode="dynamic", medium=cfg.medium)
        self.robot = self.world.load_robot(spec)
        seabed, self.rock = add_environment(self.world, cfg.rock_true, cfg.rock_radius, cfg.seabed_z)
        self.shape = [(limb.name, len(limb.segments)) for limb in spec.limbs]
        self.setpoint = {
            n: np.array([[c.bend, c.plane, c.length] for c in rest_configs(spec.limb(n).segments)])
            for n, _ in self.shape
        }
        self.target = {n: v.copy() for n, v in self.setpoint.items()}
        self._settled: set[str] = set()
        self.cmd_seq = 0
        self.cmd_time = 0.0  # when the command being tracked arrived (s)
        self.force = np.zeros(3)  # low-passed sensor force on the haptic limb, world frame (N)
        self.reflex = False
        self.reflex_ticks = 0
        limb = spec.limb(cfg.haptic_limb)
        if limb.payload is None or limb.payload.kind != "force_sensor":
            raise ConfigurationError(f"haptic limb '{limb.name}' carries no force sensor payload")
        self._sensor_body, self._sensor_link = self.robot._links[limb.payload.frame]
        self._r_tip = limb.segments[-1].radius_tip
        self._rock_sum = np.zeros(3)
        self._rock_n = 0
        self._alpha = 1.0 - math.exp(-2.0 * math.pi * SENSOR_CUTOFF_HZ * self.world.dt)
        self._ends = {n: [naming.segment_end_link(n, s) for s in range(1, k + 1)] for n, k in self.shape}

    @property
    def time(self) -> float:
        """The slave's simulated time (s)."""
        return self.world.time

    def receive(self, payload: bytes) -> None:
        """Accept a command packet if it is newer than the last one."""
        if len(payload) < CMD_HEADER.size:
            return
        version, kind, seq, _ = CMD_HEADER.unpack_from(payload)
        if version != 1 or kind != 1 or seq <= self.cmd_seq:
            return
        try:
            cmd = decode_configs(payload[CMD_HEADER.size :], self.shape)
        except struct.error:
            return
        self.cmd_seq = seq
        self.cmd_time = self.world.time
        spec = self.robot.spec
        self.target = {  # quantization may step over a limit by half a step: the robot clamps
            n: np.array(
                [astuple(clamp_config(c, seg)) for c, seg in zip(v, spec.limb(n).segments, strict=True)]
            )
            for n, v in cmd.items()
        }
        self._settled.clear()

    def tick(self, dt: float) -> None:
        """Move the spring targets towards the command at bounded rates, step the physics, read the sensor."""
        rates = np.array(self.cfg.slave_rates) * dt
        haptic = self.cfg.haptic_limb
        self.reflex = float(np.linalg.norm(self.force)) > self.cfg.force_limit
        self.reflex_ticks += self.reflex
        for name, _ in self.shape:
            if name in self._settled or (self.reflex and name == haptic):
                continue
            sp = self.setpoint[name]
            sp += np.clip(self.target[name] - sp, -rates, rates)
            self.robot.set_pcc(name, [PccConfig(*row) for row in sp], mode="target")
            if np.array_equal(sp, self.target[name]):
                self._settled.add(name)
        self.world.step()
        raw = contact_forces(self.world, self._sensor_body).get(self._sensor_link)
        self.force += self._alpha * ((np.zeros(3) if raw is None else raw) - self.force)
        f = float(np.linalg.norm(self.force))
        if f > CONTACT_FORCE_N:
            tip = self.robot.link_pose(naming.tip_link(haptic))[:3, 3]
            self._rock_sum += tip - (self.cfg.rock_radius + self._r_tip) * self.force / f
            self._rock_n += 1

    def measure(self) -> dict[str, list[PccConfig]]:
        """Per-limb, per-segment arcs through the chain's segment ends (limb base frames)."""
        out = {}
        for name, _ in self.shape:
            T_base = self.robot.T_world_limbbase(name)
            ends = np.array([self.robot.link_pose(link)[:3, 3] for link in self._ends[name]])
            out[name] = pcc_from_points((ends - T_base[:3, 3]) @ T_base[:3, :3])
        return out

    @property
    def rock_located(self) -> np.ndarray:
        """Mean rock centre found by touch ``(3,)`` (m, world), NaN before the first touch."""
        return self._rock_sum / self._rock_n if self._rock_n else np.full(3, np.nan)

    def tip(self) -> np.ndarray:
        """The haptic limb's tip ``(3,)`` (m, world)."""
        return self.robot.link_pose(naming.tip_link(self.cfg.haptic_limb))[:3, 3]

    def state_packet(self, seq: int, t: float) -> bytes:
        """Measured shapes, sensor force, located rock and tip, and the command being tracked."""
        age = self.world.time - self.cmd_time
        tail = STATE_TAIL.pack(*self.force, *self.rock_located, *self.tip())
        body = encode_shape(self.measure(), [n for n, _ in self.shape])
        return STATE_HEADER.pack(1, 2, seq, t, self.cmd_seq, age, self.settled_mask()) + body + tail

    def settled_mask(self) -> int:
        """Bit i set: limb i's joints all move slower than :data:`SETTLED_RATE`."""
        mask = 0
        for i, (name, _) in enumerate(self.shape):
            idx = self.robot.joint_indices(name).tolist()
            states = pb.getJointStates(self.robot.bodies[name], idx, physicsClientId=self.world.client)
            if max(abs(st[1]) for st in states) < SETTLED_RATE:
                mask |= 1 << i
        return mask

    def close(self) -> None:
        """Disconnect the slave world."""
        self.world.close()


class SessionLog:
    """The session's time series in preallocated arrays: at most :data:`LOG_ROWS` rows, a row every
    ``every`` ticks (bounded memory however long the session; 1 kHz up to 120 s)."""

    COLUMNS = {
        "t": 1, "tip_m": 3, "tip_s": 3, "f_m": 3, "f_s": 3, "blending": 1, "depth_m": 1, "k_env": 1,
        "tip_pred": 3,
    }  # fmt: skip

    def __init__(self, ticks: int) -> None:
        self.every = max(1, math.ceil(ticks / LOG_ROWS))
        rows = max(1, math.ceil(ticks / self.every))
        self.data = {k: np.full((rows, w), np.nan) for k, w in self.COLUMNS.items()}
        self.n = 0

    def due(self, k: int) -> bool:
        """Whether tick ``k`` is logged."""
        return k % self.every == 0 and self.n < len(self.data["t"])

    def add(self, **row: object) -> None:
        """Append one row (every column)."""
        for key, value in row.items():
            self.data[key][self.n] = value
        self.n += 1

    def __getitem__(self, key: str) -> np.ndarray:
        col = self.data[key][: self.n]
        return col[:, 0] if col.shape[1] == 1 else col


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
        from urdf_gen.spec_loader import load_robot

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
        self.slave_kind = slave
        self.shape = [(limb.name, len(limb.segments)) for limb in spec.limbs]
        self._order = [n for n, _ in self.shape]
        self.predictor = (
            SagPredictor(spec, T_base, cfg.medium, self.world.gravity, every_tick=cfg.haptic_limb)
            if cfg.predict
            else None
        )
        zeros = {n: np.zeros((s, 3)) for n, s in self.shape}
        self.pred_offset = {n: v.copy() for n, v in zeros.items()}
        self.residual = {n: v.copy() for n, v in zeros.items()}
        self._res_blend = {n: (v.copy(), v.copy(), -1.0) for n, v in zeros.items()}
        self.ik_offset = {n: v.copy() for n, v in zeros.items()}  # offsets the operator's IK solves with
        self._show_slot = {n: (5 * i) % SHOW_EVERY for i, n in enumerate(self._order)}
        self._cmd_key: dict[str, tuple[PccConfig, ...]] = {}
        self._cmd_canon: dict[str, list[PccConfig]] = {}
        self._cmd_u: dict[str, np.ndarray] = {}
        self._blend_u: dict[str, float] = {}
        self.rock_model = np.asarray(cfg.rock_estimate, dtype=float)
        self._rock_blend = (self.rock_model.copy(), self.rock_model.copy(), -1.0)
        self.rock_located = False
        self.k_env = cfg.k_env_prior
        self.k_render = cfg.k_env_prior  # the stiffness rendered now (N/m), following k_env
        self.k_env_updates = 0
        self._r_tip = spec.limb(cfg.haptic_limb).segments[-1].radius_tip
        self._shown: dict[str, list[PccConfig]] = {}
        self.model: dict[str, list[PccConfig]] = {n: rest_configs(spec.limb(n).segments) for n in names}
        segs = sum(s for _, s in self.shape)
        self._ring_u = np.zeros((RING_TICKS, segs, 3))  # predicted model (no residual) per tick
        self._ring_depth = np.zeros(RING_TICKS)
        self._ring_rest = np.zeros(RING_TICKS, dtype=np.uint8)  # bit i: limb i's prediction at rest
        self._seg_index = {}
        k = 0
        for n, s in self.shape:
            self._seg_index[n] = slice(k, k + s)
            k += s
        self._sent_tick: dict[int, int] = {0: 0}
        self._k = 0
        self._seq_down = 0
        self._seq_up = 0
        self.updates = 0
        self.over_budget = 0
        self.depth = 0.0
        self.slave_force = np.zeros(3)  # latest force reported by the slave (N)
        self.slave_contact_reports = 0
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
        active = False
        T = self.cfg.blend_time
        for n, (a, b, t0) in self._res_blend.items():
            u = _smooth((t - t0) / T)
            if self._blend_u.get(n) != u:
                self.residual[n] = a + (b - a) * u
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
        return active or 0.0 < u < 1.0

    def _on_state(self, payload: bytes, t: float) -> None:
        n_body = 6 * sum(s for _, s in self.shape)
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
        self.slave_force = force
        f = float(np.linalg.norm(force))
        contact = f > CONTACT_FORCE_N
        self.slave_contact_reports += contact
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
                if not np.allclose(new, self._res_blend[n][1], atol=1e-4):
                    self._res_blend[n] = (self.residual[n].copy(), new, t)
                    self._blend_u.pop(n, None)
            depth = float(self._ring_depth[idx % RING_TICKS])
            if contact and depth > 5e-4:
                k_new = f / depth
                k = self.k_env + 0.5 * (k_new - self.k_env)
                self.k_env = min(max(k, K_ENV_RANGE[0]), K_ENV_RANGE[1])
                self.k_env_updates += 1
        if contact and np.isfinite(rock).all() and not np.allclose(rock, self._rock_blend[1], atol=1e-4):
            self._rock_blend = (self.rock_model.copy(), rock, t)
            self.rock_located = True

    def _update_model(self, cmd: dict[str, list[PccConfig]]) -> None:
        """Predict the slave's shape for the new command and pose the master world's limbs.

        The haptic limb is posed every tick (its contacts are rendered); the others, which only show,
        at most once every ``SHOW_EVERY`` ticks."""
        k, dt = self._k, self.world.dt
        for name in self._order:
            key = tuple(cmd[name])
            if self._cmd_key.get(name) != key:  # canonical command and its bend vectors, once a change
                self._cmd_key[name] = key
                self._cmd_canon[name] = canonical_limb(cmd[name])
                self._cmd_u[name] = _as_u(self._cmd_canon[name])
        if self.predictor is not None:
            for name in self._order:
                shape = self.predictor.update(name, cmd[name], k, dt)
                if shape is not None:
                    self.pred_offset[name] = _as_u(shape) - self._cmd_u[name]
        # the IK solves through the offsets low-passed (IK_OFFSET_TAU): the fixed point command -> static
        # sag -> command, under-relaxed (solved offline it converged by a factor ~0.55-0.8 an iteration
        # for the palpation arm above the rock). Through the live prediction every tick, its motion fed
        # back into the command and the loop did not settle.
        a = dt / IK_OFFSET_TAU
        haptic = self.cfg.haptic_limb
        for name in self._order:
            offset = self.pred_offset[name] + self.residual[name]
            self.ik_offset[name] += a * (offset - self.ik_offset[name])
            if name != haptic and k % SHOW_EVERY != self._show_slot[name]:
                continue  # the limbs that only show take turns: one joint reset a tick at most
            model = [add_offset(c, o) for c, o in zip(self._cmd_canon[name], offset, strict=True)]
            self.model[name] = model
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
        row = self._ring_u[k % RING_TICKS]
        for name in self._order:  # the prediction (no residual) as bend vectors: command + offset
            row[self._seg_index[name]] = self._cmd_u[name] + self.pred_offset[name]

    # ------------------------------------------------------------------ the tick
    def tick(self, device: InputDevice, *, deadline_met: bool = True) -> np.ndarray:
        """One 1 ms master tick (and the slave's and the channels'); returns the device force ``(3,)`` (N)."""
        w0 = time.perf_counter()
        t, dt, cfg = self.world.time, self.world.dt, self.cfg
        sample = device.read(t)
        blending = self._blend(t)
        cmd = self.mapping.update(sample, dt, self.ik_offset)
        self._update_model(cmd)
        self.world.step(contacts=False)  # penetration() asks for its own bodies
        d = penetration(self.world.client, self.robot.bodies[cfg.haptic_limb], self.env)
        self.depth = depth = float(np.linalg.norm(d))
        self._ring_depth[self._k % RING_TICKS] = depth
        # the coupling renders k d, k following the learned k_env smoothly (no force step when a report
        # changes it); the penetration is scaled to the renderer's stiffness
        self.k_render += (dt / K_RENDER_TAU) * (self.k_env - self.k_render)
        scale = self.k_render / self.haptics.params.stiffness
        force = self.haptics.tick(d * scale, deadline_met=deadline_met, device_ok=sample.ok)
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
            tip_pred = (
                self.predictor.tip(cfg.haptic_limb) if self.predictor is not None else np.full(3, np.nan)
            )
            T_base = self.mapping.T_world_base[cfg.haptic_limb]
            self.log.add(
                t=t,
                tip_m=self.robot.tip_pose(cfg.haptic_limb)[:3, 3],
                tip_s=self.slave.tip(),
                f_m=force,
                f_s=self.slave.force,
                blending=blending,
                depth_m=depth,
                k_env=self.k_env,
                tip_pred=T_base[:3, :3] @ tip_pred + T_base[:3, 3],
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
        """Tick for ``duration`` s on a :class:`sim.loop.Loop`; ``on_visual(frame, t)`` every
        ``visual_every`` ticks. Returns the loop statistics (``real_time_factor``, p50/p99 tick, ...).

        ``catch_sigint``: Ctrl-C ends the run cleanly (the statistics say ``interrupted``)."""
        if not spin_window >= 0:
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

    def _tick_none(self, device: InputDevice, loop: Loop) -> None:
        self.tick(device, deadline_met=loop.deadline_met)

    def metrics(self) -> dict[str, float]:
        """Tip and force errors, forces, contact agreement, traffic (see the README's metrics table)."""
        lg = self.log
        n = lg.n
        dt_log = self.world.dt * lg.every
        duration = max(n * dt_log, self.world.dt)
        lag = int(round(self.cfg.downlink.expected_delay(CMD_HEADER.size + 6 * len(self.shape)) / dt_log))
        lag = min(lag, max(n - 1, 0))
        tip_m, tip_s, f_m, f_s = lg["tip_m"], lg["tip_s"], lg["f_m"], lg["f_s"]
        tip_err = np.linalg.norm(tip_m[: n - lag] - tip_s[lag:], axis=1) if n else np.zeros(1)
        f_err = np.linalg.norm(f_m[: n - lag] - f_s[lag:], axis=1) if n else np.zeros(1)
        steps = np.linalg.norm(np.diff(f_m, axis=0), axis=1) if n > 1 else np.zeros(1)
        blend = lg["blending"][1:].astype(bool) if n > 1 else np.zeros(1, dtype=bool)
        fs_mag = np.linalg.norm(f_s, axis=1) if n else np.zeros(1)
        contact = fs_mag > CONTACT_FORCE_N
        window = np.zeros(n, dtype=bool)
        if contact.any():
            last = int(np.flatnonzero(contact)[-1])
            first = max(0, last - int(round(1.0 / dt_log)) + 1)
            window[first : last + 1] = True
        diff = np.linalg.norm(f_m - f_s, axis=1) if n else np.zeros(1)
        return {
            "tip_error_rms_m": float(np.sqrt(np.mean(tip_err**2))),
            "tip_error_final_m": float(np.linalg.norm(tip_m[-1] - tip_s[-1])) if n else 0.0,
            "force_error_rms_n": float(np.sqrt(np.mean(f_err**2))),
            "max_force_n": float(np.linalg.norm(f_m, axis=1).max()) if n else 0.0,
            "slave_force_max_n": float(fs_mag.max()) if n else 0.0,
            "contact_time_s": float(contact.sum() * dt_log),
            "force_error_contact_rms_n": float(np.sqrt(np.mean(diff[window] ** 2))) if window.any() else 0.0,
            "force_error_contact_max_n": float(diff[window].max()) if window.any() else 0.0,
            "operator_force_contact_mean_n": float(np.linalg.norm(f_m[window], axis=1).mean())
            if window.any()
            else 0.0,
            "slave_force_contact_mean_n": float(fs_mag[window].mean()) if window.any() else 0.0,
            "k_env_n_per_m": float(self.k_env),
            "rock_located": bool(self.rock_located),
            "rock_error_m": float(np.linalg.norm(self.rock_model - np.asarray(self.cfg.rock_true))),
            "slave_reflex_ticks": int(self.slave.reflex_ticks),
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
