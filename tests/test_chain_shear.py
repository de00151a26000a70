"""Opt-in Timoshenko shear of a compliant chain (pccbullet.sim.limb.shear.ChainShear)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.limb.shear import ChainShear
from pccbullet.sim.world import World

ROD = Path(__file__).parent / "data" / "stiff_rod.toml"  # uniform, r = 30 mm, L = 300 mm, E = 10 MPa
G0 = 9.80665


def _sag(shear: bool) -> float:
    with World(medium="air", chain="rrp") as world:
        robot = world.load_robot(ROD)
        z0 = robot.tip_pose("rod")[2, 3]
        sh = ChainShear(robot, "rod") if shear else None
        for _ in range(200):
            if sh is not None:
                sh.update()
            world.step(10)
        return z0 - robot.tip_pose("rod")[2, 3]


def test_shear_adds_the_timoshenko_sag_of_a_uniform_cantilever() -> None:
    """Distributed load w on a straight cantilever: shear adds w L^2 / (2 kappa G A) (0.157 mm here,
    3.3 % of the bending sag); discretization error of the chord-wise shear ~1/N."""
    r, L, E, nu, rho = 0.03, 0.3, 1e7, 0.49, 1070.0
    A = math.pi * r * r
    w = (rho - 1.204) * A * G0
    kappa = 6 * (1 + nu) / (7 + 6 * nu)
    expected = w * L**2 / (2 * kappa * E / (2 * (1 + nu)) * A)
    assert _sag(True) - _sag(False) == pytest.approx(expected, rel=0.1)


def test_update_moves_only_bend_targets_in_opposite_pairs() -> None:
    with World(medium="air", chain="rrp") as world:
        robot = world.load_robot(ROD)
        sh = ChainShear(robot, "rod")
        world.step(50)
        sh.update()
        shift = sh.shift
        bend = sh.bend_pos
        others = np.delete(shift, bend)
        assert np.all(others == 0.0)
        assert abs(shift[bend].sum()) < 1e-15  # +phi_k at joint k, -phi_k at joint k + 1
        assert np.abs(shift).max() > 1e-4  # a horizontal rod under its weight shears


def test_needs_a_compliant_limb() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot(ROD)
        with pytest.raises(ConfigurationError, match=r"limb 'rod' is not a compliant limb"):
            ChainShear(robot, "rod")
