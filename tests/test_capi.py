"""The dynamic mode's joint I/O through PyBullet's C API (pccbullet.sim.bullet_internals.capi) against PyBullet's Python
functions, and the whole of PyBullet's internals against ``PCCBULLET_SAFE=1``."""

from __future__ import annotations

import logging
import math
import sys

import numpy as np
import pytest

from pccbullet.sim.bullet import pb
from pccbullet.sim.bullet_internals import capi
from pccbullet.sim.bullet_internals.process_globals import (
    BROADPHASE_SYMBOL,
    CONTACT_BREAKING_SYMBOL,
    bullet_global,
    set_bullet_global,
)
from pccbullet.sim.bullet_internals.symbols import SAFE_ENV
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig

needs_c_api = pytest.mark.skipif(
    not sys.platform.startswith("linux") or capi.c_api() is None, reason="PyBullet's C API not found"
)


def _run(
    steps: int, sections: int = 5, drive: str = "joints"
) -> tuple[list[bool], np.ndarray, int, tuple[str, ...]]:
    """URSULA in water, every limb's targets (or tendon goals) moved every step; returns each limb's
    ``direct_io``, all joint positions and velocities after every 10th step, the most contact points seen
    then and the Bullet globals the world could not hold."""
    with World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", sections=sections, drive=drive)
        limbs = [(limb.name, limb.segments) for limb in robot.spec.limbs]
        direct = [c.direct_io for c in robot.compliant.values()]
        rows = []
        contacts = 0
        for i in range(steps):
            t = world.time
            for k, (name, segments) in enumerate(limbs):
                configs = [
                    PccConfig(0.9 * seg.bend_max * math.sin(3.0 * t + k), 0.5 * j + k, seg.length)
                    for j, seg in enumerate(segments)
                ]
                robot.set_pcc(name, configs, mode="target")
            world.step()
            if i % 10 == 9:
                row = []
                for c in robot.compliant.values():
                    q, qd = c.read_state()
                    row += [*q, *qd]
                rows.append(row)
                contacts = max(contacts, len(pb.getContactPoints(physicsClientId=world.client)))
        missing = world.bullet_globals.missing
    return direct, np.array(rows), contacts, missing


@needs_c_api
@pytest.mark.parametrize("drive", ["joints", "tendons"])
def test_c_api_and_python_functions_give_bit_identical_trajectories(
    monkeypatch: pytest.MonkeyPatch, drive: str
) -> None:
    direct, fast, contacts, _ = _run(600, drive=drive)
    monkeypatch.setenv(capi.ENV_SWITCH, "0")
    python, slow, _, _ = _run(600, drive=drive)
    assert direct == [True] * 4 and python == [False] * 4
    assert fast.shape == slow.shape and fast.shape[0] == 60
    assert np.abs(fast[-1]).max() > 0.05  # the limbs moved
    assert contacts >= 1  # limbs touching (each other or the seabed) during the run
    assert np.array_equal(fast, slow)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol lookup")
