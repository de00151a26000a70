"""The simulation loop: physics every ``dt``, visuals every ``round(1 / visual_rate / dt)`` steps.

Real-time mode paces every step to an absolute deadline ``start + (i + 1) dt`` (no drift from sleep
jitter); batch mode runs as fast as possible. Statistics: achieved physics and visual rates, real-time
factor, p50/p99 step time and overruns (steps finished more than one ``dt`` after their deadline).

Waiting for a deadline spins for its last :data:`SPIN_WINDOW_S` (:func:`wait_until`) instead of
sleeping: on a virtual machine a thread that sleeps leaves its virtual CPU idle, and waking it again can
take milliseconds. A real-time run thus keeps one core busy; ``spin_window=0`` sleeps instead (the GUI
demo does, so that its viewer process gets the CPU).

Python's cyclic garbage collector stops the loop while it scans the objects a loaded world and its
libraries hold (tens of milliseconds for a full collection). :func:`frozen_gc` moves every object alive
when a run starts out of the collector's reach (``gc.freeze``) for the run, so it scans only what the run
itself allocates. Measurements: ``docs/measurements/performance.md``, pacing.
"""

from __future__ import annotations

import gc
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError

VISUAL_RATE = 50.0  # Hz


def compute_n_steps(rate_hz: float, dt: float) -> int:
    """Physics steps per period of ``rate_hz``; raises if ``1 / rate_hz`` is not a whole number of ``dt``."""
    if rate_hz <= 0 or dt <= 0:
        raise ConfigurationError(f"rate = {rate_hz!r} Hz with dt = {dt!r} s is invalid; allowed: both > 0")
    n = round(1.0 / (rate_hz * dt))
    if n < 1 or abs(n * dt * rate_hz - 1.0) > 1e-9:
        raise ConfigurationError(
            f"rate = {rate_hz:g} Hz does not divide the physics rate {1.0 / dt:g} Hz; "
            f"allowed: a rate whose period is a whole number of {dt:g} s steps"
        )
    return n


SPIN_WINDOW_S = 0.002  # a wait's last seconds are spun, not slept (see the module docstring)


def wait_until(deadline: float, spin_window: float = SPIN_WINDOW_S) -> None:
    """Return at ``time.perf_counter() >= deadline``: sleep for all but the last ``spin_window`` seconds
    of the wait, spin for the rest (a sleeping virtual CPU can take milliseconds to wake up)."""
    clock = time.perf_counter
    remaining = deadline - clock()
    if remaining > spin_window:
        time.sleep(remaining - spin_window)
    while clock() < deadline:
        pass


@contextmanager
def frozen_gc() -> Iterator[None]:
    """Keep the objects alive on entry out of the garbage collector's scans until exit.

    Cheap both ways (the collector splices its lists). Garbage already unreachable on entry is kept
    until exit too, then collected as usual. If the caller had frozen objects itself, they stay
    frozen on exit (with those of this block).
    """
    outer = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not outer:
            gc.unfreeze()


class LoopWorld(Protocol):
    """What a :class:`Loop` uses of the world it drives (:class:`pccbullet.sim.world.World`)."""

    @property
    def dt(self) -> float:
        """Physics step (s)."""
        ...

    @property
    def time(self) -> float:
        """Simulated time (s)."""
        ...

    def step(self) -> None:
        """Advance by one physics step."""
        ...


@dataclass(frozen=True, slots=True)
class LoopStats:
    """What a run of :class:`Loop` achieved (rates in Hz, times in ms)."""

    physics_steps: int
    visual_frames: int
    wall_time_s: float
    physics_rate_hz: float
    visual_rate_hz: float
    real_time_factor: float
    step_p50_ms: float
    step_p99_ms: float
    overruns: int
    interrupted: bool = False
    interrupted_by: str | None = None
    """The signal that interrupted the run (``"SIGINT"``; ``"SIGTERM"``, ``"SIGHUP"`` where they are Ctrl-C:
    :mod:`pccbullet.teleop.interrupts`), ``None`` when none did."""

    def as_dict(self) -> dict[str, float]:
        """Plain dict for JSON."""
        return asdict(self)


