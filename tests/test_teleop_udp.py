"""UDP bridge on loopback: session handshake, sequence window, replay and re-sync, HMAC keys from files,
bounded drain, stream states; bad packets are dropped and counted, never crash the loop or move the arm."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.haptics import HapticRenderer
from pccbullet.teleop.mapping import OperatorMapping
from pccbullet.teleop.udp.bridge import UdpBridge, open_bridge
from pccbullet.teleop.udp.client import UdpBridgeClient
from pccbullet.teleop.udp.keys import default_key_file, load_key_file, resolve_key
from pccbullet.teleop.udp.packets import (
    HEADER,
    POSE_SIZE,
    SEQ_WINDOW,
    decode,
    encode_force,
    encode_hello,
    encode_pose,
    in_window,
)
from pccbullet.urdf_gen.spec_loader import load_robot

KEY = b"shared-secret-of-32-bytes-length"


class Clock:
    """A clock both ends share; the tests advance it by hand."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _settle(bridge: UdpBridge, expect: int, wait: float = 2.0) -> None:
    """Poll until ``expect`` datagrams were read (loopback delivery is not instant), ``wait`` s at most."""
    deadline = time.monotonic() + wait
    while bridge.received < expect and time.monotonic() < deadline:
        bridge.poll()
        time.sleep(0.0002)


def _pair(key: bytes | None = KEY, **kw: object) -> tuple[UdpBridge, UdpBridgeClient, Clock]:
    clock = Clock()
    bridge = UdpBridge(key=key, clock=clock, **kw)  # type: ignore[arg-type]
    client = UdpBridgeClient(bridge.address, key=key, clock=clock)
    client._maybe_hello()
    for _ in range(200):
        bridge.poll()
        client._poll()
        if client.session is not None:
            break
        time.sleep(0.001)
    assert client.session is not None and bridge.handshakes == 1
    return bridge, client, clock


def _stream(
    bridge: UdpBridge, client: UdpBridgeClient, clock: Clock, n: int, pos=(0.1, 0.0, 0.2), wait: float = 2.0
) -> int:
    """``n`` ticks of 1 ms: the client sends a pose, the bridge reads it (waiting ``wait`` s at most) and
    answers a force."""
    before = bridge.accepted
    for _ in range(n):
        clock.t += 1e-3
        client.send_pose(pos)
        _settle(bridge, bridge.received + 1, wait)
        bridge.read(clock.t)
        bridge.send_force(np.array([0.0, 0.0, 0.5]))
    return bridge.accepted - before


def test_bad_packets_are_dropped_counted_and_do_not_move_the_arm() -> None:
    spec = load_robot("ursula")
    mapping = OperatorMapping(spec, T_world_base={"grasper": np.eye(4)})
    bridge, client, clock = _pair(workspace=0.8)
    sid = client.session
    good = encode_pose(1, clock.t, [0.1, 0.0, 0.5], key=KEY, session=sid)
    bad = {
        "size": [good[:-1], good + b"x", bytes(3000)[:1400], b""],  # truncated, oversized, junk
        "magic": [b"XXXX" + good[4:]],
        "version": [good[:4] + bytes([9]) + good[5:]],
        "auth": [
            encode_pose(2, clock.t, [0.1, 0.0, 0.5], key=b"wrong-key-wrong-key", session=sid),
            encode_pose(3, clock.t, [0.1, 0.0, 0.5], session=sid),
        ],
        "nan": [encode_pose(4, clock.t, [float("nan"), 0.0, 0.5], key=KEY, session=sid)],
        "range": [
            encode_pose(5, clock.t, [5.0, 0.0, 0.0], key=KEY, session=sid),
            encode_pose(6, clock.t, [0.1, 0, 0.5], (0, 0, 0, 2), key=KEY, session=sid),
        ],
        "type": [encode_force(7, clock.t, [1.0, 0.0, 0.0], key=KEY, session=sid)],
        "session": [encode_pose(8, clock.t, [0.1, 0.0, 0.5], key=KEY, session=sid ^ 1)],
        "seq": [encode_pose(5000, clock.t, [0.1, 0.0, 0.5], key=KEY, session=sid)],
        "time": [
            encode_pose(9, clock.t - 0.5, [0.1, 0.0, 0.5], key=KEY, session=sid),  # 0.5 s late
            encode_pose(10, clock.t + 0.5, [0.1, 0.0, 0.5], key=KEY, session=sid),  # from the future
        ],
    }
    try:
        before = [list(c) for c in mapping.command.values()]
        r0, n = bridge.received, 0
        for packets in bad.values():
            for p in packets:
                client.send_raw(p)
                n += 1
        _settle(bridge, r0 + n)
        for _ in range(50):  # the loop keeps running: no pose yet -> no position, and no fault
            sample = bridge.read(0.0)
            mapping.update(sample, 1e-3)
        assert sample.ok and sample.position is None and bridge.waiting
        assert [list(c) for c in mapping.command.values()] == before
        assert bridge.accepted == 0
        for reason, packets in bad.items():
            assert bridge.dropped[reason] == len(packets), reason
        client.send_raw(good)  # a good packet is accepted; a replayed copy of it is dropped
        client.send_raw(good)
        _settle(bridge, r0 + n + 2)
        assert bridge.accepted == 1 and bridge.dropped["seq"] == 2
        assert len(good) == POSE_SIZE == 102
        other = UdpBridgeClient(bridge.address, key=KEY, clock=clock)  # the session's id, another sender
        other.send_raw(encode_pose(2, clock.t, [0.2, 0.0, 0.5], key=KEY, session=sid))
        _settle(bridge, r0 + n + 3)
        other.close()
        assert bridge.accepted == 1 and bridge.dropped["session"] == 2
    finally:
        client.close()
        bridge.close()


