"""Model-mediated teleoperation (MMT): a local model at 1 kHz, the soft robot behind a slow, lossy link.

**Slave (the remote robot)**: :class:`pccbullet.teleop.slave.Slave`, the dynamic soft squid in seawater; its
state reports (:mod:`pccbullet.teleop.mmt.packets`) carry the PCC fitted to its chain, its sensor's contact
force, the rock located by touch and the command it tracks.

**Master (the local model).** :class:`MmtSession` runs a kinematic world with the model of the robot and
the rock where the master believes it is, and wires the parts that make the master:

* :class:`~pccbullet.teleop.mapping.OperatorMapping`: the operator's device -> a command, the IK solved
  through the model's offsets;
* :class:`~pccbullet.teleop.mmt.model.MasterModel`: ``command + prediction + residual`` per segment, the
  Newton–Euler sag prediction, the limbs posed in the master world;
* :class:`~pccbullet.teleop.mmt.corrections.Corrections`: the residuals learned from the robot's reports,
  blended in so the operator feels no step;
* :class:`~pccbullet.teleop.mmt.contact.ContactModel`: the force the operator feels, ``k_env d`` from the
  model's sensor ball in the modelled rock and seabed, the learned stiffness, the located rock, the
  force-aware command (docs/guide/demo.md);
* :class:`~pccbullet.teleop.haptics.HapticRenderer`: the bounded force sent to the device;
* :class:`~pccbullet.teleop.mmt.transport.Transport`: the emulated link's two directions, the commands
  down and the state reports up.

All times are simulated: :meth:`MmtSession.run` steps everything in lockstep (bit-identical reruns) or
paced to the wall clock; ``slave="process"`` runs the slave in its own process
(:mod:`pccbullet.teleop.slave_process`). Metrics: :mod:`pccbullet.teleop.mmt.metrics`.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.loop import SPIN_WINDOW_S, Loop
from pccbullet.sim.world import World
from pccbullet.teleop.devices.base import InputDevice
from pccbullet.teleop.haptics import HapticParams, HapticRenderer
from pccbullet.teleop.mapping import OperatorMapping
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.contact import ContactModel
from pccbullet.teleop.mmt.corrections import Corrections
from pccbullet.teleop.mmt.metrics import SessionValues, session_metrics
from pccbullet.teleop.mmt.model import MasterModel
from pccbullet.teleop.mmt.objects import add_environment, is_free, place_objects
from pccbullet.teleop.mmt.transport import StateReport, Transport
from pccbullet.teleop.mmt.watchdog import RobotWatchdog, report_timeout
from pccbullet.teleop.realtime import realtime_priority
from pccbullet.teleop.session_log import SessionLog
from pccbullet.teleop.slave import Slave
from pccbullet.teleop.slave_process import SlaveProcess
from pccbullet.urdf_gen.specs import RobotSpec

IK_MAX_STEP = 1e-3  # rad or m per tick: the command moves at most ~1 rad/s or 1 m/s
RECOVER_TICKS = 1000  # deadlines met in a row (1 s) that clear a missed-deadline haptic fault


class MmtSession:
    """Master model + channels + slave, stepped together in simulated time at the master's 1 kHz.

    Args:
        spec: the robot, already read (:func:`~pccbullet.urdf_gen.spec_loader.load_robot`): the master's
            model, and the slave's robot (pickled to its process with ``slave="process"``).
        cfg: the setup (``None``: :class:`~pccbullet.teleop.mmt.config.MmtConfig`'s defaults).
        haptic: renderer settings.
        gui: open the master world in the PyBullet GUI.
        slave: ``"local"`` (in this process, lockstep) or ``"process"`` (its own process, real time).
        record_poses: with ``slave="process"``, the robot sends its limbs' joints at 10 Hz (the GIF).

    Attributes:
        spec: the robot. world, robot: the master world and the robot model in it; rock, env: the
            modelled rock's body and the bodies of the modelled rock and seabed in it; objects: the placed
            objects in it (``cfg.objects``, fixed where they were placed).
        tendon_names: the tendons a tendon-driven robot reports, in the reports' order (empty with
            ``drive = "joints"``).
        mapping, model, corrections, contact, haptics, transport: the master's parts (module docstring).
        watchdog: declares the robot lost when its reports stop, slow when they come late with the robot's
            clock behind (:class:`~pccbullet.teleop.mmt.watchdog.RobotWatchdog`); the force fades to 0
            while it is lost.
        slave: the robot (:class:`~pccbullet.teleop.slave.Slave` or
            :class:`~pccbullet.teleop.slave_process.SlaveProcess`).
        log: the session's time series. over_budget: ticks that took longer than their period.
        model_tip: the haptic limb's tip in the model ``(3,)`` (m, world) at the last tick.
        last_report: the robot's newest state report (``None`` before the first).
        haptic_recoveries: missed-deadline faults cleared after the loop was back on time.
    """

    def __init__(
        self,
        spec: RobotSpec,
        cfg: MmtConfig | None = None,
        *,
        haptic: HapticParams | None = None,
        gui: bool = False,
        slave: str = "local",
        record_poses: bool = False,
    ) -> None:
        if slave not in ("local", "process"):
            raise ConfigurationError(f"slave = {slave!r} is invalid; allowed: 'local', 'process'")
        self.cfg = cfg = cfg or MmtConfig()
        self.spec = spec
        self.world = World(gui=gui, mode="kinematic")
        self.robot = self.world.load_robot(spec)
        seabed, self.rock = add_environment(self.world, cfg.rock_estimate, cfg.rock_radius, cfg.seabed_z)
        self.env = [self.rock, seabed]
        self.objects = place_objects(self.world, cfg.objects, fixed=True)  # shown where they were placed
        # the free ones, moved where the robot's reports put them
        self._free = [o.body for o, spec in zip(self.objects, cfg.objects, strict=True) if is_free(spec)]
        T_base = {limb.name: self.robot.T_world_limbbase(limb.name) for limb in spec.limbs}
        self.mapping = OperatorMapping(spec, T_world_base=T_base, ik_iters=1)
        self.mapping.command.update(cfg.start_configs(spec))
        # the IK moves the command at most ~1 rad/s: it solves through the predicted sag, which relaxes
        # to a new command in ~0.3 s; faster steps chased it and made the command (and the slave) jitter
        self.mapping.ik_max_step = IK_MAX_STEP
        self.haptics = HapticRenderer(haptic)
        shape = [(limb.name, len(limb.segments)) for limb in spec.limbs]
        drives = cfg.drives([limb.name for limb in spec.limbs])
        self.tendon_limbs = [name for name, drive in drives.items() if drive is Drive.TENDONS]
        """The robot's tendon-driven limbs, in the robot's order."""
        # the tendons a tendon-driven robot reports, in the reports' order (StateReport.tensions)
        self.tendon_names = [t.name for n in self.tendon_limbs for t in spec.limb(n).tendons]
        # the grasp holds tendons: a robot on its joints has none
        self.mapping.grasp_enabled = bool(self.tendon_names)
        self.transport = Transport(cfg, shape, self.world.dt, len(self.tendon_names), len(self._free))
        floor = cfg.report_timeout or report_timeout(cfg.state_rate, cfg.uplink.jitter)
        self.watchdog = RobotWatchdog(
            1.0 / cfg.state_rate, floor, self.transport.report_delay(), ceiling=cfg.report_timeout
        )
        if slave == "process":
            self.slave: Slave | SlaveProcess = SlaveProcess(spec, cfg, record_poses=record_poses)
        else:
            self.slave = Slave(spec, cfg)
        self.model = MasterModel(self.robot, cfg, T_base)
        self.corrections = Corrections(shape, cfg.blend_time, cfg.haptic_limb)
        self.contact = ContactModel(spec, cfg, T_base[cfg.haptic_limb], on_rock_moved=self._show_rock)
        self.mapping.target_filter = self.contact.limit_target
        self._k = 0
        self.over_budget = 0
        self.haptic_recoveries = 0
        self._on_time = 0
        self.log = SessionLog(1)
        self.model_tip = np.full(3, np.nan)  # the haptic limb's tip in the model (m, world), last tick
        self.last_report: StateReport | None = None  # the newest state report of the robot

    @property
    def shown_bodies(self) -> list[int]:
        """The master world's bodies that move besides the limbs: the rock (moved where it is located) and
        the free objects (where the robot reports them)."""
        return [self.rock, *self._free]

    def _show_rock(self, centre: np.ndarray) -> None:
        """Move the master world's rock to the modelled centre ``(3,)`` (m, world)."""
        pb.resetBasePositionAndOrientation(
            self.rock, centre.tolist(), [0, 0, 0, 1], physicsClientId=self.world.client
        )

    def tick(self, device: InputDevice, *, deadline_met: bool = True) -> np.ndarray:
        """One 1 ms master tick (and the slave's and the channels'); returns the device force ``(3,)`` (N)."""
        w0 = time.perf_counter()
        t, dt, cfg = self.world.time, self.world.dt, self.cfg
        sample = device.read(t)
        residual_blending = self.corrections.advance(t)
        rock_blending = self.contact.advance(t)
        cmd = self.mapping.update(sample, dt, self.model.ik_offset)
        self.model.update(self._k, dt, cmd, self.corrections.residuals)
        self.corrections.record(self._k, self.model.command_u, self.model.prediction, self.model.rest_mask())
        self.world.step(contacts=False)  # the master world only shows: no contacts in it
        # the contact rendered: the palpation sensor's ball (the link the slave measures its force on,
        # and the haptic limb's deepest point into the rock in every tick of the scripted session)
        # against the modelled rock and seabed, at the model's pose this tick
        tip, d = self.contact.penetration(self.model.configs[cfg.haptic_limb])
        self.model_tip = tip
        depth = self.contact.record(self._k, d)
        force = self.haptics.tick(
            d,
            stiffness=self.contact.render_stiffness(dt),
            deadline_met=deadline_met,
            device_ok=sample.ok,
            link_ok=self.watchdog.check(t),
        )
        self._recover_deadline_fault(deadline_met)
        device.send_force(force)
        self.transport.send_command(self._k, t, cmd, self.mapping.grips)
        if time.perf_counter() - w0 > dt:
            self.over_budget += 1
        for payload in self.transport.commands_arrived(t):
            self.slave.receive(payload)
        self.slave.tick(dt)  # in its own process: collects what the robot sent
        self.transport.send_states(self._k, t, self.slave)
        self.transport.video.deliver(t)
        for report in self.transport.reports(self._k, t):
            self.watchdog.heard(t, report.sent)
            self.last_report = report
            self.corrections.learn(report, t, haptic_depth=self.contact.depth_at(report.tick))
            self.contact.learn(report, t)
            for body, p in zip(self._free, report.objects.tolist(), strict=True):
                pb.resetBasePositionAndOrientation(body, p[:3], p[3:], physicsClientId=self.world.client)
        if self.log.due(self._k):
            self.log.add(
                t=t,
                tip_m=tip,
                tip_s=self.slave.tip(),
                f_m=force,
                f_s=self.slave.force,
                blending=residual_blending or rock_blending,
                depth_m=depth,
                k_env=self.contact.k_env,
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
        priority: bool = False,
    ) -> dict[str, float]:
        """Tick for ``duration`` s on a :class:`pccbullet.sim.loop.Loop`; ``on_visual(frame, t)`` every
        ``visual_every`` ticks. Returns the loop statistics (``real_time_factor``, p50/p99 tick, ...).

        ``catch_sigint``: Ctrl-C ends the run cleanly (the statistics say ``interrupted``).
        ``priority`` (real time): the loop runs under real-time scheduling where the system allows it
        (:func:`~pccbullet.teleop.realtime.realtime_priority`), sleeping its waits, and a robot in its own
        process too, below it; the statistics' ``realtime_priority`` (and the robot's) say whether they
        did."""
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

        with realtime_priority() if realtime and priority else contextlib.nullcontext(False) as rt:
            loop = Loop(
                self.world,
                visual_rate=1.0 / (visual_every * self.world.dt),
                realtime=realtime,
                on_visual=visual,
                spin_window=0.0 if rt else spin_window,
                step=lambda: self._tick_none(device, loop),
                stop=stop,
            )
            if isinstance(self.slave, SlaveProcess):
                self.slave.start(priority=realtime and priority)
            stats: dict[str, object] = dict(loop.run(duration, catch_sigint=catch_sigint).as_dict())
        stats["realtime_priority"] = rt
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
        """Tip and force errors, forces, contact agreement, traffic (the metrics table of docs/guide/demo.md;
        :func:`~pccbullet.teleop.mmt.metrics.session_metrics`)."""
        values = SessionValues(
            k_env=self.contact.k_env,
            rock_located=self.contact.rock_located,
            rock_error=float(np.linalg.norm(self.contact.rock - np.asarray(self.cfg.rock_true))),
            slave_reflex_ticks=self.slave.reflex_ticks,
            state_updates=self.transport.updates,
            ticks_over_budget=self.over_budget,
            haptic_faults_latched=self.haptics.faults_latched,
            haptic_recoveries=self.haptic_recoveries,
        )
        link = self.transport
        return session_metrics(self.log, self.world.dt, link.command_delay(), link.down, link.up, values)

    def tendon_report(self) -> dict[str, object]:
        """``drive``, ``limbs`` (the tendon-driven ones) and ``peak_tension_n``: the largest tension (N)
        each of their actuators applied over the session
        (:meth:`~pccbullet.teleop.slave.Slave.peak_tensions`; a robot in its own process sends them when
        it stops); empty without tendon-driven limbs; ``objects``: the placed objects' grasp figures at the
        end (:meth:`~pccbullet.teleop.slave.Slave.object_report`)."""
        if isinstance(self.slave, SlaveProcess):
            peaks = self.slave.stats.get("peak_tension_n", {})
            objects = self.slave.stats.get("objects", {})
        else:
            peaks, objects = self.slave.peak_tensions(), self.slave.object_report()
        limbs = list(self.tendon_limbs)
        return {"drive": self.cfg.drive, "limbs": limbs, "peak_tension_n": peaks, "objects": objects}

    def robot_report(self) -> dict[str, object]:
        """Whether the robot was heard: the watchdog's record
        (:meth:`~pccbullet.teleop.mmt.watchdog.RobotWatchdog.summary`) and, for a robot in its own
        process, ``process_exit_code`` (``None`` while it runs; negative: killed by that signal)."""
        out = self.watchdog.summary()
        if isinstance(self.slave, SlaveProcess):
            out["process_exit_code"] = self.slave.exitcode
        return out

    def close(self) -> None:
        """Close both worlds."""
        self.slave.close()
        self.world.close()

    def __enter__(self) -> MmtSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