def test_the_safe_switch_gives_bit_identical_trajectories(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every internal off (``PCCBULLET_SAFE=1``: C API and Bullet's globals): URSULA's joints are the
    same, bit for bit. Not so for every scene: 12 boxes falling on a plane beside URSULA ended up to
    1.7 mm elsewhere after 300 steps (the margin changes the order in which Bullet finds overlapping
    pairs, hence its solver's order and rounding)."""
    symbols = (BROADPHASE_SYMBOL, CONTACT_BREAKING_SYMBOL)
    found = [bullet_global(s) for s in symbols]
    direct, inside, contacts, missing = _run(600)
    monkeypatch.setenv(SAFE_ENV, "1")
    try:
        direct_safe, safe, contacts_safe, missing_safe = _run(600)
    finally:
        monkeypatch.delenv(SAFE_ENV)
        # the safe world set its threshold PyBullet's way (process-wide, left in place): put it back
        for symbol, value in zip(symbols, found, strict=True):
            assert value is not None and set_bullet_global(symbol, value)
    assert missing == () and direct == [capi.c_api() is not None] * 4  # the internals in use
    assert set(missing_safe) == set(symbols) and direct_safe == [False] * 4
    assert contacts >= 1 and contacts_safe >= 1  # limbs touching during the run
    assert np.abs(inside[-1]).max() > 0.05  # the limbs moved
    assert np.array_equal(safe, inside)


@needs_c_api
@pytest.mark.parametrize(("chain", "sections"), [("rrp", 5), ("rod", 5), ("rod", 14)])
def test_limb_step_reads_what_get_joint_states_reads_and_sends_what_it_is_given(
    chain: str, sections: int
) -> None:
    """On one body and on a limb in parts (rod, N = 14: two bodies)."""
    api = capi.c_api()
    assert api is not None
    with World(mode="dynamic", medium="water", chain=chain) as world:
        robot = world.load_robot("ursula", sections=sections, limbs=["grasper"])
        world.step(50)
        limb = robot.compliant["grasper"]
        assert len(limb.joints.parts) == (2 if sections == 14 else 1)
        functions, slot, handle, bodies, qidx, uidx, qsplit, usplit, out = limb._direct[:9]
        q, qd = np.empty(limb.chain.n_q), np.empty(limb.chain.n_dof)
        io = (functions, slot, handle, bodies, qidx, uidx, qsplit, usplit, out)
        assert capi.read_joint_state(*io, q, qd) == capi.OK
        q_py, qd_py = limb.read_state()
        assert q.tolist() == q_py.tolist() and qd.tolist() == qd_py.tolist()
        assert np.abs(qd).max() > 0  # a moving limb, not zeros
        tau = np.linspace(-1e-4, 1e-4, limb.chain.n_dof)
        assert capi.send_joint_torques(functions, slot, handle, bodies, uidx, usplit, tau) == capi.OK
        # the torques act on the next step: the same step again from the same state with the
        # Python functions gives the same joint velocities
        state = pb.saveState(physicsClientId=world.client)
        pb.stepSimulation(physicsClientId=world.client)
        after_c = limb.read_state()[1].tolist()
        pb.restoreState(state, physicsClientId=world.client)
        limb.joints.send_torques(tau)
        pb.stepSimulation(physicsClientId=world.client)
        assert after_c == limb.read_state()[1].tolist()
        # a body that does not exist, a handle that is not this client's
        missing = np.full_like(bodies, 999)
        assert capi.read_joint_state(functions, slot, handle, missing, *io[4:], q, qd) == capi.ERR_STATE
        wrong = np.uint64(int(handle) + 8)
        assert capi.read_joint_state(functions, slot, wrong, *io[3:], q, qd) == capi.ERR_CLIENT
        assert capi.send_joint_torques(functions, slot, wrong, bodies, uidx, usplit, tau) == capi.ERR_CLIENT


@needs_c_api
def test_a_closed_world_raises_instead_of_touching_freed_memory() -> None:
    world = World(mode="dynamic", medium="water")
    robot = world.load_robot("ursula", sections=5)
    limb = robot.compliant["camera"]
    api = capi.c_api()
    assert api is not None and limb.direct_io and api.handle(world.client) != 0
    client = world.client
    world.close()
    assert api.handle(client) == 0
    with pytest.raises(pb.error, match="the physics client is no longer connected"):
        limb.apply()


def test_the_switch_turns_the_c_api_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(capi.ENV_SWITCH, "0")
    assert capi.c_api() is None
    with World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", sections=5)
        assert not any(c.direct_io for c in robot.compliant.values())
        world.step(5)  # the Python path runs


@needs_c_api
def test_client_slots_are_bounded() -> None:
    api = capi.c_api()
    assert api is not None and api.capacity >= 1
    with pytest.raises(ValueError, match=r"physicsClientId = -1 is invalid; allowed: 0\.\."):
        api.slot(-1)
    with pytest.raises(ValueError, match="physicsClientId = .* is invalid"):
        api.slot(api.capacity)


@needs_c_api
@pytest.mark.parametrize(
    ("function", "code"), [("read_joint_state", capi.ERR_STATE), ("send_joint_torques", capi.ERR_CONTROL)]
)
def test_a_limb_whose_c_api_check_fails_uses_the_python_functions(
    monkeypatch: pytest.MonkeyPatch, function: str, code: int
) -> None:
    monkeypatch.setattr(capi, function, lambda *args: code)
    with World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", sections=5)
        assert not any(c.direct_io for c in robot.compliant.values())
        world.step(5)


@needs_c_api
def test_a_removed_limb_body_raises_with_the_reason() -> None:
    with World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", sections=5)
        limb = robot.compliant["light"]
        assert limb.direct_io
        pb.removeBody(limb.body, physicsClientId=world.client)
        with pytest.raises(
            pb.error, match=r"limb body \d+, client \d+: PyBullet did not return the joint state"
        ):
            limb.apply()


@needs_c_api
def test_a_refused_torque_command_raises_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyBullet accepts any torque command it can parse (an unknown body included), so the refusal is
    stood in for at the kernel's return code."""
    with World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", sections=5)
        limb = robot.compliant["camera"]
        assert limb.direct_io
        monkeypatch.setattr(capi, "limb_step", lambda *args: capi.ERR_CONTROL)
        with pytest.raises(
            pb.error, match=r"limb body \d+, client \d+: PyBullet did not accept the joint torques"
        ):
            limb.apply()


def test_the_installed_pybullet_is_a_pinned_version() -> None:
    assert capi.pybullet_version() in capi.PINNED_VERSIONS


@needs_c_api
def test_an_unpinned_pybullet_version_falls_back_to_the_same_numbers(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    direct, fast, _, _ = _run(200)
    monkeypatch.setattr(capi, "pybullet_version", lambda: "3.2.8")
    monkeypatch.setattr(capi, "_api", False)  # look it up again, under the faked version
    with caplog.at_level(logging.DEBUG, logger="pccbullet.sim.bullet_internals.capi"):
        assert capi.c_api() is None
        python, slow, _, _ = _run(200)
    assert "PyBullet 3.2.8 is not one of the C API's pinned versions (3.2.7)" in caplog.text
    assert direct == [True] * 4 and python == [False] * 4
    assert np.abs(fast[-1]).max() > 0.05 and np.array_equal(fast, slow)
