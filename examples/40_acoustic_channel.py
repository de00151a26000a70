"""Send 10,000 packets over an emulated acoustic link with bursty loss; print delay, loss and throughput.

Usage: python examples/40_acoustic_channel.py [DISTANCE_M]
"""

import struct
import sys

import numpy as np

from pccbullet.teleop.channel import Channel, GilbertElliott, acoustic_link

distance = float(sys.argv[1]) if len(sys.argv) > 1 else 1500.0
link = acoustic_link(distance=distance, bandwidth=10e3, loss=GilbertElliott(p_gb=0.05, p_bg=0.2))
channel = Channel(link, seed=1)
delays = []
period = 0.1  # s: a 50-byte command every 100 ms (4 kbit/s of a 10 kbit/s link)
for k in range(10_000):
    t = k * period
    channel.send(t, struct.pack("<d", t) + bytes(42))
    delays += [arrival - struct.unpack("<d", payload[:8])[0] for arrival, payload in channel.deliver(t)]
delays += [arrival - struct.unpack("<d", p[:8])[0] for arrival, p in channel.deliver(float("inf"))]
d = np.asarray(delays)
print(f"link: {distance:.0f} m, 10 kbit/s, Gilbert-Elliott loss (long-run {link.loss.mean_loss:.3f})")
print(f"sent {channel.sent}, delivered {channel.delivered}: {1 - channel.delivered / channel.sent:.2%} lost")
print(f"delay: mean {d.mean():.4f} s, p99 {np.percentile(d, 99):.4f} s (propagation {distance / 1500:.4f} s)")
print(f"throughput: {channel.bytes_delivered * 8 / (10_000 * period):.0f} bit/s")
