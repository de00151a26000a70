"""Public World/Robot API used by the Gymnasium env: joint velocities and loading a subset of limbs."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig


@pytest.mark.parametrize("chain", ["rrp", "rod"])
def test_joint_velocities_are_pybullets_and_integrate_to_the_joints(chain: str) -> None:
    """RRP: PyBullet's joint velocities, and Bullet's semi-implicit Euler ``q1 = q0 + dt qd1`` exactly. Rod:
    a node's Euler-angle rates from its spherical joint's angular velocity, which its quaternion's
    exponential update follows to first order in the step."""
    with World(mode="dynamic", medium="water", chain=chain) as world:
        robot = world.load_robot("ursula", sections=3, limbs=["camera"])
        n = 10 if chain == "rrp" else 15
        assert np.array_equal(robot.joint_velocities("camera"), np.zeros(n))  # reset: at rest
        robot.set_pcc("camera", [PccConfig(1.0, 0.3, 0.6)], mode="target")
        world.step(20)
        q0 = robot.joints("camera")
        world.step()
        qd = robot.joint_velocities("camera")
        assert qd.shape == (n,) and np.max(np.abs(qd)) > 0.1
        increments = (robot.joints("camera") - q0) / world.dt
        if chain == "rrp":
            np.testing.assert_allclose(increments, qd, rtol=0, atol=1e-9)
            idx = robot.joint_indices("camera").tolist()
            states = pb.getJointStates(robot.bodies["camera"], idx, physicsClientId=world.client)
            assert qd.tolist() == [s[1] for s in states]
        else:
            np.testing.assert_allclose(increments, qd, rtol=0, atol=2e-3 * np.abs(qd).max())


def test_load_a_subset_of_limbs() -> None:
    configs = [PccConfig(0.8, -0.4, 0.59)]
    with World(mode="kinematic") as world:
        full = world.load_robot("ursula", sections=3)
        full.set_pcc("camera", configs)
        expected = full.tip_pose("camera")
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3, limbs=["camera", "light"])
        assert list(robot.bodies) == ["camera", "light"]
        assert [limb.name for limb in robot.spec.limbs] == ["camera", "light"]
        assert sorted(p.stem for p in robot.urdfs.head.parent.glob("*.urdf")) == [
            "ursula_camera",
            "ursula_head",
            "ursula_light",
        ]
        assert pb.getNumBodies(physicsClientId=world.client) == 3
        robot.set_pcc("camera", configs)
        np.testing.assert_array_equal(robot.tip_pose("camera"), expected)
        with pytest.raises(
            ConfigurationError, match="robot 'ursula' has no limb 'grasper'; limbs: camera, light"
        ):
            robot.tip_pose("grasper")


@pytest.mark.parametrize(
    ("limbs", "match"),
    [
        (["camera", "camera"], r"limbs = \['camera', 'camera'\] is invalid; allowed: distinct names"),
        (["tail"], "robot 'ursula' has no limb 'tail'; limbs: grasper, palpation, camera, light"),
    ],
)
def test_bad_limb_subsets_raise(limbs, match) -> None:
    with World(mode="kinematic") as world, pytest.raises(ConfigurationError, match=match):
        world.load_robot("ursula", sections=2, limbs=limbs)


def test_joint_resets_hold_the_worlds_broadphase_margin() -> None:
    """A kinematic reset moves the links' tree boxes: it runs with the world's Bullet globals held (as
    its steps do), and they are put back after, whatever they were."""
    from pccbullet.sim.bullet_internals import process_globals as internals

    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        if not world.broadphase_margin:
            pytest.skip("Bullet's broadphase margin is not reachable in this PyBullet build")
        seen: list[float | None] = []
        reset = pb.resetJointStatesMultiDof

        def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(internals.broadphase_margin())
            return reset(*args, **kwargs)

        pb.resetJointStatesMultiDof = spy
        try:
            before = internals.broadphase_margin()
            robot.set_pcc("camera", [PccConfig(0.4, 0.2, 0.6)])
        finally:
            pb.resetJointStatesMultiDof = reset
        assert seen == [world.broadphase_margin] and internals.broadphase_margin() == before