def test_pose_in_force_out_and_stale_after_the_stream_flowed() -> None:
    bridge, client, clock = _pair(timeout=0.1)
    try:
        client.send_pose([0.05, -0.02, 0.1], buttons=0b001)
        _settle(bridge, bridge.received + 1)
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
        clock.t += 0.2  # no pose for 200 ms > timeout
        sample = bridge.read(0.2)
        assert not sample.ok and sample.position is None and bridge.stale
    finally:
        client.close()
        bridge.close()


@pytest.mark.parametrize("key", [KEY, None], ids=["hmac", "no key"])
def test_one_packet_with_seq_2_32_minus_1_does_not_lock_the_operator_out(key: bytes | None) -> None:
    # old: the bridge took any larger seq as the new last one; after 2^32 - 1 every packet was "old"
    bridge, client, clock = _pair(key)
    try:
        assert _stream(bridge, client, clock, 5) == 5
        client.send_raw(encode_pose(2**32 - 1, clock.t, [0.3, 0.0, 0.0], key=key, session=client.session))
        assert _stream(bridge, client, clock, 20) == 20
        assert bridge.dropped["seq"] == 1
        assert bridge.read(clock.t).position == pytest.approx((0.1, 0.0, 0.2))  # not the stray packet's
    finally:
        client.close()
        bridge.close()


def test_a_bit_flip_in_seq_does_not_lock_the_operator_out() -> None:
    # old (no key): one packet whose seq had its top bit flipped locked the stream out for good
    bridge, client, clock = _pair(None)
    try:
        assert _stream(bridge, client, clock, 5) == 5
        packet = bytearray(encode_pose(6, clock.t, [0.1, 0.0, 0.2], session=client.session))
        packet[9] ^= 0x80  # seq is bytes 6..9 (little endian): bit 31
        client.send_raw(bytes(packet))
        assert _stream(bridge, client, clock, 20) == 20
        assert bridge.dropped["seq"] == 1
    finally:
        client.close()
        bridge.close()
    bridge, client, clock = _pair(KEY)  # with a key the flipped bit fails the tag
    try:
        _stream(bridge, client, clock, 2)
        packet = bytearray(encode_pose(3, clock.t, [0.1, 0.0, 0.2], key=KEY, session=client.session))
        packet[9] ^= 0x80
        client.send_raw(bytes(packet))
        assert _stream(bridge, client, clock, 5) == 5 and bridge.dropped["auth"] == 1
    finally:
        client.close()
        bridge.close()


def test_sequence_numbers_wrap_around() -> None:
    bridge, client, clock = _pair()
    try:
        _stream(bridge, client, clock, 2)
        client._seq = bridge._seq = 2**32 - 3  # a long session: the counter passes 2^32 - 1, then 0
        assert _stream(bridge, client, clock, 6) == 6
        assert client._seq == 3 and bridge._seq == 3
    finally:
        client.close()
        bridge.close()


