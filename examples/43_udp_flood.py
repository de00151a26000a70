"""The UDP bridge under a junk flood: the master's tick and the device's poses while 50 000 junk datagrams
hit the bridge's port.

Three processes: this one runs a 1 kHz loop (paced to absolute deadlines), each tick the bridge's read and
force reply plus a constant piece of work standing in for the master's own (0.25 ms, about the demo
master's median tick: docs/measurements/performance.md); a device process streams poses at 1 kHz with the
HMAC key; a flooder sends junk datagrams to the bridge's port as fast as it can
(:func:`pccbullet.teleop.demo.flood.flood`). The bridge's own cost, apart from the master's: the real
master's tick under a flood, with the robot's process beside it, is ``pccbullet bench --demo --flood N``.

Run: python examples/43_udp_flood.py [--junk 50000] [--seconds 4]
Prints the flood's rate, the master tick (bridge + work) and the bridge's share of it (p50, p99, max) and
the constant work's own time (the machine probe) during the flood, and the device's poses accepted
during the flood (sent between its start and 0.1 s after its end)."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import threading
import time

import numpy as np

from pccbullet.sim.loop import SPIN_WINDOW_S, wait_until
from pccbullet.teleop.demo.flood import flood, stream_poses
from pccbullet.teleop.udp.bridge import UdpBridge
from pccbullet.teleop.udp.client import UdpBridgeClient

KEY = b"flood-benchmark-key-of-32-bytes!"
WORK_S = 2.5e-4  # s, the constant work standing in for the master's own tick


def _work(seconds: float) -> float:
    """Constant work: the same number of operations each call, calibrated once; returns its time (s)."""
    t0 = time.perf_counter()
    x = 0.0
    for i in range(_work.n):  # type: ignore[attr-defined]
        x += i * 1e-9
    return time.perf_counter() - t0


def _calibrate() -> None:
    _work.n = 1000  # type: ignore[attr-defined]
    best = min(_work(0) for _ in range(200))
    _work.n = int(1000 * WORK_S / best)  # type: ignore[attr-defined]


def _device(address: tuple[str, int], seconds: float, out: mp.Queue) -> None:
    client = UdpBridgeClient(address, key=KEY, resync_after=60.0)
    client.connect(timeout=10.0)
    end = time.monotonic() + seconds
    sent = stream_poses(client, lambda t: ((0.05, 0.0, 0.1), 0), lambda: time.monotonic() >= end)
    client.close()
    out.put(sent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junk", type=int, default=50_000, help="junk datagrams (default 50000)")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the master's run (s)")
    parser.add_argument(
        "--spin", type=float, default=SPIN_WINDOW_S, help="s of each wait spun, not slept (default 2 ms)"
    )
    args = parser.parse_args()
    _calibrate()
    bridge = UdpBridge(key=KEY)
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()
    device = ctx.Process(target=_device, args=(bridge.address, args.seconds + 1.0, q))
    device.start()
    while bridge.handshakes == 0:  # the device's handshake
        bridge.poll()
        time.sleep(1e-3)
    go = ctx.Event()
    flood_process = ctx.Process(target=flood, args=(bridge.address, args.junk, go, q))
    flood_process.start()
    threading.Timer(1.0, go.set).start()  # the flood starts 1 s into the run
    n = int(args.seconds * 1000)
    rows = np.zeros((n, 5))  # monotonic time, tick (s), bridge (s), work (s), accepted so far
    start = time.perf_counter()
    for k in range(n):
        t0 = time.perf_counter()
        bridge.read(k * 1e-3)
        bridge.send_force(np.zeros(3))
        t1 = time.perf_counter()
        work = _work(WORK_S)
        t2 = time.perf_counter()
        rows[k] = (time.monotonic(), t2 - t0, t1 - t0, work, bridge.accepted)
        wait_until(start + (k + 1) * 1e-3, args.spin)
    results = [q.get(timeout=60), q.get(timeout=60)]
    flood_process.join()
    device.join()
    bridge.close()
    (f0, f1), sent = sorted(results, key=lambda r: isinstance(r, list))
    window = (rows[:, 0] >= f0) & (rows[:, 0] <= f1 + 0.1)
    sent_in = sum(f0 <= s <= f1 + 0.1 for s in sent)
    idx = np.flatnonzero(window)
    accepted_in = rows[idx[-1], 4] - rows[max(idx[0] - 1, 0), 4] if len(idx) else 0
    ms = rows[window] * 1e3
    print(f"load average {os.getloadavg()[0]:.2f}; flood: {args.junk} datagrams in {f1 - f0:.3f} s")
    print(f"{'during the flood':<24} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}   ({window.sum()} ticks)")
    for name, col in (("master tick", 1), ("  bridge", 2), ("  constant work (probe)", 3)):
        v = ms[:, col]
        print(f"{name:<24} {np.median(v):8.3f} {np.percentile(v, 99):8.3f} {v.max():8.3f}")
    share = accepted_in / max(sent_in, 1)
    print(f"device poses accepted during the flood: {accepted_in:.0f} of {sent_in} ({100 * share:.1f} %)")
    print(f"bridge drops: {dict(bridge.dropped)}")


if __name__ == "__main__":
    main()
