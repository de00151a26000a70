"""The Gymnasium env pccbullet/UrsulaReach-v1: random actions, steps per second in both modes.

pip install -e ".[rl]"; python examples/60_gym_reach.py [STEPS]
"""

import sys
import time

import gymnasium as gym

from pccbullet.sim.bench import machine_jitter

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
probe = machine_jitter()  # the constant-work probe: 0.5 ms of work, timed 2000 times
print(f"probe: p50 {probe['p50_ms']:.3f} ms, p99 {probe['p99_ms']:.3f} ms")
for mode in ("kinematic", "dynamic"):
    env = gym.make("pccbullet.sim.rl:pccbullet/UrsulaReach-v1", mode=mode)  # camera tentacle, N = 5
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(steps)]
    t0 = time.perf_counter()
    for a in actions:
        _, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            env.reset()
    wall = time.perf_counter() - t0
    env.close()
    ms = 1e3 * wall / steps
    print(f"{mode:>9}: {steps / wall:8.0f} env steps/s ({steps} steps of 20 ms, {ms:.3f} ms each)")
