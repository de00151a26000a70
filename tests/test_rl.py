"""The Gymnasium environments of pccbullet.sim.rl: reach, aim, track, press; vector envs; registration."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from importlib.metadata import entry_points

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from pccbullet.core.errors import ConfigurationError, RobotNotFoundError  # noqa: E402
from pccbullet.sim.rl import ENV_ID, ENVS, MAX_EPISODE_STEPS  # noqa: E402
from pccbullet.sim.rl.base import BEND_RATE, LENGTH_RATE, PLANE_RATE  # noqa: E402
from pccbullet.sim.rl.press import FORCE_RESOLUTION, UrsulaPressEnv  # noqa: E402
from pccbullet.sim.rl.reach import UrsulaAimEnv, UrsulaReachEnv  # noqa: E402
from pccbullet.sim.rl.track import UrsulaTrackEnv  # noqa: E402

TASKS = {
    "reach-kinematic": lambda: UrsulaReachEnv(sections=3),
    "reach-dynamic": lambda: UrsulaReachEnv(mode="dynamic", sections=3),
    "aim": lambda: UrsulaAimEnv(sections=3),
    "track": lambda: UrsulaTrackEnv(sections=3),
    "press": lambda: UrsulaPressEnv(sections=3),
}


@pytest.mark.parametrize(
    "task", [pytest.param(t, marks=pytest.mark.slow) if t == "press" else t for t in TASKS]
)
def test_check_env_passes_twice_on_the_same_env(task) -> None:
    """Before: the second check_env failed, "Deterministic step info are not equivalent" (``time_s`` came
    from the world's clock, which runs on across resets)."""
    env = TASKS[task]()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a Gymnasium warning (bounds, dtypes, determinism) fails
            check_env(env, skip_render_check=True)
            check_env(env, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("task", ["reach-kinematic", "reach-dynamic", "aim", "track"])
def test_same_seed_same_steps_rewards_and_infos(task) -> None:
    runs = []
    for _ in range(2):
        env = TASKS[task]()
        actions = np.random.default_rng(7).uniform(-1, 1, (60, 3)).astype(np.float32)
        obs, info = env.reset(seed=42)
        trace, infos = [obs], [info]
        for a in actions:
            obs, reward, terminated, _, info = env.step(a)
            trace += [obs, np.float32([reward])]
            infos.append(info)
            assert -1.0 <= reward <= 2.0 and info["is_success"] == terminated or task == "track"
        env.close()
        runs.append((np.concatenate(trace), infos))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]
    assert [i["time_s"] for i in runs[0][1][:3]] == [0.0, 0.02, 0.04]
    env = TASKS[task]()
    other, _ = env.reset(seed=43)
    env.close()
    assert not np.array_equal(other, runs[0][0][: len(other)])


def _towards(env, desired: np.ndarray) -> np.ndarray:
    """Rate-limited steps of the commanded configuration towards ``desired``."""
    step = np.tile([BEND_RATE, PLANE_RATE, LENGTH_RATE], len(env.segments)) * env.control_dt
    return np.clip((desired - env.pcc) / step, -1.0, 1.0).astype(np.float32)


def _reach_policy(env: UrsulaReachEnv, obs: np.ndarray) -> np.ndarray:
    """Scripted: the target's PCC configuration in closed form from the observation (one segment: the
    circular arc from the limb base, tangent to its z axis, through the target), then rate-limited
    steps towards it."""
    x, y, z = (np.linalg.inv(env.T_head_base) @ np.append(obs[3:6], 1.0))[:3]
    r = math.hypot(x, y)
    bend = 2.0 * math.atan2(r, z)
    return _towards(env, np.array([bend, math.atan2(y, x), bend * (r * r + z * z) / (2.0 * r)]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scripted_policy_reaches_within_5_mm(seed) -> None:
    env = gym.make(ENV_ID, sections=5, success_radius=0.005)
    obs, info = env.reset(seed=seed)
    d0 = info["distance_m"]
    assert d0 > 0.1 and not info["is_success"]
    total = 0.0
    for _ in range(MAX_EPISODE_STEPS):
        obs, reward, terminated, truncated, info = env.step(_reach_policy(env.unwrapped, obs))
        total += reward
        if terminated or truncated:
            break
    env.close()
    assert terminated and not truncated and info["is_success"] and info["distance_m"] < 0.005
    # normalized: each step's progress is clipped to [-1, 1], so they add up to at most the distance
    # covered over the most one step covers; plus the success bonus
    bound = (d0 - info["distance_m"]) / env.unwrapped.tip_step
    assert 1.0 + 0.5 * bound < total <= 1.0 + bound + 1e-9


def test_aim_scripted_policy_reaches_and_looks_at_the_mark() -> None:
    env = UrsulaAimEnv(sections=5)
    obs, info = env.reset(seed=3)
    assert info["angle_rad"] > 0.2 and not info["is_success"]
    goal = np.array([v for c in env.target_pcc() for v in (c.bend, c.plane, c.length)])
    for _ in range(MAX_EPISODE_STEPS):
        obs, reward, terminated, _, info = env.step(_towards(env, goal))
        if terminated:
            break
    env.close()
    assert terminated and info["distance_m"] < 0.01 and info["angle_rad"] < math.radians(10)
    assert obs[26] == pytest.approx(info["angle_rad"], abs=1e-5)  # the observation's angle entry
    np.testing.assert_allclose(obs[22:25], [0.0, 0.0, 0.3], atol=0.02)  # the mark 0.3 m ahead of the tip


def test_track_a_policy_that_knows_the_motion_stays_on_the_target() -> None:
    env = UrsulaTrackEnv(sections=5)
    env.reset(seed=5)
    start = env.target.copy()
    on, rewards = [], []
    for k in range(MAX_EPISODE_STEPS):
        t = (k + 1) * env.control_dt
        desired = env._centre + env._amplitude * np.sin(2 * math.pi * env._frequency * t + env._phase)
        _, reward, terminated, _, info = env.step(_towards(env, desired))
        on.append(info["is_success"])
        rewards.append(reward)
        assert not terminated
    moved = float(np.linalg.norm(env.target - start))
    env.close()
    assert moved > 0.05  # the target moves
    assert all(on[60:]) and min(rewards[60:]) > 0.8  # caught up after 1.2 s, then on it within 20 mm
    assert -1.0 <= min(rewards) and max(rewards) <= 1.0


@pytest.mark.parametrize("seed", [0, 5])
def test_press_a_force_controller_holds_the_target_force(seed) -> None:
    """Pressing is feasible: lengthening the arcs (the env's ``push``) by the force error's integral
    reaches and holds the target force on the rock."""
    env = UrsulaPressEnv(sections=3)
    _, info = env.reset(seed=seed)
    assert env.force_rest <= info["force_n"] + 0.05 and env.force_max - env.force_rest >= 0.02
    assert env.force_rest < env.target_force < env.force_max
    share = 0.0
    for _ in range(MAX_EPISODE_STEPS):
        error = (env.target_force - info["force_n"]) / env.force_max
        share = float(np.clip(share + 2.0 * error * env.control_dt, 0.0, 1.0))
        _, reward, terminated, _, info = env.step(_towards(env, env.goal_pcc + share * env.push))
        if terminated:
            break
    env.close()
    assert terminated and info["is_success"] and reward > 0.0  # the success bonus was paid
    within = max(0.1 * info["target_force_n"], FORCE_RESOLUTION)  # the default tolerance
    assert abs(info["force_n"] - info["target_force_n"]) < within


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_equal_single_envs(mode) -> None:
    """``gym.make_vec`` with 2 copies steps like 2 single envs with the same seeds (bit for bit)."""
    import pccbullet.sim.rl

    gym.register_envs(pccbullet.sim.rl)
    actions = np.random.default_rng(3).uniform(-1, 1, (30, 2, 3)).astype(np.float32)
    envs = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode=mode, sections=2)
    try:
        obs, infos = envs.reset(seed=[10, 11])
        trace = [obs]
        for a in actions:
            obs, rewards, terminated, truncated, infos = envs.step(a)
            trace += [obs, rewards[:, None].astype(np.float32)]
        assert infos["is_success"].dtype == bool and infos["is_success"].shape == (2,)
    finally:
        envs.close()
    for i, seed in enumerate([10, 11]):
        env = gym.make(ENV_ID, sections=2)
        single = [env.reset(seed=seed)[0]]
        done = False
        for a in actions:
            assert not done  # no episode ends within 30 random steps here: no autoreset to follow
            obs, reward, terminated, truncated, _ = env.step(a[i])
            single += [obs, np.float32([reward])]
            done = terminated or truncated
        env.close()
        np.testing.assert_array_equal(np.concatenate([t[i] for t in trace]), np.concatenate(single))


def test_rgb_array_shows_limb_and_target() -> None:
    env = UrsulaReachEnv(render_mode="rgb_array", sections=3)
    env.reset(seed=0)
    image = env.render()
    env.close()
    assert image is not None and image.shape == (240, 320, 3) and image.dtype == np.uint8
    r, g, b = (image[..., i].astype(int) for i in range(3))
    assert np.sum((r > 180) & (g < 170) & (b < 130)) > 200  # the orange limb
    assert np.sum((g > 150) & (r < 100) & (b < 100)) > 5  # the green target


def test_bad_arguments_raise() -> None:
    with pytest.raises(
        ConfigurationError, match="render_mode = 'human' is invalid; allowed: None, 'rgb_array'"
    ):
        UrsulaReachEnv(render_mode="human")
    with pytest.raises(ConfigurationError, match="robot 'ursula' has no limb 'tail'"):
        UrsulaReachEnv(limb="tail")
    with pytest.raises(ConfigurationError, match=r"success_radius = -1 is invalid; allowed: a number > 0 m"):
        UrsulaReachEnv(success_radius=-1)
    with pytest.raises(ConfigurationError, match="mode = 'fast' is invalid; allowed: 'kinematic', 'dynamic'"):
        UrsulaTrackEnv(mode="fast")
    with pytest.raises(ConfigurationError, match="mode = 'kinematic' is invalid for the press task"):
        UrsulaPressEnv(mode="kinematic")
    with pytest.raises(
        ConfigurationError,
        match=r"limb = 'camera' is invalid for the press task on robot 'ursula'; allowed: the limbs with a "
        r"force sensor \('palpation'\)",
    ):
        UrsulaPressEnv(limb="camera")
    with pytest.raises(RobotNotFoundError, match="robot file 'missing.toml' does not exist"):
        UrsulaReachEnv(robot="missing.toml")


@pytest.mark.parametrize("task", [UrsulaReachEnv, UrsulaTrackEnv, UrsulaAimEnv])
def test_observations_have_one_size_in_both_modes(task) -> None:
    """The limb's part is the commanded PCC and the sections' velocities (3 N S), not the joints, which
    differ between the RRP chain (kinematic) and the rod chain (dynamic)."""
    shapes = []
    for mode in ("kinematic", "dynamic"):
        env = task(mode=mode, sections=3)
        try:
            obs, _ = env.reset(seed=1)
            obs, *_ = env.step(env.action_space.sample())
            assert obs.shape == env.observation_space.shape
            shapes.append(obs.shape)
        finally:
            env.close()
    assert shapes[0] == shapes[1]


def test_section_velocities_are_the_sections_motion_over_a_step() -> None:
    """In kinematic mode the limb is where the command puts it: the sections' velocities in the observation
    are the PCC section ends' displacement (from the forward kinematics) over 20 ms."""
    env = UrsulaReachEnv(sections=2)
    try:
        env.reset(seed=3)
        before = env.section_points()
        obs, *_ = env.step(np.ones(3, np.float32))
        after = env.section_points()
        np.testing.assert_allclose(obs[19:], ((after - before) / 0.02).ravel(), rtol=1e-5, atol=1e-5)
        assert np.abs(obs[19:]).max() > 0.1  # m/s: the tip moved
    finally:
        env.close()


def test_registered_in_a_fresh_process() -> None:
    """No import but Gymnasium's: the module prefix makes Gymnasium import pccbullet.sim.rl, which registers
    every id; the v0 id of the reach task names v1."""
    code = (
        "import gymnasium\n"
        "env = gymnasium.make('pccbullet.sim.rl:pccbullet/UrsulaReach-v1', sections=2)\n"
        "obs, _ = env.reset(seed=0); print(env.spec.id, env.spec.max_episode_steps, obs.shape)\n"
        "print(sorted(k for k in gymnasium.envs.registry if k.startswith('pccbullet/')))\n"
        "try:\n    gymnasium.make('pccbullet/UrsulaReach-v0')\nexcept gymnasium.error.Error as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[-3].split() == ["pccbullet/UrsulaReach-v1", "200", "(25,)"]
    assert lines[-2] == repr(sorted(ENVS))
    assert lines[-1].startswith(
        "DeprecatedEnv Environment version v0 for `pccbullet/UrsulaReach` is deprecated"
    )


def test_gymnasium_1_convention_in_a_fresh_process() -> None:
    """``import pccbullet.sim.rl`` registers the ids; ``gym.register_envs`` takes the module; bare ids work."""
    code = (
        "import gymnasium as gym; import pccbullet.sim.rl; gym.register_envs(pccbullet.sim.rl); "
        "env = gym.make('pccbullet/UrsulaAim-v1', sections=2); obs, _ = env.reset(seed=0); "
        "print(env.spec.id, env.spec.entry_point, obs.shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-3:] == ["pccbullet/UrsulaAim-v1", "pccbullet.sim.rl.reach:UrsulaAimEnv", "(37,)"]


def test_entry_point_is_declared() -> None:
    (ep,) = [e for e in entry_points(group="gymnasium.envs") if e.name == "pccbullet"]
    assert ep.value == "pccbullet.sim.rl:register_envs"
    registry = gym.envs.registry
    specs = {k: registry.pop(k) for k in ENVS}  # importing pccbullet.sim.rl registered them
    try:
        ep.load()()
        assert all(k in registry for k in ENVS)
        ep.load()()  # idempotent
        assert all(k in registry for k in ENVS)
    finally:
        registry.update(specs)
