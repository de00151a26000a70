"""UDP bridge on loopback: bad packets are dropped and counted, never crash the loop or move the arm."""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest

from teleop.mapping import OperatorMapping
from teleop.udp_bridge import POSE_SIZE, UdpBridge, UdpBridgeClient, encode_force, encode_pose
from urdf_gen.spec_loader import load_robot

KEY = b"shared-secret"


def _drain(bridge: UdpBridge, expect: int) -> None:
    deadline = time.monotonic() + 2.0
    while sum(bridge.dropped.values()) + bridge.accepted < expect and time.monotonic() < deadline:
        bridge.poll()
        time.sleep(0.001)


def test_bad_packets_are_dropped_counted_and_do_not_move_the_arm() -> None:
    spec = load_robot("ursula")
    T = {"grasper": np.eye(4)}
    mapping = OperatorMapping(spec, T_world_base=T)
    bridge = UdpBridge(key=KEY, workspace=0.8)
    client = UdpBridgeClient(bridge.address, key=KEY)
    good = encode_pose(1, 0.0, [0.1, 0.0, 0.5], key=KEY)
    bad = {
        "size": [good[:-1], good + b"x", bytes(3000)[:1400], b""],  # truncated, oversized, junk
        "magic": [b"XXXX" + good[4:]],
        "version": [good[:4] + bytes([9]) + good[5:]],
        "auth": [encode_pose(2, 0.0, [0.1, 0.0, 0.5], key=b"wrong"), encode_pose(3, 0.0, [0.1, 0.0, 0.5])],
        "nan": [encode_pose(4, 0.0, [float("nan"), 0.0, 0.5], key=KEY)],
        "range": [
            encode_pose(5, 0.0, [5.0, 0.0, 0.0], key=KEY),
            encode_pose(6, 0.0, [0.1, 0, 0.5], (0, 0, 0, 2), key=KEY),
        ],
        "type": [encode_force(7, 0.0, [1.0, 0.0, 0.0], key=KEY)],
    }
    try:
        before = [list(c) for c in mapping.command.values()]
        n = 0
        for packets in bad.values():
            for p in packets:
                client.send_raw(p)
                n += 1
        _drain(bridge, n)
        for _ in range(50):  # the loop keeps running; stale stream -> no position, not ok
            sample = bridge.read(0.0)
            mapping.update(sample, 1e-3)
        assert not sample.ok and sample.position is None
        assert [list(c) for c in mapping.command.values()] == before
        assert bridge.accepted == 0
        for reason, packets in bad.items():
            assert bridge.dropped[reason] == len(packets), reason
        # a good packet is accepted; a replayed copy of it is dropped
        client.send_raw(good)
        client.send_raw(good)
        _drain(bridge, n + 2)
        assert bridge.accepted == 1 and bridge.dropped["replay"] == 1
        assert len(good) == POSE_SIZE
    finally:
        client.close()
        bridge.close()


def test_pose_in_force_out_and_stale_timeout() -> None:
    now = [0.0]
    bridge = UdpBridge(key=KEY, timeout=0.1, clock=lambda: now[0])
    client = UdpBridgeClient(bridge.address, key=KEY)
    try:
        client.send_pose([0.05, -0.02, 0.1], buttons=0b001)
        _drain(bridge, 1)
        sample = bridge.read(0.0)
        assert sample.ok and sample.position == pytest.approx((0.05, -0.02, 0.1))
        assert sample.pressed == ("next_limb",)
        bridge.send_force(np.array([0.5, 0.0, -0.25]))
        force = None
        for _ in range(200):
            force = client.recv_force()
            if force is not None:
                break
            time.sleep(0.001)
        np.testing.assert_allclose(force, [0.5, 0.0, -0.25])
        now[0] = 0.2  # no packet for 200 ms > timeout
        assert not bridge.read(0.2).ok and bridge.stale
    finally:
        client.close()
        bridge.close()


def test_binds_loopback_by_default_and_bounded_drain() -> None:
    bridge = UdpBridge(max_packets=4)
    client = UdpBridgeClient(bridge.address)
    try:
        assert bridge.address[0] == "127.0.0.1"
        for _ in range(10):
            client.send_raw(struct.pack("<I", 1))
        time.sleep(0.05)
        bridge.poll()
        assert sum(bridge.dropped.values()) == 4  # at most max_packets per poll
    finally:
        client.close()
        bridge.close()
