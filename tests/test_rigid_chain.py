"""The compiled chain dynamics (pccbullet.sim.limb.chain.rigid) against PyBullet's own on the same URDFs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.chain.rigid import ChainModel
from pccbullet.sim.limb.chain.solve import diagonal_armature, implicit_solve
from pccbullet.sim.world import World
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig

GRAVITY_BASE = (0.3, -2.0, -9.6)  # deliberately not along an axis


@pytest.fixture(scope="module")
def world():
    with World(mode="dynamic", medium="water", chain="rrp") as w:
        robot = w.load_robot("ursula", sections=5)
        yield w, robot


def _state(robot, limb: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    spec = robot.limb(limb)
    configs = [PccConfig(rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5), s.length) for s in spec.segments]
    q = robot.pcc_joints(limb, configs)
    return q + rng.normal(0.0, 0.02, q.shape), rng.normal(0.0, 0.5, q.shape)


@pytest.mark.parametrize("limb", ["grasper", "palpation", "camera"])
def test_bias_and_mass_matrix_match_pybullet(world, limb: str) -> None:
    w, robot = world
    cid, body = w.client, robot.bodies[limb]
    chain = robot.compliant[limb].chain
    rng = np.random.default_rng(7)
    zero = [0.0] * chain.n_dof
    try:
        pb.setGravity(*GRAVITY_BASE, physicsClientId=cid)
        for _ in range(5):
            q, qd = _state(robot, limb, rng)
            h_pb = np.array(
                pb.calculateInverseDynamics(body, q.tolist(), qd.tolist(), zero, physicsClientId=cid)
            )
            M_pb = np.array(pb.calculateMassMatrix(body, q.tolist(), physicsClientId=cid))
            h, _ = _dry(chain).bias_and_fluid(q, qd, GRAVITY_BASE)
            assert np.abs(h - h_pb).max() < 1e-12 * np.abs(h_pb).max()
            assert np.abs(chain.mass_matrix(q) - M_pb).max() < 1e-12 * np.abs(M_pb).max()
    finally:
        pb.setGravity(*w.gravity, physicsClientId=cid)


def _dry(chain: ChainModel) -> ChainModel:
    """The chain with the fluid columns zeroed."""
    params = chain.params.copy()
    params[:, 28:] = 0.0
    return dataclasses.replace(chain, params=params)


def test_centres_of_mass_match_pybullet_link_states(world) -> None:
    w, robot = world
    limb = "grasper"
    cid, body = w.client, robot.bodies[limb]
    chain = robot.compliant[limb].chain
    q, _ = _state(robot, limb, np.random.default_rng(3))
    robot.set_joints(limb, q, mode="reset")
    T = robot.T_world_limbbase(limb)
    com_world = T[:3, :3] @ chain.com_positions(q).T + T[:3, 3:4]
    link_index = {name: i for name, (b, i) in robot._links.items() if b == body and i >= 0}
    for k, name in enumerate(chain.links):
        state = pb.getLinkState(body, link_index[name], computeForwardKinematics=True, physicsClientId=cid)
        assert np.linalg.norm(com_world[:, k] - np.array(state[0])) < 1e-6  # PyBullet returns float32-ish


def test_fluid_forces_are_jacobian_transposed_buoyancy_and_drag(world) -> None:
    """Buoyancy at every elastomer link and Morison drag on the slices, as J^T f from PyBullet's Jacobians."""
    w, robot = world
    limb = "palpation"
    cid, body = w.client, robot.bodies[limb]
    compliant = robot.compliant[limb]
    chain = compliant.chain
    q, qd = _state(robot, limb, np.random.default_rng(11))
    g = np.asarray(compliant.gravity_base)
    _, tau_f = chain.bias_and_fluid(q, qd, g)

    T = robot.T_world_limbbase(limb)
    pb.resetJointStatesMultiDof(body, compliant.idx, [[x] for x in q], [[x] for x in qd], physicsClientId=cid)
    link_index = {name: i for name, (b, i) in robot._links.items() if b == body and i >= 0}
    slices = set(naming.section_body_links(robot.limb(limb)))
    payload = robot.limb(limb).payload.frame
    ratio = 1000.0 / robot.limb(limb).material.density
    expected = np.zeros(chain.n_dof)
    zero = [0.0] * chain.n_dof
    for k, name in enumerate(chain.links):
        j = link_index[name]
        state = pb.getLinkState(
            body, j, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=cid
        )
        force = np.zeros(3) if name == payload else -ratio * chain.params[k, 15] * g
        if name in slices:
            R = T[:3, :3].T @ np.array(pb.getMatrixFromQuaternion(state[1])).reshape(3, 3)
            v = T[:3, :3].T @ np.array(state[6])
            axis = R[:, 2]
            v_a = v @ axis
            v_n = v - v_a * axis
            force -= (
                chain.params[k, 29] * np.linalg.norm(v_n) * v_n + chain.params[k, 30] * abs(v_a) * v_a * axis
            )
        # calculateJacobian's point is in the URDF link frame (not about the centre of mass, as its docs
        # say), and PyBullet puts a fixed base at the identity here too: base axes
        com = chain.params[k, 16:19].tolist()
        jac, _ = pb.calculateJacobian(body, j, com, q.tolist(), qd.tolist(), zero, physicsClientId=cid)
        expected += np.asarray(jac).T @ force
    robot.set_joints(limb, compliant.target, mode="reset")
    assert np.abs(tau_f).max() > 1e-3  # a real load
    assert np.abs(tau_f - expected).max() < 1e-12 * np.abs(expected).max()  # measured 3e-16


