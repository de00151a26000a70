"""The demo's operator over the UDP bridge while junk floods the bridge's port (``pccbullet bench --demo
--flood N``).

Besides the master's process (the real :class:`~pccbullet.teleop.mmt.session.MmtSession`, its 1 kHz loop
paced to the wall clock, reading a :class:`~pccbullet.teleop.udp.bridge.UdpBridge`) and the robot's, two
processes run:

* **the operator's device** (:func:`udp_operator`): a
  :class:`~pccbullet.teleop.udp.client.UdpBridgeClient` with the key that shakes hands as the master's
  loop starts and plays the scripted operator (:func:`~pccbullet.teleop.demo.script.scripted_operator`)
  from its handshake on, on its own clock: the script's position once a millisecond (nothing while the
  script has none), its presses as the buttons a UDP device has (``follow``; a limb selected by
  ``next_limb`` presses), one press a pose (:func:`button_plan`). It records when it sent each pose.
* **the flooder** (:func:`flood`): once told, sends its junk datagrams to the bridge's port as fast as it
  can (:func:`junk_packets`: random bytes, HELLO- and POSE-shaped packets with bad tags, in turns) and
  records when it started and ended.

:class:`TickRecorder` records each master tick (its start, its time, the bridge's accepted poses);
:func:`flood_figures` takes the ticks and the poses sent during the flood (from its start to
:data:`AFTER_S` after its end).
"""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from pccbullet.teleop.udp.packets import BUTTON_ACTIONS, POSE_SIZE, encode_hello, encode_pose

AFTER_S = 0.1  # s, the window of the figures goes on this long after the flood's last datagram
CONNECT_S = 10.0  # s, longest wait of the device for its handshake once the master's loop starts
CONNECT_LEAD_S = 0.5  # s, how long before the script's first position the device shakes hands
BAD_KEY = b"not-the-key-not-the-key!"
BUTTONS = {name: 1 << i for i, name in enumerate(BUTTON_ACTIONS)}  # the UDP device's button bits


def junk_packets(seed: int = 0) -> list[bytes]:
    """The flood's datagrams, sent in turns: 64 of random bytes of a POSE's size, 32 HELLOs and 32 POSEs
    with tags of another key."""
    rng = np.random.default_rng(seed)
    kinds = [
        encode_hello(1.0, bytes(16), key=BAD_KEY),
        encode_pose(1, 1.0, (0.0, 0.0, 0.0), key=BAD_KEY, session=1),
    ]
    return [rng.bytes(POSE_SIZE) for _ in range(64)] + kinds * 32


def flood(address: tuple[str, int], junk: int, go: Any, out: Any) -> None:
    """Process: wait for ``go`` (an event), send ``junk`` datagrams to ``address`` as fast as possible,
    put ``(start, end)`` (``time.monotonic``, s) on ``out``."""
    packets = junk_packets()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    go.wait()
    start = time.monotonic()
    for i in range(junk):
        try:
            sock.sendto(packets[i % len(packets)], address)
        except OSError:  # a full send buffer: the datagram is lost, as on a real network
            pass
    out.put((start, time.monotonic()))
    sock.close()


def button_plan(presses: list[tuple[float, str]], limbs: list[str]) -> list[tuple[float, list[int]]]:
    """The script's presses as a UDP device makes them: ``(time, button bits of the next poses)``, one
    press a pose followed by a pose without it (an edge each). ``follow`` is its button; a limb is
    selected by ``next_limb`` presses from the limb selected before (the first limb at the start)."""
    plan: list[tuple[float, list[int]]] = []
    limb = 0
    for t, action in presses:
        if action == "follow":
            pulses = [BUTTONS["follow"]]
        elif action.startswith("select:") and action[7:] in limbs:
            target = limbs.index(action[7:])
            pulses = [BUTTONS["next_limb"]] * ((target - limb) % len(limbs))
            limb = target
        else:
            raise ValueError(f"press {action!r} has no UDP button; allowed: follow, select:<limb>")
        bits = [b for pulse in pulses for b in (pulse, 0)]
        if plan and plan[-1][0] == t:  # presses at the same time: their pulses merged, pose by pose
            before = plan[-1][1]
            n = max(len(before), len(bits))
            merged = [
                (before[i] if i < len(before) else 0) | (bits[i] if i < len(bits) else 0) for i in range(n)
            ]
            plan[-1] = (t, merged)
        elif bits:
            plan.append((t, bits))
    return plan


