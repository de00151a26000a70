"""The 1 kHz / 50 Hz loop, kinematic contact refresh, and the bench command (values, not timings)."""

from __future__ import annotations

import gc
import json

import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bench import bench_world, format_table, machine_jitter
from pccbullet.sim.bullet import pb
from pccbullet.sim.loop import SPIN_WINDOW_S, Loop, compute_n_steps, frozen_gc, wait_until
from pccbullet.sim.world import World
from pccbullet.teleop.cli import main
from pccbullet.urdf_gen.pcc import PccConfig


def test_compute_n_steps_and_rates_that_do_not_divide() -> None:
    assert compute_n_steps(50.0, 1e-3) == 20
    assert compute_n_steps(1000.0, 1e-3) == 1
    with pytest.raises(ConfigurationError, match=r"rate = 300 Hz does not divide the physics rate 1000 Hz"):
        compute_n_steps(300.0, 1e-3)
    with pytest.raises(ConfigurationError, match=r"rate = 0 Hz with dt = 0.001 s is invalid"):
        compute_n_steps(0, 1e-3)


def test_loop_calls_tick_every_step_and_visual_every_20_steps() -> None:
    ticks: list[float] = []
    frames: list[float] = []
    with World(mode="kinematic") as world:
        stats = Loop(world, on_tick=ticks.append, on_visual=frames.append).run(0.1)
    assert stats.physics_steps == 100 and len(ticks) == 100
    assert stats.visual_frames == 5 and frames == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08])
    assert stats.real_time_factor > 0 and stats.step_p99_ms >= stats.step_p50_ms
    with pytest.raises(ConfigurationError, match=r"duration = -1 s is invalid"):
        Loop(world).run(-1)


def test_kinematic_world_refreshes_contacts_when_something_moved() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        ball_shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.05, physicsClientId=world.client)
        tip = robot.tip_pose("camera")[:3, 3]
        ball = pb.createMultiBody(
            0, ball_shape, -1, (tip + [0, 0, 1.0]).tolist(), physicsClientId=world.client
        )
        world.step()
        assert pb.getContactPoints(bodyA=ball, physicsClientId=world.client) == ()
        pb.resetBasePositionAndOrientation(ball, tip.tolist(), [0, 0, 0, 1], physicsClientId=world.client)
        world.mark_moved()
        world.step()
        assert len(pb.getContactPoints(bodyA=ball, physicsClientId=world.client)) > 0
        robot.set_pcc("camera", [PccConfig(1.5, 3.14, 0.6)])  # bend away
        world.step()
        assert pb.getContactPoints(bodyA=ball, physicsClientId=world.client) == ()


def test_kinematic_step_without_contacts_defers_the_refresh() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        ball_shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.05, physicsClientId=world.client)
        tip = robot.tip_pose("camera")[:3, 3]
        ball = pb.createMultiBody(0, ball_shape, -1, tip.tolist(), physicsClientId=world.client)
        world.step(3, contacts=False)
        assert world.time == pytest.approx(0.003)
        assert pb.getContactPoints(bodyA=ball, physicsClientId=world.client) == ()  # not refreshed yet
        world.step()  # the ball was added after the last refresh: the next refresh sees it
        assert len(pb.getContactPoints(bodyA=ball, physicsClientId=world.client)) > 0
    with (
        World(mode="dynamic") as world,
        pytest.raises(ConfigurationError, match="contacts = False is invalid"),
    ):
        world.step(contacts=False)


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_bench_world_row(mode: str) -> None:
    row = bench_world("ursula", mode, 2, "water", seconds=0.05)
    rod = mode == "dynamic"  # the default chains: rod in dynamic worlds, RRP in kinematic ones
    # (4 N + 3) (rod) or (3 N + 1) (RRP) joint-vector entries per segment, 6 segments at N = 2
    assert row["joints"] == (6 * 11 if rod else 6 * 7)
    assert row["physics_steps"] == 50 and row["physics_rate_hz"] > 0
    # the timed parts lie inside the loop's wall time; kinematic limbs have no spring joints to control
    assert row["pybullet_ms"] > 0 and row["other_ms"] > 0  # other = wall - timed parts
    assert (row["controller_ms"] > 0) == (mode == "dynamic")
    table = format_table({"rows": [row], "peer": [], "models": {}})
    assert f"ursula     {mode:<10} {'rod' if rod else 'rrp'}   joints    2     {66 if rod else 42}" in table


