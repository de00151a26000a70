"""Model/physics twin: the Newton-Euler model and the PyBullet chain agree at rest; divergence is logged."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pccbullet.sim.models.twin import ModelTwin
from pccbullet.sim.world import World
from pccbullet.urdf_gen.spec_loader import load_robot


@pytest.mark.parametrize("chain", ["rrp", "rod"])
def test_twin_agrees_with_the_chain_at_rest_in_water(chain: str) -> None:
    spec = load_robot("ursula", sections=5)
    limbs = tuple(
        dataclasses.replace(x, payload=None, material=dataclasses.replace(x.material, damping_ratio=1.0))
        for x in spec.limbs
    )
    with World(medium="water", chain=chain) as world:
        robot = world.load_robot(dataclasses.replace(spec, limbs=limbs))
        twin = ModelTwin(robot, "camera", pieces_per_segment=10).attach()
        world.step(8000)
    log = twin.log
    assert len(log["t"]) == 8000 and log["t"][-1] == pytest.approx(8.0)
    bend_physics, bend_model = np.degrees(log["bend_physics"][-1][0]), np.degrees(log["bend_model"][-1][0])
    assert bend_physics > 30.0  # the limb sags substantially in water (net weight 70/1070)
    # two independent models of the same limb: discretization and axial/torsion modelling differ
    assert bend_physics == pytest.approx(bend_model, abs=3.0)
    assert log["tip_distance"][-1] < 0.015
    assert log["tip_distance"][0] < 1e-3  # both start straight
