"""PyBullet plumbing: the broadphase margin PyBullet resets, and limbs loaded without limit constraints."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from sim.bullet import _elf_symbol, broadphase_margin, pb, set_broadphase_margin
from sim.dynamics import CompliantLimb
from sim.world import BROADPHASE_MARGIN, World, limit_free_urdf
from urdf_gen.errors import ConfigurationError

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol lookup")


@linux_only
def test_margin_symbol_is_an_8_byte_double_in_pybullet() -> None:
    symbol = _elf_symbol(pb.__file__, "gDbvtMargin")
    assert symbol is not None and symbol[0] > 0 and symbol[1] == 8
    assert _elf_symbol(pb.__file__, "no_such_symbol_in_pybullet") is None


@linux_only
def test_connect_resets_the_margin_and_the_world_restores_it() -> None:
    with World() as world:
        assert world.broadphase_margin == BROADPHASE_MARGIN
        assert broadphase_margin() == BROADPHASE_MARGIN
        other = pb.connect(pb.DIRECT)  # what PyBullet does on every connect
        try:
            assert broadphase_margin() == 0.0
            assert set_broadphase_margin(BROADPHASE_MARGIN)
            assert broadphase_margin() == BROADPHASE_MARGIN
        finally:
            pb.disconnect(other)


@pytest.mark.parametrize("bad", [-0.001, 1.5, float("nan")])
def test_bad_margin_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match=r"broadphase margin = .* m is invalid; allowed: \[0, 1\] m"):
        set_broadphase_margin(bad)


def _fat_box_found(margin: float) -> bool:
    """Move a sphere 1 mm, then ask Bullet's tree for a box 3 mm beyond the sphere's own AABB."""
    before = broadphase_margin()
    cid = pb.connect(pb.DIRECT)
    try:
        assert set_broadphase_margin(margin)
        shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.05, physicsClientId=cid)
        body = pb.createMultiBody(1.0, shape, -1, [0, 0, 0], physicsClientId=cid)
        pb.setGravity(0, 0, 0, physicsClientId=cid)
        pb.resetBaseVelocity(body, [1.0, 0, 0], physicsClientId=cid)
        pb.stepSimulation(physicsClientId=cid)  # moves 1 mm: the tree box is refitted
        lo, hi = pb.getAABB(body, physicsClientId=cid)
        probe_lo = [hi[0] + 0.003, lo[1], lo[2]]
        probe_hi = [hi[0] + 0.004, hi[1], hi[2]]
        found = pb.getOverlappingObjects(probe_lo, probe_hi, physicsClientId=cid)
        return bool(found) and any(b == body for b, _ in found)
    finally:
        pb.disconnect(cid)
        set_broadphase_margin(before or 0.0)  # the margin is global: leave it as other worlds set it


@linux_only
def test_the_margin_reaches_bullets_tree() -> None:
    assert _fat_box_found(0.005)
    assert not _fat_box_found(0.0)


def test_limit_free_copy_keeps_everything_but_the_limits(tmp_path) -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=2, urdf_dir=tmp_path / "u")
        source = robot.urdfs.limbs["camera"]
        copy = limit_free_urdf(source, tmp_path)
        original = pb.loadURDF(str(source), useFixedBase=True, physicsClientId=world.client)
        free = pb.loadURDF(str(copy), useFixedBase=True, physicsClientId=world.client)
        n = pb.getNumJoints(original, physicsClientId=world.client)
        assert pb.getNumJoints(free, physicsClientId=world.client) == n
        for j in range(n):
            a = pb.getJointInfo(original, j, physicsClientId=world.client)
            b = pb.getJointInfo(free, j, physicsClientId=world.client)
            assert a[:8] == b[:8] and a[10:] == b[10:]
            if a[2] in (pb.JOINT_REVOLUTE, pb.JOINT_PRISMATIC):
                assert a[8] <= a[9] and (b[8], b[9]) == (1.0, -1.0)
            shape_a = pb.getCollisionShapeData(original, j, physicsClientId=world.client)
            shape_b = pb.getCollisionShapeData(free, j, physicsClientId=world.client)
            assert [s[2:] for s in shape_a] == [s[2:] for s in shape_b]  # meshes found from the copy
        assert any(pb.getCollisionShapeData(free, j, physicsClientId=world.client) for j in range(n))


def test_compliant_limbs_have_no_limit_rows_kinematic_ones_keep_them() -> None:
    with World(mode="dynamic", gravity=(0, 0, 0)) as world:
        robot = world.load_robot("ursula", sections=2)
        body = robot.bodies["camera"]
        idx = robot.joint_indices("camera")
        info = [pb.getJointInfo(body, int(j), physicsClientId=world.client) for j in idx]
        assert all(i[8] > i[9] for i in info)
        # A chord pushed 5 mm past the spec's longest section stays there: no limit row pulls it back.
        chord = next(k for k, i in enumerate(info) if i[2] == pb.JOINT_PRISMATIC)
        q = robot.joints("camera")
        q[chord] = robot.limb("camera").segments[0].length_max / 2 + 0.005
        pb.resetJointState(body, int(idx[chord]), q[chord], physicsClientId=world.client)
        robot.compliant["camera"].target = q.copy()
        world.step(200)
        assert robot.joints("camera")[chord] == pytest.approx(q[chord], abs=1e-6)
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=2)
        body = robot.bodies["camera"]
        info = [
            pb.getJointInfo(body, int(j), physicsClientId=world.client) for j in robot.joint_indices("camera")
        ]
        assert all(i[8] <= i[9] for i in info)
        assert np.isfinite([i[8] for i in info]).all()
        with pytest.raises(
            ConfigurationError, match=r"limb 'camera': PyBullet holds joint-limit constraints"
        ):
            CompliantLimb(robot, "camera", world.medium)
