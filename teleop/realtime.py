"""Real-time scheduling for the master's 1 kHz loop, where the operating system allows it.

A haptic loop must not wait for a core behind other work: on a shared 2-core machine a CPU-bound process
at the same priority (another job, or a flood of datagrams being sent) takes the master's core for
milliseconds at a time. :func:`realtime_priority` asks Linux to run the calling thread under ``SCHED_FIFO``
(priority :data:`RT_PRIORITY`, or the highest ``RLIMIT_RTPRIO`` allows) for a block: the thread then
preempts every normal process the moment its sleep ends. It is allowed to root, to a process with
``CAP_SYS_NICE``, or to a user whose ``ulimit -r`` is above 0 (``/etc/security/limits.conf``:
``@audio - rtprio 50``); otherwise the block runs at the normal policy and says so in the log (``-v``). New
threads and child processes do not inherit the policy (``SCHED_RESET_ON_FORK``), and the thread's previous
policy comes back at the block's end. Under ``SCHED_FIFO`` the loop sleeps its waits instead of spinning
them (a spinning real-time thread would keep a core from every other process).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

log = logging.getLogger(__name__)

RT_PRIORITY = 50  # SCHED_FIFO priority of the master's loop (1..99), below the kernel's own threads


def _allowed_priority(priority: int) -> int:
    """``priority``, or less when ``RLIMIT_RTPRIO`` caps it (0: not allowed; root is not capped)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_RTPRIO)
    except (ImportError, AttributeError, OSError):
        return priority
    if soft == resource.RLIM_INFINITY or os.geteuid() == 0:
        return priority
    return min(priority, int(soft)) if soft > 0 else priority  # 0: try anyway (CAP_SYS_NICE)


@contextlib.contextmanager
def realtime_priority(priority: int = RT_PRIORITY) -> Iterator[bool]:
    """Run the block with the calling thread under ``SCHED_FIFO`` at ``priority`` when allowed; yields
    whether it is (module docstring). The thread's policy and priority are restored at the end."""
    if not 1 <= priority <= 99:
        raise ValueError(f"priority = {priority!r} is invalid; allowed: 1 to 99")
    policy = getattr(os, "SCHED_FIFO", None)
    if policy is None:  # not Linux
        log.info("real-time scheduling is not available here; the master's loop runs at normal priority")
        yield False
        return
    before = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, policy | os.SCHED_RESET_ON_FORK, os.sched_param(_allowed_priority(priority)))
    except OSError as exc:
        log.info(
            "the master's loop runs at normal priority (real-time scheduling not allowed: %s; "
            "see docs/measurements/performance.md, the UDP bridge under a flood)",
            exc.strerror or exc,
        )
        yield False
        return
    try:
        yield True
    finally:
        os.sched_setscheduler(0, before[0], before[1])
