"""The tests' event wait: poll a condition until it holds, bounded by a generous timeout (a busy machine is
slow; a passing test never waits the timeout out)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

WAIT_S = 60.0
"""s, the longest event wait."""


def until(predicate: Callable[[], Any], timeout: float = WAIT_S) -> Any:
    """Poll ``predicate()`` every 20 ms until it is truthy or ``timeout`` s have passed; returns its last
    value (falsy: the wait timed out)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)
