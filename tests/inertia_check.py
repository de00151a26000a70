"""The physical-inertia check the URDF tests apply to every link."""

from __future__ import annotations

import numpy as np

from pccbullet.core.types import FloatArray


def inertia_is_physical(inertia: FloatArray, rtol: float = 1e-9) -> bool:
    """Symmetric, positive definite and obeying the triangle inequality of principal moments."""
    inertia = np.asarray(inertia, dtype=float)
    if not np.allclose(inertia, inertia.T, rtol=0.0, atol=rtol * np.abs(inertia).max()):
        return False
    p = np.linalg.eigvalsh(inertia)
    if p.min() <= 0.0:
        return False
    tol = rtol * p.max()
    return bool(p[0] + p[1] >= p[2] - tol and p[0] + p[2] >= p[1] - tol and p[1] + p[2] >= p[0] - tol)
