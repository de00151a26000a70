"""The teleoperation session's time series, in preallocated arrays of bounded size."""

from __future__ import annotations

import math

import numpy as np

LOG_ROWS = 120_000  # rows of the session log at most (bounded memory: longer sessions are decimated)


class SessionLog:
    """The session's time series in preallocated arrays: at most :data:`LOG_ROWS` rows, a row every
    ``every`` ticks (bounded memory however long the session; 1 kHz up to 120 s)."""

    COLUMNS = {
        "t": 1, "tip_m": 3, "tip_s": 3, "f_m": 3, "f_s": 3, "blending": 1, "depth_m": 1, "k_env": 1,
    }  # fmt: skip

    def __init__(self, ticks: int) -> None:
        self.every = max(1, math.ceil(ticks / LOG_ROWS))
        rows = max(1, math.ceil(ticks / self.every))
        self.data = {k: np.full((rows, w), np.nan) for k, w in self.COLUMNS.items()}
        self.n = 0

    def due(self, k: int) -> bool:
        """Whether tick ``k`` is logged."""
        return k % self.every == 0 and self.n < len(self.data["t"])

    def add(self, **row: object) -> None:
        """Append one row (every column)."""
        for key, value in row.items():
            self.data[key][self.n] = value
        self.n += 1

    def __getitem__(self, key: str) -> np.ndarray:
        col = self.data[key][: self.n]
        return col[:, 0] if col.shape[1] == 1 else col
