"""What a viewer has not taken yet: the HUD lines and camera image waiting for a frame to carry them.

The viewers (the GUI's :class:`~pccbullet.sim.views.gui.ViewerProcess`, the web view's
:class:`~pccbullet.sim.views.web.view.WebView`) are offered their frames without waiting, and drop the ones
they cannot take; the overlay content is kept until a frame that is taken carries it, so that a dropped
frame does not lose it."""

from __future__ import annotations

import queue
from collections.abc import Sequence
from typing import Any

import numpy as np


class PendingOverlay:
    """The HUD lines and camera image not yet in a frame that a viewer took."""

    def __init__(self) -> None:
        self.pending: dict[str, Any] = {}

    def note(
        self, hud: Sequence[tuple[str, Sequence[float]]] | None, image: tuple[np.ndarray, str] | None
    ) -> None:
        """Keep ``hud`` (lines: text, rgb 0..1) and ``image`` (``(h, w, 3) uint8``, caption) when given, as
        ``"hud"`` and ``"image"`` ``(h, w, rgb bytes, caption)``."""
        if hud is not None:
            self.pending["hud"] = [(str(line), tuple(map(float, rgb))) for line, rgb in hud]
        if image is not None:
            rgb = np.ascontiguousarray(image[0], dtype=np.uint8)
            self.pending["image"] = (rgb.shape[0], rgb.shape[1], rgb.tobytes(), str(image[1]))

    def offer(self, frames: Any, frame: dict[str, Any]) -> bool:
        """Put ``frame`` with what is pending into the queue ``frames`` without waiting; True if it went
        (nothing is pending then), False if the queue was full."""
        try:
            frames.put_nowait({**frame, **self.pending})
        except queue.Full:
            return False
        self.pending.clear()
        return True