def test_bad_urdf_joints_are_refused(tmp_path) -> None:
    urdf = tmp_path / "bad.urdf"
    urdf.write_text(
        "<robot name='r'><link name='a'/><link name='b'/>"
        "<joint name='j' type='floating'><parent link='a'/><child link='b'/></joint></robot>"
    )
    with pytest.raises(ConfigurationError, match=r"bad.urdf: joint 'j' type = 'floating' is not supported"):
        ChainModel.from_urdf(urdf, [])
    urdf.write_text(
        "<robot name='r'><link name='a'/><link name='b'/>"
        "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/></joint></robot>"
    )
    with pytest.raises(ConfigurationError, match=r"movable joint 'j' is not in the joint order"):
        ChainModel.from_urdf(urdf, [])
    with pytest.raises(ConfigurationError, match=r"joints \['k'\] of the joint order are not in the file"):
        ChainModel.from_urdf(urdf, ["j", "k"])
    urdf.write_text(urdf.read_text().replace("xyz='0 0 1'", "xyz='0 0 0'"))
    with pytest.raises(ConfigurationError, match=r"joint 'j': axis = \[0.0, 0.0, 0.0\] is invalid"):
        ChainModel.from_urdf(urdf, ["j"])


def test_pendulum_inertia_and_gravity_torque(tmp_path) -> None:
    """A point-ish mass on a rotated, offset revolute joint: M = I + m r^2, h = m g r cos(q)."""
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(
        "<robot name='p'><link name='base'/>"
        "<link name='arm'><inertial><origin xyz='0.5 0 0' rpy='0 0 0.3'/><mass value='2'/>"
        "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
        "<joint name='j' type='revolute'><origin xyz='0 0 1' rpy='1.5707963267948966 0 0'/>"
        "<parent link='base'/><child link='arm'/><axis xyz='0 0 -1'/></joint></robot>"
    )
    chain = ChainModel.from_urdf(urdf, ["j"])
    q = np.array([0.4])
    # the joint frame is Rx(90 deg): its -z axis is the base's +y; turning about +y lowers the arm's x
    assert chain.mass_matrix(q)[0, 0] == pytest.approx(0.01 + 2 * 0.25, rel=1e-12)
    com = chain.com_positions(q)[0]
    assert com == pytest.approx([0.5 * math.cos(0.4), 0.0, 1.0 - 0.5 * math.sin(0.4)], rel=1e-12)
    h, _ = chain.bias_and_fluid(q, np.zeros(1), (0.0, 0.0, -9.81))
    assert h[0] == pytest.approx(-2 * 9.81 * 0.5 * math.cos(0.4), rel=1e-12)  # dV/dq holds the arm up


def test_articulated_solve_equals_the_dense_solve(world) -> None:
    """(M + M_a + diag(a)) x = b by the articulated-body recursion, the water's added mass in its link
    inertias, equals numpy's dense solve with CRBA's M and the added mass from the links' Jacobians."""
    _, robot = world
    rng = np.random.default_rng(5)
    for limb in ("grasper", "camera"):
        chain = robot.compliant[limb].chain
        q, _ = _state(robot, limb, rng)
        armature = rng.uniform(1e-7, 1e-3, chain.n_dof)
        b = rng.normal(0.0, 1.0, chain.n_dof)
        M, M_a = chain.mass_matrix(q), chain.added_mass_matrix(q)
        assert M_a[1, 1] > 0.3 * M[1, 1]  # water: the added mass matters (first bend joint)
        expected = np.linalg.solve(M + M_a + np.diag(armature), b)
        arm = diagonal_armature(chain.jtype, chain.dof, armature)
        x = implicit_solve(chain.parent, chain.jtype, chain.dof, chain.qpos, chain.params, q, arm, b)
        assert np.abs(x - expected).max() < 1e-9 * np.abs(expected).max()