def udp_operator(
    address: tuple[str, int], key: bytes, limbs: list[str], events: tuple[Any, Any, Any], out: Any
) -> None:
    """Process: once imported, sets ``ready``; ``begin`` marks the session's start (its first visual
    frame); shakes hands :data:`CONNECT_LEAD_S` before the script's first position and plays the scripted
    operator over UDP in the session's time until ``stop`` (``events``: ready, begin, stop); puts the
    ``time.monotonic`` of every pose sent on ``out``. The buttons of a press ride on the next poses sent
    (:func:`button_plan`; while the script has no position, none is sent). What a UDP device cannot do is
    left out: the grasp phase's held rate keys and its grasp (a device that shook hands before would lose
    its session in the grasp phase's seconds without a position), so the flood run's grasper stays
    open and straight."""
    from pccbullet.teleop.demo.script import scripted_operator
    from pccbullet.teleop.udp.client import UdpBridgeClient

    ready, begin, stop = events
    script = scripted_operator()
    plan = button_plan([p for p in script.presses if not p[1].startswith("grasp")], limbs)
    pending: deque[int] = deque()
    client = UdpBridgeClient(address, key=key)
    ready.set()
    begin.wait()
    start = time.monotonic()
    first = script.first_position or 0.0
    if stop.wait(max(0.0, start + first - CONNECT_LEAD_S - time.monotonic())):
        client.close()
        out.put([])
        return
    client.connect(timeout=CONNECT_S)

    def pose(t: float) -> tuple[Any, int] | None:
        while plan and plan[0][0] <= t:
            for i, bits in enumerate(plan.pop(0)[1]):
                if i < len(pending):
                    pending[i] |= bits
                else:
                    pending.append(bits)
        position = script.position_at(t)
        if position is None:
            return None
        return position, pending[0] if pending else 0  # popped once sent: a press is never lost

    sent = stream_poses(client, pose, stop.is_set, start, on_sent=lambda: pending and pending.popleft())
    client.close()
    out.put(sent)


def stream_poses(
    client: Any,
    pose: Callable[[float], tuple[Any, int] | None],
    done: Callable[[], bool],
    start: float | None = None,
    on_sent: Callable[[], object] | None = None,
) -> list[float]:
    """Send ``pose(t)`` (position ``(3,)`` m and button bits, or ``None``: nothing) through ``client`` (a
    connected :class:`~pccbullet.teleop.udp.client.UdpBridgeClient`) once a millisecond of ``t`` (s since
    ``start``, a ``time.monotonic``; ``None``: the call), reading the forces, until ``done()``, calling
    ``on_sent()`` after each pose the client sent; returns the ``time.monotonic`` of every pose sent."""
    start = time.monotonic() if start is None else start
    sent: list[float] = []
    k = int((time.monotonic() - start) * 1e3)  # a start in the past: paced from now on, no burst
    while not done():
        now = time.monotonic()
        value = pose(now - start)
        if value is not None and client.send_pose(value[0], buttons=value[1]):
            sent.append(now)
            if on_sent is not None:
                on_sent()
        client.recv_force()
        k += 1
        delay = start + k * 1e-3 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return sent


class TickRecorder:
    """Wraps ``session.tick`` (an instance attribute, for this session only) and records, for each of at
    most ``ticks`` ticks: its start (``time.monotonic``, s), its time (s) and ``accepted()`` after it."""

    def __init__(self, session: Any, accepted: Callable[[], int], ticks: int) -> None:
        self.start = np.zeros(ticks)
        self.busy = np.zeros(ticks)
        self.accepted = np.zeros(ticks, dtype=np.int64)
        self.n = 0
        tick = session.tick
        clock = time.monotonic

        def timed(device: Any, *, deadline_met: bool = True) -> np.ndarray:
            t0 = clock()
            force = tick(device, deadline_met=deadline_met)
            i = self.n
            if i < ticks:
                self.start[i], self.busy[i], self.accepted[i] = t0, clock() - t0, accepted()
                self.n = i + 1
            return force

        session.tick = timed


