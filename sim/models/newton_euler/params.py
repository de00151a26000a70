"""Inputs of the batched Newton–Euler model: the limbs' constant per-node arrays (:class:`NEParams`).

``L`` limbs are padded to ``N`` pieces (padding pieces have zero length and mass: inert). The compiled
kernels of :mod:`pccbullet.sim.models.newton_euler.kernels` read them packed (:meth:`NEParams.packed`), the
numpy reference of
:mod:`pccbullet.sim.models.newton_euler.batch_dynamics` in the padded ``(L, N)`` layout.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler import kernels as ne_kernels

BACKENDS = ("numba", "numpy")  # compiled kernels (newton_euler.kernels) / the numpy reference below


class NEParams:
    """Constant per-node arrays of ``L`` limbs padded to ``N`` pieces (the kernel's inputs)."""

    __slots__ = (
        "L",
        "N",
        "l0",
        "mnet",
        "minert",
        "inertia_body",
        "drag",
        "last",
        "axisymmetric",
        "dinertia",
        "_lower",
        "_Icon",
        "_packed",
    )

    def __init__(
        self,
        l0: FloatArray,
        mnet: FloatArray,
        minert: FloatArray,
        inertia_body: FloatArray,
        drag: FloatArray | None,
        last: FloatArray,
    ) -> None:
        self.L, self.N = l0.shape
        self.l0 = np.ascontiguousarray(l0).ravel()
        self.mnet = mnet
        self.minert = minert
        self.inertia_body = inertia_body
        self.drag = drag
        self.last = np.asarray(last, dtype=np.intp)
        self.axisymmetric = bool(np.array_equal(inertia_body[..., 0], inertia_body[..., 1]))
        self.dinertia = inertia_body[..., 2] - inertia_body[..., 0]
        self._lower: np.ndarray | None = None
        self._Icon: FloatArray | None = None
        self._packed: tuple[np.ndarray, FloatArray] | None = None

    def lower(self) -> np.ndarray:
        """``(4N, 4N)`` mask of the valid (block lower triangular) entries of the CRBA product."""
        if self._lower is None:
            blk = np.repeat(np.arange(self.N), 4)
            self._lower = blk[:, None] >= blk[None, :]
        return self._lower

    def packed(self) -> tuple[np.ndarray, FloatArray]:
        """The compiled kernels' inputs (:mod:`pccbullet.sim.models.newton_euler.kernels`), cached: ``limbs``
        ``(L, 2)`` int64 ``(l N, n_l)`` (limb l's real pieces in the padded layout; ``n_l = last + 1``) and
        ``pieces`` ``(L N, 7)`` ``[l0, mnet, minert, Ix, Iy, Iz, drag factor]`` (drag factor 0 if :attr:`drag`
        is ``None``)."""
        if self._packed is None:
            L, N = self.L, self.N
            limbs = np.stack([np.arange(L) * N, self.last + 1], axis=1).astype(np.int64)
            pieces = np.zeros((L * N, ne_kernels.PIECE_COLUMNS))
            pieces[:, 0] = self.l0
            pieces[:, 1] = np.asarray(self.mnet, dtype=float).ravel()
            pieces[:, 2] = np.asarray(self.minert, dtype=float).ravel()
            pieces[:, 3:6] = np.asarray(self.inertia_body, dtype=float).reshape(L * N, 3)
            if self.drag is not None:
                pieces[:, 6] = np.asarray(self.drag, dtype=float).ravel()
            self._packed = (limbs, pieces)
        return self._packed

    @classmethod
    def from_models(cls, models: Sequence) -> NEParams:
        """Pad the node arrays of :class:`~pccbullet.sim.models.newton_euler.model.LimbModel` s (a snapshot
        of them)."""
        L, N = len(models), max(m.n for m in models)
        l0, mnet, minert, drag = (np.zeros((L, N)) for _ in range(4))
        Ib = np.zeros((L, N, 3))
        use_drag = False
        for i, m in enumerate(models):
            k = m.n
            med = m.medium
            l0[i, :k] = m.l0
            mnet[i, :k] = m.mass - med.density * m.volume
            minert[i, :k] = m.inertial_mass
            Ib[i, :k] = m.inertia_body
            if med.drag_coefficient > 0.0:
                use_drag = True
                drag[i, :k] = 0.5 * med.density * med.drag_coefficient * m.drag_area
        return cls(l0, mnet, minert, Ib, drag if use_drag else None, np.array([m.n - 1 for m in models]))

    def spatial_inertia_buffer(self) -> FloatArray:
        """Reusable ``(L, N, 6, 6)`` buffer of composite spatial inertias; its constant lower-right blocks
        hold the composite masses ``sum_{k >= i} m_k I``."""
        if self._Icon is None:
            buf = np.zeros((self.L, self.N, 6, 6))
            mt = self.minert[:, ::-1].cumsum(axis=1)[:, ::-1]
            buf[..., 3:, 3:] = mt[..., None, None] * np.eye(3)
            self._Icon = buf
        return self._Icon


def check_backend(backend: str) -> str:
    """``backend`` if it is one of :data:`BACKENDS`, else :class:`ConfigurationError`."""
    if backend not in BACKENDS:
        raise ConfigurationError(f"backend = {backend!r} is invalid; allowed: 'numba', 'numpy'")
    return backend


def _limb_loads(x: FloatArray | None, L: int) -> FloatArray:
    """``(L, 3)`` float64 C-contiguous loads (zeros for ``None``; a ``(3,)`` load goes to every limb)."""
    if x is None:
        return np.zeros((L, 3))
    x = np.asarray(x, dtype=float)
    if x.shape != (L, 3):
        x = np.broadcast_to(x.reshape(-1, 3), (L, 3))
    return np.ascontiguousarray(x)


def kernel_loads(
    L: int, gravity: FloatArray, tip_force: FloatArray | None, tip_moment: FloatArray | None
) -> FloatArray:
    """The kernels' ``loads`` ``(L, 3, 3)`` float64 C-contiguous: per limb gravity (m/s^2), tip force (N)
    and tip moment (N m) (each as in :func:`_limb_loads`: ``None`` zeros, a ``(3,)`` row for every limb)."""
    return np.stack([_limb_loads(gravity, L), _limb_loads(tip_force, L), _limb_loads(tip_moment, L)], axis=1)
