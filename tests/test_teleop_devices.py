"""Operator mapping from scripted keyboard sessions, limits, exact record/replay, SDK install hints."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.devices.base import DeviceSample, DeviceUnavailableError
from pccbullet.teleop.devices.registry import open_device
from pccbullet.teleop.devices.scripted import Recorder, ReplayDevice, ScriptedDevice
from pccbullet.teleop.mapping import OperatorMapping, Rates
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot

DT = 1e-3


@pytest.fixture(scope="module")
def spec():
    return load_robot("ursula")


def _run(mapping: OperatorMapping, device, ticks: int) -> list[dict[str, list[PccConfig]]]:
    out = []
    for k in range(ticks):
        cmd = mapping.update(device.read(k * DT), DT)
        out.append({n: list(c) for n, c in cmd.items()})
    return out


def test_keyboard_session_gives_expected_configuration(spec) -> None:
    device = ScriptedDevice(
        holds=[(0.0, 0.5, "bend+"), (0.5, 0.7, "plane-"), (0.7, 1.0, "length-")],
        presses=[(0.0, "select:grasper"), (0.5, "next_segment"), (0.9, "follow")],
    )
    mapping = OperatorMapping(spec, rates=Rates(bend=0.5, plane=1.0, length=0.01))
    _run(mapping, device, 1000)
    g = mapping.command["grasper"]
    assert g[0].bend == pytest.approx(500 * 0.5 * DT, abs=1e-12)  # 0.25 rad on segment 1
    assert g[1].plane == pytest.approx(-200 * 1.0 * DT, abs=1e-12)  # then segment 2
    assert g[1].length == pytest.approx(0.300 - 300 * 0.01 * DT, abs=1e-12)
    assert mapping.command["camera"] == mapping.command["light"]  # follow copies camera -> light
    assert mapping.command["palpation"] == [PccConfig(0.0, 0.0, 0.3)] * 2


def test_rate_keys_never_exceed_the_limits(spec) -> None:
    device = ScriptedDevice(
        holds=[(0.0, 8.0, "bend+"), (0.0, 8.0, "length+"), (0.0, 8.0, "plane-"), (8.0, 16.0, "length-")],
        presses=[(0.0, "select:camera")],
    )
    mapping = OperatorMapping(spec, rates=Rates(bend=0.5, plane=1.0, length=0.01))
    seg = spec.limb("camera").segments[0]
    history = _run(mapping, device, 16000)
    bends = np.array([h["camera"][0].bend for h in history])
    planes = np.array([h["camera"][0].plane for h in history])
    lengths = np.array([h["camera"][0].length for h in history])
    assert bends.max() == pytest.approx(seg.bend_max) and (np.abs(bends) <= seg.bend_max).all()
    assert planes.min() == pytest.approx(-seg.plane_max) and (np.abs(planes) <= seg.plane_max).all()
    assert lengths.min() == pytest.approx(seg.length_min)
    assert ((lengths >= seg.length_min) & (lengths <= seg.length_max)).all()
    assert np.abs(np.diff(bends)).max() <= 0.5 * DT + 1e-12  # bounded rate


def test_device_error_sample_does_not_move_the_arm(spec) -> None:
    mapping = OperatorMapping(spec)
    before = {n: list(c) for n, c in mapping.command.items()}
    bad = DeviceSample(
        t=0.0, held=frozenset({"bend+"}), pressed=("next_limb",), position=(0.5, 0, 0), ok=False
    )
    for _ in range(100):
        mapping.update(bad, DT)
    assert mapping.command == before and mapping.limb == "grasper"


def test_record_and_replay_reproduce_the_session_exactly(spec, tmp_path) -> None:
    rng = np.random.default_rng(7)
    holds = [
        (float(t), float(t) + 0.2, str(a))
        for t, a in zip(
            rng.uniform(0, 1.5, 12),
            rng.choice(["bend+", "bend-", "plane+", "plane-", "length+", "length-"], 12),
            strict=True,
        )
    ]
    presses = [(0.3, "next_segment"), (0.8, "next_limb"), (1.1, "segment:2")]
    rec = Recorder(ScriptedDevice(holds=holds, presses=presses, waypoints=[(1.6, None)]))
    live = _run(OperatorMapping(spec), rec, 2000)
    path = rec.save(tmp_path / "session.json")
    replayed = _run(OperatorMapping(spec), ReplayDevice(path=path), 2000)
    assert replayed == live  # bit-for-bit equal PccConfig values at every tick
    assert live[-1] != live[0]


def test_6dof_target_drives_the_selected_limb(spec) -> None:
    from pccbullet.sim.world import World

    with World(mode="kinematic") as world:
        robot = world.load_robot(load_robot("ursula", sections=2))
        T = {n: robot.T_world_limbbase(n) for n in ("palpation",)}
    target = (0.47, 0.02, -0.44)
    mapping = OperatorMapping(spec, T_world_base=T, ik_iters=3)
    device = ScriptedDevice(
        waypoints=[(0.0, (0.725, 0.06, -0.06)), (1.0, target)], presses=[(0.0, "select:palpation")]
    )
    _run(mapping, device, 1500)
    assert mapping.ik_error < 1e-3


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("touch", "pip install pyOpenHaptics"),
        ("spacemouse", "pip install pyspacemouse"),
        ("gamepad", "pip install pygame"),
    ],
    ids=["touch", "spacemouse", "gamepad"],
)
def test_missing_sdk_raises_with_install_hint(name, hint) -> None:
    with pytest.raises(DeviceUnavailableError, match=hint):
        open_device(name)


def test_unknown_device_and_bad_waypoints() -> None:
    with pytest.raises(ConfigurationError, match=r"device = 'joystick' is invalid; allowed: keyboard"):
        open_device("joystick")
    with pytest.raises(ConfigurationError, match="non-decreasing"):
        ScriptedDevice(waypoints=[(1.0, (0, 0, 0)), (0.5, (0, 0, 0))])
    assert math.isclose(
        ScriptedDevice(waypoints=[(0.0, (0, 0, 0)), (1.0, (1, 0, 0))]).read(0.25).position[0], 0.25
    )


def test_scripted_and_replay_devices_keep_a_bounded_force_history() -> None:
    """A long session must not grow: the forces kept for inspection are the last FORCE_HISTORY."""
    from pccbullet.teleop.devices.scripted import FORCE_HISTORY

    for device in (ScriptedDevice(), ReplayDevice([])):
        for k in range(FORCE_HISTORY + 500):
            device.send_force(np.array([k, 0.0, 0.0]))
        assert len(device.forces) == FORCE_HISTORY
        assert device.forces[-1][0] == FORCE_HISTORY + 499 and device.forces[0][0] == 500


def test_scripted_positions_are_numpys_interpolation_bit_for_bit() -> None:
    """Seeded, bounded: 200 random timelines (repeated times, gaps without a position) read at 60 times
    each, in and outside their span, equal ``numpy.interp`` per axis exactly."""
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(200):
        times = np.sort(rng.uniform(0.0, 5.0, rng.integers(1, 6)))
        if len(times) > 1 and rng.random() < 0.3:
            times[1] = times[0]
        waypoints = [(float(t), None if rng.random() < 0.2 else tuple(rng.normal(size=3))) for t in times]
        device = ScriptedDevice(waypoints)
        wt = np.array([t for t, _ in waypoints])
        wp = np.array([[np.nan] * 3 if p is None else p for _, p in waypoints])
        for t in np.concatenate([rng.uniform(-1.0, 6.0, 55), times]):
            k = int(np.searchsorted(wt, t, side="right"))
            gap = np.isnan(wp[max(k - 1, 0)]).any() or np.isnan(wp[min(k, len(wt) - 1)]).any()
            expected = None if gap else tuple(float(np.interp(t, wt, wp[:, i])) for i in range(3))
            assert device.position_at(float(t)) == expected
            checked += expected is not None
    assert checked > 5000
