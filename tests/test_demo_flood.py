"""The flood benchmark on the real master tick (``pccbullet bench --demo --flood N``): the UDP operator, the
junk, the window's figures. Speed is measured by the benchmark, never asserted here."""

from __future__ import annotations

import socket
import time
from types import SimpleNamespace

import numpy as np
import pytest

from pccbullet.teleop.demo.bench import bench_demo, format_demo
from pccbullet.teleop.demo.flood import (
    AFTER_S,
    BUTTONS,
    SchedLog,
    TickRecorder,
    button_plan,
    flood_figures,
    junk_packets,
    sched_stat,
)
from pccbullet.teleop.demo.script import scripted_operator
from pccbullet.teleop.udp.bridge import UdpBridge
from pccbullet.teleop.udp.client import UdpBridgeClient

LIMBS = ["grasper", "palpation", "camera", "light"]
KEY = b"a-test-key-of-32-bytes-for-udp!!"


def test_the_udp_operator_presses_a_button_a_pose_and_selects_limbs_by_next_limb() -> None:
    """Presses as a UDP device makes them, one edge a pose: follow and the camera (two limbs on from the
    grasper) at 0 s merged, the grasper (two on from the camera) at 2.01 s, the palpation arm at 5.01 s;
    the demo's scripted operator has no other press a UDP device cannot make than its grasp (a UDP device
    has a grasp button, but the grasp phase's rate keys it cannot play)."""
    follow, step = BUTTONS["follow"], BUTTONS["next_limb"]
    presses = [(0.0, "follow"), (0.0, "select:camera"), (2.01, "select:grasper"), (5.01, "select:palpation")]
    assert button_plan(presses, LIMBS) == [
        (0.0, [follow | step, 0, step, 0]),
        (2.01, [step, 0, step, 0]),
        (5.01, [step, 0]),
    ]
    presses = [p for p in scripted_operator().presses if not p[1].startswith("grasp")]  # as it plays them
    assert button_plan(presses, LIMBS) == [(8.01, [step, 0])]
    with pytest.raises(ValueError, match="'bend\\+' has no UDP button"):
        button_plan([(1.0, "bend+")], LIMBS)


def test_the_junk_never_moves_the_arm_and_the_device_keeps_its_session() -> None:
    """Every junk datagram is dropped (random bytes by their magic, HELLOs as busy while the device's
    session lives, POSEs at the handshake port as another session's), the device's poses are accepted."""
    bridge = UdpBridge(key=KEY, max_packets=4096, port_packets=4096, max_drain_time=1.0)
    client = UdpBridgeClient(bridge.address, key=KEY, resync_after=60.0)  # no FORCE comes here
    try:
        deadline = time.monotonic() + 30.0
        while client.session is None:
            assert time.monotonic() < deadline
            client.send_pose((0.05, 0.0, 0.1))
            bridge.poll()
            time.sleep(1e-3)
        time.sleep(0.01)
        bridge.poll()  # what the handshake sent
        before = bridge.accepted
        junk = junk_packets()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as attacker:
            for packet in junk:
                attacker.sendto(packet, bridge.address)
        assert client.send_pose((0.05, 0.0, 0.1))
        deadline = time.monotonic() + 30.0
        while bridge.accepted == before or sum(bridge.dropped.values()) < len(junk):
            assert time.monotonic() < deadline
            bridge.poll()
            time.sleep(1e-3)
        sample = bridge.read(0.0)
    finally:
        client.close()
        bridge.close()
    assert bridge.accepted == before + 1 and sample.position == pytest.approx((0.05, 0.0, 0.1))
    assert dict(bridge.dropped) == {"magic": 64, "busy": 32, "session": 32}


