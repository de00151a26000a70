"""The remote robot of the teleoperation demo: the dynamic soft squid in seawater (see
:mod:`pccbullet.teleop.mmt.session`).

:class:`Slave` has its own :class:`~pccbullet.sim.world.World` in dynamic mode, in seawater, with the seabed
and the true rock. Commands from the link (absolute PCC per segment) become the goals of its compliant
limbs (``set_pcc(..., mode="target")``): by default their tendon controllers
(:mod:`pccbullet.sim.limb.tendons`; the motors' limits set the pace; a shape loop on the measured segment ends
at 50 Hz corrects their goals, :meth:`~pccbullet.sim.limb.tendons.TendonDrive.follow_shape`), or (``drive =
"joints"``) spring targets moved towards each new command at bounded rates; gravity, buoyancy, drag, contact
and the tapered limbs' own way of bending make the real shape differ from the command. Its state reports hold
what a real robot could measure: per segment, the PCC arc through the segment's end point (its chain's own
link poses, the fit of :mod:`pccbullet.urdf_gen.pcc_fit`), the palpation sensor's contact force (PyBullet's
contact points on the sensor link, low-passed at :data:`SENSOR_CUTOFF_HZ`), the rock centre located by touch
(mean of ``tip - (R_rock + r_tip) F / |F|`` while touching: where a sphere of the known radius must be to
push back along the measured force) and which command it is tracking and for how long. A force above the
robot's own limit (``force_limit``) holds the haptic limb where it is (a reflex a real robot has on
board); it follows the commands again once the force is below it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import astuple
from typing import TYPE_CHECKING

import numpy as np

from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.objects.environment import contact_forces
from pccbullet.sim.world import World
from pccbullet.teleop.ik import clamp_config
from pccbullet.teleop.mmt.config import CONTACT_FORCE_N, MmtConfig
from pccbullet.teleop.mmt.objects import add_environment, is_free, place_objects
from pccbullet.teleop.mmt.packets import (
    CMD_HEADER,
    CMD_VERSION,
    STATE_HEADER,
    STATE_OBJECTS,
    STATE_PLAIN,
    STATE_TAIL,
    STATE_TENDONS,
    decode_configs,
    encode_objects,
    encode_shape,
    encode_tensions,
)
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.pcc_fit import pcc_from_points
from pccbullet.urdf_gen.specs import RobotSpec

if TYPE_CHECKING:
    from pccbullet.sim.limb.tendons import TendonDrive

SETTLED_RATE = 0.05  # rad/s or m/s: a limb whose joints are all slower than this is settled
SENSOR_CUTOFF_HZ = 30.0  # low-pass of the slave's force sensor (a strain-gauge sensor's bandwidth)
SHAPE_LOOP_TICKS = 20  # ticks between the tendon-driven limbs' shape-loop steps (50 Hz)
GRIP_TENSION_N = 8.0  # N, a closed grasp's pull on its distal segment (80 % of the grasper's 10 N stall)


def grip_tensions(drive: TendonDrive, configs: list[PccConfig]) -> np.ndarray:
    """The tensions (N) that hold the distal segment's set of ``drive`` closed: a resultant pull of
    :data:`GRIP_TENSION_N` (the set's four tendons 90 deg apart: the moment of one tendon at that tension)
    towards the side the distal segment is commanded to bend to (``configs``, the limb's
    command: its plane, or the plane + pi for a negative bend), shared by the set's tendons nearest that
    side (``GRIP_TENSION_N cos(angle - side)``, the others slack). The plane is in the segment's own base
    frame, which the planes of the segments before it turn: its angle in the limb's cross-section is
    their sum."""
    distal = drive.sets[-1]
    side = sum(c.plane for c in configs[: distal + 1]) + (math.pi if configs[distal].bend < 0 else 0.0)
    angles = np.array([t.angle for t in drive.specs if t.anchor_segment == distal])
    return GRIP_TENSION_N * np.clip(np.cos(angles - side), 0.0, None)


class Slave:
    """The remote robot: the dynamic soft squid in water with the seabed and the true rock."""

    def __init__(self, spec: RobotSpec, cfg: MmtConfig) -> None:
        self.cfg = cfg
        self.world = World(mode="dynamic", medium=cfg.medium, chain=cfg.chain)
        drives = cfg.drives([limb.name for limb in spec.limbs])
        estimate = dict.fromkeys(cfg.estimate_contacts, True)
        self.robot = self.world.load_robot(spec, drive=drives, external_loads=estimate)
        start = cfg.start_configs(spec)
        for name, _ in cfg.start:
            self.robot.set_pcc(name, start[name], mode="reset")
        self._tendon_limbs = {n for n, d in drives.items() if d is Drive.TENDONS}
        seabed, self.rock = add_environment(self.world, cfg.rock_true, cfg.rock_radius, cfg.seabed_z)
        self.objects = place_objects(self.world, cfg.objects)  # as placed: free ones sink, float, are held
        self._placed_z = [o.position()[2] for o in self.objects]
        # reported in every state report: the master sizes the reports by the same is_free
        self._free = [o for o, spec in zip(self.objects, cfg.objects, strict=True) if is_free(spec)]
        self.shape = [(limb.name, len(limb.segments)) for limb in spec.limbs]
        self.setpoint = {n: np.array([[c.bend, c.plane, c.length] for c in start[n]]) for n, _ in self.shape}
        self.target = {n: v.copy() for n, v in self.setpoint.items()}
        self._settled: set[str] = set()
        self._new_command = False
        self._ticks = 0
        self.cmd_seq = 0
        self.cmd_time = 0.0  # when the command being tracked arrived (s)
        self.force = np.zeros(3)  # low-passed sensor force on the haptic limb, world frame (N)
        self.reflex = False
        self.reflex_ticks = 0
        limb, sensor = cfg.sensor_limb(spec)
        self._sensor_body, self._sensor_link = self.robot._links[sensor.frame]
        self._r_tip = limb.segments[-1].radius_tip
        self._rock_sum = np.zeros(3)
        self._rock_n = 0
        self._alpha = 1.0 - math.exp(-2.0 * math.pi * SENSOR_CUTOFF_HZ * self.world.dt)
        self._ends = {n: [naming.segment_end_link(n, s) for s in range(1, k + 1)] for n, k in self.shape}
        self.grips = 0  # bit i: the operator closed limb i's grasp (the newest command's)
        self._drives: list[tuple[str, TendonDrive]] = []  # tendon-driven limbs, in the packets' order
        for n, _ in self.shape:
            drive = self.robot.compliant[n].tendons if n in self._tendon_limbs else None
            if drive is not None:
                self._drives.append((n, drive))

    @property
    def time(self) -> float:
        """The slave's simulated time (s)."""
        return self.world.time

    def receive(self, payload: bytes) -> None:
        """Accept a command packet if it is newer than the last one."""
        if len(payload) < CMD_HEADER.size:
            return
        version, kind, seq, _, grips = CMD_HEADER.unpack_from(payload)
        if version != CMD_VERSION or kind != 1 or seq <= self.cmd_seq:
            return
        try:
            cmd = decode_configs(payload[CMD_HEADER.size :], self.shape)
        except struct.error:
            return
        self.cmd_seq = seq
        self.grips = grips
        self.cmd_time = self.world.time
        self._new_command = True
        spec = self.robot.spec
        self.target = {  # quantization may step over a limit by half a step: the robot clamps
            n: np.array(
                [astuple(clamp_config(c, seg)) for c, seg in zip(v, spec.limb(n).segments, strict=True)]
            )
            for n, v in cmd.items()
        }
        self._settled.clear()

    def tick(self, dt: float) -> None:
        """Command the limbs (tendons: each new command once; joints: spring targets moved towards it at
        bounded rates), step the physics, read the sensor."""
        haptic = self.cfg.haptic_limb
        was = self.reflex
        self.reflex = float(np.linalg.norm(self.force)) > self.cfg.force_limit
        self.reflex_ticks += self.reflex
        if self._tendon_limbs:
            self._command_tendons(haptic, was)
            self._ticks += 1
            if self._ticks % SHAPE_LOOP_TICKS == 0:
                touching = float(np.linalg.norm(self.force)) > CONTACT_FORCE_N
                # not the haptic limb while it presses (the contact shapes it), not a limb while it grips
                # (its coil pulls the segment ends off the commanded arcs: the loop then steers the grip
                # sideways, off what it holds)
                for name, drive in self._drives:
                    if not (name == haptic and (touching or self.reflex)) and not drive.held:
                        drive.follow_shape(SHAPE_LOOP_TICKS * dt)
        if len(self._tendon_limbs) < len(self.shape):
            self._move_targets(haptic, dt)
        self.world.step()
        raw = contact_forces(self.world, self._sensor_body).get(self._sensor_link)
        self.force += self._alpha * ((np.zeros(3) if raw is None else raw) - self.force)
        f = float(np.linalg.norm(self.force))
        if f > CONTACT_FORCE_N:
            tip = self.tip()
            self._rock_sum += tip - (self.cfg.rock_radius + self._r_tip) * self.force / f
            self._rock_n += 1

    def _command_tendons(self, haptic: str, was_reflex: bool) -> None:
        """Each new command once to every limb's tendon controller; the reflex holds the haptic limb where it
        is (its tendons' lengths there) until the force is below the limit, then the command again."""
        if self.reflex and not was_reflex and haptic in self._tendon_limbs:
            self.robot.set_joints(haptic, self.robot.joints(haptic), mode="target")
        if not (self._new_command or (was_reflex and not self.reflex)):
            return
        for name, _ in self.shape:
            if (self.reflex and name == haptic) or name not in self._tendon_limbs:
                continue
            self.robot.set_pcc(name, [PccConfig(*row) for row in self.target[name]], mode="target")
            self.setpoint[name] = self.target[name].copy()
        self._grip()
        self._new_command = False

    def _grip(self) -> None:
        """Hold (close) or release (open) each tendon-driven limb's distal set as the command's grasp bits
        say; a closed grasp pulls towards the distal segment's commanded plane (:func:`grip_tensions`)."""
        for i, (name, _) in enumerate(self.shape):
            drive = self.robot.compliant[name].tendons
            if name not in self._tendon_limbs or drive is None or drive.mode != "pcc":
                continue
            if self.grips >> i & 1:
                configs = [PccConfig(*row) for row in self.setpoint[name]]
                drive.hold(drive.sets[-1], grip_tensions(drive, configs))
            else:
                drive.release(drive.sets[-1])

    def _move_targets(self, haptic: str, dt: float) -> None:
        rates = np.array(self.cfg.slave_rates) * dt
        for name, _ in self.shape:
            if name in self._settled or (self.reflex and name == haptic) or name in self._tendon_limbs:
                continue
            sp = self.setpoint[name]
            sp += np.clip(self.target[name] - sp, -rates, rates)
            self.robot.set_pcc(name, [PccConfig(*row) for row in sp], mode="target")
            if np.array_equal(sp, self.target[name]):
                self._settled.add(name)

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
        """Measured shapes, sensor force, located rock and tip, and the command being tracked; driven by
        tendons, their block (:func:`~pccbullet.teleop.mmt.packets.encode_tensions`) after the shapes; then
        the free objects' poses (:func:`~pccbullet.teleop.mmt.packets.encode_objects`)."""
        age = self.world.time - self.cmd_time
        tail = STATE_TAIL.pack(*self.force, *self.rock_located, *self.tip())
        body = encode_shape(self.measure(), [n for n, _ in self.shape])
        version = STATE_PLAIN
        if self._drives:
            version = STATE_TENDONS
            body += encode_tensions(self.held_mask(), np.concatenate([d.tensions for _, d in self._drives]))
        if self._free:
            version += STATE_OBJECTS
            cid = self.world.client
            poses = [
                np.concatenate(pb.getBasePositionAndOrientation(o.body, physicsClientId=cid))
                for o in self._free
            ]
            body += encode_objects(np.array(poses))
        return STATE_HEADER.pack(version, 2, seq, t, self.cmd_seq, age, self.settled_mask()) + body + tail

    def held_mask(self) -> int:
        """Bit i set: limb i's distal set is held (a closed grasp, :attr:`TendonDrive.held`)."""
        order = [n for n, _ in self.shape]
        return sum(1 << order.index(name) for name, d in self._drives if d.held)

    def peak_tensions(self) -> dict[str, float]:
        """The largest tension (N) each actuator of the tendon-driven limbs applied since the robot was
        made (:attr:`TendonDrive.peak_tensions`); empty with ``drive = "joints"``."""
        return {n: float(v) for _, d in self._drives for n, v in zip(d.names, d.peak_tensions, strict=True)}

    def object_report(self) -> dict[str, dict[str, object]]:
        """Each free placed object at the last step: how far it rose since it was placed (m; negative: it
        sank or fell), the contact force each limb exerts on it and everything else's (N), and whether
        only limbs touch it (``held``: lifted off its supports and holding more than 1 cm up)."""
        out: dict[str, dict[str, object]] = {}
        for spec, obj, z0 in zip(self.cfg.objects, self.objects, self._placed_z, strict=True):
            if obj.fixed:
                continue
            forces = obj.limb_forces(self.robot)
            limbs = {n: float(np.linalg.norm(f)) for n, f in forces.items()}
            on_limbs = sum(forces.values(), np.zeros(3))
            support = float(np.linalg.norm(obj.contact_force() - on_limbs))
            rise = float(obj.position()[2] - z0)
            out[spec.name] = {
                "lifted_height_m": rise, "limb_contact_force_n": limbs, "support_force_n": support,
                "held": support == 0.0 and max(limbs.values(), default=0.0) > 0.0 and rise > 0.01,
            }  # fmt: skip
        return out

    def settled_mask(self) -> int:
        """Bit i set: limb i's joints all move slower than :data:`SETTLED_RATE`."""
        mask = 0
        for i, (name, _) in enumerate(self.shape):
            if np.abs(self.robot.joint_velocities(name)).max() < SETTLED_RATE:
                mask |= 1 << i
        return mask

    def close(self) -> None:
        """Disconnect the slave world."""
        self.world.close()
