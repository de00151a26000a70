"""The remote robot in its own process: the dynamic slave paced to the wall clock at 1 kHz.

Real-time teleoperation runs the slave (:class:`pccbullet.teleop.slave.Slave`, the soft squid in
seawater) as a separate process, as the remote robot it stands for: it has its own core, and the master's 1
kHz haptic loop never waits for its physics. The acoustic link is still emulated on the master's side (the
:class:`~pccbullet.teleop.channel.Channel` objects delay and drop the packets); a pipe carries them between
the processes in microseconds. Besides the link's packets the process sends, at 50 Hz, what an external
observer records (its haptic tip and sensor force) for the session log, and at 10 Hz, when asked, the
joint vectors of its limbs for the demo's GIF. On :meth:`SlaveProcess.close` it reports its loop
statistics (real-time factor, tick p50/p99, late ticks), or, when the process ended before, its exit code.
Its loop sleeps its waits; started with ``priority`` it runs under real-time scheduling where the system
allows it, below the master's loop (:mod:`pccbullet.teleop.realtime`). The robot's process ends by
itself, quietly, within :data:`MASTER_CHECK_TICKS` ticks when the master's process dies (it is
re-parented) or the pipe to it breaks.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from pccbullet.core.errors import ConfigurationError, SimulationDivergedError
from pccbullet.sim.loop import wait_until
from pccbullet.sim.views.scene import SceneFrame
from pccbullet.teleop.mmt.video import camera_frame, encode_frame, video_plan
from pccbullet.teleop.realtime import RT_PRIORITY

if TYPE_CHECKING:
    from pccbullet.teleop.mmt.config import MmtConfig
    from pccbullet.urdf_gen.specs import RobotSpec

OBSERVE_EVERY = 20  # ticks between two observer samples (50 Hz)
POSE_EVERY = 100  # ticks between two recorded limb poses (10 Hz)
COLLECT_EVERY = 5  # master ticks between two looks at the pipe (a poll is a system call, ~5-15 us)
START_TIMEOUT_S = 120.0  # s, longest wait for the slave process to build its world
MASTER_CHECK_TICKS = 50  # robot ticks between two checks that the master process lives (50 ms)
MASTER_CHECK_S = 0.05  # s, the same check's period while the robot waits for the start
# s, the part of each wait of the robot's loop that is spun, not slept: none. The robot catches up by
# absolute deadlines after a late wake-up, and its reports cross a link with 20 ms of jitter; spinning
# kept a whole core busy that the master, the operator's device and the viewer need on 2 cores
ROBOT_SPIN_S = 0.0
ROBOT_RT_PRIORITY = RT_PRIORITY - 10  # the robot's loop, when real-time: below the master's


def _slave_main(
    spec: RobotSpec,
    cfg: MmtConfig,
    conn: Any,
    events: tuple[Any, Any, Any],
    record_poses: bool,
    spin_window: float,
) -> None:
    # Ctrl-C in a terminal, and its SIGHUP when it closes, reach the whole process group: the master
    # ends the session and stops us (a SIGTERM meant for us alone still ends us)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    master = os.getppid()
    go, stop, priority = events
    from pccbullet.teleop.realtime import realtime_priority
    from pccbullet.teleop.slave import Slave

    slave = Slave(spec, cfg)
    failed = False
    try:
        conn.send(("ready", None))
        while not go.wait(MASTER_CHECK_S):
            if os.getppid() != master:
                return
        with realtime_priority(ROBOT_RT_PRIORITY) if priority.value else contextlib.nullcontext(False) as rt:
            stats = _slave_loop(slave, conn, stop, record_poses, master, spin_window)
        if stats is not None:
            stats["realtime_priority"] = rt
            conn.send(("stats", stats))
    except (OSError, EOFError):  # the master's end of the pipe is gone (BrokenPipeError is an OSError)
        pass
    except SimulationDivergedError as exc:  # the robot is lost: the master notices, the summary says why
        with contextlib.suppress(OSError, EOFError):
            conn.send(("error", str(exc)))
        failed = True
    finally:
        slave.close()
    if failed:
        sys.exit(1)


def _slave_loop(
    slave: Any, conn: Any, stop: Any, record_poses: bool, master: int, spin_window: float
) -> dict | None:
    """The robot's 1 kHz loop until ``stop`` is set; its statistics, or ``None`` when the master process
    died (the process is then re-parented: checked every :data:`MASTER_CHECK_TICKS` ticks)."""
    dt = slave.world.dt
    period = max(1, round(1.0 / (slave.cfg.state_rate * dt)))
    report_bits = 8.0 * len(slave.state_packet(0, 0.0)) * slave.cfg.state_rate
    plan = video_plan(slave.cfg.uplink, report_bits)
    video_every, frames = max(1, round(plan.period / dt)), 0
    clock = time.perf_counter
    times: list[float] = []
    late = k = 0
    start = clock()
    while not stop.is_set():
        if k % MASTER_CHECK_TICKS == 0 and os.getppid() != master:
            return None
        t0 = clock()
        while conn.poll():
            kind, payload = conn.recv()
            if kind == "cmd":
                slave.receive(payload)
        slave.tick(dt)
        if k % period == 0:
            conn.send(("state", slave.state_packet(k + 1, slave.time)))
        if k % OBSERVE_EVERY == 0:
            conn.send(("observe", (slave.time, slave.tip().tolist(), slave.force.tolist())))
        if k % video_every == 0:  # the camera arm's view, sent up the link like the reports
            image = camera_frame(slave.robot, plan.size)
            if image is not None:  # a robot without a camera sends none
                conn.send(("video", encode_frame(image, slave.time, frames, plan.budget)))
                frames += 1
        if record_poses and k % POSE_EVERY == 0:
            joints = {n: slave.robot.joints(n) for n in slave.robot.bodies}
            conn.send(("pose", SceneFrame(slave.time, joints)))
        t1 = clock()
        if len(times) < 3_600_000:  # one hour of tick times at most
            times.append(t1 - t0)
        k += 1
        deadline = start + k * dt
        if t1 < deadline:
            wait_until(deadline, spin_window)
        elif t1 - deadline > dt:
            late += 1
    wall = max(clock() - start, 1e-12)
    arr = np.asarray(times) if times else np.zeros(1)
    return {
        "physics_steps": k,
        "wall_time_s": wall,
        "real_time_factor": k * dt / wall,
        "step_p50_ms": float(np.percentile(arr, 50) * 1e3),
        "step_p99_ms": float(np.percentile(arr, 99) * 1e3),
        "overruns": late,
        "reflex_ticks": slave.reflex_ticks,
        "peak_tension_n": slave.peak_tensions(),
        "objects": slave.object_report(),
        "sections": slave.robot.spec.limbs[0].segments[0].sections,
    }


class SlaveProcess:
    """The slave in its own process, with the interface :class:`pccbullet.teleop.mmt.session.MmtSession` uses.

    Args:
        spec: the robot, as the master read it: pickled to the process with ``cfg``, the session's config
            (the process reads no file).
        record_poses: send the limbs' joint vectors at 10 Hz, as scene frames (:attr:`poses`).
        spin_window: the part of each wait of the robot's loop spun, not slept (s; ``None``:
            :data:`ROBOT_SPIN_S`).
    """

    def __init__(
        self, spec: RobotSpec, cfg: MmtConfig, *, record_poses: bool = False, spin_window: float | None = None
    ) -> None:
        ctx = mp.get_context("spawn")
        spin = ROBOT_SPIN_S if spin_window is None else spin_window
        self._conn, child = ctx.Pipe()
        self._go, self._stop = ctx.Event(), ctx.Event()
        self._priority = ctx.Value("b", 0)
        self._process = ctx.Process(
            target=_slave_main,
            args=(spec, cfg, child, (self._go, self._stop, self._priority), record_poses, spin),
            daemon=True,
        )
        self._process.start()
        self._states: list[bytes] = []
        self._frames: list[bytes] = []
        self.force = np.zeros(3)
        self._tip = np.full(3, np.nan)
        self.poses: list[SceneFrame] = []
        self.stats: dict[str, object] = {}
        self.error: str | None = None  # why its loop failed, if it did
        self.reflex_ticks = 0
        self._ticks = 0
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._conn.poll(0.1):
            if not self._process.is_alive() or time.monotonic() > deadline:
                self._process.kill()
                raise ConfigurationError(
                    f"the slave process did not start (exit code {self._process.exitcode})"
                )
        self._conn.recv()  # ("ready", None)

    def start(self, priority: bool = False) -> None:
        """Let the slave's loop run (it waits after building its world); ``priority``: under real-time
        scheduling where the system allows it, below the master's (:data:`ROBOT_RT_PRIORITY`)."""
        self._priority.value = int(priority)
        self._go.set()

    def receive(self, payload: bytes) -> None:
        """A command packet the link delivered: to the robot (dropped if its process has ended)."""
        try:
            self._conn.send(("cmd", payload))
        except (BrokenPipeError, OSError):
            pass

    def _drain(self) -> None:
        while True:
            try:
                if not self._conn.poll():
                    return
                kind, value = self._conn.recv()
            except (EOFError, OSError):  # the robot's process ended: nothing more will come
                return
            if kind == "state":
                self._states.append(value)
            elif kind == "video":
                self._frames.append(value)
                del self._frames[:-4]  # a stalled master keeps the newest few
            elif kind == "observe":
                _, tip, force = value
                self._tip, self.force = np.asarray(tip), np.asarray(force)
            elif kind == "pose":
                self.poses.append(value)
                del self.poses[:-300]
            elif kind == "stats":
                self.stats = value
                self.reflex_ticks = int(value["reflex_ticks"])
            elif kind == "error":  # its loop failed (SimulationDivergedError): it ends with exit code 1
                self.error = value

    def tick(self, dt: float) -> None:
        """Collect what the robot sent, every :data:`COLLECT_EVERY` ticks (the robot steps on its own; a
        state report waits at most 5 ms more, behind a link of ~1 s)."""
        self._ticks += 1
        if self._ticks % COLLECT_EVERY == 0:
            self._drain()

    def take_states(self) -> list[bytes]:
        """State packets the robot sent since the last call, oldest first."""
        out, self._states = self._states, []
        return out

    def take_frames(self) -> list[bytes]:
        """Camera frame packets the robot sent since the last call, oldest first."""
        out, self._frames = self._frames, []
        return out

    def tip(self) -> np.ndarray:
        """The haptic limb's tip ``(3,)`` (m, world) at the last observer sample."""
        return self._tip

    @property
    def pid(self) -> int | None:
        """The robot process's id."""
        return self._process.pid

    @property
    def exitcode(self) -> int | None:
        """The robot process's exit code (negative: killed by that signal), ``None`` while it runs."""
        return self._process.exitcode

    def close(self, timeout: float = 10.0) -> dict[str, object]:
        """Stop the robot's loop; returns its statistics, or ``{"ended_early": True, "exit_code": c}``
        when its process ended before it was asked to (with ``"error"``: why its loop failed, e.g. its
        simulation diverged)."""
        if not self._process.is_alive() and not self.stats:
            self._drain()
            if not self.stats:
                self.stats = {"ended_early": True, "exit_code": self._process.exitcode}
                if self.error is not None:
                    self.stats["error"] = self.error
        if self._process.is_alive():
            self._go.set()
            self._stop.set()
            deadline = time.monotonic() + timeout
            while not self.stats and time.monotonic() < deadline and self._process.is_alive():
                self._drain()
                time.sleep(0.01)
            self._drain()
            self._process.join(timeout=max(0.0, deadline - time.monotonic()))
            if self._process.is_alive():
                self._process.kill()
        return self.stats
