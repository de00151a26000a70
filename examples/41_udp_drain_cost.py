"""Per-tick cost of draining the UDP bridge: 64 queued valid poses (HMAC on) and 64 junk datagrams, each
with the default bounds (64 datagrams, 0.2 ms) and without the time bound (1 s, its largest value).

Run: python examples/41_udp_drain_cost.py [--trials 200]
Prints, per case: datagrams read per poll and the poll's wall time (median, p99, max) in ms."""

from __future__ import annotations

import argparse
import time

import numpy as np

from pccbullet.teleop.udp.bridge import UdpBridge
from pccbullet.teleop.udp.client import UdpBridgeClient

KEY = b"drain-cost-benchmark-key-32bytes"


def _measure(max_drain_time: float, queue: int, junk: bool, trials: int) -> dict[str, float]:
    bridge = UdpBridge(
        key=KEY, max_drain_time=max_drain_time, timeout=10.0, session_timeout=10.0, max_age=10.0
    )
    client = UdpBridgeClient(bridge.address, key=KEY, resync_after=60.0)
    client._maybe_hello()
    while client.session is None:
        bridge.poll()
        client._poll()
        time.sleep(0.001)
    costs, counts = [], []
    for _ in range(trials):
        for _ in range(queue):
            if junk:
                client.send_raw(b"x" * 102)
            else:
                client.send_pose((0.1, 0.0, 0.2))
        time.sleep(0.002)  # let loopback deliver them all
        before = bridge.received
        t0 = time.perf_counter()
        bridge.poll()
        costs.append(time.perf_counter() - t0)
        counts.append(bridge.received - before)
        while True:  # empty the socket before the next trial
            n = bridge.received
            bridge.poll()
            if bridge.received == n:
                break
    client.close()
    bridge.close()
    ms = np.asarray(costs) * 1e3
    return {
        "read": float(np.median(counts)),
        "median_ms": float(np.median(ms)),
        "p99_ms": float(np.percentile(ms, 99)),
        "max_ms": float(ms.max()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    print(f"{'case':<34} {'bound':>9} {'read':>5} {'median ms':>10} {'p99 ms':>8} {'max ms':>8}")
    for name, queue, junk in (("64 valid poses", 64, False), ("64 junk datagrams", 64, True)):
        for bound in (2e-4, 1.0):
            r = _measure(bound, queue, junk, args.trials)
            label = f"{bound * 1e3:g} ms" if bound < 1 else "none"
            print(
                f"{name:<34} {label:>9} {r['read']:>5.0f} {r['median_ms']:>10.3f} {r['p99_ms']:>8.3f} "
                f"{r['max_ms']:>8.3f}"
            )


if __name__ == "__main__":
    main()