def test_the_window_holds_the_ticks_and_poses_of_the_flood() -> None:
    """Ticks 1 ms apart from 100 s, the bridge accepting one pose a tick, the device sending one 0.3 ms
    into each; the flood from 100.0105 to 100.0205 s: the window ends AFTER_S after it, at 100.1205 s
    (ticks 11 to 120)."""
    session = SimpleNamespace()
    accepted = [0]

    def tick(device: object, *, deadline_met: bool = True) -> np.ndarray:
        accepted[0] += 1
        return np.zeros(3)

    session.tick = tick
    rec = TickRecorder(session, lambda: accepted[0], 500)
    for _ in range(300):
        session.tick(None)
    rec.start[:300] = 100.0 + 1e-3 * np.arange(300)  # as if paced at 1 kHz
    rec.busy[:300] = 2e-4
    rec.busy[50] = 3.5e-3  # ends 2.5 ms after its deadline
    sent = list(100.0003 + 1e-3 * np.arange(300))
    f = flood_figures(rec, (100.0105, 100.0205), sent, 1e-3)
    assert AFTER_S == 0.1 and rec.n == 300
    assert f["ticks"] == 110 and f["poses_sent"] == 110 and f["poses_accepted"] == 110
    assert f["late_ticks"] == 1 and f["tick"]["max_ms"] == pytest.approx(3.5)
    assert f["tick"]["p50_ms"] == pytest.approx(0.2) and f["accepted_share"] == 1.0
    assert f["run_poses_sent"] == 299 and f["run_poses_accepted"] == 300  # the last pose after the last tick
    assert flood_figures(rec, (200.0, 200.1), sent, 1e-3)["tick"]["p50_ms"] is None  # after the run


@pytest.mark.slow
def test_the_flood_bench_runs_the_real_session_with_the_operator_over_udp() -> None:
    """9 s of the real session (the robot in its own process), the operator's device over UDP from its own
    process, 20 000 junk datagrams at 8.2 s (the device streams the stylus from 8.02 s, when the script
    turns to the palpation arm): the device's poses reach the master, the junk is dropped, and the table
    says so beside the probe."""
    result = bench_demo(seconds=9.0, sections=3, flood_n=20_000, flood_at=8.2)
    f = result["flood"]
    assert result["master"]["ticks"] == 9000 and f["datagrams"] == 20_000
    assert f["ticks"] > 0 and f["poses_sent"] > 0 and f["poses_accepted"] > 0
    assert 0 < f["run_poses_accepted"] <= f["run_poses_sent"] + 5  # + those read by the last tick
    selects = [a[7:] for t, a in scripted_operator().presses if a.startswith("select:") and t < 9.0]
    assert f["limb_selected"] == selects[-1]  # the device's buttons selected it
    assert sum(f["dropped"].values()) > 0
    out = format_demo(result)
    assert "junk datagrams to the UDP bridge" in out and "device poses accepted during it" in out
    assert "machine probe after the run" in out and "machine probe, constant 0.5 ms" in out
    assert set(f["waiting_for_a_core"]) == {"master", "robot", "device", "flooder"}
    assert "share of it waiting for a core: master" in out


def test_the_share_of_time_a_process_waited_for_a_core() -> None:
    run, wait = sched_stat()  # type: ignore[misc]
    assert run > 0 and wait >= 0 and sched_stat(2**22 + 12345) is None  # no such process
    log = SchedLog({"a": "self"})
    log.samples = [(10.0, {"a": (1.0, 0.5)}), (10.5, {"a": (1.2, 0.6)}), (11.0, {"a": (1.4, 0.9)})]
    assert log.waited(10.0, 11.0) == {"a": pytest.approx(0.4)}  # 0.4 s of 1 s
    assert log.waited(10.6, 10.9) == {"a": None}  # no two samples inside


def test_flood_needs_the_demo_bench_and_a_count(capsys) -> None:
    from pccbullet.teleop.cli import main

    assert main(["bench", "--flood", "10"]) == 2
    assert "--flood and --normal-priority need --demo" in capsys.readouterr().err
    assert main(["bench", "--demo", "--flood", "-1"]) == 2
    assert "--flood" in capsys.readouterr().err
