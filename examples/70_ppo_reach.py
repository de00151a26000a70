"""Train Stable-Baselines3 PPO on pccbullet/UrsulaReach-v1 (kinematic camera tentacle) and plot its
learning curve: the success rate of the deterministic policy on held-out targets every --eval-every steps.

A benchmark, not a test: it takes minutes of CPU. Install the extra (a CPU build of PyTorch first, so that
pip does not pull a GPU one):

    pip install torch --index-url https://download.pytorch.org/whl/cpu   # or any CPU wheel of PyTorch
    pip install -e ".[rl-train]"
    nice -n 10 python examples/70_ppo_reach.py --out runs/ppo_reach [--steps 200000] [--seed 0]

Writes into --out: curve.csv (steps, success rate, median final distance, wall time), curve.png,
summary.json, the policy (ppo_reach.zip) and the observation statistics (vecnormalize.pkl).
"""

import argparse
import csv
import json
import time
from pathlib import Path

import gymnasium as gym
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402

import pccbullet.sim.rl  # noqa: E402 -- registers the ids

gym.register_envs(pccbullet.sim.rl)
ENV_ID = "pccbullet/UrsulaReach-v1"
EVAL_SEED = 1_000_000  # held-out targets: training episodes draw from the training seeds' generators

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--out", type=Path, required=True)
parser.add_argument("--steps", type=int, default=200_000, help="environment steps of training")
parser.add_argument("--envs", type=int, default=8, help="environments stepped together")
parser.add_argument("--eval-every", type=int, default=20_000, help="steps between evaluations")
parser.add_argument("--eval-episodes", type=int, default=100)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
args.out.mkdir(parents=True, exist_ok=True)
torch.set_num_threads(1)  # small networks: threads cost more than they give on a shared machine

venv = VecNormalize(make_vec_env(ENV_ID, n_envs=args.envs, seed=args.seed), norm_obs=True, norm_reward=False)
model = PPO(
    "MlpPolicy",
    venv,
    n_steps=256,
    batch_size=256,
    policy_kwargs={"log_std_init": -1.0},  # exploration std 0.37 of the full rates: precise near the target
    seed=args.seed,
    device="cpu",
    verbose=0,
)


def evaluate(episodes: int) -> tuple[float, float, list[float]]:
    """Success rate and median final distance (m) of the deterministic policy on held-out targets."""
    env = gym.make(ENV_ID)
    finals, successes = [], 0
    for k in range(episodes):
        obs, info = env.reset(seed=EVAL_SEED + k)
        done = False
        while not done:
            action, _ = model.predict(venv.normalize_obs(obs), deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        successes += info["is_success"]
        finals.append(info["distance_m"])
    env.close()
    return successes / episodes, float(np.median(finals)), finals


rows, t0 = [], time.perf_counter()
rate, median, finals = evaluate(args.eval_episodes)
rows.append((0, rate, median, 0.0))
print(f"{0:>7} steps: success {rate:.0%}, median final distance {1e3 * median:.1f} mm", flush=True)
while model.num_timesteps < args.steps:
    model.learn(args.eval_every, reset_num_timesteps=False)
    venv.training = False
    rate, median, finals = evaluate(args.eval_episodes)
    venv.training = True
    wall = time.perf_counter() - t0
    rows.append((model.num_timesteps, rate, median, wall))
    print(
        f"{model.num_timesteps:>7} steps: success {rate:.0%}, median final distance {1e3 * median:.1f} mm "
        f"({wall:.0f} s)",
        flush=True,
    )
model.save(args.out / "ppo_reach")
venv.save(str(args.out / "vecnormalize.pkl"))
with open(args.out / "curve.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["steps", "success_rate", "median_final_distance_m", "wall_s"])
    w.writerows(rows)
summary = {
    "env": ENV_ID,
    "steps": model.num_timesteps,
    "success_rate": rows[-1][1],
    "eval_episodes": args.eval_episodes,
    "median_final_distance_m": rows[-1][2],
    "final_within_5mm": float(np.mean(np.array(finals) < 0.005)),
    "final_within_20mm": float(np.mean(np.array(finals) < 0.02)),
    "wall_s": rows[-1][3],
    "seed": args.seed,
}
(args.out / "summary.json").write_text(json.dumps(summary, indent=2))
steps = np.array([r[0] for r in rows]) / 1e3
fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
ax.plot(steps, [100 * r[1] for r in rows], "o-", color="tab:blue", label="success rate (10 mm)")
ax.axhline(80, color="tab:blue", ls=":", lw=1)
ax.set(xlabel="training steps (thousands)", ylabel="success rate (%)", ylim=(-3, 103))
ax2 = ax.twinx()
ax2.semilogy(steps, [1e3 * r[2] for r in rows], "s--", color="tab:orange", label="median final distance")
ax2.set_ylabel("median final distance (mm)")
ax.set_title(f"PPO on {ENV_ID}, kinematic camera tentacle, {args.eval_episodes} held-out targets")
lines = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
ax.legend(lines, [ln.get_label() for ln in lines], loc="center right")
fig.savefig(args.out / "curve.png", dpi=120)
print(json.dumps(summary, indent=2))
