"""PyBullet plumbing: Bullet's process-wide margin and threshold held only during a world's own steps,
the ``PCCBULLET_SAFE=1`` switch that turns every private internal off (same numbers), and limbs loaded
without limit constraints."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.bullet_internals import capi
from pccbullet.sim.bullet_internals.process_globals import (
    BROADPHASE_SYMBOL,
    CONTACT_BREAKING_SYMBOL,
    BulletGlobals,
    bullet_global,
    set_broadphase_margin,
    set_bullet_global,
)
from pccbullet.sim.bullet_internals.symbols import SAFE_ENV, double_address, elf_symbol
from pccbullet.sim.limb.dynamics import CompliantLimb
from pccbullet.sim.robot import limit_free_urdf
from pccbullet.sim.world import BROADPHASE_MARGIN, CONTACT_BREAKING_THRESHOLD, World

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol lookup")


@linux_only
def test_margin_symbol_is_an_8_byte_double_in_pybullet() -> None:
    symbol = elf_symbol(pb.__file__, "gDbvtMargin")
    assert symbol is not None and symbol[0] > 0 and symbol[1] == 8
    assert elf_symbol(pb.__file__, "no_such_symbol_in_pybullet") is None


SYMBOLS = (BROADPHASE_SYMBOL, CONTACT_BREAKING_SYMBOL)


def _globals() -> tuple[float | None, ...]:
    """Bullet's process-wide broadphase margin and contact-breaking threshold now (m)."""
    return tuple(bullet_global(s) for s in SYMBOLS)


def _put_back(values: tuple[float | None, ...]) -> None:
    """Write ``values`` (from :func:`_globals`) back into Bullet's globals."""
    for symbol, value in zip(SYMBOLS, values, strict=True):
        assert value is not None and set_bullet_global(symbol, value)


def _drop_boxes(cid: int, n: int) -> list[int]:
    """A plane and ``n`` boxes (0.1 m, 0.2 kg) stacked loosely above it in client ``cid``."""
    pb.setGravity(0, 0, -9.81, physicsClientId=cid)
    pb.createMultiBody(0, pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=cid), physicsClientId=cid)
    box = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=cid)
    rng = np.random.default_rng(0)
    return [
        pb.createMultiBody(
            0.2,
            box,
            -1,
            [*rng.uniform(-0.15, 0.15, 2), 0.1 + 0.12 * i],
            pb.getQuaternionFromEuler(rng.uniform(0, 3, 3)),
            physicsClientId=cid,
        )
        for i in range(n)
    ]


def _positions(cid: int, bodies: list[int]) -> np.ndarray:
    return np.array([pb.getBasePositionAndOrientation(b, physicsClientId=cid)[0] for b in bodies])


def _foreign_scene(world: World | None = None, steps: int = 240) -> np.ndarray:
    """A user's own PyBullet scene: 30 boxes dropped on a plane; final positions ``(30, 3)`` (m).
    With ``world``, that world steps between the scene's steps."""
    cid = pb.connect(pb.DIRECT)
    try:
        bodies = _drop_boxes(cid, 30)
        for _ in range(steps):
            pb.stepSimulation(physicsClientId=cid)
            if world is not None:
                world.step()
        return _positions(cid, bodies)
    finally:
        pb.disconnect(cid)


@linux_only
def test_a_world_leaves_bullets_globals_and_other_scenes_as_it_found_them() -> None:
    alone = _foreign_scene()
    found = _globals()
    with World(mode="dynamic", medium="water") as world:
        world.load_robot("ursula", sections=2)
        assert world.broadphase_margin == BROADPHASE_MARGIN and world.bullet_globals.missing == ()
        assert _globals() == found  # held during the world's own physics calls only
        world.step(20)
        assert _globals() == found
        beside = _foreign_scene(world)  # the world steps between the scene's steps
    assert _globals() == found
    after = _foreign_scene()
    # Before: the closed world left the threshold at 5 mm and the scene ended elsewhere (median 0.38 m).
    assert np.abs(alone).max() > 0.0 and np.array_equal(after, alone)
    assert np.array_equal(beside, alone)


def _world_run(foreign_at: int | None) -> tuple[np.ndarray, int]:
    """20 boxes dropped on a plane in a world's own client (URSULA above them); final box positions
    after 240 steps. At step ``foreign_at`` someone else connects (PyBullet zeroes the margin), sets
    a 30 mm contact threshold and a 50 mm margin; the caller puts the globals back."""
    with World(mode="dynamic") as world:
        world.load_robot("ursula", sections=2, position=(0, 0, 1.5))
        bodies = _drop_boxes(world.client, 20)
        other = None
        for k in range(240):
            if k == foreign_at:
                other = pb.connect(pb.DIRECT)
                pb.setPhysicsEngineParameter(contactBreakingThreshold=0.03, physicsClientId=other)
                assert set_broadphase_margin(0.05)
            world.step()
        if other is not None:
            pb.disconnect(other)
        return _positions(world.client, bodies), world.bullet_globals.foreign_changes


@linux_only
def test_a_foreign_connect_mid_run_changes_nothing_in_the_world() -> None:
    before = _globals()
    try:
        quiet, changes = _world_run(None)
        assert _globals() == before
        disturbed, seen = _world_run(120)
        assert _globals() == (0.05, 0.03)  # the foreign values stay theirs
    finally:
        _put_back(before)
    assert changes == 0 and seen == 1  # detected (a debug log line) ...
    # ... and without effect (before: the boxes ended up to 0.4 mm elsewhere)
    assert np.abs(quiet).max() > 0.1 and np.array_equal(disturbed, quiet)


