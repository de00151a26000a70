"""pccbullet.sim.loop.Loop: a custom step, the deadline flag, early stop and a clean Ctrl-C."""

from __future__ import annotations

import math
import os
import signal

import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.loop import Loop


class _Clock:
    dt = 1e-3

    def __init__(self) -> None:
        self.time = 0.0
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        self.time += self.dt


def test_custom_step_replaces_world_step_and_sees_the_deadline_flag() -> None:
    world, seen = _Clock(), []

    def tick() -> None:
        seen.append(loop.deadline_met)
        world.time += world.dt

    loop = Loop(world, step=tick)
    stats = loop.run(0.05)
    assert stats.physics_steps == 50 and len(seen) == 50 and all(seen)
    assert world.steps == 0  # the world's own step was not called


def test_stop_ends_the_run_early_with_stats_of_the_steps_done() -> None:
    world = _Clock()
    stats = Loop(world, stop=lambda: world.steps >= 7).run(1.0)
    assert stats.physics_steps == 7 and world.steps == 7 and not stats.interrupted
    assert stats.interrupted_by is None


def test_ctrl_c_ends_the_run_cleanly_and_restores_the_handler() -> None:
    world = _Clock()
    before = signal.getsignal(signal.SIGINT)

    def tick() -> None:
        world.step()
        if world.steps == 5:
            os.kill(os.getpid(), signal.SIGINT)

    stats = Loop(world, step=tick).run(1.0, catch_sigint=True)
    assert stats.interrupted and stats.physics_steps == 5 and stats.interrupted_by == "SIGINT"
    assert signal.getsignal(signal.SIGINT) is before


def test_without_catch_sigint_ctrl_c_raises() -> None:
    world = _Clock()

    def tick() -> None:
        world.step()
        if world.steps == 3:
            os.kill(os.getpid(), signal.SIGINT)

    # Python's own handler, whatever the process inherited (a shell may start it with SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            Loop(world, step=tick).run(1.0)
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("duration", [0.0, -1.0, math.nan, math.inf])
def test_bad_duration_is_refused(duration: float) -> None:
    with pytest.raises(ConfigurationError, match="duration = .* s is invalid; allowed: a finite number > 0"):
        Loop(_Clock()).run(duration)


def test_nan_spin_window_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="spin_window = nan s is invalid"):
        Loop(_Clock(), spin_window=math.nan)


def _flags(fake, durations: list[float]) -> tuple[list[bool], list[bool], int]:
    """Run len(durations) real-time steps of the given durations (s) on the fake clock ``fake``
    (conftest's ``loop_clock``); the deadline and losing-ground flags each step saw, and the overruns."""
    world, met, losing = _Clock(), [], []

    def tick() -> None:
        met.append(loop.deadline_met)
        losing.append(loop.losing_ground)
        fake.now += durations[len(met) - 1]
        world.time += world.dt

    loop = Loop(world, step=tick, realtime=True)
    stats = loop.run(len(durations) * world.dt)
    return met, losing, stats.overruns


def test_a_stall_is_one_step_losing_ground_and_the_catch_up_is_not(loop_clock) -> None:
    """A 5 ms stall in 0.2 ms steps: the steps after it end more than 1 ms late while the loop catches
    up (overruns, deadline_met False), but only the stalled step lost ground."""
    durations = [2e-4] * 10 + [5e-3] + [2e-4] * 30
    met, losing, overruns = _flags(loop_clock, durations)
    assert overruns >= 4 and met.count(False) == overruns
    assert losing.count(True) == 1 and losing[11]  # the flag is seen by the step after the stall


def test_a_sustained_overload_loses_ground_every_step(loop_clock) -> None:
    """1.5 ms steps at 1 kHz: once more than 1 ms behind, every step ends further behind."""
    met, losing, overruns = _flags(loop_clock, [1.5e-3] * 20)
    first = losing.index(True)
    assert first <= 4 and all(losing[first:]) and overruns == losing.count(True) + 1  # + the last step