def test_a_restarted_device_process_resyncs_with_a_new_handshake() -> None:
    # old: the new process counted from 1 again and every packet was dropped as a replay
    bridge, client, clock = _pair(timeout=0.1, session_timeout=1.0)
    try:
        assert _stream(bridge, client, clock, 50) == 50
    finally:
        client._sock.close()  # the device process dies without a BYE
    again = UdpBridgeClient(bridge.address, key=KEY, clock=clock)  # ... and restarts: new port, seq 1
    try:
        clock.t += 0.5  # within the session timeout the session stays its old device's: "busy"
        again._maybe_hello()
        _settle(bridge, bridge.received + 1)
        again._poll()
        assert again.session is None and bridge.dropped["busy"] == 1
        clock.t += 0.6  # silent for 1.1 s: the next HELLO (50 ms later) is taken
        sent = again.send_pose((0.1, 0.0, 0.2))
        _settle(bridge, bridge.received + 1)
        assert sent is False and bridge.handshakes == 2
        assert _stream(bridge, again, clock, 20) == 20
        assert again._seq == 20  # counting from 1 again
    finally:
        again.close()
        bridge.close()


@pytest.mark.parametrize("key", [KEY, None], ids=["hmac", "no key"])
def test_no_takeover_while_the_device_owns_the_session_a_bye_frees_it(key: bytes | None) -> None:
    """A 150 ms pause of the device (a stale stream) does not let another socket take the session, with
    or without a key; the device resumes and is answered; its BYE frees the session at once."""
    bridge, client, clock = _pair(key, timeout=0.1, session_timeout=1.0)
    intruder = UdpBridgeClient(bridge.address, key=key, clock=clock)
    try:
        assert _stream(bridge, client, clock, 20) == 20
        clock.t += 0.15  # the device pauses: its stream is stale, its session is still its own
        assert not bridge.read(clock.t).ok
        for _ in range(5):
            clock.t += 0.06
            intruder.send_pose((0.3, 0.0, 0.3))  # HELLOs
            _settle(bridge, bridge.received + 1)
            intruder._poll()
        assert intruder.session is None and bridge.dropped["busy"] == 5 and bridge.handshakes == 1
        assert _stream(bridge, client, clock, 400) == 400  # the device answered on every tick
        assert bridge.read(clock.t).position == pytest.approx((0.1, 0.0, 0.2))
        client.close()  # BYE
        _settle(bridge, bridge.received + 1)
        assert bridge.waiting and bridge.read(clock.t).ok  # back to waiting, no fault
        clock.t += 0.06
        intruder.send_pose((0.3, 0.0, 0.3))
        _settle(bridge, bridge.received + 1)
        assert bridge.handshakes == 2  # free at once after the BYE
    finally:
        intruder.close()
        bridge.close()


def test_a_junk_flood_on_the_bridges_port_does_not_reach_the_session() -> None:
    """5000 junk datagrams (HELLO-shaped with bad tags, and random bytes) at the bridge's port between
    the device's poses: every pose is accepted, and no tag of the junk is checked (it is ``busy``)."""
    bridge, client, clock = _pair(max_packets=64)
    flood = UdpBridgeClient(bridge.address, key=None, clock=clock)
    rng = np.random.default_rng(5)
    try:
        hello = encode_hello(clock.t, bytes(16), key=None)
        for _ in range(50):
            for j in range(100):
                flood._send(hello if j % 2 else rng.bytes(int(rng.integers(1, 120))), bridge.address)
            clock.t += 1e-3
            client.send_pose((0.1, 0.0, 0.2))
            bridge.read(clock.t)
        _settle(bridge, 5050 + 2)
        assert bridge.accepted == 50 and bridge.handshakes == 1
        assert bridge.dropped["auth"] == 0 and bridge.dropped["busy"] > 0
    finally:
        flood.close()
        client.close()
        bridge.close()


def test_captured_packets_replayed_into_a_restarted_bridge_are_dropped() -> None:
    # old: a restarted bridge (seq memory lost) accepted every captured HMAC packet again
    bridge, client, clock = _pair()
    captured: list[bytes] = []
    send = client.send_raw
    client.send_raw = lambda data: (captured.append(data), send(data))[1]  # type: ignore[method-assign]
    port = bridge.address[1]
    try:
        assert _stream(bridge, client, clock, 30) == 30
    finally:
        client.close()
        bridge.close()
    restarted = UdpBridge(port=port, key=KEY, clock=clock)
    attacker = UdpBridgeClient(restarted.address, key=None, clock=clock)  # holds no key
    try:
        assert len(captured) == 31  # 30 poses and the BYE
        for data in captured:
            attacker.send_raw(data)
        _settle(restarted, 31)
        assert restarted.accepted == 0 and restarted.dropped["session"] == 31
        sample = restarted.read(clock.t)
        assert sample.position is None
    finally:
        attacker.close()
        restarted.close()


