"""The Gymnasium environment ``pccbullet/UrsulaReach-v0`` (pccbullet.sim.rl)."""

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

from pccbullet.sim.rl import BEND_RATE, ENV_ID, LENGTH_RATE, PLANE_RATE, UrsulaReachEnv  # noqa: E402


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_check_env_passes_without_warnings(mode) -> None:
    env = UrsulaReachEnv(mode=mode, sections=3)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a Gymnasium warning (bounds, dtypes, determinism) fails
            check_env(env, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_same_seed_same_100_steps(mode) -> None:
    runs = []
    for _ in range(2):
        env = UrsulaReachEnv(mode=mode, sections=3)
        actions = np.random.default_rng(7).uniform(-1, 1, (100, 3)).astype(np.float32)
        obs, _ = env.reset(seed=42)
        trace = [obs]
        for a in actions:
            obs, reward, *_ = env.step(a)
            trace.append(obs)
            trace.append(np.float32([reward]))
        env.close()
        runs.append(np.concatenate(trace))
    np.testing.assert_array_equal(runs[0], runs[1])
    env = UrsulaReachEnv(mode=mode, sections=3)
    other, _ = env.reset(seed=43)
    env.close()
    assert not np.array_equal(other, runs[0][: len(other)])


def _policy(env: UrsulaReachEnv, obs: np.ndarray) -> np.ndarray:
    """Scripted: the target's PCC configuration in closed form from the observation (one segment: the
    circular arc from the limb base, tangent to its z axis, through the target), then rate-limited
    steps towards it."""
    T_base_head = np.linalg.inv(env._T_head_base)
    x, y, z = (T_base_head @ np.append(obs[3:6], 1.0))[:3]
    r = math.hypot(x, y)
    bend = 2.0 * math.atan2(r, z)
    length = bend * (r * r + z * z) / (2.0 * r)
    desired = np.array([bend, math.atan2(y, x), length])
    step = np.array([BEND_RATE, PLANE_RATE, LENGTH_RATE]) * env.control_dt
    return np.clip((desired - obs[9:12]) / step, -1.0, 1.0).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scripted_policy_reaches_within_5_mm(seed) -> None:
    env = gym.make("pccbullet.sim.rl:" + ENV_ID, sections=5)
    obs, info = env.reset(seed=seed)
    assert info["distance_m"] > 0.1
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(_policy(env.unwrapped, obs))
        if terminated or truncated:
            break
    env.close()
    assert terminated and not truncated
    assert info["distance_m"] < 0.005 and reward == -info["distance_m"]


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
    from pccbullet.urdf_gen.errors import ConfigurationError

    with pytest.raises(
        ConfigurationError, match="render_mode = 'human' is invalid; allowed: None, 'rgb_array'"
    ):
        UrsulaReachEnv(render_mode="human")
    with pytest.raises(ConfigurationError, match="robot 'ursula' has no limb 'tail'"):
        UrsulaReachEnv(limb="tail")


def test_registered_in_a_fresh_process() -> None:
    """No import but Gymnasium's: the module prefix makes Gymnasium import pccbullet.sim.rl, which registers."""
    code = (
        "import gymnasium; env = gymnasium.make('pccbullet.sim.rl:pccbullet/UrsulaReach-v0', sections=2); "
        "obs, _ = env.reset(seed=0); print(env.spec.id, env.spec.max_episode_steps, obs.shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-4:] == ["pccbullet/UrsulaReach-v0", "200", "(19,)"]


def test_gymnasium_1_convention_in_a_fresh_process() -> None:
    """``import pccbullet.sim.rl`` registers the id; ``gym.register_envs`` takes the module; a bare id works."""
    code = (
        "import gymnasium as gym; import pccbullet.sim.rl; gym.register_envs(pccbullet.sim.rl); "
        "env = gym.make('pccbullet/UrsulaReach-v0', sections=2); obs, _ = env.reset(seed=0); "
        "print(env.spec.id, env.spec.entry_point, obs.shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-3:] == ["pccbullet/UrsulaReach-v0", "pccbullet.sim.rl:UrsulaReachEnv", "(19,)"]


def test_entry_point_is_declared() -> None:
    (ep,) = [e for e in entry_points(group="gymnasium.envs") if e.name == "pccbullet"]
    assert ep.value == "pccbullet.sim.rl:register_envs"
    registry = gym.envs.registry
    spec = registry.pop(
        ENV_ID
    )  # importing pccbullet.sim.rl registered it: the entry point must register it again
    try:
        ep.load()()
        assert ENV_ID in registry
        ep.load()()  # idempotent
        assert ENV_ID in registry
    finally:
        registry[ENV_ID] = spec
