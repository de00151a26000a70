"""Improved Newton–Euler limb model: analytic beams, energy, convergence, tendons."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
from scipy.linalg import eigh

from pccbullet.sim.medium import SEAWATER, VACUUM
from pccbullet.sim.models.actuators import TendonActuation
from pccbullet.sim.models.newton_euler import statics
from pccbullet.sim.models.newton_euler.integrators import simulate_ivp, step
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import LimbSpec, Material, SegmentSpec

# the strain-normalized solve with 4 load steps (a call's own load_steps wins)
static_equilibrium = partial(statics.static_equilibrium, load_steps=4, normalized=True)

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


# ---------------------------------------------------------------- fast (batched, analytic-bias) path
def _random_state(model, rng, scale=1.0):
    q = rng.normal(size=model.dof) * np.tile([0.05, 5.0, 5.0, 3.0], model.n) * scale
    qd = rng.normal(size=model.dof) * np.tile([0.1, 10.0, 10.0, 5.0], model.n) * scale
    return q, qd


def _reference(model, q, qd, tip_force=None, tip_moment=None):
    """``M (4n, 4n), Q (4n,)`` of one limb by the numpy evaluation (``ne_dynamics(backend="numpy")``)."""
    from pccbullet.sim.models.newton_euler.batch_dynamics import ne_dynamics

    n = model.n
    M, Q = ne_dynamics(
        model.batch_params(),
        np.reshape(q, (1, n, 4)),
        np.reshape(qd, (1, n, 4)),
        model.gravity[None],
        None if tip_force is None else np.reshape(tip_force, (1, 3)),
        None if tip_moment is None else np.reshape(tip_moment, (1, 3)),
        backend="numpy",
    )
    assert M is not None
    return M[0], Q[0]


def test_analytic_piece_terms_match_finite_differences():
    from pccbullet.sim.models.newton_euler.kinematics import piece_jacobians
    from pccbullet.sim.models.newton_euler.piece_kinematics import piece_kinematics

    rng = np.random.default_rng(7)
    n = 60
    l0 = rng.uniform(0.01, 0.05, n)
    q = rng.normal(size=(n, 4)) * [0.05, 20.0, 20.0, 10.0]  # bend angles 0 .. ~2 rad
    q[:20, 1:3] *= 1e-3  # series branch
    q[20:25, 1:3] = 0.0
    v = rng.normal(size=(n, 4)) * [0.1, 50.0, 50.0, 20.0]
    R, X = piece_kinematics(l0, q, v)
    p, Jp, Jw, bp, bw = X[:, :, 11], X[:, :, 0:4], X[:, :, 4:8], X[:, :, 8], X[:, :, 9]
    R0, p0, Jp0, Jw0 = piece_jacobians(q, l0)
    for got, ref in ((R, R0), (p, p0), (Jp, Jp0), (Jw, Jw0)):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())

    def fd(h):  # second / first central differences along q + s v
        Rp, pp, _, Jwp = piece_jacobians(q + h * v, l0)
        Rm, pm, _, Jwm = piece_jacobians(q - h * v, l0)
        return (pp - 2 * p0 + pm) / h**2, np.einsum("nij,nj->ni", Jwp - Jwm, v) / (2 * h)

    (bp1, bw1), (bp2, bw2) = fd(1e-3), fd(5e-4)  # Richardson extrapolation: O(h^4)
    np.testing.assert_allclose(bp, (4 * bp2 - bp1) / 3, rtol=0, atol=1e-8 * np.abs(bp).max())
    np.testing.assert_allclose(bw, (4 * bw2 - bw1) / 3, rtol=0, atol=1e-8 * np.abs(bw).max())


@pytest.fixture(scope="module")
def ursula_limbs():
    return load_robot("ursula").limbs


@pytest.mark.parametrize("medium", [SEAWATER, VACUUM])
def test_fast_dynamics_equals_reference(ursula_limbs, medium):
    rng = np.random.default_rng(11)
    for limb in ursula_limbs:
        model = LimbModel(limb, 6, medium=medium)
        for scale in (1.0, 0.01):
            q, qd = _random_state(model, rng, scale)
            tf, tm = rng.normal(size=3), 0.01 * rng.normal(size=3)
            M0, Q0 = _reference(model, q, qd, tf, tm)
            M1, Q1 = model.dynamics(q, qd, tf, tm)
            np.testing.assert_allclose(M1, M0, rtol=0, atol=1e-10 * np.abs(M0).max())
            np.testing.assert_allclose(Q1, Q0, rtol=0, atol=1e-10 * np.abs(Q0).max())
            np.testing.assert_allclose(M1, M1.T, rtol=0, atol=1e-14 * np.abs(M1).max())
            _, Qn = model.dynamics(q, qd, tf, tm, with_mass=False)
            np.testing.assert_allclose(Qn, Q1, rtol=0, atol=1e-14 * np.abs(Q1).max())


def test_fast_dynamics_general_inertia(ursula_limbs):
    rng = np.random.default_rng(5)
    model = LimbModel(ursula_limbs[0], 4, medium=SEAWATER)
    model.inertia_body = model.inertia_body * rng.uniform(0.5, 2.0, size=model.inertia_body.shape)
    q, qd = _random_state(model, rng)
    M0, Q0 = _reference(model, q, qd)
    M1, Q1 = model.dynamics(q, qd)
    np.testing.assert_allclose(M1, M0, rtol=0, atol=1e-10 * np.abs(M0).max())
    np.testing.assert_allclose(Q1, Q0, rtol=0, atol=1e-10 * np.abs(Q0).max())


@pytest.mark.parametrize("n", [3, 10])
def test_multi_limb_model_equals_single_limbs(ursula_limbs, n):
    from pccbullet.sim.models.newton_euler.batch import MultiLimbModel

    rng = np.random.default_rng(n)
    models = [LimbModel(limb, n, medium=SEAWATER) for limb in ursula_limbs]
    multi = MultiLimbModel(models)
    states = [_random_state(m, rng, 0.2) for m in models]
    q = np.concatenate([s[0] for s in states])
    qd = np.concatenate([s[1] for s in states])
    tf = rng.normal(size=(len(models), 3))
    tm = 0.01 * rng.normal(size=(len(models), 3))
    Ms, Q = multi.dynamics(q, qd, tf, tm)
    for i, (m, (qi, vi)) in enumerate(zip(models, states, strict=True)):
        M0, Q0 = _reference(m, qi, vi, tf[i], tm[i])
        np.testing.assert_allclose(Ms[i], M0, rtol=0, atol=1e-10 * np.abs(M0).max())
        np.testing.assert_allclose(multi.split(Q)[i], Q0, rtol=0, atol=1e-10 * np.abs(Q0).max())
    # one integrator step: batched == per limb == the original step (LU solve) on the reference dynamics
    tau = rng.normal(size=multi.dof) * 1e-3
    qn, qdn = step(multi, q, qd, 1e-3, tau, tip_force=tf)
    acc = multi.acceleration(q, qd, tau, tip_force=tf)
    for i, (m, (qi, vi)) in enumerate(zip(models, states, strict=True)):
        ti = multi.split(tau)[i]
        q1, qd1 = step(m, qi, vi, 1e-3, ti, tip_force=tf[i])
        M0, Q0 = _reference(m, qi + 0.5e-3 * vi, vi, tf[i])
        rhs = Q0 - m.K * (qi + 0.5e-3 * vi) - m.D * vi + ti
        a = np.linalg.solve(M0 + np.diag(0.5e-3 * m.D + 0.25e-6 * m.K), rhs)
        qd0 = vi + 1e-3 * a
        q0 = qi + 1e-3 * (0.5 * vi + 0.5 * qd0)
        for got in (multi.split(qdn)[i], qd1):
            np.testing.assert_allclose(got, qd0, rtol=0, atol=1e-10 * np.abs(qd0).max())
        for got in (multi.split(qn)[i], q1):
            np.testing.assert_allclose(got, q0, rtol=0, atol=1e-10 * np.abs(q0).max())
        np.testing.assert_allclose(
            multi.split(acc)[i], m.acceleration(qi, vi, ti, tip_force=tf[i]), rtol=1e-8, atol=1e-8
        )


def test_medium_matches_the_world_media() -> None:
    from pccbullet.core.errors import ConfigurationError
    from pccbullet.sim.medium import MEDIA, medium

    for name in ("air", "water", "seawater"):
        assert medium(name).density == pytest.approx(MEDIA[name].density, rel=1e-3)
    with pytest.raises(
        ConfigurationError, match=r"medium = 'oil' is invalid; allowed: 'air', 'water', 'seawater'"
    ):
        medium("oil")


def test_one_medium_for_the_world_and_the_model() -> None:
    """One record per medium (pccbullet.sim.medium): the world's and the model's are the same object; C_d = 1.2 and
    C_a = 1.0 in every fluid, air included, where the model's drag dissipates energy."""
    import dataclasses

    from pccbullet.core.errors import ConfigurationError
    from pccbullet.sim.medium import AIR, MEDIA, WATER, medium
    from pccbullet.sim.world import World

    for name in ("air", "water", "seawater"):
        with World(mode="kinematic", medium=name) as world:
            assert world.medium is medium(name) is MEDIA[name]
    assert (AIR.drag_normal, AIR.drag_coefficient, AIR.added_mass_coefficient) == (
        1.2,
        1.2,
        1.0,
    )
    assert WATER.reynolds_number(0.1, 0.04) == pytest.approx(0.1 * 0.04 / 1.004e-6)
    with pytest.raises(
        ConfigurationError, match=r"medium = 'oil' is invalid; allowed: 'air', 'water', 'seawater'"
    ):
        medium("oil")
    still_air = dataclasses.replace(AIR, drag_normal=0.0)
    rng = np.random.default_rng(0)
    q, qd = 0.05 * rng.standard_normal(4 * 8), 0.5 * rng.standard_normal(4 * 8)
    Q = [LimbModel(rod(), 8, gravity=np.zeros(3), medium=m).dynamics(q, qd)[1] for m in (AIR, still_air)]
    assert float((Q[0] - Q[1]) @ qd) < -1e-9  # drag power is negative
