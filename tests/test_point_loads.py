"""Point loads inside the implicit step (``Robot.add_load``, :mod:`pccbullet.sim.limb.chain.loads`).

The cantilever: ``tests/data/stiff_rod.toml`` (L = 0.3 m, 60 mm across, E = 10 MPa) held horizontal along
world +x, no gravity, a 2 N force on its tip frame, settled. Euler–Bernoulli: ``P L^3 / (3 E I)`` across,
``P L / (E A)`` along. The rod chain's chords shear with the loads of its own Newton–Euler pass (gravity,
fluid; :mod:`pccbullet.sim.limb.chain.springs`), not with a point load's: Timoshenko's shear term
``P L / (kappa G A)``, 2.5 % of this thick rod's deflection, is not in the chain's answer, so the reference
here is Euler–Bernoulli. The loads are generalized forces ``J^T f`` in the limb's offset: the springs hold
them exactly, where the same force through PyBullet's ``applyExternalForce`` over-deflects.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.world import World
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.spec_loader import load_robot

ROD = Path(__file__).parent / "data" / "stiff_rod.toml"
NU, E, R, L, P = 0.49, 1e7, 0.03, 0.3, 2.0
EI, EA = E * math.pi * R**4 / 4, E * math.pi * R**2
ACROSS, ALONG = P * L**3 / (3 * EI), P * L / EA  # m
STEPS = 1500  # 1.5 s: the rod (9 Hz, damping ratio 0.5) has settled to < 1e-6 of its deflection


def _tip_deflection(
    sections: int, direction: tuple[float, float, float], medium: str = "air", frame: str = "world"
) -> np.ndarray:
    """Tip displacement ``(3,)`` (m, world axes) under ``P`` along ``direction`` (world axes)."""
    with World(medium=medium, gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(ROD, sections=sections)
        tip0 = robot.tip_pose("rod")
        force = P * np.asarray(direction, float)
        if frame == "body":  # the same force, given in the tip frame's axes
            force = tip0[:3, :3].T @ force
        robot.add_load("rod", "tip", force=force, frame=frame)
        world.step(STEPS)
        return robot.tip_pose("rod")[:3, 3] - tip0[:3, 3]


@pytest.mark.parametrize(
    ("sections", "direction", "medium", "error"),
    [
        (10, (0, 1, 0), "air", 0.00491),
        (20, (0, 1, 0), "air", 0.00116),
        (40, (0, 1, 0), "air", 0.00022),
        (20, (0, 0, -1), "water", 0.00116),
        (20, (0, -0.6, 0.8), "air", 0.00116),
    ],
    ids=["N10-y-air", "N20-y-air", "N40-y-air", "N20-down-water", "N20-oblique-air"],
)
def test_tip_force_across_the_cantilever_is_euler_bernoulli(sections, direction, medium, error) -> None:
    """Measured errors against ``P L^3 / 3 E I`` (2.8294 mm): +0.491 %, +0.116 %, +0.022 % at N = 10, 20,
    40 (the chain's O(1/N^2) midpoint curvature), the same to 1e-5 in every direction across and in water;
    the tip moves along the force and, by the bent rod's foreshortening, along the rod."""
    d = np.asarray(direction, float)
    moved = _tip_deflection(sections, direction, medium)
    assert moved @ d / ACROSS - 1.0 == pytest.approx(error, abs=5e-5)
    sideways = moved - (moved @ d) * d
    sideways[0] = 0.0  # along the rod: the bent rod's foreshortening, 3 d^2 / 5 L (16 um)
    assert moved[0] == pytest.approx(-0.6 * (moved @ d) ** 2 / L, rel=0.05)
    assert np.linalg.norm(sideways) < 1e-4 * ACROSS


def test_tip_force_along_the_cantilever_stretches_it_as_ea() -> None:
    """Pulled and pushed: ``P L / (E A)`` (21.2 um) within 0.007 % at N = 20."""
    for sign in (1.0, -1.0):
        moved = _tip_deflection(20, (sign, 0.0, 0.0))
        assert sign * moved[0] == pytest.approx(ALONG, rel=1e-3)
        assert np.abs(moved[1:]).max() < 1e-9


def test_a_body_frame_load_follows_the_tip() -> None:
    """Given in the tip frame's axes, the force turns with the tip (0.8 deg here): the tip's deflection
    across is the world load's to second order, and it gains a component along the rod."""
    world_load = _tip_deflection(20, (0, 1, 0))
    body_load = _tip_deflection(20, (0, 1, 0), frame="body")
    assert body_load[1] == pytest.approx(world_load[1], rel=2e-3)


def test_both_step_paths_give_the_same_torques(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C API path (:func:`pccbullet.sim.bullet_internals.capi.limb_step`) and PyBullet's Python calls
    add the same loads: the same tip, bit for bit, after 200 steps of a force and a moment at a middle slice
    and a per-step load at the tip."""
    tips = []
    for switch in ("1", "0"):
        monkeypatch.setenv("PCCBULLET_C_API", switch)
        with World(gravity=(0.0, 0.0, 0.0)) as world:
            robot = world.load_robot(ROD, sections=10)
            robot.add_load("rod", 4, force=(0.0, 3.0, -1.0), moment=(0.1, 0.0, 0.2), frame="body")
            robot.add_load("rod", "tip", force=(0.0, 0.0, 50.0), steps=20)
            world.step(200)
            tips.append(robot.tip_pose("rod"))
            assert robot.compliant["rod"].direct_io is (switch == "1") or os.environ.get("PCCBULLET_SAFE")
    np.testing.assert_array_equal(tips[0], tips[1])


def test_loads_are_added_removed_counted_and_checked() -> None:
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(ROD, sections=5)
        limb = robot.compliant["rod"]
        kick = robot.add_load("rod", -1, force=(0.0, 1.0, 0.0), steps=2)
        dead = robot.add_load("rod", 0, moment=(0.0, 0.0, 1.0))
        assert kick.link == naming.section_body_links(robot.limb("rod"))[-1]
        world.step()
        assert limb.loads == [kick, dead] and kick.steps == 1
        world.step()
        assert limb.loads == [dead]
        robot.remove_load(dead)
        robot.remove_load(dead)  # already gone: ignored
        assert limb.loads == []
        with pytest.raises(
            ConfigurationError, match=r"at = 5 is invalid \(limb 'rod'\); allowed: 'tip' or a"
        ):
            robot.add_load("rod", 5)
        with pytest.raises(
            ConfigurationError, match=r"force = \(1, 2\) is invalid; allowed: 3 finite numbers"
        ):
            robot.add_load("rod", force=(1, 2))
        with pytest.raises(ConfigurationError, match=r"frame = 'tool' is invalid; allowed: 'world', 'body'"):
            robot.add_load("rod", force=(1, 2, 3), frame="tool")
        with pytest.raises(ConfigurationError, match=r"steps = 0 is invalid"):
            robot.add_load("rod", steps=0)
    with World(mode="kinematic") as world:
        robot = world.load_robot(ROD, sections=5)
        with pytest.raises(
            ConfigurationError, match=r"limb = 'rod' is invalid for add_load; allowed: a compliant"
        ):
            robot.add_load("rod", force=(1.0, 0.0, 0.0))


def test_a_tip_moment_twists_the_camera_tentacle_as_the_golden_data() -> None:
    """2 mN m about the straight camera tentacle's tip tangent (N = 10, no gravity), given as a body-frame
    moment on the tip and ramped in by changing the load between steps: 29.90 deg, the twist the rod chain
    has with the same moment put into its offset by hand (``tests/test_rod_chain.py``), within 1.5 % of
    PyElastica's 30.34 deg (``tests/data/elastica_3d_reference.json``)."""
    import dataclasses
    import json

    spec = load_robot("ursula", sections=10)
    limb = spec.limb("camera")
    limb = dataclasses.replace(limb, material=dataclasses.replace(limb.material, damping_ratio=1.0))
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(dataclasses.replace(spec, limbs=(limb,)))
        T_world_base = robot.T_world_limbbase("camera")
        load = robot.add_load("camera", "tip", frame="body")
        for k in range(12000):
            x = min(k * world.dt / 2.0, 1.0)
            load.moment = np.array([0.0, 0.0, 2e-3 * x * x * (3.0 - 2.0 * x)])
            world.step()
        R = np.linalg.solve(T_world_base, robot.tip_pose("camera"))[:3, :3]
    twist = math.degrees(math.atan2(R[1, 0] - R[0, 1], R[0, 0] + R[1, 1]))
    golden = json.loads((Path(__file__).parent / "data" / "elastica_3d_reference.json").read_text())
    reference = golden["cases"]["straight_torque"]["extrapolated"]["twist_deg"]
    assert twist == pytest.approx(29.90, abs=0.02)
    assert abs(twist / reference - 1.0) < 0.015