@linux_only
def test_nested_holds_are_not_foreign_changes() -> None:
    """Robot loading holds the globals and the joint reset inside it holds them again: the inner hold
    finds the world's own values (before: counted as one foreign change per limb)."""
    before = _globals()
    held = BulletGlobals({BROADPHASE_SYMBOL: 0.004, CONTACT_BREAKING_SYMBOL: 0.006})
    try:
        outer = held.enter()
        inner = held.enter()
        assert inner == (0.004, 0.006) and _globals() == (0.004, 0.006)
        held.leave(inner)
        held.leave(outer)
        assert _globals() == before and held.foreign_changes == 0
        assert set_broadphase_margin(0.03)  # someone else writes between two holds: counted
        held.leave(held.enter())
        assert held.foreign_changes == 1 and _globals() == (0.03, before[1])
    finally:
        _put_back(before)


@pytest.mark.parametrize("bad", [-0.001, 1.5, float("nan")])
def test_bad_margin_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match=r"broadphase margin = .* m is invalid; allowed: \[0, 1\] m"):
        set_broadphase_margin(bad)
    with pytest.raises(ValueError, match=r"gContactBreakingThreshold = .* m is invalid; allowed: \[0, 1\] m"):
        set_bullet_global(CONTACT_BREAKING_SYMBOL, bad)


def _fat_box_found(margin: float) -> bool:
    """Move a sphere 1 mm, then ask Bullet's tree for a box 3 mm beyond the sphere's own AABB.
    Creation and step run with ``margin`` and a world's 5 mm contact threshold (which fattens the
    first tree box too)."""
    cid = pb.connect(pb.DIRECT)
    held = BulletGlobals({BROADPHASE_SYMBOL: margin, CONTACT_BREAKING_SYMBOL: CONTACT_BREAKING_THRESHOLD})
    assert held.missing == ()
    found = held.enter()
    try:
        shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.05, physicsClientId=cid)
        body = pb.createMultiBody(1.0, shape, -1, [0, 0, 0], physicsClientId=cid)
        pb.setGravity(0, 0, 0, physicsClientId=cid)
        pb.resetBaseVelocity(body, [1.0, 0, 0], physicsClientId=cid)
        pb.stepSimulation(physicsClientId=cid)  # moves 1 mm: the tree box is refitted
        lo, hi = pb.getAABB(body, physicsClientId=cid)
        probe_lo = [hi[0] + 0.003, lo[1], lo[2]]
        probe_hi = [hi[0] + 0.004, hi[1], hi[2]]
        overlaps = pb.getOverlappingObjects(probe_lo, probe_hi, physicsClientId=cid)
        return bool(overlaps) and any(b == body for b, _ in overlaps)
    finally:
        held.leave(found)
        pb.disconnect(cid)


@linux_only
def test_the_margin_reaches_bullets_tree() -> None:
    assert _fat_box_found(0.005)
    assert not _fat_box_found(0.0)


def _world_fattens_tree_boxes() -> bool:
    """In a dynamic world's client, move a sphere 1 mm with one world step and ask Bullet's tree for
    a box 6 mm beyond the sphere's own AABB (past the 5 mm contact threshold's fattening): found only
    if the world's 5 mm margin was in place."""
    with World(mode="dynamic", gravity=(0, 0, 0)) as world:
        cid = world.client
        with world.holding_globals():
            shape = pb.createCollisionShape(pb.GEOM_SPHERE, radius=0.05, physicsClientId=cid)
            body = pb.createMultiBody(1.0, shape, -1, [0, 0, 0], physicsClientId=cid)
        pb.resetBaseVelocity(body, [1.0, 0, 0], physicsClientId=cid)
        world.step()
        lo, hi = pb.getAABB(body, physicsClientId=cid)
        overlaps = pb.getOverlappingObjects(
            [hi[0] + 0.006, lo[1], lo[2]], [hi[0] + 0.007, hi[1], hi[2]], physicsClientId=cid
        )
        return bool(overlaps) and any(b == body for b, _ in overlaps)


@linux_only
def test_the_safe_switch_writes_no_bullet_global(monkeypatch: pytest.MonkeyPatch) -> None:
    found = _globals()
    assert _world_fattens_tree_boxes()  # the control: the internals hold the 5 mm margin in a step
    monkeypatch.setenv(SAFE_ENV, "1")
    try:
        assert capi.c_api() is None and double_address(BROADPHASE_SYMBOL) is None
        with World(mode="kinematic") as world:
            assert world.bullet_globals.values == {} and world.broadphase_margin == 0.0
            with world.holding_globals():
                pass
        # the margin was never put in place during the world's step (PyBullet's 0 after connect)
        assert not _world_fattens_tree_boxes()
        monkeypatch.delenv(SAFE_ENV)
        # the only change: the threshold, set through setPhysicsEngineParameter (PyBullet's own write)
        assert _globals() == (0.0, CONTACT_BREAKING_THRESHOLD)
    finally:
        monkeypatch.delenv(SAFE_ENV, raising=False)
        _put_back(found)


@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_a_bad_safe_switch_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(SAFE_ENV, value)
    with pytest.raises(
        ConfigurationError, match=rf"PCCBULLET_SAFE = '{value}' is invalid; allowed: 0, 1 or unset"
    ):
        World(mode="kinematic")


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
    with World(mode="dynamic", gravity=(0, 0, 0)) as world:  # the rod chain: spherical joints, no limits
        robot = world.load_robot("ursula", sections=2)
        info = [
            pb.getJointInfo(robot.bodies["camera"], int(j), physicsClientId=world.client)
            for j in robot.joint_indices("camera")
        ]
        assert {i[2] for i in info} == {pb.JOINT_SPHERICAL, pb.JOINT_PRISMATIC} and all(
            i[8] > i[9] for i in info
        )
    with World(mode="dynamic", gravity=(0, 0, 0), chain="rrp") as world:
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
