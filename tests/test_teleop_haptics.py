"""Haptic renderer: every force finite and bounded (peak, RMS over any 1 s window, ramp after the clamp,
tick-to-tick step), parameters checked, latched and transient faults, partial deadline misses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.scripted import ScriptedDevice
from pccbullet.teleop.haptics import HapticParams, HapticRenderer, passivity_margin

DEEP = np.array([0.0, 0.0, 0.02])  # 20 mm penetration: 8 N raw at 400 N/m
WINDOW = 1000  # ticks in the 1 s RMS window


def _window_rms(forces: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """RMS of |F| over every run of ``window`` consecutive ticks (zero-padded before the first)."""
    sq = np.concatenate([np.zeros(window), np.linalg.norm(forces, axis=1) ** 2])
    c = np.concatenate([[0.0], np.cumsum(sq)])
    return np.sqrt(np.maximum(c[window:] - c[:-window], 0.0) / window)


def _steps(forces: np.ndarray) -> np.ndarray:
    return np.linalg.norm(np.diff(np.vstack([np.zeros(3), forces]), axis=0), axis=1)


def test_ramp_in_over_half_a_second_and_peak_clamp() -> None:
    r = HapticRenderer(HapticParams(stiffness=400.0, damping=2.0))
    small = np.array([0.0, 0.0, 0.001])  # 0.4 N raw, below every clamp
    f = np.array([r.tick(small)[2] for _ in range(600)])
    assert f[249] == pytest.approx(0.4 * 250 / 500, rel=1e-6)  # linear ramp, half way at 0.25 s
    assert f[499:].min() == pytest.approx(0.4, rel=1e-6)
    r = HapticRenderer(HapticParams(ramp_time=0.0, thermal_tau=100.0))  # governor out of the way
    forces = np.array([np.linalg.norm(r.tick(DEEP)) for _ in range(700)])
    assert forces.max() == pytest.approx(3.0, abs=1e-9)  # the peak is reached, never passed
    assert forces[0] == pytest.approx(0.1)  # ... at no more than 0.1 N per tick


def test_ramp_is_applied_after_the_peak_clamp() -> None:
    # old: the ramp scaled the raw 8 N, so the clamp let 3 N through 38 ms after enabling
    r = HapticRenderer()
    forces = np.array([np.linalg.norm(r.tick(DEEP)) for _ in range(500)])
    t = np.arange(1, 501) * 1e-3
    assert forces[37] <= 3.0 * 0.038 / 0.5 + 1e-12  # 0.228 N at 38 ms
    assert np.all(forces <= 3.0 * t / 0.5 + 1e-12)  # never above the ramped peak


def test_force_steps_at_most_a_tenth_of_a_newton_per_tick() -> None:
    # old: 3.0 N from one tick to the next when the tool entered a surface with the ramp done
    r = HapticRenderer(HapticParams(ramp_time=0.0, thermal_tau=100.0))
    out = np.array([r.tick(d) for d in [np.zeros(3)] * 5 + [DEEP] * 100 + [np.zeros(3)] * 50])
    steps = _steps(out)
    assert steps.max() == pytest.approx(0.1, abs=1e-12)
    assert np.linalg.norm(out[5 + 29]) == pytest.approx(3.0)  # 3 N after 30 ticks
    assert np.linalg.norm(out[-1]) == 0.0  # contact lost: back to 0 N within 30 ticks


def test_rms_over_every_1s_window_stays_at_or_below_the_continuous_force() -> None:
    # old: a first-order thermal model; 1 s windows reached 1.21 N RMS against 0.88 N
    k = np.arange(8000)
    patterns = {
        "hard press": np.full(8000, 0.02),
        "press 1.5 s / release 0.5 s": np.where(k % 2000 < 1500, 0.02, 0.0),
        "tap 0.1 s / 0.3 s": np.where(k % 400 < 100, 0.02, 0.0),
    }
    for name, depth in patterns.items():
        for ramp in (0.5, 0.0):
            r = HapticRenderer(HapticParams(ramp_time=ramp))
            out = np.array([r.tick([0.0, 0.0, z]) for z in depth])
            rms = _window_rms(out)
            assert rms.max() <= 0.88 + 1e-9, (name, ramp, rms.max())
            assert r.rms == pytest.approx(rms[-1], abs=1e-9)
            assert _steps(out).max() <= 0.1 + 1e-12, name
    r = HapticRenderer()  # sustained pressing settles at 0.8 N without a step
    out = np.linalg.norm([r.tick(DEEP) for _ in range(10_000)], axis=1)
    assert out[-3000:] == pytest.approx(np.full(3000, 0.8), abs=1e-9)
    assert out.max() > 1.5  # a peak above the continuous force is felt at first


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e308, 1.5], ids=str)
def test_bad_penetration_latches_a_fault_and_sends_zero_newtons(bad: float) -> None:
    # old: one NaN, inf or 1e308 made every later in-contact force NaN and the thermal state NaN
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    before = [r.tick(DEEP) for _ in range(100)]
    assert np.linalg.norm(before[-1]) > 1.0
    out = r.tick([0.0, bad, 0.02])
    assert out.tolist() == [0.0, 0.0, 0.0]
    assert r.fault is not None and "not finite or longer than 1 m" in r.fault
    after = np.array([r.tick(DEEP) for _ in range(2000)])
    assert not after.any()  # latched
    assert math.isfinite(r.thermal) and math.isfinite(r.rms)
    r.reset()
    resumed = np.array([r.tick(DEEP) for _ in range(100)])
    assert np.isfinite(resumed).all() and np.linalg.norm(resumed[-1]) > 1.0


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("damping", math.nan, r"damping = nan is invalid; allowed: finite and >= 0"),
        ("device_damping", math.nan, r"device_damping = nan is invalid; allowed: finite and > 0"),
        ("max_missed", math.nan, r"max_missed = nan is invalid; allowed: 1 <= max_missed"),
        ("peak_force", math.inf, r"peak_force = inf is invalid; allowed: finite and > 0"),
        ("stiffness", -1.0, r"stiffness = -1.0 is invalid"),
        ("continuous_force", 4.0, r"continuous_force = 4.0 is invalid; allowed: 0 < F <= peak_force"),
        ("sustained_force", 0.9, r"sustained_force = 0.9 is invalid; allowed: 0 < F <= continuous_force"),
        ("ramp_time", math.nan, r"ramp_time = nan is invalid"),
        ("max_step", 0.0, r"max_step = 0.0 is invalid"),
        ("miss_leak", 1.5, r"miss_leak = 1.5 is invalid; allowed: 0 < miss_leak <= 1"),
        ("max_penetration", math.inf, r"max_penetration = inf is invalid"),
        ("thermal_tau", "1", r"thermal_tau = '1' is invalid"),
        ("dt", 1e-3 * (1 + 0j), r"dt = \(0.001\+0j\) is invalid"),
    ],
    ids=lambda v: str(v)[:20],
)
def test_bad_parameters_are_refused_on_construction(field: str, value: object, match: str) -> None:
    # old: damping=NaN (every force NaN), device_damping=NaN (no passivity check), max_missed=NaN
    # (no watchdog) and peak_force=inf (40 N through) were accepted
    with pytest.raises(ConfigurationError, match=r"HapticParams\." + match):
        HapticParams(**{field: value})  # type: ignore[arg-type]


def test_bad_parameter_values_are_capped_in_the_message() -> None:
    with pytest.raises(ConfigurationError) as err:
        HapticParams(damping="x" * 10_000)  # type: ignore[arg-type]
    assert len(str(err.value)) < 160


def test_zero_force_after_three_missed_deadlines_latched_until_reset() -> None:
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    d = np.array([0.0, 0.0, 0.001])
    assert np.linalg.norm(r.tick(d)) > 0
    r.tick(d, deadline_met=False)
    r.tick(d, deadline_met=False)
    assert np.linalg.norm(r.last_force) > 0  # two misses are tolerated
    assert not r.tick(d, deadline_met=False).any()
    assert r.fault == "missed deadlines (leaky count 3 >= 3)"
    assert not any(r.tick(d).any() for _ in range(100))  # latched until reset
    r.reset()
    assert r.tick(d).any()


@pytest.mark.parametrize(
    ("pattern", "latch_tick"),
    [((False, True, True), 12), ((False, False, True), 4), ((True, False, False), 5)],
    ids=["1 of 3 missed", "2 of 3 missed", "2 of 3 missed, late start"],
)
def test_partial_deadline_misses_latch(pattern: tuple[bool, ...], latch_tick: int) -> None:
    # old: only consecutive misses counted; missing 1 or 2 of every 3 deadlines never latched
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    d = np.array([0.0, 0.0, 0.001])
    latched = None
    for k in range(3000):
        r.tick(d, deadline_met=pattern[k % 3])
        if r.fault is not None:
            latched = k
            break
    assert latched == latch_tick


def test_isolated_misses_below_twenty_percent_never_latch() -> None:
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    d = np.array([0.0, 0.0, 0.001])
    for k in range(10_000):
        r.tick(d, deadline_met=k % 6 != 0)  # 1 of 6 missed: 16.7 %
    assert r.fault is None and np.linalg.norm(r.last_force) == pytest.approx(0.4)


def test_device_error_gives_zero_while_it_lasts_and_clears_with_the_ramp() -> None:
    # old: a device error latched for good, so a stream that came back never felt a force again
    device = ScriptedDevice(fail_at=0.005)
    r = HapticRenderer(HapticParams(ramp_time=0.0))
    d = np.array([0.0, 0.0, 0.001])
    out = [r.tick(d, device_ok=device.read(k * 1e-3).ok) for k in range(10)]
    assert all(f.any() for f in out[:5]) and not any(f.any() for f in out[5:])
    assert r.device_fault and r.fault is None
    r = HapticRenderer()  # ramp 0.5 s
    for _ in range(1000):
        r.tick(d)
    assert np.linalg.norm(r.last_force) == pytest.approx(0.4)
    assert not any(r.tick(d, device_ok=False).any() for _ in range(200))
    back = np.linalg.norm([r.tick(d) for _ in range(600)], axis=1)
    assert not r.device_fault and r.fault is None
    assert back[249] == pytest.approx(0.2, rel=1e-6)  # half way up the 0.5 s ramp
    assert back[499:].min() == pytest.approx(0.4, rel=1e-6)
    assert _steps(back[:, None] * [0, 0, 1]).max() <= 0.1


def test_fuzz_every_force_finite_and_bounded() -> None:
    """Seeded, bounded: 40 runs x 2500 ticks of random penetrations (with NaN, inf, 1e308, huge and
    negative values), random missed deadlines, device errors and resets; every other run with random
    limits (peak, continuous and sustained force, step, RMS window, thermal time constant)."""
    rng = np.random.default_rng(16)
    specials = np.array([math.nan, math.inf, -math.inf, 1e308, -1e308, 1e6, 0.9])
    for run in range(40):
        p = HapticParams(ramp_time=float(rng.choice([0.0, 0.05, 0.5])))
        if run % 2:  # other limits too: every bound must hold for any valid setting
            peak = float(rng.uniform(1.0, 5.0))
            fc = float(rng.uniform(0.2, 1.0)) * peak
            p = HapticParams(
                peak_force=peak,
                continuous_force=fc,
                sustained_force=float(rng.uniform(0.3, 1.0)) * fc,
                max_step=float(rng.uniform(0.005, 0.5)),
                rms_window=float(rng.choice([0.2, 0.5, 1.0])),
                thermal_tau=float(rng.uniform(0.05, 2.0)),
                ramp_time=float(rng.choice([0.0, 0.05, 0.5])),
            )
        r = HapticRenderer(p)
        n = 2500
        depth = rng.choice([0.0, 0.002, 0.01, 0.05], size=(n // 50, 3)).repeat(50, axis=0)
        depth += rng.normal(0.0, 0.002, size=(n, 3))
        bad = rng.random(n) < 0.002
        depth[bad, rng.integers(0, 3, bad.sum())] = rng.choice(specials, bad.sum())
        met = rng.random(n) > rng.choice([0.0, 0.1, 0.4])
        ok = rng.random(n) > 0.01
        out = np.empty((n, 3))
        cut = np.zeros(n, dtype=bool)  # ticks where a fault cut the force to zero
        for k in range(n):
            if rng.random() < 0.002:
                r.reset()
            out[k] = r.tick(depth[k], deadline_met=bool(met[k]), device_ok=bool(ok[k]))
            cut[k] = not r.active
        assert np.isfinite(out).all(), run
        assert np.linalg.norm(out, axis=1).max() <= p.peak_force + 1e-12, run
        steps = _steps(out)
        assert steps[~cut].max() <= p.max_step + 1e-12, run
        assert not out[cut].any(), run
        assert _window_rms(out, round(p.rms_window / p.dt)).max() <= p.continuous_force + 1e-9, run
        assert math.isfinite(r.thermal) and math.isfinite(r.rms), run


def test_passivity_check() -> None:
    assert passivity_margin(400.0, 2.0, 2.5, 1e-3) == pytest.approx(0.3)
    with pytest.raises(ConfigurationError, match=r"not passive .* allowed: b > K T/2 \+ \|B\| = 3.2"):
        HapticParams(stiffness=400.0, damping=3.0, device_damping=2.5)
    HapticParams(stiffness=500.0, damping=3.0, device_damping=3.5)


def test_penetration_needs_no_contact_refresh_and_matches_the_contact_points() -> None:
    from pccbullet.sim.bullet import pb
    from pccbullet.sim.world import World
    from pccbullet.teleop.penetration import penetration

    with World(mode="kinematic") as world:
        cid = world.client
        robot = world.load_robot("ursula", sections=3)
        body = robot.bodies["camera"]
        tip = robot.tip_pose("camera")
        shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.05, physicsClientId=cid)
        centre = tip[:3, 3] + 0.04 * tip[:3, 2]  # 40 mm beyond the tip along its axis: overlapping
        ball = pb.createMultiBody(0, shape, -1, centre.tolist(), physicsClientId=cid)
        far = pb.createMultiBody(0, shape, -1, (centre + [0.0, 0.0, 1.0]).tolist(), physicsClientId=cid)
        d = penetration(cid, body, [ball, far])  # no world.step(): nothing refreshed
        assert 1e-3 < np.linalg.norm(d) < 0.05
        assert np.dot(d, tip[:3, 2]) < 0  # pushes the tip back out of the ball
        world.step()  # the contact points the function read before
        deepest = min(pb.getContactPoints(bodyA=body, bodyB=ball, physicsClientId=cid), key=lambda c: c[8])
        np.testing.assert_allclose(d, -deepest[8] * np.asarray(deepest[7]), atol=1e-9)
        assert penetration(cid, body, [far]).tolist() == [0.0, 0.0, 0.0]


def test_ball_penetration_equals_bullets_contact_of_a_ball_with_a_sphere_and_a_plane() -> None:
    """Seeded, bounded: 300 ball positions around a rock on the seabed, touching one, both or nothing."""
    from pccbullet.sim.bullet import pb
    from pccbullet.sim.objects.environment import add_seabed, add_sphere
    from pccbullet.sim.world import World
    from pccbullet.teleop.penetration import ball_penetration, penetration

    rng = np.random.default_rng(7)
    rock, R, z0, r = np.array([0.45, 0.06, -0.54]), 0.06, -0.6, 0.01
    with World(mode="kinematic") as world:
        cid = world.client
        bodies = [add_sphere(world, rock, R), add_seabed(world, z0, half_extent=2.0)]
        shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=r, physicsClientId=cid)
        ball = pb.createMultiBody(0, shape, -1, [0, 0, 1], physicsClientId=cid)
        kinds = set()
        for _ in range(300):
            p = rock + rng.uniform(-0.09, 0.09, 3)
            pb.resetBasePositionAndOrientation(ball, p.tolist(), [0, 0, 0, 1], physicsClientId=cid)
            expected = penetration(cid, ball, bodies)
            got = ball_penetration(p, r, rock, R, z0)
            np.testing.assert_allclose(got, expected, atol=1e-12)
            kinds.add((np.linalg.norm(p - rock) < R + r, p[2] < z0 + r))
    assert kinds == {(False, False), (True, False), (False, True), (True, True)}