def test_bench_world_row_of_the_rod_chain() -> None:
    row = bench_world("ursula", "dynamic", 2, "water", seconds=0.02, chain="rrp")
    assert row["chain"] == "rrp" and row["joints"] == 6 * 7  # (3N + 1) per segment at N = 2
    assert "ursula     dynamic    rrp   joints    2     42" in format_table(
        {"rows": [row], "peer": [], "models": {}}
    )
    # a kinematic world poses RRP chains whatever the bench's chain
    assert bench_world("ursula", "kinematic", 2, "water", seconds=0.02, chain="rod")["chain"] == "rrp"


def test_bench_cli_json(capsys) -> None:
    argv = ["bench", "--sections", "2", "--mode", "kinematic", "--seconds", "0.02", "--no-models", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["mode"] for r in out["rows"]] == ["kinematic"] and out["models"] == {}
    assert out["machine"]["p99_ms"] >= out["machine"]["p50_ms"] > 0


def test_machine_jitter_reference() -> None:
    ref = machine_jitter(step_ms=0.05, steps=200)
    assert ref["step_ms"] == 0.05
    assert 0 < ref["p50_ms"] <= ref["p99_ms"]
    assert ref["p99_over_p50"] == pytest.approx(ref["p99_ms"] / ref["p50_ms"])
    table = format_table({"rows": [], "peer": [], "models": {}, "machine": ref})
    assert "machine: a constant busy loop (calibrated to 0.05 ms) timed the same way: p50 " in table
    with pytest.raises(ValueError, match=r"step_ms = 0, steps = 200 are invalid"):
        machine_jitter(step_ms=0, steps=200)


def test_loop_runs_with_the_objects_alive_at_its_start_out_of_the_collectors_scans() -> None:
    """A full collection of a loaded world's objects stopped the demo for 73 ms: Loop.run freezes them
    (gc.freeze) for the run and unfreezes them after, errors included."""
    assert gc.get_freeze_count() == 0
    seen: list[int] = []
    with World(mode="kinematic") as world:
        Loop(world, on_tick=lambda t: seen.append(gc.get_freeze_count())).run(0.003)
        assert len(seen) == 3 and min(seen) > 1000  # the world, numpy, pybullet, ... are frozen
        assert gc.get_freeze_count() == 0

        def boom(t: float) -> None:
            raise RuntimeError("tick failed")

        with pytest.raises(RuntimeError, match="tick failed"):
            Loop(world, on_tick=boom).run(0.002)
        assert gc.get_freeze_count() == 0


def test_frozen_gc_leaves_a_callers_own_freeze_in_place() -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with frozen_gc():
            junk = [[i] for i in range(100)]
        assert gc.get_freeze_count() >= before and len(junk) == 100
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0


def test_wait_until_spins_short_waits_and_sleeps_long_ones_minus_the_spin_window(monkeypatch) -> None:
    import pccbullet.sim.loop

    slept: list[float] = []
    real_sleep = pccbullet.sim.loop.time.sleep

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(pccbullet.sim.loop.time, "sleep", sleep)
    clock = pccbullet.sim.loop.time.perf_counter
    deadline = clock() + 0.0005  # a 1 kHz step's slack: spun through, never slept
    wait_until(deadline)
    assert clock() >= deadline and slept == []
    wait_until(clock() - 0.001)  # already late: returns at once
    assert slept == []
    deadline = clock() + 0.05
    wait_until(deadline)
    assert clock() >= deadline and len(slept) == 1
    assert 0.03 < slept[0] <= 0.05 - SPIN_WINDOW_S  # most of the wait, not the last 2 ms


def test_a_negative_spin_window_is_refused() -> None:
    from pccbullet.teleop.mmt.session import MmtSession
    from pccbullet.urdf_gen.spec_loader import load_robot

    with World(mode="kinematic") as world, pytest.raises(ConfigurationError, match="spin_window = -0.001 s"):
        Loop(world, realtime=True, spin_window=-0.001)
    with (
        MmtSession(load_robot("ursula")) as session,
        pytest.raises(ConfigurationError, match="spin_window = -1 s is invalid"),
    ):
        session.run(None, 0.01, spin_window=-1)  # type: ignore[arg-type]
