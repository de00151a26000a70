"""A world in a vacuum: a hanging cable's first mode against the hanging chain, and a swing that keeps its energy.

The cable (``tests/data/hanging_cable.toml``): L = 0.4 m, 6 mm across, 1100 kg/m^3, E = 2 MPa, no material
damping, clamped at the top. Its first-mode period is computed here independently of the chain model:
Euler–Bernoulli with the hanging weight's tension (textbook Hermite beam elements, consistent mass and the
geometric stiffness of the tension, 400 elements, the tension's stretch ``T / EA`` included). As the bending
stiffness goes to 0 that solve gives the inextensible hanging chain's ``T_1 = 4 pi / j_{0,1} sqrt(L / g)``
(Bernoulli, Euler; ``j_{0,1}`` the first zero of J0) to within the cable's stretch (0.05 %), which checks
the reference; this cable's bending shortens the period by 5 %.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sl

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.limb.chain.rigid import _ADDED, _BUOY, _DRAG_A, _DRAG_N
from pccbullet.sim.medium import AIR, MEDIA, VACUUM, Medium, medium
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot

CABLE = Path(__file__).parent / "data" / "hanging_cable.toml"
G = 9.80665
J01 = 2.404825557695773  # first zero of the Bessel function J0
L, RADIUS, DENSITY, E = 0.4, 0.003, 1100.0, 2e6
MU = DENSITY * math.pi * RADIUS**2  # kg/m
EI, EA = E * math.pi * RADIUS**4 / 4, E * math.pi * RADIUS**2


def hanging_beam_modes(ei: float, n_el: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """First three angular frequencies (rad/s) and the first mode's deflections at ``n_el + 1`` nodes of the
    cable clamped at the top and hanging under gravity (beam elements with the tension's geometric stiffness)."""
    h = L / n_el
    ke = ei / h**3 * np.array(
        [[12, 6 * h, -12, 6 * h], [6 * h, 4 * h * h, -6 * h, 2 * h * h], [-12, -6 * h, 12, -6 * h],
         [6 * h, 2 * h * h, -6 * h, 4 * h * h]]
    )  # fmt: skip
    kg = np.array(
        [[36, 3 * h, -36, 3 * h], [3 * h, 4 * h * h, -3 * h, -h * h], [-36, -3 * h, 36, -3 * h],
         [3 * h, -h * h, -3 * h, 4 * h * h]]
    ) / (30 * h)  # fmt: skip
    me = MU * h / 420 * np.array(
        [[156, 22 * h, 54, -13 * h], [22 * h, 4 * h * h, 13 * h, -3 * h * h], [54, 13 * h, 156, -22 * h],
         [-13 * h, -3 * h * h, -22 * h, 4 * h * h]]
    )  # fmt: skip
    n = 2 * (n_el + 1)
    K, M = np.zeros((n, n)), np.zeros((n, n))
    for e in range(n_el):
        tension = MU * G * (L - (e + 0.5) * h)  # N, the weight below the element's middle
        dofs = slice(2 * e, 2 * e + 4)
        K[dofs, dofs] += ke + tension / (1.0 + tension / EA) * kg  # T dw/ds, ds = (1 + T/EA) dX
        M[dofs, dofs] += me
    free = np.arange(2, n)  # clamped top: w = w' = 0
    w2, V = sl.eigh(K[np.ix_(free, free)], M[np.ix_(free, free)], subset_by_index=[0, 2])
    return np.sqrt(w2), np.concatenate([[0.0], V[0::2, 0]])


def test_the_reference_is_the_hanging_chain_without_bending() -> None:
    omega, _ = hanging_beam_modes(1e-12)
    chain = 4.0 * math.pi / J01 * math.sqrt(L / G)
    assert 2 * math.pi / omega[0] == pytest.approx(chain, rel=6e-4)  # stretch: +0.05 %
    assert omega[1] / omega[0] == pytest.approx(5.520078110286311 / J01, rel=2e-3)  # j_{0,2} / j_{0,1}


def test_vacuum_is_a_world_medium() -> None:
    assert medium("vacuum") is VACUUM is MEDIA["vacuum"]
    assert medium(VACUUM) is VACUUM
    for given in ("vacuum", VACUUM, Medium("vacuum", 0.0)):
        with World(mode="kinematic", medium=given) as world:
            assert world.medium.density == 0.0 and world.medium.is_vacuum
    spec = load_robot(CABLE)
    with World(medium=Medium("vacuum", 0.0)) as world:
        robot = world.load_robot(spec)
        params = robot.compliant["cable"].chain.params
        assert robot.compliant["cable"].added_mass == 0.0
    assert not np.any(params[:, [_BUOY, _DRAG_N, _DRAG_A, _ADDED]])  # no buoyancy, drag, added mass
    with pytest.raises(
        ConfigurationError, match=r"Medium.density = -1.0 is invalid \('oil'\); allowed: a finite"
    ):
        Medium("oil", -1.0)
    with pytest.raises(ConfigurationError, match=r"Medium.drag_normal = nan is invalid"):
        dataclasses.replace(AIR, drag_normal=math.nan)


def _swing(sections: int, fluid: Medium | str, seconds: float = 5.0) -> tuple[float, float]:
    """The cable released from a 0.2 rad arc, undamped: the first mode's period (s, from the zero crossings
    of its modal coordinate, the slices' sideways positions weighted by the reference mode) and its last
    period's amplitude over its first's."""
    omega, phi = hanging_beam_modes(EI)
    with World(medium=fluid) as world:
        robot = world.load_robot(CABLE, sections=sections)
        robot.set_pcc("cable", [PccConfig(0.2, 0.0, L)])
        robot.set_pcc("cable", [PccConfig(0.0, 0.0, L)], mode="target")
        weights = np.interp((np.arange(sections) + 0.5) * L / sections, np.linspace(0.0, L, len(phi)), phi)
        q = []
        for _ in range(round(seconds / world.dt)):
            world.step()
            q.append(float(robot.section_poses("cable")[:, 0, 3] @ weights))
        dt = world.dt
    q_ = np.asarray(q)
    i = np.nonzero(np.sign(q_[1:]) * np.sign(q_[:-1]) < 0)[0]
    crossings = (i - q_[i] / (q_[i + 1] - q_[i])) * dt
    period = 2.0 * float(np.polyfit(np.arange(len(crossings)), crossings, 1)[0])
    n = round(period / dt)
    return period, float(np.abs(q_[-n:]).max() / np.abs(q_[:n]).max())


@pytest.mark.parametrize("sections", [10, 20, 40])
def test_hanging_cable_first_mode_in_a_vacuum(sections: int) -> None:
    """Measured (``pytest tests/test_vacuum.py``): period error +0.66 %, +0.23 %, +0.09 % at N = 10, 20, 40
    against the beam reference (1.00257 s; the bare hanging chain's 1.05535 s). Without material damping
    and fluid, the amplitude kept after 5 s (96.6 %, 98.0 %, 98.8 %) is the step's numerical loss, which
    falls with N."""
    omega, _ = hanging_beam_modes(EI)
    period, kept = _swing(sections, "vacuum")
    error = period * omega[0] / (2 * math.pi) - 1.0
    assert 0.0 < error < {10: 0.009, 20: 0.004, 40: 0.002}[sections]
    assert kept > {10: 0.96, 20: 0.975, 40: 0.985}[sections]


def test_air_drag_takes_what_the_vacuum_keeps() -> None:
    """The same swing at N = 20 in air keeps 94.3 % of its amplitude over 5 s (vacuum: 98.0 %)."""
    _, vacuum = _swing(20, VACUUM)
    _, air = _swing(20, "air")
    assert air < vacuum - 0.03
