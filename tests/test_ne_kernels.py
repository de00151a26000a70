"""Compiled Newton–Euler kernels (pccbullet.sim.models.newton_euler.kernels) against the numpy reference path
(pccbullet.sim.models.newton_euler.batch_dynamics)."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.medium import AIR, SEAWATER
from pccbullet.sim.models.actuators import actuation_for
from pccbullet.sim.models.newton_euler import kernels as ne_kernels
from pccbullet.sim.models.newton_euler import piece_kernels
from pccbullet.sim.models.newton_euler.batch import MultiLimbModel
from pccbullet.sim.models.newton_euler.batch_dynamics import ne_dynamics
from pccbullet.sim.models.newton_euler.integrators import simulate, step
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.sim.models.newton_euler.params import NEParams
from pccbullet.sim.models.newton_euler.piece_kinematics import bend_functions, piece_kinematics
from pccbullet.urdf_gen.spec_loader import load_robot

# Relative agreement (max abs difference / max abs reference value) asserted between the backends.
# Measured: M, Q <= 1e-15; one integrator step (q', qd') <= 2e-12; the explicit acceleration <= 3e-11 at
# n = 20, where cond(M) ~ 4e8 (the numpy path's own LU and Cholesky solves differ by as much).
TOL = 1e-10


def rel(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(got - ref).max() / np.abs(ref).max())


@pytest.fixture(scope="module")
def limbs():
    return load_robot("ursula").limbs


def random_state(dof: int, rng: np.random.Generator, scale: float) -> tuple[np.ndarray, np.ndarray]:
    q = rng.normal(size=dof) * np.tile([0.05, 5.0, 5.0, 3.0], dof // 4) * scale
    qd = rng.normal(size=dof) * np.tile([0.1, 10.0, 10.0, 5.0], dof // 4) * scale
    return q, qd


def tendon_tau(models: list[LimbModel], rng: np.random.Generator) -> np.ndarray:
    """Generalized forces of random tendon tensions (0..5 N) on every limb, concatenated."""
    out = []
    for m in models:
        act = actuation_for(m)
        out.append(act.tau(rng.uniform(0.0, 5.0, act.B.shape[1])))
    return np.concatenate(out)


def test_bend_functions_match_the_vectorized_ones() -> None:
    th2 = np.concatenate([np.linspace(0.0, 0.3, 601), np.linspace(0.3, 9.0, 601), [0.25, 0.25 + 1e-15]])
    ref = bend_functions(th2)
    got = np.array([piece_kernels.bend_functions(x) for x in th2]).T
    err = (np.abs(got - ref) / np.abs(ref).max(axis=1, keepdims=True)).max(axis=1)
    # A, B, C, A'/th, B'/th to rounding; the closed forms of C'/th, (A'/th)'/th, (B'/th)'/th cancel to
    # ~1e-12 just above the series range, differently in the two summation orders
    assert (err[:5] < 1e-15).all(), err
    assert (err[5:] < 1e-11).all(), err


def test_piece_local_matches_piece_kinematics() -> None:
    rng = np.random.default_rng(2)
    n = 80
    l0 = rng.uniform(0.01, 0.05, n)
    q = rng.normal(size=(n, 4)) * [0.05, 20.0, 20.0, 10.0]  # bend angles 0 .. ~2 rad
    q[:30, 1:3] *= 1e-3  # series branch
    q[30:35, 1:3] = 0.0
    v = rng.normal(size=(n, 4)) * [0.1, 50.0, 50.0, 20.0]
    R0, X0 = piece_kinematics(l0, q, v)
    R, X = np.empty((3, 3)), np.empty((13, 3))
    qf, vf = q.ravel(), v.ravel()
    for k in range(n):
        piece_kernels.piece_local(l0[k], qf, vf, 4 * k, R, X)
        np.testing.assert_allclose(R, R0[k], rtol=0, atol=1e-15)
        np.testing.assert_allclose(X.T, X0[k], rtol=0, atol=1e-13 * np.abs(X0[k]).max())


@pytest.mark.parametrize("medium", [AIR, SEAWATER], ids=lambda m: m.name)
@pytest.mark.parametrize("n", [5, 10, 20])
def test_multi_limb_kernels_equal_the_numpy_path(limbs, n, medium) -> None:
    rng = np.random.default_rng(100 * n + len(medium.name))
    models = [LimbModel(limb, n, medium=medium) for limb in limbs]
    fast, ref = MultiLimbModel(models), MultiLimbModel(models, backend="numpy")
    assert (fast.backend, ref.backend) == ("numba", "numpy")
    for scale in (1.0, 0.3, 0.01):
        q, qd = random_state(fast.dof, rng, scale)
        tf, tm = rng.normal(size=(len(models), 3)), 0.01 * rng.normal(size=(len(models), 3))
        tau = tendon_tau(models, rng)
        Ms, Q = fast.dynamics(q, qd, tf, tm)
        Ms0, Q0 = ref.dynamics(q, qd, tf, tm)
        assert rel(Q, Q0) < TOL
        for M, M0 in zip(Ms, Ms0, strict=True):
            assert M.shape == M0.shape
            assert rel(M, M0) < TOL
            np.testing.assert_array_equal(M, M.T)  # mirrored, exactly symmetric
        none, Qn = fast.dynamics(q, qd, tf, tm, with_mass=False)
        assert none is None
        np.testing.assert_array_equal(Qn, Q)
        acc = fast.acceleration(q, qd, tau, tf, tm)
        assert rel(acc, ref.acceleration(q, qd, tau, tf, tm)) < TOL
        for theta in (0.5, 1.0):
            q1, qd1 = fast.step(q, qd, 1e-3, tau, theta=theta, tip_force=tf, tip_moment=tm)
            q0, qd0 = ref.step(q, qd, 1e-3, tau, theta=theta, tip_force=tf, tip_moment=tm)
            assert rel(q1, q0) < TOL
            assert rel(qd1, qd0) < TOL
        # no loads, no actuation: the defaults of both paths
        q1, qd1 = step(fast, q, qd, 1e-3)
        q0, qd0 = step(ref, q, qd, 1e-3)
        assert rel(q1, q0) < TOL
        assert rel(qd1, qd0) < TOL


def test_trajectories_agree(limbs) -> None:
    """200 steps (0.2 s) of all limbs in seawater under constant tendon tensions: same trajectory."""
    rng = np.random.default_rng(4)
    models = [LimbModel(limb, 5, medium=SEAWATER) for limb in limbs]
    fast, ref = MultiLimbModel(models), MultiLimbModel(models, backend="numpy")
    tau = tendon_tau(models, rng)
    runs = [
        simulate(m, m.rest_state(), np.zeros(m.dof), 1e-3, 200, lambda t, q, qd: tau) for m in (fast, ref)
    ]
    (_, q1, qd1), (_, q0, qd0) = runs
    assert np.abs(q0[-1]).max() > 0.1  # the limbs did bend
    assert rel(q1, q0) < TOL
    assert rel(qd1, qd0) < TOL


@pytest.mark.parametrize("medium", [AIR, SEAWATER], ids=lambda m: m.name)
def test_single_limb_step_and_dynamics_equal_the_numpy_path(limbs, medium) -> None:
    """integrators.step on a LimbModel (compiled step) and LimbModel.dynamics (compiled ne_dynamics)."""
    rng = np.random.default_rng(9)
    for limb in limbs:
        model = LimbModel(limb, 7, medium=medium)
        ref = MultiLimbModel([model], backend="numpy")
        q, qd = random_state(model.dof, rng, 0.3)
        tf, tm = rng.normal(size=3), 0.01 * rng.normal(size=3)
        tau = tendon_tau([model], rng)
        q1, qd1 = step(model, q, qd, 1e-3, tau, tip_force=tf, tip_moment=tm)
        q0, qd0 = ref.step(q, qd, 1e-3, tau, tip_force=tf, tip_moment=tm)
        assert rel(q1, q0) < TOL
        assert rel(qd1, qd0) < TOL
        M, Q = model.dynamics(q, qd, tf, tm)
        (M0,), Q0 = ref.dynamics(q, qd, tf, tm)
        assert rel(M, M0) < TOL
        assert rel(Q, Q0) < TOL


def test_padded_ne_dynamics_equal_the_numpy_path(limbs) -> None:
    """The padded (L, N, 4) interface: limbs of 10 and 20 pieces, zeros in the padding."""
    rng = np.random.default_rng(12)
    models = [LimbModel(limb, 10, medium=SEAWATER) for limb in limbs]
    prm = NEParams.from_models(models)
    L, N = prm.L, prm.N
    q, qd = np.zeros((L, N, 4)), np.zeros((L, N, 4))
    for i, m in enumerate(models):
        q[i, : m.n], qd[i, : m.n] = (x.reshape(m.n, 4) for x in random_state(m.dof, rng, 0.3))
    g = np.stack([m.gravity for m in models])
    tf, tm = rng.normal(size=(L, 3)), 0.01 * rng.normal(size=(L, 3))
    M, Q = ne_dynamics(prm, q, qd, g, tf, tm)
    M0, Q0 = ne_dynamics(prm, q, qd, g, tf, tm, backend="numpy")
    assert rel(Q, Q0) < TOL
    assert rel(M, M0) < TOL
    for i, m in enumerate(models):
        assert not Q[i, m.dof :].any() and not M[i, m.dof :].any() and not M[i, :, m.dof :].any()
    none, Qn = ne_dynamics(prm, q, qd, g, tf, tm, with_mass=False)
    assert none is None
    np.testing.assert_array_equal(Qn, Q)


def test_step_kernel_reports_a_singular_limb() -> None:
    """A limb without mass has no positive definite pivot: the kernel says so instead of dividing by 0."""
    limbs = np.array([[0, 3]], dtype=np.int64)
    pieces = np.zeros((3, ne_kernels.PIECE_COLUMNS))
    pieces[:, 0] = 0.02
    z33, z = np.zeros((1, 3, 3)), np.zeros(12)
    *_, ok = ne_kernels.step_kernel(limbs, pieces, z33, z, z, z, z, z, 1e-3, 0.5)
    assert ok is False
    pieces[:, 1:6] = 0.01  # mass and inertia: positive definite
    *_, ok = ne_kernels.step_kernel(limbs, pieces, z33, z, z, z, z, z, 1e-3, 0.5)
    assert ok is True


def test_multi_limb_step_falls_back_to_numpy(limbs, monkeypatch) -> None:
    rng = np.random.default_rng(3)
    models = [LimbModel(limb, 4, medium=SEAWATER) for limb in limbs]
    fast, ref = MultiLimbModel(models), MultiLimbModel(models, backend="numpy")
    q, qd = random_state(fast.dof, rng, 0.3)
    real = ne_kernels.step_kernel

    def failing(*args):
        q1, qd1, a, _ = real(*args)
        return q1 + 1.0, qd1 + 1.0, a + 1.0, False

    monkeypatch.setattr(ne_kernels, "step_kernel", failing)
    for got, want in zip(fast.step(q, qd, 1e-3), ref.step(q, qd, 1e-3), strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fast.acceleration(q, qd), ref.acceleration(q, qd))


def test_backend_is_checked(limbs) -> None:
    model = LimbModel(limbs[0], 2)
    with pytest.raises(ConfigurationError, match=r"backend = 'cuda' is invalid; allowed: 'numba', 'numpy'"):
        MultiLimbModel([model], backend="cuda")
    with pytest.raises(ConfigurationError, match=r"backend = 'jax' is invalid; allowed: 'numba', 'numpy'"):
        ne_dynamics(
            model.batch_params(),
            np.zeros((1, model.n, 4)),
            np.zeros((1, model.n, 4)),
            np.zeros((1, 3)),
            backend="jax",
        )
