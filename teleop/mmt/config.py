"""The model-mediated teleoperation setup (:class:`MmtConfig`), shared by the master and the slave, and the
bounds their parts share (:data:`K_ENV_RANGE`, :data:`RING_TICKS`, :data:`CONTACT_FORCE_N`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.objects.spec import ObjectSpec
from pccbullet.teleop.channel import LinkSpec, acoustic_link
from pccbullet.teleop.ik import clamp_config
from pccbullet.urdf_gen.pcc import PccConfig, rest_configs
from pccbullet.urdf_gen.specs import LimbSpec, Payload, RobotSpec
from pccbullet.urdf_gen.topology import Topology

K_ENV_RANGE = (1.0, 2000.0)  # N/m, bounds of the learned contact stiffness
RING_TICKS = 8192  # master ticks whose predictions are kept for the reports (8.2 s at 1 kHz; > round trip)
CONTACT_FORCE_N = 0.02  # |F| above which the slave reports contact, and the master counts one (N)


@dataclass(frozen=True, slots=True)
class MmtConfig:
    """Master/slave setup (SI units).

    Attributes:
        downlink / uplink: the two directions of the link.
        cmd_rate / state_rate: packets per second down / up (Hz).
        blend_time: duration of a correction blend (s), >= 0.1.
        rock_true / rock_estimate: rock centre at the slave / in the master's model before it is located
            (m, world). rock_radius: (m). seabed_z: (m).
        objects: objects placed in the scene (:mod:`pccbullet.teleop.mmt.objects`): in the robot's world as
            they are, in the master's model where they were placed; none by default.
        medium: the slave's water (``"seawater"``, ``"water"`` or ``"air"``); the prediction uses it too.
        slave_rates: with ``drive = "joints"``, the rates of the spring targets towards a new command: bend
            (rad/s), plane (rad/s),
            length (m/s).
        haptic_limb: the limb whose contacts are rendered and whose tip carries the force sensor.
        chain: the robot's (slave's) dynamic chain, ``"rod"`` or ``"rrp"`` (:mod:`pccbullet.urdf_gen.rod`).
        drive: what moves the robot's limbs, ``"tendons"`` (each command becomes the tendon controller's
            goal, :mod:`pccbullet.sim.limb.tendons`: the motors' limits set the pace) or ``"joints"`` (spring
            targets moved towards each command at ``slave_rates``).
        tendon_limbs: with ``drive = "joints"``, the limbs driven through their tendons all the same (a
            mixed robot: the grasper grasps through its tendons while the others follow spring targets).
        estimate_contacts: the limbs that put their contacts' estimate into their implicit step
            (``World.load_robot(external_loads=...)``): a tendon-driven limb that grips needs it, or its
            grip loses tension to the spools' inertia while it presses (docs/guide/tendons.md, "Contact").
        start: the pose each listed limb holds when the session starts, ``(limb, ((bend rad, plane rad,
            length m), ...one per segment))``, clipped to the segments' limits like a command; the same
            in the master's command and on the robot; limbs left out start straight.
        predict: the master predicts the slave's sag with the Newton–Euler model.
        command_force: steady force (N) the force-aware command lets the operator ask for.
        force_limit: the slave's reflex threshold (N).
        k_env_prior: contact stiffness (N/m) rendered before the slave has reported a contact.
        seed: seed of the channels.
        report_timeout: a fixed silence of the robot's reports (s) after which the master declares it
            lost; ``None``: the margin follows the robot's measured report intervals, from
            :func:`~pccbullet.teleop.mmt.watchdog.report_timeout` of ``state_rate`` and the uplink's
            jitter up to 5 report intervals (:class:`~pccbullet.teleop.mmt.watchdog.RobotWatchdog`).
    """

    downlink: LinkSpec = field(default_factory=acoustic_link)
    uplink: LinkSpec = field(default_factory=acoustic_link)
    cmd_rate: float = 10.0
    state_rate: float = 5.0
    blend_time: float = 0.2
    rock_true: tuple[float, float, float] = (0.40, 0.18, -0.54)  # off every limb's rest plane (y = +-0.06)
    rock_estimate: tuple[float, float, float] = (0.42, 0.18, -0.545)
    rock_radius: float = 0.06
    seabed_z: float = -0.6
    objects: tuple[ObjectSpec, ...] = ()
    medium: str = "seawater"
    slave_rates: tuple[float, float, float] = (1.0, 2.0, 0.05)
    haptic_limb: str = "palpation"
    chain: Topology | str = Topology.ROD
    drive: Drive | str = Drive.JOINTS
    tendon_limbs: tuple[str, ...] = ()
    estimate_contacts: tuple[str, ...] = ()
    start: tuple[tuple[str, tuple[tuple[float, float, float], ...]], ...] = ()
    predict: bool = True
    command_force: float = 0.6
    force_limit: float = 3.0
    k_env_prior: float = 20.0
    seed: int = 0
    report_timeout: float | None = None

    def __post_init__(self) -> None:
        drive = Drive(self.drive) if self.drive in list(Drive) else None
        chain = Topology(self.chain) if self.chain in list(Topology) else None
        tendons = drive is Drive.TENDONS or bool(self.tendon_limbs)
        if drive is None or (tendons and (chain is None or not limb_topology(chain).tendons)):
            shown = [v.value if isinstance(v, Drive | Topology) else v for v in (self.drive, self.chain)]
            raise ConfigurationError(
                f"drive = {shown[0]!r} with chain = {shown[1]!r} is invalid; allowed: 'joints', or "
                "'tendons' on the rod chain"
            )
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
        if self.report_timeout is not None and not 0 < self.report_timeout <= 3600:
            raise ConfigurationError(
                f"report_timeout = {self.report_timeout!r} s is invalid; allowed: None or 0 < s <= 3600"
            )
        if not K_ENV_RANGE[0] <= self.k_env_prior <= K_ENV_RANGE[1]:
            raise ConfigurationError(
                f"k_env_prior = {self.k_env_prior!r} N/m is invalid; allowed: {K_ENV_RANGE[0]:g} to "
                f"{K_ENV_RANGE[1]:g} N/m"
            )

    def drives(self, limbs: Sequence[str]) -> dict[str, Drive]:
        """Each of ``limbs``' drive, ``"tendons"`` or ``"joints"`` (``drive`` and ``tendon_limbs``)."""
        every = Drive.of(self.drive) is Drive.TENDONS
        return {n: Drive.TENDONS if every or n in self.tendon_limbs else Drive.JOINTS for n in limbs}

    def sensor_limb(self, spec: RobotSpec) -> tuple[LimbSpec, Payload]:
        """The haptic limb of ``spec`` and its force sensor payload, which it must carry."""
        limb = spec.limb(self.haptic_limb)
        if limb.payload is None or limb.payload.kind != "force_sensor":
            raise ConfigurationError(f"haptic limb '{limb.name}' carries no force sensor payload")
        return limb, limb.payload

    def start_configs(self, spec: RobotSpec) -> dict[str, list[PccConfig]]:
        """Every limb's pose at the start (:attr:`start`, the others straight at rest length), checked
        against ``spec``: one line naming the limb and what is wrong."""
        out = {limb.name: rest_configs(limb.segments) for limb in spec.limbs}
        for name, rows in self.start:
            if name not in out or len(rows) != len(out[name]):
                n = len(out[name]) if name in out else 0
                raise ConfigurationError(
                    f"start = {name!r} with {len(rows)} segments is invalid; allowed: a limb of "
                    f"{spec.name} ({', '.join(out)}) with one (bend, plane, length) per segment ({n})"
                )
            want = [PccConfig(*map(float, r)) for r in rows]
            out[name] = [clamp_config(c, seg) for c, seg in zip(want, spec.limb(name).segments, strict=True)]
        return out
