"""Array type aliases used in signatures across pccbullet. Shapes are given in docstrings."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
"""Any float64 array; the docstring of the function using it states the shape, e.g. ``(4, 4) float``."""

Transform = npt.NDArray[np.float64]
"""A homogeneous transform, ``(4, 4) float``, named ``T_to_from`` in code."""
