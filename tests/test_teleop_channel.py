"""Channel emulator: delay, loss and throughput match the configuration within 5 % over 10,000 packets."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.teleop.channel import Bernoulli, Channel, GilbertElliott, LinkSpec, acoustic_link, optical_link

N = 10_000
PAYLOAD = bytes(50)  # 400 bits


def _stream(ch: Channel, interval: float) -> None:
    for k in range(N):
        ch.send(k * interval, PAYLOAD)
    ch.deliver(1e9)


def test_acoustic_mean_delay_and_bernoulli_loss() -> None:
    spec = acoustic_link(distance=1500.0, bandwidth=10e3, jitter=0.02, loss=Bernoulli(0.2))
    ch = Channel(spec, seed=3)
    _stream(ch, 0.1)  # 4 kbit/s offered on a 10 kbit/s link: no queueing
    expected = 1.0 + 0.04 + 0.02
    assert np.mean(ch.delays) == pytest.approx(expected, rel=0.05)
    assert ch.loss_rate == pytest.approx(0.2, rel=0.05)
    assert ch.delivered == N - ch.lost


def test_gilbert_elliott_bursty_loss_rate() -> None:
    model = GilbertElliott(p_gb=0.05, p_bg=0.25, loss_good=0.01, loss_bad=0.9)
    ch = Channel(optical_link(loss=model), seed=5)
    _stream(ch, 1e-3)
    assert ch.loss_rate == pytest.approx(model.mean_loss, rel=0.05)


def test_throughput_saturates_at_the_bandwidth() -> None:
    spec = LinkSpec(distance=100.0, speed=1500.0, bandwidth=5e3, loss=Bernoulli(0.1), max_queue=1e6)
    ch = Channel(spec, seed=1)
    arrivals = []
    for k in range(N):
        ch.send(k * 0.04, PAYLOAD)  # 10 kbit/s offered on 5 kbit/s
    arrivals = [a for a, _ in ch.deliver(1e9)]
    span = max(arrivals) - min(arrivals)
    goodput = 8 * len(PAYLOAD) * (len(arrivals) - 1) / span
    assert goodput == pytest.approx(5e3 * (1 - 0.1), rel=0.05)


def test_deterministic_for_a_seed() -> None:
    spec = acoustic_link(jitter=0.05, loss=GilbertElliott())

    def run(seed: int) -> list[float]:
        ch = Channel(spec, seed=seed)
        for k in range(500):
            ch.send(k * 0.2, PAYLOAD)
        return [a for a, _ in ch.deliver(1e9)]

    assert run(9) == run(9)
    assert run(9) != run(10)
