"""Model state -> RRP joint targets of the URDF chain."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.sim.models.joint_targets import joint_targets, piece_pcc, state_from_pcc
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.urdf_gen.pcc import PccConfig, chain_transform, limb_joints, rot_z
from pccbullet.urdf_gen.spec_loader import load_robot


@pytest.fixture(scope="module")
def grasper():
    return load_robot("ursula").limb("grasper")


def _chain_tip(q, sections):
    T, i = np.eye(4), 0
    for n in sections:
        T = T @ chain_transform(q[i : i + 3 * n + 1])
        i += 3 * n + 1
    return T


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pure_pcc_equals_limb_joints(grasper, seed):
    rng = np.random.default_rng(seed)
    configs = [
        PccConfig(rng.uniform(0.1, 2.5), rng.uniform(-3.0, 3.0), rng.uniform(0.29, 0.3)) for _ in range(2)
    ]
    model = LimbModel(grasper, 10)
    q = state_from_pcc(model, configs)
    got = joint_targets(model, q)
    np.testing.assert_allclose(got, limb_joints(configs, [10, 10]), atol=1e-12, rtol=0)
    T = _chain_tip(got, [10, 10])
    pos, R = model.forward_kinematics(q)
    np.testing.assert_allclose(T[:3, 3], pos[-1], atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], R[-1] @ rot_z(sum(c.plane for c in configs)), atol=1e-12)


def test_resampled_pure_pcc(grasper):
    configs = [PccConfig(1.0, 0.4, 0.3), PccConfig(0.7, -1.1, 0.295)]
    model = LimbModel(grasper, 7)
    np.testing.assert_allclose(
        joint_targets(model, state_from_pcc(model, configs)), limb_joints(configs, [10, 10]), atol=1e-12
    )


def test_general_state_positions_exact(grasper):
    rng = np.random.default_rng(3)
    model = LimbModel(grasper, 10)
    q = rng.normal(size=model.dof) * np.tile([0.01, 2.0, 2.0, 0.5], model.n)
    got = joint_targets(model, q)
    T = _chain_tip(got, [10, 10])
    np.testing.assert_allclose(T[:3, 3], model.tip_position(q), atol=1e-12)


def test_piece_pcc(grasper):
    model = LimbModel(grasper, 4)
    q = state_from_pcc(model, [PccConfig(0.8, 0.3, 0.3), PccConfig(0.4, 0.0, 0.3)])
    bend, plane, length = piece_pcc(model, q)
    np.testing.assert_allclose(bend[:4], 0.2)
    np.testing.assert_allclose(plane[:4], 0.3)
    np.testing.assert_allclose(length.sum(), 0.6)
