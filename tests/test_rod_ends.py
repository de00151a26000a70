"""Held ends (``Robot.hold_end``, ``Robot.pin_base``; :mod:`pccbullet.sim.limb.chain.ends`) against beam theory.

The beam: ``tests/data/stiff_rod.toml`` (L = 0.3 m, 60 mm across, E = 10 MPa, nu = 0.49), horizontal, no
gravity, its tip held where it rests, a 2 N force across at midspan (the node at L / 2:
``Robot.add_load(..., N / 2 - 1)``). Euler–Bernoulli: clamped–clamped ``P L^3 / (192 E I)`` with end
reactions ``P / 2`` and moments ``P L / 8``; pinned–pinned ``P L^3 / (48 E I)``. A point load's shear is not
in the chain (:mod:`pccbullet.sim.limb.chain.springs` shears with the chain's own loads), so the reference
is Euler–Bernoulli. Twisted: Saint-Venant ``M = G J theta / L``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.world import World

ROD = Path(__file__).parent / "data" / "stiff_rod.toml"
NU, E, R, L, P = 0.49, 1e7, 0.03, 0.3, 2.0
EI = E * math.pi * R**4 / 4
GJ = E / (2 * (1 + NU)) * math.pi * R**4 / 2


def _midspan(sections: int, hold: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Midspan deflection (m) along the load and the tip hold's force and moment on the rod (world axes)."""
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(ROD, sections=sections)
        end = robot.hold_end("rod", hold)
        if hold == "pinned":
            robot.pin_base("rod")
        mid = sections // 2 - 1
        start = robot.section_poses("rod")[mid, :3, 3]
        robot.add_load("rod", mid, force=(0.0, P, 0.0))
        world.step(2000)
        return float(robot.section_poses("rod")[mid, 1, 3] - start[1]), end.force, end.moment


@pytest.mark.parametrize(("sections", "error"), [(10, 0.0804), (20, 0.0204)], ids=["N10", "N20"])
def test_clamped_clamped_beam_under_a_midspan_load(sections: int, error: float) -> None:
    """Measured: +8.04 %, +2.04 % at N = 10, 20 against ``P L^3 / 192 E I`` (44.21 um; O(1/N^2)); the
    hold's reactions P / 2 and P L / 8 within 0.05 %."""
    deflection, force, moment = _midspan(sections, "clamped")
    assert deflection / (P * L**3 / (192 * EI)) - 1.0 == pytest.approx(error, abs=5e-4)
    assert force == pytest.approx([0.0, -P / 2, 0.0], abs=5e-4 * P)
    assert abs(moment[2]) == pytest.approx(P * L / 8, rel=5e-4)


def test_pinned_pinned_beam_under_a_midspan_load() -> None:
    """Base pinned (``pin_base``), tip pinned: +0.50 % at N = 20 against ``P L^3 / 48 E I`` (176.8 um); the
    tip's reaction is P / 2 across and no moment. Held between two fixed points the bent beam stretches:
    along it the hold pulls 21.4 mN, where the deflected shape's length gives ``E A 2.4 (d / L)^2`` = 23.8
    mN."""
    deflection, force, moment = _midspan(20, "pinned")
    assert deflection / (P * L**3 / (48 * EI)) - 1.0 == pytest.approx(0.0050, abs=5e-4)
    assert force[1:] == pytest.approx([-P / 2, 0.0], abs=1e-6)
    membrane = E * math.pi * R**2 * 2.4 * (deflection / L) ** 2
    assert 0.8 * membrane < force[0] < 1.0 * membrane
    assert not moment.any()


def test_driven_twist_of_a_clamped_clamped_rod_is_saint_venant() -> None:
    """The tip clamped to an anchor turned 0.2 rad about the rod's axis over 1 s and held: the tip follows
    within 1e-4 rad and the reaction moment is ``G J theta / L`` (Saint-Venant, 2.8464 N m) within 0.1 %."""
    theta = 0.2

    def anchor(t: float, start: np.ndarray) -> np.ndarray:
        a = theta * min(t, 1.0)
        turn = np.eye(4)
        turn[1:3, 1:3] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
        return turn @ start

    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(ROD, sections=20)
        start = robot.tip_pose("rod")
        end = robot.hold_end("rod", "clamped", anchor=lambda t: anchor(t, start))
        errors = []
        for _ in range(1500):
            world.step()
            R_err = robot.tip_pose("rod")[:3, :3] @ anchor(end.time, start)[:3, :3].T
            errors.append(math.acos(min(1.0, 0.5 * (np.trace(R_err) - 1.0))))
        assert max(errors) < 1e-4
        assert end.moment[0] == pytest.approx(GJ * theta / L, rel=1e-3)  # measured -0.007 %


def test_a_driven_end_follows_its_path() -> None:
    """The tip pinned to a point going round a 5 mm circle across the rod once a second: within 1 um."""
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(ROD, sections=10)
        start = robot.tip_pose("rod")

        def path(t: float) -> np.ndarray:
            out = start.copy()
            out[1:3, 3] += 0.005 * np.array([math.sin(2 * math.pi * t), 1.0 - math.cos(2 * math.pi * t)])
            return out

        end = robot.hold_end("rod", "pinned", anchor=path)
        worst = 0.0
        for _ in range(2000):
            world.step()
            worst = max(worst, float(np.linalg.norm(robot.tip_pose("rod")[:3, 3] - path(end.time)[:3, 3])))
        assert worst < 1e-6