def flood_figures(
    ticks: TickRecorder, window: tuple[float, float], sent: list[float], dt: float
) -> dict[str, Any]:
    """The master ticks and the device's poses from ``window[0]`` to ``window[1] + AFTER_S``
    (``time.monotonic``, s): tick p50/p99/max (ms), ticks ending more than ``dt`` late (deadlines from
    the first tick's start, every ``dt``), poses sent and accepted, and the share accepted; and the
    poses sent and accepted over the run (from its first tick's start to its last's)."""
    n = ticks.n
    start, busy, accepted = ticks.start[:n], ticks.busy[:n], ticks.accepted[:n]
    t0, t1 = window[0], window[1] + AFTER_S
    inside = np.flatnonzero((start >= t0) & (start <= t1))
    late = (start + busy) - (start[0] + dt * np.arange(1, n + 1)) if n else np.zeros(0)
    sent_in = sum(t0 <= s <= t1 for s in sent)
    tick: dict[str, float | None] = {"p50_ms": None, "p99_ms": None, "max_ms": None}
    accepted_in = 0
    if len(inside):
        before = accepted[inside[0] - 1] if inside[0] > 0 else 0
        accepted_in = int(accepted[inside[-1]] - before)
        ms = busy[inside] * 1e3
        tick = {
            "p50_ms": float(np.median(ms)),
            "p99_ms": float(np.percentile(ms, 99)),
            "max_ms": float(ms.max()),
        }
    run_sent = sum(start[0] <= s <= start[-1] for s in sent) if n else 0
    return {
        "run_poses_sent": int(run_sent),
        "run_poses_accepted": int(accepted[-1]) if n else 0,
        "ticks": int(len(inside)),
        "tick": tick,
        "late_ticks": int((late[inside] > dt).sum()) if len(inside) else 0,
        "poses_sent": int(sent_in),
        "poses_accepted": accepted_in,
        "accepted_share": accepted_in / sent_in if sent_in else None,
    }


def sched_stat(pid: int | str = "self") -> tuple[float, float] | None:
    """Time (s) a process's main thread has run and has waited runnable for a core (``/proc/PID/schedstat``,
    Linux); ``None`` where it cannot be read."""
    try:
        with open(f"/proc/{pid}/schedstat") as fh:
            run, wait = fh.read().split()[:2]
    except (OSError, ValueError):
        return None
    return int(run) * 1e-9, int(wait) * 1e-9


class SchedLog:
    """Samples of :func:`sched_stat` of named processes (``time.monotonic``, s), taken by :meth:`sample`."""

    def __init__(self, pids: dict[str, int | str]) -> None:
        self.pids = pids
        self.samples: list[tuple[float, dict[str, tuple[float, float] | None]]] = []

    def sample(self) -> None:
        """One sample of every process now."""
        self.samples.append((time.monotonic(), {name: sched_stat(pid) for name, pid in self.pids.items()}))

    def waited(self, t0: float, t1: float) -> dict[str, float | None]:
        """Per process, the share of ``[t0, t1]`` (between the samples nearest inside it) that it waited
        for a core while runnable (``None`` without two samples or a stat)."""
        inside = [(t, stats) for t, stats in self.samples if t0 <= t <= t1]
        out: dict[str, float | None] = {name: None for name in self.pids}
        if len(inside) < 2:
            return out
        (ta, a), (tb, b) = inside[0], inside[-1]
        for name in self.pids:
            if a[name] is not None and b[name] is not None:
                out[name] = (b[name][1] - a[name][1]) / (tb - ta)  # type: ignore[index]
        return out


def fresh_key() -> bytes:
    """A random 32-byte HMAC key for one bench (the user's key file is not touched)."""
    return os.urandom(32)