def test_a_device_that_waits_after_its_handshake_keeps_its_session() -> None:
    """A device that shakes hands and sends its first pose 0.5 s later (the bench's UDP operator waits for
    the script's first position) keeps its session: the pose and its button edge are accepted. Failed
    while the client counted the 250 ms without a FORCE from the handshake: it dropped the session and
    sent a HELLO instead of that pose, whose press was lost."""
    bridge, client, clock = _pair()
    try:
        clock.t += 0.5
        assert client.send_pose((0.1, 0.0, 0.2), buttons=1) and client.handshakes == 1
        _settle(bridge, bridge.received + 1)
        sample = bridge.read(clock.t)
        assert sample.ok and sample.pressed == ("next_limb",) and bridge.accepted == 1
    finally:
        client.close()
        bridge.close()


def test_client_resyncs_by_itself_when_the_bridge_restarts() -> None:
    bridge, client, clock = _pair()
    port = bridge.address[1]
    try:
        _stream(bridge, client, clock, 10)
        bridge.close()
        bridge = UdpBridge(port=port, key=KEY, clock=clock)
        # the poses go to the old session's closed port until no force came for 250 ms: new handshake
        assert _stream(bridge, client, clock, 400, wait=0.005) > 100
        assert client.handshakes == 2
    finally:
        client.close()
        bridge.close()


def test_key_files(tmp_path) -> None:
    good = tmp_path / "udp.key"
    good.write_text("  " + "ab" * 16 + "\n")
    good.chmod(0o600)
    assert load_key_file(good) == b"ab" * 16  # surrounding whitespace stripped
    (tmp_path / "empty").write_bytes(b"\n")
    (tmp_path / "short").write_bytes(b"0123456789")
    (tmp_path / "long").write_bytes(b"k" * 5000)
    cases = {
        tmp_path
        / "missing": r"UDP key file '.*missing' does not exist; allowed: a regular file of 16 to 4096",
        tmp_path: r"UDP key file '.*' is not a regular file",
        tmp_path / "empty": r"UDP key file '.*empty' is empty",
        tmp_path / "short": r"UDP key file '.*short' holds 10 bytes, too short",
        tmp_path / "long": r"UDP key file '.*long' holds more than 4096 bytes",
        good / "below": r"UDP key file '.*below' cannot be read \(Not a directory\)",
        "/dev/zero": r"UDP key file '/dev/zero' is not a regular file",
        tmp_path / ("x" * 200): r"UDP key file '\.\.\.x{60,}' does not exist",
        "bad\0path": r"UDP key file 'bad\\x00path' cannot be read \(embedded null byte\)",
    }
    for path, match in cases.items():
        with pytest.raises(ConfigurationError, match=match) as err:
            load_key_file(path)
        assert "\n" not in str(err.value) and len(str(err.value)) < 200