@pytest.mark.parametrize("limb", ["camera", "light", "grasper", "palpation"])
@pytest.mark.parametrize("hold", ["pinned", "clamped"])
def test_ursula_limbs_held_at_the_tip_are_stable_at_1_ms(limb: str, hold: str) -> None:
    """Each limb of URSULA, in water under gravity, its tip held where it starts: stable at 1 ms for 2 s,
    the tip within 0.1 mm of it; its tendons (slack) solved with the hold's rows."""
    with World(medium="water") as world:
        robot = world.load_robot("ursula", limbs=[limb])
        tip = robot.tip_pose(limb)[:3, 3]
        end = robot.hold_end(limb, hold)
        world.step(2000)
        assert np.linalg.norm(robot.tip_pose(limb)[:3, 3] - tip) < 1e-4
        assert np.isfinite(end.force).all() and np.linalg.norm(end.force) > 0.1  # it carries the limb


def test_holds_are_checked_and_released() -> None:
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(ROD, sections=5)
        with pytest.raises(
            ConfigurationError, match=r"hold = 'glued' is invalid; allowed: 'pinned', 'clamped'"
        ):
            robot.hold_end("rod", "glued")
        robot.hold_end("rod")
        robot.release_end("rod")
        assert robot.compliant["rod"].ends == []
        world.step(10)
    with World(chain="rrp") as world:
        robot = world.load_robot(ROD, sections=5)
        with pytest.raises(ConfigurationError, match=r"pin_base needs the rod chain"):
            robot.pin_base("rod")


def test_both_step_paths_hold_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C API path and PyBullet's Python calls: the same clamped, loaded rod, bit for bit."""
    out = []
    for switch in ("1", "0"):
        monkeypatch.setenv("PCCBULLET_C_API", switch)
        with World() as world:
            robot = world.load_robot(ROD, sections=10)
            end = robot.hold_end("rod", "clamped")
            robot.add_load("rod", 3, force=(0.0, 5.0, 1.0))
            world.step(200)
            out.append((robot.section_poses("rod"), end.force, end.moment))
    for a, b in zip(out[0], out[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_cable_pinned_at_both_ends_hangs_as_the_elastic_catenary() -> None:
    """``pcb.rod`` 0.4 m, r = 1 mm, 1100 kg/m^3, E = 100 kPa (stretching up to 2 %; ``E I / (H L^2)`` =
    2e-4), hanging from a pinned base and a pinned tip at the same height, 0.2546 m apart (where a
    semicircle puts them), in air. Reference: the elastic catenary (Irvine, *Cable Structures*, 1981, eq.
    2.9–2.10, for supports at one level), the horizontal tension ``H`` from the span. Measured at N = 10, 20,
    40: sag +0.66 %, +0.12 %, -0.01 %; ``H`` -0.42 %, -0.33 %, -0.31 %; the vertical reactions half the
    weight within 0.2 %."""
    from scipy.optimize import brentq

    import pccbullet as pcb

    length, r, rho, e_mod, g = 0.4, 0.001, 1100.0, 1e5, 9.80665
    spec = pcb.rod(
        length, r, density=rho, youngs_modulus=e_mod, damping_ratio=0.05, sections=20, mount="down"
    )
    with World(medium="air") as world:
        robot = world.load_robot(spec)
        robot.set_pcc("rod", [pcb.PccConfig(math.pi, 0.0, length)])  # a U: the tip beside the base
        robot.set_pcc("rod", [pcb.PccConfig(0.0, 0.0, length)], mode="target")
        robot.pin_base("rod")
        end = robot.hold_end("rod", "pinned")
        base, tip = robot.T_world_limbbase("rod")[:3, 3], robot.tip_pose("rod")[:3, 3]
        world.step(7000)
        sag = base[2] - robot.section_poses("rod")[:, 2, 3].min()  # the node at L / 2
        w = (rho - world.medium.density) * math.pi * r * r * g  # N/m, unstretched
    ea, half, span = e_mod * math.pi * r * r, 0.5 * length, float(np.linalg.norm(tip - base))
    H = brentq(lambda h: h * half / ea + h / w * math.asinh(w * half / h) - 0.5 * span, 1e-6, 10.0)
    reference = w * half * half / (2 * ea) + H / w * (math.sqrt(1 + (w * half / H) ** 2) - 1)
    assert sag / reference - 1.0 == pytest.approx(0.0012, abs=1e-3)
    assert -end.force[0] / H - 1.0 == pytest.approx(-0.0033, abs=2e-3)
    assert end.force[2] == pytest.approx(w * half, rel=2e-3)


def test_a_tendon_driven_limb_pulls_against_its_held_tip() -> None:
    """The camera tentacle driven by its tendons towards a 60 deg bend with its tip clamped where it rests:
    the tip stays (0.57 mm: the default hold's stiffness) and the hold takes the tendons' pull (20.5 N, the
    pulled tendon at 20 N), where it held 6.6 N before; without the hold the command moves the tip 0.51 m."""
    import pccbullet as pcb

    moved = []
    for held in (True, False):
        with World(medium="water") as world:
            robot = world.load_robot("ursula", limbs=["camera"], drive="tendons")
            tip = robot.tip_pose("camera")[:3, 3]
            end = robot.hold_end("camera", "clamped") if held else None
            world.step(200)
            before = None if end is None else np.linalg.norm(end.force)
            robot.set_pcc("camera", [pcb.PccConfig(math.radians(60), 0.0, 0.6)], mode="target")
            world.step(2000)
            moved.append(float(np.linalg.norm(robot.tip_pose("camera")[:3, 3] - tip)))
            if end is not None:
                assert np.linalg.norm(end.force) > before + 0.1
    assert moved[0] < 1e-3 and moved[1] > 0.05