class Loop:
    """Drive a world: ``on_tick(t)`` before every physics step, ``on_visual(t)`` every visual period.

    Args:
        world: a :class:`pccbullet.sim.world.World` (:class:`LoopWorld`: anything with ``dt``, ``time`` and
            ``step()``).
        visual_rate: visual frames per second; must divide the physics rate.
        realtime: pace to absolute deadlines (True) or run as fast as possible (False).
        spin_window: real time: a wait's last seconds that are spun, not slept (:func:`wait_until`);
            0 sleeps the whole wait and leaves the core to other processes.
        step: what one physics step is (default ``world.step()``); e.g. a teleoperation tick that steps
            several worlds. It can read :attr:`deadline_met` (whether the previous step ended in time).
        stop: asked after every step; ``True`` ends the run early (stats cover the steps done).

    Attributes:
        deadline_met: real time: ``False`` when the previous step ended more than one ``dt`` after its
            deadline (an overrun); always ``True`` in batch mode.
        losing_ground: real time: ``True`` when the previous step ended more than one ``dt`` after its
            deadline *and* later after it than the step before: the loop fell further behind (a stall
            or an overload), rather than catching up after one. A stall of a few ms is one such step,
            the steps that catch up after it are overruns but not this; under a sustained overload
            every step is. Always ``False`` in batch mode.
        interrupted: set by Ctrl-C during :meth:`run` with ``catch_sigint=True``; the run then ends after
            the current step.
        interrupted_by: the name of the signal that set :attr:`interrupted` (``"SIGINT"``, or the signal a
            handler passed on as Ctrl-C), ``None`` until one does.
    """

    def __init__(
        self,
        world: LoopWorld,
        *,
        visual_rate: float = VISUAL_RATE,
        realtime: bool = False,
        on_tick: Callable[[float], None] | None = None,
        on_visual: Callable[[float], None] | None = None,
        spin_window: float = SPIN_WINDOW_S,
        step: Callable[[], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        if not spin_window >= 0:
            raise ConfigurationError(f"spin_window = {spin_window!r} s is invalid; allowed: >= 0")
        self.spin_window = spin_window
        self.step = step if step is not None else world.step
        self.stop = stop
        self.deadline_met = True
        self.losing_ground = False
        self.interrupted = False
        self.interrupted_by: str | None = None
        self.world = world
        self.dt: float = world.dt
        self.visual_every = compute_n_steps(visual_rate, self.dt)
        self.realtime = realtime
        self.on_tick = on_tick
        self.on_visual = on_visual

    def run(self, duration: float, *, catch_sigint: bool = False) -> LoopStats:
        """Run for ``duration`` simulated seconds (rounded to whole steps), with the objects alive at the
        start out of the garbage collector's scans (:func:`frozen_gc`).

        ``catch_sigint``: Ctrl-C (SIGINT) ends the run cleanly after the current step instead of raising
        ``KeyboardInterrupt`` (main thread only; the previous handler is restored on exit)."""
        if not (duration > 0 and math.isfinite(duration)):
            raise ConfigurationError(f"duration = {duration!r} s is invalid; allowed: a finite number > 0")
        with frozen_gc(), _sigint_flag(self if catch_sigint else None):
            return self._run(int(round(duration / self.dt)))

    def _run(self, steps: int) -> LoopStats:
        world = self.world
        times = np.empty(steps)
        overruns = frames = 0
        clock = time.perf_counter
        start = clock()
        step, stop = self.step, self.stop
        done = 0
        late_before = 0.0  # how late the previous step ended (s; <= 0: in time)
        for i in range(steps):
            t0 = clock()
            now = world.time
            if self.on_tick is not None:
                self.on_tick(now)
            if i % self.visual_every == 0:
                frames += 1
                if self.on_visual is not None:
                    self.on_visual(now)
            step()
            t1 = clock()
            times[i] = t1 - t0
            done = i + 1
            if self.realtime:
                deadline = start + (i + 1) * self.dt
                late = t1 - deadline
                if late < 0.0:
                    self.deadline_met = True
                    self.losing_ground = False
                    wait_until(deadline, self.spin_window)
                else:
                    self.deadline_met = late <= self.dt
                    self.losing_ground = late > self.dt and late > late_before
                    overruns += not self.deadline_met
                late_before = late
            if self.interrupted or (stop is not None and stop()):
                break
        wall = max(clock() - start, 1e-12)
        t = times[:done] if done else np.zeros(1)
        return LoopStats(
            physics_steps=done,
            visual_frames=frames,
            wall_time_s=wall,
            physics_rate_hz=done / wall,
            visual_rate_hz=frames / wall,
            real_time_factor=done * self.dt / wall,
            step_p50_ms=float(np.percentile(t, 50) * 1e3),
            step_p99_ms=float(np.percentile(t, 99) * 1e3),
            overruns=overruns,
            interrupted=self.interrupted,
            interrupted_by=self.interrupted_by,
        )


@contextmanager
def _sigint_flag(loop: Loop | None) -> Iterator[None]:
    """While inside, SIGINT sets ``loop.interrupted`` instead of raising (main thread only)."""
    if loop is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        loop.interrupted = True
        loop.interrupted_by = signal.Signals(signum).name

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
