"""Underwater link emulator in simulated time: delay, jitter, loss (independent or bursty), bandwidth.

A packet of ``b`` bytes sent at time ``t`` waits until the link is free (one packet on the wire at a
time), takes ``8 b / bandwidth`` to serialize, then ``distance / speed`` to propagate, plus a jitter
drawn uniformly from ``[0, 2 jitter]`` (mean ``jitter``). Loss is decided per packet by a loss model;
a lost packet still occupies the link. Everything draws from one seeded ``numpy`` generator, so a
channel is deterministic for a seed. Packets may arrive out of order when the jitter exceeds their
spacing; receivers use sequence numbers.

Presets from published figures (docs: the demo's guide, "The link"): :func:`acoustic_link`, an acoustic
modem at 9 kbit/s over 1500 m (1500 m/s: 1 s); :func:`optical_link`, a visible-light modem at
1.2 Mbit/s over 30 m (c / 1.33), as URSULA's dorsal fin (seed 001). :func:`link_named` picks one.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from pccbullet.core.errors import ConfigurationError

SOUND_SPEED_WATER = 1500.0  # m/s
LIGHT_SPEED_WATER = 2.998e8 / 1.33  # m/s


@dataclass(frozen=True, slots=True)
class Bernoulli:
    """Independent loss with probability ``p`` per packet."""

    p: float = 0.0

    @property
    def mean_loss(self) -> float:
        """Long-run loss rate (-)."""
        return self.p


@dataclass(frozen=True, slots=True)
class GilbertElliott:
    """Bursty loss: a two-state Markov chain, good (G) and bad (B).

    Attributes:
        p_gb: probability per packet of going from G to B. p_bg: from B to G (mean burst 1 / p_bg).
        loss_good: loss probability in G. loss_bad: loss probability in B.
    """

    p_gb: float = 0.05
    p_bg: float = 0.2
    loss_good: float = 0.0
    loss_bad: float = 1.0

    @property
    def mean_loss(self) -> float:
        """Stationary loss rate ``pi_G loss_good + pi_B loss_bad`` (-)."""
        pi_b = self.p_gb / (self.p_gb + self.p_bg)
        return (1.0 - pi_b) * self.loss_good + pi_b * self.loss_bad


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """One direction of a link.

    Attributes:
        distance: path length (m). speed: propagation speed (m/s).
        bandwidth: bit rate (bit/s). jitter: mean extra delay (s), uniform on [0, 2 jitter].
        loss: :class:`Bernoulli` or :class:`GilbertElliott`.
        max_queue: largest backlog waiting for the link (s of transmission); newer packets are dropped
            beyond it (counted as ``overflow``).
        name: what the link is (``"acoustic"``, ``"optical"``, ``"custom"``), for displays and summaries.
    """

    distance: float
    speed: float
    bandwidth: float
    jitter: float = 0.0
    loss: Bernoulli | GilbertElliott = field(default_factory=Bernoulli)
    max_queue: float = 5.0
    name: str = "custom"

    def __post_init__(self) -> None:
        if (
            self.distance < 0
            or self.speed <= 0
            or self.bandwidth <= 0
            or self.jitter < 0
            or self.max_queue <= 0
        ):
            raise ConfigurationError(
                f"link distance = {self.distance!r} m, speed = {self.speed!r} m/s, bandwidth = "
                f"{self.bandwidth!r} bit/s, jitter = {self.jitter!r} s, max_queue = {self.max_queue!r} s is "
                "invalid; allowed: distance >= 0, speed > 0, bandwidth > 0, jitter >= 0, max_queue > 0"
            )

    @property
    def propagation_delay(self) -> float:
        """distance / speed (s)."""
        return self.distance / self.speed

    def expected_delay(self, nbytes: int) -> float:
        """Mean one-way delay of an ``nbytes`` packet on an idle link (s)."""
        return self.propagation_delay + 8.0 * nbytes / self.bandwidth + self.jitter


def acoustic_link(
    distance: float = 1500.0,
    bandwidth: float = 9e3,
    jitter: float = 0.01,
    loss: Bernoulli | GilbertElliott | None = None,
) -> LinkSpec:
    """Acoustic modem: sound at 1500 m/s (1 s per 1500 m); 9000 bit/s, the fastest telemetry scheme of
    Sonardyne's Modem 6 (its schemes span 100 to 9000 bit/s; acoustic modems typically reach 9600 baud),
    over 1500 m."""
    return LinkSpec(distance, SOUND_SPEED_WATER, bandwidth, jitter, loss or Bernoulli(0.0), name="acoustic")


def optical_link(
    distance: float = 30.0,
    bandwidth: float = 1.2e6,
    jitter: float = 1e-4,
    loss: Bernoulli | GilbertElliott | None = None,
) -> LinkSpec:
    """Visible-light modem (URSULA's dorsal fin, seed 001): light at c / 1.33; 1.2 Mbit/s over 30 m,
    what AquaOptical reached in clear water (Doniec et al., OCEANS 2009; 0.6 Mbit/s at 9 m with 3 m
    visibility). Commercial blue-light modems reach 10 Mbit/s over tens of metres (Sonardyne BlueComm)."""
    return LinkSpec(distance, LIGHT_SPEED_WATER, bandwidth, jitter, loss or Bernoulli(0.0), name="optical")


LINKS = ("acoustic", "optical")  # the presets :func:`link_named` knows


def link_named(name: str) -> LinkSpec:
    """The preset ``"acoustic"`` (:func:`acoustic_link`) or ``"optical"`` (:func:`optical_link`)."""
    if name == "acoustic":
        return acoustic_link()
    if name == "optical":
        return optical_link()
    raise ConfigurationError(f"link = {name!r} is invalid; allowed: {', '.join(LINKS)}")


class Channel:
    """One direction of an emulated link; :meth:`send` packets, :meth:`deliver` the ones that arrived.

    Args:
        spec: the link. seed: seed of the channel's random generator.
    """

    def __init__(self, spec: LinkSpec, seed: int = 0) -> None:
        self.spec = spec
        self._rng = np.random.default_rng(seed)
        self._free_at = 0.0
        self._bad = False
        self._queue: list[tuple[float, int, float, bytes]] = []
        self._n = 0
        self.sent = 0
        self.lost = 0
        self.overflow = 0
        self.delivered = 0
        self.bytes_sent = 0
        self.bytes_delivered = 0
        self.delays: list[float] = []

    def _lose(self) -> bool:
        loss = self.spec.loss
        if isinstance(loss, GilbertElliott):
            if self._bad:
                self._bad = self._rng.random() >= loss.p_bg
            else:
                self._bad = self._rng.random() < loss.p_gb
            return bool(self._rng.random() < (loss.loss_bad if self._bad else loss.loss_good))
        return bool(self._rng.random() < loss.p)

    def send(self, t: float, payload: bytes) -> bool:
        """Offer ``payload`` at time ``t`` (s); returns ``False`` if it will not arrive (lost or overflow)."""
        s = self.spec
        self.sent += 1
        self.bytes_sent += len(payload)
        start = max(t, self._free_at)
        if start - t > s.max_queue:
            self.overflow += 1
            return False
        self._free_at = start + 8.0 * len(payload) / s.bandwidth
        jitter = self._rng.uniform(0.0, 2.0 * s.jitter) if s.jitter > 0 else 0.0
        if self._lose():
            self.lost += 1
            return False
        arrival = self._free_at + s.propagation_delay + jitter
        heapq.heappush(self._queue, (arrival, self._n, t, payload))
        self._n += 1
        return True

    def deliver(self, t: float) -> list[tuple[float, bytes]]:
        """Packets that arrived by time ``t``, in arrival order, as ``(arrival_time, payload)``."""
        out = []
        while self._queue and self._queue[0][0] <= t:
            arrival, _, sent, payload = heapq.heappop(self._queue)
            self.delivered += 1
            self.bytes_delivered += len(payload)
            self.delays.append(arrival - sent)
            out.append((arrival, payload))
        return out

    @property
    def loss_rate(self) -> float:
        """Measured fraction of sent packets lost (-)."""
        return self.lost / self.sent if self.sent else 0.0
