"""Train Stable-Baselines3 PPO on pccbullet/UrsulaReach-v1 (kinematic camera tentacle) and plot its
learning curve: the success rate of the deterministic policy on held-out targets every --eval-every steps.

A benchmark, not a test: it takes minutes of CPU. Install the extra (a CPU build of PyTorch first, so that
pip does not pull a GPU one):

    pip install torch --index-url https://download.pytorch.org/whl/cpu   # or any CPU wheel of PyTorch
    pip install -e ".[rl-train]"
    nice -n 10 python examples/70_ppo_reach.py --out runs/ppo_reach [--steps 200000] [--seed 0]

Writes into --out: curve.csv (steps, share of held-out targets within 5, 10 (the env's success) and 20 mm
at the episode's end, median final distance, wall time), curve.png,
summary.json, the policy (ppo_reach.zip) and the observation statistics (vecnormalize.pkl).
"""

import argparse
import csv
import time
from pathlib import Path

import gymnasium as gym
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecNormalize

import pccbullet.sim.rl  # registers the ids
from pccbullet.core import strict_json

N_STEPS = 256  # steps per environment and rollout

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
    n_steps=N_STEPS,
    batch_size=256,
    # generalized state-dependent exploration (gSDE, as RL Zoo's PyBullet settings): the noise is a function
    # of the state, resampled every 4 steps, small at first (exp(-2)): precise near the target
    use_sde=True,
    sde_sample_freq=4,
    policy_kwargs={"log_std_init": -2.0, "ortho_init": False},
    seed=args.seed,
    device="cpu",
    verbose=0,
)


def evaluate(episodes: int) -> list[float]:
    """Final tip distances (m) of the deterministic policy on held-out targets."""
    env = gym.make(ENV_ID)
    finals = []
    for k in range(episodes):
        obs, info = env.reset(seed=EVAL_SEED + k)
        done = False
        while not done:
            action, _ = model.predict(venv.normalize_obs(obs), deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        finals.append(info["distance_m"])
    env.close()
    return finals


per_rollout = args.envs * N_STEPS
rollouts, every = args.steps // per_rollout, max(1, args.eval_every // per_rollout)  # at most --steps in all
rows, t0 = [], time.perf_counter()


def record(finals: list[float]) -> None:
    """One row: steps, success rates within 5, 10 (the env's success) and 20 mm, median distance, wall."""
    d = np.array(finals)
    rows.append(
        (model.num_timesteps, *(float(np.mean(d < r)) for r in (0.005, 0.01, 0.02)), float(np.median(d)))
        + (time.perf_counter() - t0,)
    )
    print(
        f"{model.num_timesteps:>7} steps: success {rows[-1][2]:.0%} (within 5 mm {rows[-1][1]:.0%}, "
        f"20 mm {rows[-1][3]:.0%}), median final distance {1e3 * rows[-1][4]:.1f} mm ({rows[-1][5]:.0f} s)",
        flush=True,
    )


record(evaluate(args.eval_episodes))
done = 0
while done < rollouts:
    k = min(every, rollouts - done)
    model.learn(k * per_rollout, reset_num_timesteps=False)
    done += k
    venv.training = False
    record(evaluate(args.eval_episodes))
    venv.training = True
model.save(args.out / "ppo_reach")
venv.save(str(args.out / "vecnormalize.pkl"))
with open(args.out / "curve.csv", "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["steps", "within_5mm", "success_rate", "within_20mm", "median_final_distance_m", "wall_s"])
    w.writerows(rows)
summary = {
    "env": ENV_ID,
    "steps": model.num_timesteps,
    "success_rate": rows[-1][2],
    "within_5mm": rows[-1][1],
    "within_20mm": rows[-1][3],
    "median_final_distance_m": rows[-1][4],
    "eval_episodes": args.eval_episodes,
    "wall_s": rows[-1][5],
    "seed": args.seed,
}
(args.out / "summary.json").write_text(strict_json.dumps(summary, indent=2))
steps = np.array([r[0] for r in rows]) / 1e3
fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
# (an episode ends once within 10 mm, so "within 5 mm" says little and is left out of the plot)
for i, (label, style) in [(2, ("success: ended within 10 mm", "o-")), (3, ("ended within 20 mm", "s--"))]:
    ax.plot(steps, [100 * r[i] for r in rows], style, label=label)
ax.axhline(80, color="grey", lw=0.8)
ax.set(xlabel="training steps (thousands)", ylabel="held-out targets reached (%)", ylim=(-3, 103))
ax.set_title(
    f"PPO, {ENV_ID}\nkinematic camera tentacle, {args.eval_episodes} held-out targets, seed {args.seed}"
)
ax.legend(loc="center right")
fig.savefig(args.out / "curve.png", dpi=120)
print(strict_json.dumps(summary, indent=2))
