"""Static equilibrium of the Newton-Euler model with the opt-in Timoshenko shear (pccbullet.sim.models.newton_euler.statics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.medium import VACUUM, medium
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.sim.models.newton_euler.statics import TimoshenkoShear, static_equilibrium
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import LimbSpec, Material, SegmentSpec

L, R, E, NU = 0.3, 0.03, 1e6, 0.4  # m, m, Pa, -: a thick soft rod, where shear matters


def _rod() -> LimbSpec:
    seg = SegmentSpec(L, L, L, math.pi, 2 * math.pi, 10, R, R)
    return LimbSpec("rod", Material("soft", 1000.0, E, NU, 0.0), (seg,), None, (0, 0, 0), (0, 0, 0))


def test_small_tip_load_adds_timoshenko_shear_deflection() -> None:
    """Tip load P across a straight uniform cantilever: shear adds P L / (kappa G A) to the bending
    deflection (the model's shear term is exact for it; small load, so geometry stays linear)."""
    P = 1e-3  # N
    model = LimbModel(_rod(), 20, gravity=np.zeros(3), medium=VACUUM)
    force = np.array([-P, 0.0, 0.0])
    q0 = static_equilibrium(model, tip_force=force, load_steps=1)
    q1 = static_equilibrium(model, tip_force=force, load_steps=1, shear=True)
    bend = -model.tip_position(q0)[0]
    both = -TimoshenkoShear(model, force).tip_position(q1)[0]
    kappa = 6 * (1 + NU) / (7 + 6 * NU)
    G = E / (2 * (1 + NU))
    assert both - bend == pytest.approx(P * L / (kappa * G * math.pi * R * R), rel=1e-3)
    assert bend == pytest.approx(P * L**3 / (3 * E * math.pi * R**4 / 4), rel=0.01)


def test_shear_force_is_the_gradient_of_phi() -> None:
    limb = load_robot("ursula").limb("grasper")
    model = LimbModel(limb, 3, gravity=np.array([0.3, -2.0, -9.0]), medium=medium("water"))
    shear = TimoshenkoShear(model, tip_force=np.array([0.2, 0.1, 0.0]))
    rng = np.random.default_rng(1)
    q = rng.uniform(-3.0, 3.0, model.dof)
    q[0::4] *= 0.05
    h = 1e-6
    fd = np.array([(shear.phi(q + h * e) - shear.phi(q - h * e)) / (2 * h) for e in np.eye(model.dof)])
    np.testing.assert_allclose(shear.force(q), fd, atol=1e-8 * np.abs(fd).max())


def test_shear_off_is_the_plain_equilibrium() -> None:
    """Default ``shear=False``: the plain equilibrium ``Q(q, 0) = K q``."""
    model = LimbModel(_rod(), 8, gravity=np.array([-9.81, 0.0, 0.0]), medium=VACUUM)
    q = static_equilibrium(model)
    _, Q = model.dynamics(q, np.zeros_like(q), with_mass=False)
    assert np.abs(Q - model.K * q).max() < 1e-9 * np.abs(model.K * q).max()


def test_bad_arguments() -> None:
    model = LimbModel(_rod(), 2, medium=VACUUM)
    with pytest.raises(ConfigurationError, match=r"load_steps = 0 is invalid; allowed: an integer >= 1"):
        static_equilibrium(model, load_steps=0)
    with pytest.raises(ConfigurationError, match=r"coefficient = -1.0 is invalid; allowed: a number > 0"):
        TimoshenkoShear(model, coefficient=-1.0)