def test_default_key_location_is_injectable_and_hmac_is_on_when_a_key_exists(tmp_path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    assert default_key_file(env) == tmp_path / "home" / ".config" / "pccbullet" / "udp.key"
    path = tmp_path / "home" / ".config" / "pccbullet" / "udp.key"
    created, at = resolve_key(None, env)  # no file: one is created, HMAC is on
    assert at == path and len(created) == 64 and path.stat().st_mode & 0o777 == 0o600
    assert resolve_key(None, env) == (created, path)  # and used from then on
    path.write_bytes(KEY)
    assert resolve_key(None, env) == (KEY, path)
    xdg = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert default_key_file(xdg) == tmp_path / "xdg" / "pccbullet" / "udp.key"
    named = {"PCCBULLET_UDP_KEY_FILE": str(tmp_path / "nowhere.key"), **env}
    with pytest.raises(ConfigurationError, match="nowhere.key' does not exist"):
        resolve_key(None, named)  # an explicit setting must exist
    bridge = open_bridge(0, None, env)  # the demo's bridge takes the default file's key
    with_key = UdpBridgeClient(bridge.address, key=load_key_file(path))
    without = UdpBridgeClient(bridge.address, key=None)
    try:
        assert bridge.key == KEY
        without._maybe_hello()
        _settle(bridge, 1)
        assert bridge.dropped["auth"] == 1 and bridge.handshakes == 0
        with_key._maybe_hello()
        for _ in range(200):
            bridge.poll()
            with_key._poll()
            if with_key.session is not None:
                break
            time.sleep(0.001)
        assert with_key.session is not None and bridge.handshakes == 1
    finally:
        with_key.close()
        without.close()
        bridge.close()


def test_drain_is_bounded_by_count_and_by_time() -> None:
    bridge, client, clock = _pair(max_packets=4)
    try:
        for _ in range(10):
            client.send_raw(b"junk")
        time.sleep(0.05)
        bridge.poll()
        assert bridge.dropped["size"] == 4 and bridge.polls_cut == 1  # at most max_packets per poll
    finally:
        client.close()
        bridge.close()
    bridge, client, clock = _pair(max_drain_time=1e-9)
    try:
        for _ in range(10):
            client.send_pose((0.1, 0.0, 0.2))
        time.sleep(0.05)
        cut = bridge.polls_cut
        assert bridge.poll() == 1 and bridge.polls_cut == cut + 1  # out of time after the first datagram
        assert bridge.poll() == 1
    finally:
        client.close()
        bridge.close()


def test_newest_pose_wins_and_every_button_edge_is_kept() -> None:
    bridge, client, clock = _pair(max_drain_time=0.5)
    try:
        client.send_pose((0.1, 0.0, 0.0), buttons=0b001)
        client.send_pose((0.2, 0.0, 0.0), buttons=0b000)
        client.send_pose((0.3, 0.0, 0.0), buttons=0b011)
        time.sleep(0.02)
        sample = bridge.read(0.0)
        assert sample.position == pytest.approx((0.3, 0.0, 0.0))
        assert sample.pressed == ("next_limb", "next_limb", "next_segment")
    finally:
        client.close()
        bridge.close()


def test_bad_bridge_settings_and_ports_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"UDP port = 70000 is invalid; allowed: 0..65535"):
        UdpBridge(port=70000)
    bridge = UdpBridge()
    try:
        with pytest.raises(ConfigurationError, match=r"cannot bind the UDP bridge to 127.0.0.1:\d+ .*"):
            UdpBridge(port=bridge.address[1])
    finally:
        bridge.close()
    with pytest.raises(ConfigurationError, match=r"key of 5 bytes is too short; allowed: >= 16 bytes"):
        UdpBridge(key=b"short")
    with pytest.raises(ConfigurationError, match=r"timeout = nan"):
        UdpBridge(timeout=float("nan"))


def test_force_packets_follow_contact_no_fault_before_the_first_pose_and_recovery_with_the_ramp() -> None:
    """The renderer and the bridge in one loop over a real socket: a floor at z = 0 under the handle."""
    # old: the stream was "stale" before its first packet; that latched a device error on tick 0 and
    # every force packet was 0 N
    bridge, client, clock = _pair(timeout=0.1)
    renderer = HapticRenderer()
    received: list[np.ndarray] = []

    def tick(z: float | None) -> np.ndarray:
        clock.t += 1e-3
        if z is not None:
            client.send_pose((0.1, 0.0, z))
            _settle(bridge, bridge.received + 1)
        sample = bridge.read(clock.t)
        depth = 0.0 if sample.position is None else max(0.0, -sample.position[2])
        force = renderer.tick(np.array([0.0, 0.0, depth]), device_ok=sample.ok)
        bridge.send_force(force)
        got = client.recv_force()
        if got is not None:
            received.append(got)
        return force

    try:
        idle = [tick(None) for _ in range(300)]  # 0.3 s before the device sends anything
        assert renderer.fault is None and not renderer.device_fault and not np.any(idle)
        out = np.array([tick(-0.002) for _ in range(700)])  # pressing 2 mm into the floor: 0.8 N
        assert renderer.fault is None
        assert np.linalg.norm(out[-1]) == pytest.approx(0.8, rel=1e-6)
        assert len(received) >= 690 and np.linalg.norm(received[-1]) == pytest.approx(0.8, rel=1e-6)
        assert sum(np.linalg.norm(f) > 0 for f in received) >= 690  # force packets non-zero in contact
        gone = np.array([tick(None) for _ in range(200)])  # the device goes quiet for 0.2 s
        assert renderer.device_fault and renderer.fault is None and not gone[-50:].any()
        back = np.linalg.norm([tick(-0.002) for _ in range(600)], axis=1)  # ... and comes back
        assert not renderer.device_fault and renderer.fault is None
        assert back[249] == pytest.approx(0.4, rel=0.02)  # half way up the 0.5 s ramp
        assert back[-1] == pytest.approx(0.8, rel=1e-6)
    finally:
        client.close()
        bridge.close()


