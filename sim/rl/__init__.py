"""Gymnasium environments of pccbullet (``pip install "pccbullet[rl]"``): URSULA limbs that reach, aim,
track and press.

=============================  ==================================================================
id                             task (class)
=============================  ==================================================================
``pccbullet/UrsulaReach-v1``   the tip reaches a point (``reach.UrsulaReachEnv``)
``pccbullet/UrsulaAim-v1``     the camera reaches a point and looks at a mark (``reach.UrsulaAimEnv``)
``pccbullet/UrsulaTrack-v1``   the tip follows a moving point (``track.UrsulaTrackEnv``)
``pccbullet/UrsulaPress-v1``   the palpation sensor presses a rock at a force (``press.UrsulaPressEnv``)
=============================  ==================================================================

Every task acts on PCC parameter rates (:class:`~pccbullet.sim.rl.base.LimbEnv`), pays a normalized reward
in ``[-1, 2]`` and reports ``info["is_success"]`` (the key Stable-Baselines3 and RL Zoo read) and
``info["time_s"]`` (control steps times 20 ms: equal episodes give bit-equal infos). Importing this module
registers the ids (Gymnasium 1.x's convention for third-party environments)::

    import gymnasium as gym
    import pccbullet.sim.rl

    gym.register_envs(pccbullet.sim.rl)  # a no-op that keeps the import from looking unused
    env = gym.make("pccbullet/UrsulaReach-v1", mode="dynamic")
    envs = gym.make_vec("pccbullet/UrsulaReach-v1", num_envs=4, vectorization_mode="async")

``gym.make("pccbullet.sim.rl:pccbullet/UrsulaReach-v1")`` imports the module itself. The package also
declares :func:`register_envs` under Gymnasium's ``gymnasium.envs`` entry-point group, which Gymnasium
0.26-0.29 load on import; Gymnasium 1.x reads no entry points. The ``-v0`` ids (reward ``-d`` in metres,
no success flag) are gone: Gymnasium names ``-v1`` when one asks for them.
"""

from __future__ import annotations

try:
    import gymnasium  # noqa: F401 -- the extra's check, before anything registers
except ImportError as exc:  # pragma: no cover (the rl extra is in the test extra)
    raise ImportError("pccbullet.sim.rl needs Gymnasium: pip install 'pccbullet[rl]'") from exc

MAX_EPISODE_STEPS = 200  # control steps of 20 ms: 4 s
ENVS = {
    "pccbullet/UrsulaReach-v1": "pccbullet.sim.rl.reach:UrsulaReachEnv",
    "pccbullet/UrsulaAim-v1": "pccbullet.sim.rl.reach:UrsulaAimEnv",
    "pccbullet/UrsulaTrack-v1": "pccbullet.sim.rl.track:UrsulaTrackEnv",
    "pccbullet/UrsulaPress-v1": "pccbullet.sim.rl.press:UrsulaPressEnv",
}
ENV_ID = "pccbullet/UrsulaReach-v1"  # the reach task, the one the PPO example trains


def register_envs() -> None:
    """Register the ids of :data:`ENVS` with Gymnasium (idempotent), each with a ``TimeLimit`` of
    :data:`MAX_EPISODE_STEPS`. This is the package's ``gymnasium.envs`` entry point."""
    # from the submodule: Gymnasium 0.29 calls this while ``gymnasium.envs`` is still being imported
    from gymnasium.envs.registration import register, registry

    for env_id, entry_point in ENVS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry_point, max_episode_steps=MAX_EPISODE_STEPS)


register_envs()  # importing the module registers the ids
