"""Improved Newton–Euler limb model: analytic beams, energy, convergence, tendons."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import eigh

from sim.models.actuators import TendonActuation
from sim.models.integrators import simulate_ivp, static_equilibrium, step
from sim.models.newton_euler import SEAWATER, VACUUM, LimbModel
from urdf_gen.spec_loader import load_robot
from urdf_gen.specs import LimbSpec, Material, SegmentSpec

L, R, E, RHO = 0.5, 0.01, 2e8, 1000.0  # m, m, Pa, kg/m^3: a stiff uniform rod


def rod(E=E, zeta=0.0):
    seg = SegmentSpec(L, L, L, math.pi, 2 * math.pi, 10, R, R)
    return LimbSpec("rod", Material("stiff", RHO, E, 0.4, zeta), (seg,), None, (0, 0, 0), (0, 0, 0))


@pytest.mark.parametrize("n", [20, 40])
def test_static_cantilever(n):
    model = LimbModel(rod(), n, gravity=np.array([-9.81, 0.0, 0.0]), medium=VACUUM)
    q = static_equilibrium(model, load_steps=1)
    w = RHO * math.pi * R * R * 9.81
    expected = w * L**4 / (8 * E * math.pi * R**4 / 4)
    tip = model.tip_position(q)
    assert abs(-tip[0] - expected) / expected < 0.02  # lumping/midpoint discretization error O(1/n^2)


def test_first_bending_frequency():
    model = LimbModel(rod(), 20, gravity=np.zeros(3), medium=VACUUM)
    M, _ = model.dynamics(model.rest_state(), np.zeros(model.dof))
    w2 = eigh(np.diag(model.K), M, eigvals_only=True)
    f1 = math.sqrt(w2[0]) / (2 * math.pi)
    inertia, A = math.pi * R**4 / 4, math.pi * R * R
    ref = 1.875**2 * math.sqrt(E * inertia / (RHO * A * L**4)) / (2 * math.pi)
    assert abs(f1 - ref) / ref < 0.05


def test_energy_drift_undamped():
    model = LimbModel(rod(E=1e6), 10, gravity=np.zeros(3), medium=VACUUM)
    q, qd = model.rest_state(), np.zeros(model.dof)
    q[1::4], q[2::4], qd[2::4] = 0.5, 0.3, 0.5  # bent and moving, large rotation
    e0 = model.energy(q, qd)
    energies = []
    for _ in range(2000):
        q, qd = step(model, q, qd, 1e-3)
        energies.append(model.energy(q, qd))
    energies = np.array(energies)
    drift = np.abs(energies - e0).max() / e0
    assert drift < 0.01


def test_fixed_step_matches_solve_ivp():
    model = LimbModel(rod(E=1e6, zeta=0.1), 5, gravity=np.array([-9.81, 0.0, 0.0]), medium=VACUUM)
    q, qd = model.rest_state(), np.zeros(model.dof)
    for _ in range(300):
        q, qd = step(model, q, qd, 1e-3)
    ref = simulate_ivp(model, model.rest_state(), np.zeros(model.dof), (0.0, 0.3), method="LSODA")
    np.testing.assert_allclose(model.tip_position(q), model.tip_position(ref.y[: model.dof, -1]), atol=2e-3)


def test_convergence_camera_limb_in_water():
    limb = load_robot("ursula").limb("camera")
    tips = []
    for n in (20, 40):
        model = LimbModel(limb, n, medium=SEAWATER)
        tips.append(model.tip_position(static_equilibrium(model, load_steps=3)))
    assert np.linalg.norm(tips[0] - tips[1]) < 1e-3


@pytest.fixture(scope="module")
def tendon_model():
    limb = load_robot("ursula").limb("camera")
    model = LimbModel(limb, 8, gravity=np.zeros(3), medium=VACUUM)
    return model, TendonActuation(model)


def test_tendon_bends_towards_its_side(tendon_model):
    model, act = tendon_model
    for j, angle in enumerate(model.limb.actuators.angles):
        u = np.zeros(4)
        u[j] = 0.5
        tip = model.tip_position(static_equilibrium(model, act.tau(u)))
        assert tip[:2] @ np.array([math.cos(angle), math.sin(angle)]) > 0.05


def test_opposite_tendons_do_not_bend(tendon_model):
    model, act = tendon_model
    tip = model.tip_position(static_equilibrium(model, act.tau(np.array([0.5, 0.0, 0.5, 0.0]))))
    np.testing.assert_allclose(tip[:2], 0.0, atol=1e-9)
    assert tip[2] < model.l0.sum()  # axial compression only


def test_tendon_never_pushes(tendon_model):
    model, act = tendon_model
    np.testing.assert_array_equal(act.tau(np.array([-1.0, -2.0, 0.0, -0.1])), 0.0)