def test_header_layout() -> None:
    assert HEADER.size == 26
    sid = 0x0123456789ABCDEF
    data = encode_pose(7, 1.5, (0.1, 0.2, 0.3), session=sid)
    assert decode(data) == ("ok", (1, 7, 1.5, sid, (0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0, 0)))
    assert os.path.basename(str(default_key_file({"HOME": "/h"}))) == "udp.key"


def test_sequence_window_is_1_to_1024_ahead_mod_2_to_the_32() -> None:
    assert in_window(1, 0) and in_window(SEQ_WINDOW, 0)
    assert not in_window(0, 0) and not in_window(SEQ_WINDOW + 1, 0)  # a repeat; a jump too far
    assert in_window(2, 2**32 - 3)  # the counter wrapped around
    assert not in_window(2**32 - 1, 5)  # behind


def test_demo_takes_the_udp_key_file_from_the_command_line(tmp_path, monkeypatch, capsys) -> None:
    import threading

    from pccbullet.teleop.cli import main

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("PCCBULLET_UDP_KEY_FILE", raising=False)
    args = ["demo", "--out", str(tmp_path / "out"), "--headless", "--device", "udp", "--duration", "0.6"]
    assert main([*args, "--udp-key-file", str(tmp_path / "missing.key")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.key' does not exist" in err
    key_file = tmp_path / "udp.key"
    key_file.write_bytes(KEY)
    probe = UdpBridge()
    port = probe.address[1]
    probe.close()
    stop = threading.Event()
    counts: dict[str, int] = {}

    def device(key: bytes | None, name: str) -> None:
        client = UdpBridgeClient(("127.0.0.1", port), key=key)
        sent = 0
        while not stop.is_set():
            sent += client.send_pose((0.05, 0.0, 0.0))
            time.sleep(0.005)
        counts[name] = sent
        client.close()

    threads = [threading.Thread(target=device, args=a) for a in ((KEY, "keyed"), (None, "keyless"))]
    for t in threads:
        t.start()
    try:
        assert main([*args, "--udp-port", str(port), "--udp-key-file", str(key_file)]) == 0
    finally:
        stop.set()
        for t in threads:
            t.join()
    import json

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["udp"]["accepted"] > 20 and counts["keyed"] > 20
    dropped = summary["udp"]["dropped"]  # its HELLOs fail the tag, or meet the keyed device's session
    assert counts["keyless"] == 0 and dropped.get("auth", 0) + dropped.get("busy", 0) > 5


@pytest.mark.parametrize("key", [KEY, None], ids=["hmac", "no key"])
def test_fuzz_mutated_packets_never_crash_nor_lock_out_the_stream(key: bytes | None) -> None:
    """Seeded, bounded: 1500 mutated copies of valid packets (bit flips, truncation, random bytes)
    between the device's poses; with a key none is accepted, and without one the stream keeps flowing."""
    rng = np.random.default_rng(15)
    bridge, client, clock = _pair(key, max_drain_time=0.5)
    attacker = UdpBridgeClient(bridge.address, key=None, clock=clock)
    try:
        sid = client.session
        for k in range(30):
            good = [
                encode_pose(k + 1, clock.t, rng.uniform(-0.3, 0.3, 3).tolist(), key=key, session=sid),
                encode_force(k + 1, clock.t, [0.1, 0.2, 0.3], key=key, session=sid),
            ]
            for _ in range(50):
                data = bytearray(good[int(rng.integers(2))])
                kind = rng.integers(3)
                if kind == 0:
                    for _ in range(int(rng.integers(1, 4))):
                        data[int(rng.integers(len(data)))] ^= 1 << int(rng.integers(8))
                elif kind == 1:
                    data = data[: int(rng.integers(len(data)))]
                else:
                    data = bytearray(
                        rng.integers(0, 256, int(rng.integers(0, 120))).astype(np.uint8).tobytes()
                    )
                attacker.send_raw(bytes(data))
            start = bridge.received
            accepted = bridge.accepted
            clock.t += 1e-3
            client.send_pose((0.1, 0.0, 0.2))
            _settle(bridge, start + 51)
            assert bridge.accepted >= accepted + (1 if key else 0)
        if key is not None:
            assert bridge.accepted == 30  # only the device's own poses
        assert _stream(bridge, client, clock, 20) == 20  # never locked out
        assert bridge.read(clock.t).position == pytest.approx((0.1, 0.0, 0.2))
    finally:
        attacker.close()
        client.close()
        bridge.close()
