"""Seed 000's water-hydraulic arm driven by its chambers in PyBullet, against the closed forms, the paper
and the Newton–Euler model: the figures of docs/guide/pressure.md.

Usage: python examples/25_seed000_pressure_drive.py [--sections N]
Prints: one chamber's bend and stretch without gravity against ``p A r L / (E I)`` and ``p A L / (3 E
A_s)``; sec. 3.1's two chambers at 1 MPa (165.7 deg); Fig. 11's steady section ends against the
Newton–Euler statics (linear walls, 20 pieces); the 1.5 N m steps' settling times (5 % band of the section
tips) against the paper's bounds and the Newton–Euler run's, and their steady tips against the statics.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

MPA = 1e6


def main(argv: list[str] | None = None) -> int:
    from pccbullet.sim.models.chamber_statics import steady_poses
    from pccbullet.sim.models.hydraulic_world import bullet_hydraulic_arm, bullet_steady_tips
    from pccbullet.sim.models.hydraulics import motor_torque_profile, settling_time, simulate_hydraulic_arm
    from pccbullet.sim.world import World
    from pccbullet.urdf_gen.spec_loader import load_robot

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", type=int, default=20, help="sections per segment in PyBullet")
    args = ap.parse_args(argv)
    n = args.sections
    limb = load_robot("hydraulic_arm").limbs[0]
    act = limb.actuators
    EI = limb.material.youngs_modulus * math.pi * limb.segments[0].radius_base ** 4 / 4.0
    walls = act.count * limb.material.youngs_modulus * 3.93e-4
    for label, p in (
        ("one chamber, 0.5 MPa", [0, 0, 0, 0.5 * MPA, 0, 0]),
        ("P2 = P3 = 1 MPa", [0, MPA, MPA, 0, 0, 0]),
    ):
        with World(mode="dynamic", gravity=(0.0, 0.0, 0.0)) as world:
            handle = world.load_robot("hydraulic_arm", drive="chambers", sections=n)
            handle.compliant["arm"].chambers.set_pressures(p)
            world.step(3000)
            arcs = handle.measured_pcc("arm")
        s = 1 if p[3] else 0
        moment = act.area * act.offset * (p[3] if s else p[1])  # two at 120 deg: |b2 + b3| = 1
        force = act.area * sum(p[3 * s : 3 * s + 3])
        print(
            f"{label}: section {s + 1} bend {math.degrees(arcs[s].bend):.2f} deg (closed form "
            f"{math.degrees(moment * 0.25 / EI):.2f}), arc {1e3 * arcs[s].length:.1f} mm (closed form "
            f"{250 * (1 + force / walls):.1f})"
        )
    for motor, panel in ((3, "a"), (0, "b")):
        torques = np.zeros((4, 6))
        torques[:, motor] = (0.5, 1.0, 1.5, 2.0)
        tips = bullet_steady_tips(torques, sections=n)
        statics = np.array([st.segment_tips for st in steady_poses(torques, pieces=20, law="linear")])
        err = 1e3 * np.linalg.norm(tips - statics, axis=2)
        print(
            f"Fig. 11{panel} (motor {motor + 1}): section ends vs Newton-Euler statics (mm): "
            + ", ".join(
                f"{T:g} N m {e[0]:.1f} / {e[1]:.1f}" for T, e in zip(torques[:, motor], err, strict=True)
            )
        )
    for profile, bound in (("step_uni", 1.0), ("step_bi", 1.5)):
        run = bullet_hydraulic_arm(profile, 10.0, sections=n)
        ne = simulate_hydraulic_arm(profile)
        times = [settling_time(run["t"], run["tips"], t0, t0 + 4.0) for t0 in (2.0, 6.0)]
        times_ne = [settling_time(ne["t"], ne["tips"], t0, t0 + 4.0) for t0 in (2.0, 6.0)]
        statics = steady_poses(
            [motor_torque_profile(profile, t) for t in (5.0, 9.0)], pieces=20, law="linear"
        )
        ends = [run["tips"][np.argmin(np.abs(run["t"] - t))] for t in (6.0, 10.0)]
        err = [
            1e3 * np.linalg.norm(e - st.segment_tips, axis=1).max()
            for e, st in zip(ends, statics, strict=True)
        ]
        print(
            f"{profile}: settling {times[0]:.2f} / {times[1]:.2f} s (paper: within {bound:g} s; Newton-Euler "
            f"{times_ne[0]:.2f} / {times_ne[1]:.2f} s), steady tips vs statics {err[0]:.1f} / {err[1]:.1f} mm"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
