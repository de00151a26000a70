"""Seed 000's water-hydraulic arm driven by its chambers in a dynamic PyBullet world: the counterpart of the
Newton–Euler runs (:func:`pccbullet.sim.models.hydraulics.simulate_hydraulic_arm`,
:func:`pccbullet.sim.models.chamber_statics.steady_poses`) on the rod chain, for the comparisons of
``docs/guide/pressure.md``.

The arm is loaded with ``drive = "chambers"`` (:mod:`pccbullet.sim.limb.chambers`): its six lines are the
hydraulic drives of seed 000 sec. 2.3, driven by the motor torques of a profile
(:func:`~pccbullet.sim.models.hydraulics.motor_torque_profile`) or held at constant torques.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen import naming


def bullet_hydraulic_arm(
    torques: Callable[[float], FloatArray] | str,
    duration: float,
    *,
    sections: int = 10,
    record_every: int = 10,
    medium: str = "air",
    robot: str = "hydraulic_arm",
) -> dict[str, FloatArray]:
    """Run ``robot``'s first limb in a dynamic world with drive ``"chambers"`` under motor torques.

    Args:
        torques: the motor torques ``(6,)`` (N m) as a function of time (s), or a profile name of
            :func:`~pccbullet.sim.models.hydraulics.motor_torque_profile`.
        duration: simulated time (s), at the world's 1 ms step.
        sections: sections per segment of the rod chain.
        record_every: record every this many steps.
        medium: the world's medium.

    Returns:
        As :func:`~pccbullet.sim.models.hydraulics.simulate_hydraulic_arm`: ``t`` ``(m,)`` (s), ``torque``
        ``(m, 6)`` (N m), ``pressure`` ``(m, 6)`` (Pa), ``tips`` ``(m, S, 3)``: the segments' end points (m)
        in the limb base frame (z along the undeformed limb).
    """
    from pccbullet.sim.models.hydraulics import motor_torque_profile
    from pccbullet.sim.world import World

    if isinstance(torques, str):
        name = torques
        motor_torque_profile(name, 0.0)  # the name's check

        def profile(t: float) -> FloatArray:
            return motor_torque_profile(name, t)

        torques = profile
    rec: dict[str, list] = {"t": [], "torque": [], "pressure": [], "tips": []}
    with World(mode="dynamic", medium=medium) as world:
        handle = world.load_robot(robot, drive="chambers", sections=sections)
        limb = handle.spec.limbs[0]
        chambers = handle.compliant[limb.name].chambers
        assert chambers is not None
        ends = [naming.segment_end_link(limb.name, s) for s in range(1, len(limb.segments) + 1)]
        steps = int(round(duration / world.dt))
        for k in range(steps + 1):
            t = k * world.dt
            T = np.asarray(torques(t), dtype=float)
            if k % record_every == 0:
                T_base_world = np.linalg.inv(handle.T_world_limbbase(limb.name))
                rec["t"].append(t)
                rec["torque"].append(T)
                rec["pressure"].append(chambers.pressures)
                rec["tips"].append([(T_base_world @ handle.link_pose(e))[:3, 3] for e in ends])
            if k == steps:
                break
            chambers.set_motor_torques(T)
            world.step()
    return {key: np.asarray(val) for key, val in rec.items()}


def bullet_steady_tips(
    torques: Sequence[Sequence[float]], *, hold: float = 4.0, sections: int = 10, robot: str = "hydraulic_arm"
) -> FloatArray:
    """The segments' end points ``(m, S, 3)`` (m, limb base frame) after holding each row of ``torques``
    ``(m, 6)`` (N m) for ``hold`` seconds, one row after the other in one run (a staircase, as the bundled
    Fig. 11 experiments)."""
    rows = np.atleast_2d(np.asarray(torques, dtype=float))
    every = int(round(hold / 1e-3))

    def staircase(t: float) -> FloatArray:
        return rows[min(int(t / hold + 1e-9), len(rows) - 1)]

    run = bullet_hydraulic_arm(
        staircase, hold * len(rows), sections=sections, record_every=every, robot=robot
    )
    # the record at k * hold is the end of hold k - 1 (before the step that starts the next row)
    return run["tips"][1:]
