"""Fast, batched evaluation of the Newton–Euler soft-limb model of :mod:`sim.models.newton_euler`.

One dynamics evaluation handles any number of limbs. The equations are exactly those of
:meth:`~sim.models.newton_euler.LimbModel.dynamics`, with analytic velocity-product (bias) terms
``d/dt(Jp) v`` and ``d/dt(Jw) v`` (closed-form derivatives of the piece transform, see
:func:`piece_kinematics`; no central differences, so none of their ~1e-8 relative truncation error).
Two evaluations of them (``backend``):

``"numba"`` (default): the compiled kernels of :mod:`sim.models.ne_kernels` — scalar loops over limbs
and pieces, one call per dynamics evaluation or integrator step; the step solves each limb's system by
the articulated-body recursion (``O(n)``, exact) instead of assembling and factorizing ``M``.

``"numpy"``: the vectorized evaluation below, kept as the reference. The pieces of all limbs are held in
padded ``(L, N)`` arrays (``L`` limbs, ``N`` the largest piece count; padding pieces have zero length and
mass, so they are inert and never couple to the real ones), and:

* every entry of a piece's rotation and of its packed local matrix (Jacobians, position, velocities,
  bias terms: ``(3, 13)``) is a polynomial in ~22 per-piece quantities; all of them are evaluated with a
  few gathers/multiplies (one per monomial degree) and one sparse-matrix product;
* the world rotations come from a parallel prefix product (``log2 N`` stacked matmuls) instead of a
  Python loop over pieces; the local matrices are rotated to the world with one stacked matmul;
* cross products are products with skew matrices built by one matmul with the Levi-Civita tensor; the
  node inertia (a disk: ``Ix = Iy``) uses ``Iw = a I + (c - a) t t^T``;
* the composite rigid-body inertias are reverse cumulative sums of the nodes' mass, first and second
  moments; the mass matrix of all limbs comes from one ``(L, 4N, 6) x (L, 6, 4N)`` product, and the
  integrator step solves each limb's system with a Cholesky factorization (LAPACK ``dposv``) that reads
  one triangle only (no symmetrization).

:class:`MultiLimbModel` is the public entry point; :class:`~sim.models.newton_euler.LimbModel` uses
:func:`ne_dynamics` with ``L = 1``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from scipy.linalg import lapack

from sim.models import ne_kernels
from sim.models.ne_kernels import SERIES_BELOW, SERIES_TERMS, series_matrix
from urdf_gen.errors import ConfigurationError
from urdf_gen.types import FloatArray

BACKENDS = ("numba", "numpy")  # compiled kernels (sim.models.ne_kernels) / the numpy reference below

_NTERMS = SERIES_TERMS
_SERIES = series_matrix()
# closed-form numerators of the same 8 functions in the basis (1, t, s, c, t s, t c, t^2 s, t^2 c),
# divided by t^_INV_POWERS: 1 - c, s, t - s, t s - 2 (1 - c), t c - s, 3 s - 2 t - t c,
# t^2 c - 5 t s + 8 (1 - c), 3 s - 3 t c - t^2 s
_CLOSED = np.array(
    [
        [1, 0, 0, -1, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0, 0, 0],
        [0, 1, -1, 0, 0, 0, 0, 0],
        [-2, 0, 0, 2, 1, 0, 0, 0],
        [0, 0, -1, 0, 0, 1, 0, 0],
        [0, -2, 3, 0, 0, -1, 0, 0],
        [8, 0, 0, -8, -5, 0, 0, 1],
        [0, 0, 3, 0, 0, -3, -1, 0],
    ],
    dtype=float,
)
_INV_POWERS = np.array([2.0, 1.0, 3.0, 4.0, 3.0, 5.0, 6.0, 5.0])[:, None]
# skew(w).reshape(..., 9) = w @ _LEVI
_LEVI = np.zeros((3, 9))
_LEVI[2, 1], _LEVI[1, 2], _LEVI[2, 3] = -1.0, 1.0, 1.0
_LEVI[0, 5], _LEVI[1, 6], _LEVI[0, 7] = -1.0, -1.0, 1.0
# rows of the local matrix that have a component along (ry, -rx) / (kyd, -kxd) in their x, y entries
_EYE3 = np.eye(3)


def bend_functions(th2: FloatArray) -> FloatArray:
    """``(8, n)``: A, B, C, A'/th, B'/th, C'/th, (A'/th)'/th, (B'/th)'/th of the squared bend angle ``th2``.

    ``A = (1 - cos th)/th^2``, ``B = sin th / th``, ``C = (th - sin th)/th^3``: Taylor series in ``th^2``
    (7 terms) below :data:`SERIES_BELOW`, closed form above (relative error < 1e-12 everywhere).
    """
    n = th2.shape[0]
    pw = np.empty((_NTERMS, n))
    pw[0] = 1.0
    pw[1] = th2
    np.multiply(th2, th2, out=pw[2])
    np.multiply(pw[1:3], pw[2], out=pw[3:5])
    np.multiply(pw[1:3], pw[4], out=pw[5:7])
    out = _SERIES @ pw
    if n and th2.max() >= SERIES_BELOW * SERIES_BELOW:
        big = th2 >= SERIES_BELOW * SERIES_BELOW
        t = np.sqrt(th2[big])
        s, c = np.sin(t), np.cos(t)
        basis = np.stack([np.ones_like(t), t, s, c, t * s, t * c, t * t * s, t * t * c])
        out[:, big] = (_CLOSED @ basis) * (1.0 / t) ** _INV_POWERS
    return out


# ------------------------------------------------------------------ piece kinematics as polynomials
# Every entry of R and X (see piece_kinematics) is a polynomial in the per-piece "base" quantities below.
# They are evaluated with a handful of large numpy operations: the monomials are built degree by degree
# (each one = a lower-degree monomial times a base quantity: one gather and one multiply per degree) and
# summed per entry with one sparse-matrix product. Few calls matter more than few flops at these array sizes.
_BASE = (
    "l0 e ux uy w rx ry arc ct st th2 ru uu cr A B C dA dB dC ddA ddB".split()
)  # e, ux, uy, w: l0 * strain rates; rx, ry: l0 * curvatures; ru = rho.u, uu = u.u, cr = rx uy - ry ux


class _Poly(dict):
    """Sparse polynomial: sorted tuple of base indices -> coefficient (import-time helper)."""

    def __add__(self, other):
        out = _Poly(self)
        for m, c in _poly(other).items():
            out[m] = out.get(m, 0.0) + c
        return out

    __radd__ = __add__

    def __neg__(self):
        return _Poly({m: -c for m, c in self.items()})

    def __sub__(self, other):
        return self + (-_poly(other))

    def __rsub__(self, other):
        return _poly(other) + (-self)

    def __mul__(self, other):
        out = _Poly()
        for m1, c1 in self.items():
            for m2, c2 in _poly(other).items():
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0.0) + c1 * c2
        return out

    __rmul__ = __mul__


def _poly(x) -> _Poly:
    return x if isinstance(x, _Poly) else _Poly({(): float(x)})


def _piece_polynomials() -> list[_Poly]:
    """The 9 entries of R and the 39 of X, both column-major (``R^T``, ``X^T``), as polynomials."""
    v = {name: _Poly({(i,): 1.0}) for i, name in enumerate(_BASE)}
    l0, e, ux, uy, w, rx, ry, arc = (v[k] for k in "l0 e ux uy w rx ry arc".split())
    ct, st, th2, ru, uu, cr = (v[k] for k in "ct st th2 ru uu cr".split())
    A, B, C, dA, dB, dC, ddA, ddB = (v[k] for k in "A B C dA dB dC ddA ddB".split())
    ll = l0 * arc
    Ad, Bd, Cd = dA * ru, dB * ru, dC * ru
    Add, Bdd = dA * uu + ddA * ru * ru, dB * uu + ddB * ru * ru
    Rb22 = 1.0 - A * th2
    Rb = [
        [1.0 - A * ry * ry, A * rx * ry, B * ry],
        [A * rx * ry, 1.0 - A * rx * rx, -B * rx],
        [-B * ry, B * rx, Rb22],
    ]
    R = [[row[0] * ct + row[1] * st, row[1] * ct - row[0] * st, row[2]] for row in Rb]

    def xyz(c_rp, c_up=0.0, extra=(0.0, 0.0), z=0.0):  # c_rp (ry, -rx) + c_up (uy, -ux) + extra
        return [c_rp * ry + c_up * uy + extra[0], -c_rp * rx - c_up * ux + extra[1], _poly(z)]

    cols = [
        xyz(l0 * A, z=l0 * B),  # Jp: eps
        xyz(ll * dA * rx, extra=(0.0, -ll * A), z=ll * dB * rx),  # Jp: kx
        xyz(ll * dA * ry, extra=(ll * A, 0.0), z=ll * dB * ry),  # Jp: ky
        xyz(0.0),  # Jp: kz
        xyz(0.0),  # Jw: eps
        xyz(-l0 * C * ry, extra=(l0, 0.0), z=-l0 * A * ry),  # Jw: kx
        xyz(l0 * C * rx, extra=(0.0, l0), z=l0 * A * rx),  # Jw: ky
        xyz(l0 * B, z=l0 * Rb22),  # Jw: kz
        xyz(2.0 * e * Ad + arc * Add, 2.0 * (e * A + arc * Ad), z=2.0 * e * Bd + arc * Bdd),  # d/dt(Jp) v
        xyz(cr * Cd + w * Bd, cr * C + w * B, z=cr * Ad - w * (Ad * th2 + 2.0 * A * ru)),  # d/dt(Jw) v
        xyz(e * A + arc * Ad, arc * A, z=e * B + arc * Bd),  # Jp v
        xyz(arc * A, z=arc * B),  # p
        xyz(C * cr + w * B, extra=(ux, uy), z=A * cr + w * Rb22),  # Jw v
    ]
    return [R[i][j] for j in range(3) for i in range(3)] + [cols[k][i] for k in range(13) for i in range(3)]


def _evaluation_plan(polys: list[_Poly]):
    """Monomials by degree (first row, parent rows, base rows) and the sparse coefficient matrix."""
    nb = len(_BASE)
    needed: set[tuple[int, ...]] = set()
    for p in polys:
        for m, c in p.items():
            if c != 0.0:
                while len(m) > 1:
                    needed.add(m)
                    m = m[:-1]
    row: dict[tuple[int, ...], int] = {(): 0}
    row.update({(i,): 1 + i for i in range(nb)})
    levels = []
    deg = 2
    while True:
        ms = sorted(m for m in needed if len(m) == deg)
        if not ms:
            break
        start = len(row)
        for m in ms:
            row[m] = len(row)
        levels.append((start, np.array([row[m[:-1]] for m in ms]), np.array([1 + m[-1] for m in ms])))
        deg += 1
    coef = np.zeros((len(polys), len(row)))
    for i, p in enumerate(polys):
        for m, c in p.items():
            coef[i, row[m]] += c
    return len(row), levels, sparse.csr_matrix(coef)


_NMON, _LEVELS, _COEF = _evaluation_plan(_piece_polynomials())


def piece_kinematics(l0: FloatArray, q: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Local rotation and the packed local kinematics of pieces.

    Args:
        l0: rest lengths ``(P,)`` (m), 0 for padding. q, v: strains and strain rates ``(P, 4)``.

    Returns:
        R ``(P, 3, 3)`` (tip frame in the piece base frame) and X ``(P, 3, 13)`` (both transposed views of
        contiguous arrays) with columns
        ``[Jp (4) | Jw (4) | d/dt(Jp) v | d/dt(Jw) v | Jp v | p | Jw v]`` (all in the piece base frame; see
        :func:`sim.models.ne_kinematics.piece_jacobians`). The bias columns are exact time derivatives at
        zero strain acceleration. With ``rho = l0 (kx, ky)``, ``u = l0 (kxd, kyd)``, ``e = l0 epsd``,
        ``w = l0 kzd``, ``rp = (ry, -rx)``, ``up = (uy, -ux)``, ``cr = rx uy - ry ux`` and ``X' = dX/dt``
        (``A' = (A'/th) rho.u``, ``A'' = (A'/th) u.u + ((A'/th)'/th) (rho.u)^2``, same for B, C)::

            p = arc (A rp, B)
            d/dt(Jp) v = 2 e (A up + A' rp, B') + arc (2 A' up + A'' rp, B'')
            Jw v = (u + (C cr + w B) rp, A cr + w (1 - A th^2))
            d/dt(Jw) v = ((cr C' + w B') rp + (cr C + w B) up,  cr A' - w (A' th^2 + 2 A rho.u))

        (see ``_piece_polynomials`` for every entry).
    """
    P = l0.shape[0]
    mon = np.empty((_NMON, P))
    mon[0] = 1.0
    base = mon[1 : 1 + len(_BASE)]
    qt, vt = q.T, v.T
    base[0] = l0
    np.multiply(l0, vt, out=base[1:5])  # e, ux, uy, w
    np.multiply(l0, qt[1:3], out=base[5:7])  # rx, ry
    np.multiply(l0, qt[0], out=base[7])
    base[7] += l0  # arc
    tau = l0 * qt[3]
    np.cos(tau, out=base[8])
    np.sin(tau, out=base[9])
    r12, u12 = base[5:7], base[2:4]
    sq = np.empty((4, 2, P))
    np.multiply(r12, r12, out=sq[0])
    np.multiply(r12, u12, out=sq[1])
    np.multiply(u12, u12, out=sq[2])
    np.multiply(r12[::-1], u12, out=sq[3])  # (ry ux, rx uy)
    sq[3, 0] *= -1.0
    np.add(sq[:, 0], sq[:, 1], out=base[10:14])  # th2, ru, uu, cr
    base[14:22] = bend_functions(base[10])
    for start, parent, last in _LEVELS:
        np.multiply(mon[parent], mon[last], out=mon[start : start + len(parent)])
    out = _COEF @ mon  # (48, P)
    RT = np.ascontiguousarray(out[:9].T).reshape(P, 3, 3)
    XT = np.ascontiguousarray(out[9:].T).reshape(P, 13, 3)
    return RT.transpose(0, 2, 1), XT.transpose(0, 2, 1)


def prefix_rotations(R: FloatArray, transposed: bool = False) -> FloatArray:
    """``(L, N, 3, 3)`` local rotations -> ``(L, N + 1, 3, 3)`` cumulative products (index 0: identity).

    Inclusive parallel prefix product (Hillis–Steele): ``ceil(log2 N)`` stacked matmuls. With
    ``transposed``, ``R`` holds the transposed local rotations and the transposed products are returned.
    """
    L, N = R.shape[:2]
    G = np.empty((L, N + 1, 3, 3))
    G[:, 0] = _EYE3
    G[:, 1:] = R
    k = 1
    while k < N:
        if transposed:
            G[:, 1 + k :] = G[:, 1 + k :] @ G[:, 1 : N + 1 - k]
        else:
            G[:, 1 + k :] = G[:, 1 : N + 1 - k] @ G[:, 1 + k :]
        k *= 2
    return G


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
        """The compiled kernels' inputs (:mod:`sim.models.ne_kernels`), cached: ``limbs`` ``(L, 2)`` int64
        ``(l N, n_l)`` (limb l's real pieces in the padded layout; ``n_l = last + 1``) and ``pieces``
        ``(L N, 7)`` ``[l0, mnet, minert, Ix, Iy, Iz, drag factor]`` (drag factor 0 if :attr:`drag` is
        ``None``)."""
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
        """Pad the node arrays of :class:`~sim.models.newton_euler.LimbModel` s (a snapshot of them)."""
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


def _dot(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.einsum("...i,...i->...", a, b)


def _matvec(A: FloatArray, x: FloatArray) -> FloatArray:
    return np.einsum("...ij,...j->...i", A, x)


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


def ne_dynamics(
    prm: NEParams,
    q: FloatArray,
    qd: FloatArray,
    gravity: FloatArray,
    tip_force: FloatArray | None = None,
    tip_moment: FloatArray | None = None,
    *,
    with_mass: bool = True,
    symmetric: bool = True,
    backend: str = "numba",
) -> tuple[FloatArray | None, FloatArray]:
    """Mass matrices and non-elastic generalized forces of ``L`` padded limbs.

    Args:
        prm: the limbs' constant arrays. q, qd: padded states ``(L, N, 4)`` (zeros in the padding).
        gravity: ``(L, 3)`` (m/s^2), each limb's base frame. tip_force (N), tip_moment (N m): ``(L, 3)``
            applied at each limb's last real node, or ``None``.
        with_mass: compute ``M``. symmetric: return the full symmetric ``M``; else its transpose with
            only the upper block triangle (``[I, J]`` for block rows ``I <= J``) guaranteed valid, which
            is all a Cholesky solve needs (:func:`solve_spd_lower` on it). The ``"numba"`` backend always
            returns the full symmetric matrices.
        backend: ``"numba"``: the compiled kernel :func:`sim.models.ne_kernels.dynamics_kernel` (scalar
            loops, same equations); ``"numpy"``: the vectorized numpy evaluation (the reference).

    Returns:
        M ``(L, 4N, 4N)`` (or ``None``) and Q ``(L, 4N)`` with ``M q'' = Q + tau - K q - D qd`` per limb
        (zeros in the padding).
    """
    if check_backend(backend) == "numpy":
        return _ne_dynamics_numpy(prm, q, qd, gravity, tip_force, tip_moment, with_mass, symmetric)
    L, N = prm.L, prm.N
    limbs, pieces = prm.packed()
    Q = np.zeros(L * N * 4)
    M = np.zeros((L, 4 * N, 4 * N) if with_mass else (L, 0, 0))
    ne_kernels.dynamics_kernel(
        limbs,
        pieces,
        prm.drag is not None,
        _limb_loads(gravity, L),
        _limb_loads(tip_force, L),
        _limb_loads(tip_moment, L),
        np.ascontiguousarray(q, dtype=float).reshape(-1),
        np.ascontiguousarray(qd, dtype=float).reshape(-1),
        with_mass,
        Q,
        M,
    )
    return (M if with_mass else None), Q.reshape(L, 4 * N)


def _ne_dynamics_numpy(
    prm: NEParams,
    q: FloatArray,
    qd: FloatArray,
    gravity: FloatArray,
    tip_force: FloatArray | None,
    tip_moment: FloatArray | None,
    with_mass: bool,
    symmetric: bool,
) -> tuple[FloatArray | None, FloatArray]:
    """:func:`ne_dynamics` with ``backend="numpy"`` (the formulation of the module docstring)."""
    L, N = prm.L, prm.N
    R, X = piece_kinematics(prm.l0, q.reshape(L * N, 4), qd.reshape(L * N, 4))
    GT = prefix_rotations(R.swapaxes(-1, -2).reshape(L, N, 3, 3), transposed=True)  # world rotations^T
    # world frame, transposed (rows are vectors): columns of piece_kinematics' X rotated by Rprev
    XwT = X.swapaxes(-1, -2).reshape(L, N, 13, 3) @ GT[:, :N]
    WpT, WwT = XwT[..., 0:4, :], XwT[..., 4:8, :]
    bp, bw, wl = XwT[..., 8, :], XwT[..., 9, :], XwT[..., 12, :]
    cs = XwT[..., 10:13, :].cumsum(axis=1)  # (sum of Jp v, o, w)
    V = np.empty((L, N, 4, 3))  # o, -(w of the previous node), w, P
    V[..., 0, :] = cs[..., 1, :]
    np.subtract(wl, cs[..., 2, :], out=V[..., 1, :])
    V[..., 2, :] = cs[..., 2, :]
    V[..., 3, :] = XwT[..., 11, :]
    Sk = (V.reshape(-1, 3) @ _LEVI).reshape(L, N, 4, 3, 3)
    o, w = V[..., 0, :], V[..., 2, :]
    ox, nwpx, wx, Px = Sk[..., 0, :, :], Sk[..., 1, :, :], Sk[..., 2, :, :], Sk[..., 3, :, :]
    YT = XwT[..., 10:13, :] @ nwpx  # rows: w_prev x (Jp v, P, Jw v)
    wxP = YT[..., 1, :]
    alpha_inc = YT[..., 2, :] + bw
    alpha = alpha_inc.cumsum(axis=1)
    acc_inc = 2.0 * YT[..., 0, :] + bp - _matvec(nwpx, wxP) + _matvec(Px, alpha_inc - alpha)
    acc = acc_inc.cumsum(axis=1)
    F = prm.mnet[..., None] * gravity[:, None, :] - prm.minert[..., None] * acc
    t = GT[:, 1:, 2]  # node tangents
    if prm.drag is not None:
        vel = (XwT[..., 10, :] + wxP).cumsum(axis=1)
        vn = vel - _dot(vel, t)[..., None] * t
        F -= (prm.drag * np.sqrt(_dot(vn, vn)))[..., None] * vn
    if tip_force is not None:
        F[np.arange(L), prm.last] += tip_force
    U = np.empty((L, N, 6))  # (moment about the base origin; force) of each node
    U[..., 3:] = F
    if prm.axisymmetric:  # Iw = a I + (c - a) t t^T
        a, dI = prm.inertia_body[..., 0], prm.dinertia
        Nm = a[..., None] * alpha + (dI * _dot(t, alpha))[..., None] * t
        Nm += (dI * _dot(t, w))[..., None] * _matvec(wx, t)
    else:
        RnT = GT[:, 1:]
        Iw = (RnT.swapaxes(-1, -2) * prm.inertia_body[:, :, None, :]) @ RnT
        Nm = _matvec(Iw, alpha) + _matvec(wx, _matvec(Iw, w))
    np.subtract(_matvec(ox, F), Nm, out=U[..., :3])
    if tip_moment is not None:
        U[np.arange(L), prm.last, :3] += tip_moment
    Ubar = U[:, ::-1].cumsum(axis=1)[:, ::-1]
    St = np.empty((L, N, 4, 6))  # motion subspace S^T, (angular, linear) about the base origin
    St[..., :3] = WwT
    lin = np.matmul(WwT, ox, out=St[..., 3:])
    np.subtract(WpT, lin, out=lin)  # (Wp + ox Ww)^T
    Q = _matvec(St, Ubar).reshape(L, 4 * N)
    if not with_mass:
        return None, Q
    # composite rigid body algorithm about the base origin: per node second moment
    # J = Iw + m (|o|^2 I - o o^T), first moment h = m o, mass m; composites by reverse cumulative sums
    m = prm.minert[..., None]
    W = np.empty((L, N, 12))
    mo = np.multiply(m, o, out=W[..., 9:])
    Jn = W[..., :9].reshape(L, N, 3, 3)
    if prm.axisymmetric:
        np.multiply((dI[..., None] * t)[..., :, None], t[..., None, :], out=Jn)
        Jn -= mo[..., :, None] * o[..., None, :]
        diag = a + _dot(mo, o)
    else:
        np.multiply(-mo[..., :, None], o[..., None, :], out=Jn)
        Jn += Iw
        diag = _dot(mo, o)
    Jn.reshape(L, N, 9)[..., ::4] += diag[..., None]
    Wc = W[:, ::-1].cumsum(axis=1)[:, ::-1]
    Ic = prm.spatial_inertia_buffer()
    Ic[..., :3, :3] = Wc[..., :9].reshape(L, N, 3, 3)
    hx = (Wc[..., 9:].reshape(-1, 3) @ _LEVI).reshape(L, N, 3, 3)
    Ic[..., :3, 3:] = hx
    np.negative(hx, out=Ic[..., 3:, :3])
    FcT = St @ Ic  # (Ic S)^T, Ic is symmetric
    # B^T[I, J] = S_I^T Ic_J S_J: valid for block rows I <= J (M is symmetric)
    Bt = St.reshape(L, 4 * N, 6) @ FcT.reshape(L, 4 * N, 6).swapaxes(-1, -2)
    if symmetric:
        return np.where(prm.lower(), Bt.swapaxes(-1, -2), Bt), Q
    return Bt, Q


def solve_spd_lower(A: FloatArray, b: FloatArray) -> FloatArray:
    """Solve ``A x = b`` for symmetric positive definite ``A`` given (at least) its upper triangle.

    Cholesky (LAPACK ``dposv``) on the Fortran view ``A.T`` (no symmetrization; ``A`` may be
    overwritten). Falls back to LU on the symmetrized matrix if ``A`` is not positive definite.
    """
    _, x, info = lapack.dposv(A.T, b, lower=1, overwrite_a=1)
    if info != 0:
        x = np.linalg.solve(np.triu(A) + np.triu(A, 1).T, b)
    return x


class MultiLimbModel:
    """Several :class:`~sim.models.newton_euler.LimbModel` s evaluated together (one kernel call per step).

    The state is the concatenation of the limbs' states (``dof = sum 4 n_l``); :meth:`split` cuts a
    vector into per-limb views. Results equal the limbs' own :meth:`LimbModel.dynamics` to rounding.

    Args:
        models: the limb models (their node arrays are copied; ``gravity`` is kept per limb in
            :attr:`gravity` ``(L, 3)`` and may be changed).
        backend: ``"numba"`` (default): :meth:`dynamics`, :meth:`acceleration` and :meth:`step` are one
            call each of the compiled kernels of :mod:`sim.models.ne_kernels` on the concatenated state
            (the solves by the articulated-body recursion, without forming ``M``); ``"numpy"``: the
            padded numpy evaluation of :func:`ne_dynamics` and a Cholesky solve (LAPACK) per limb, the
            reference. Both evaluate the same equations; results agree to rounding.

    Attributes:
        models, L, N (max pieces), dof, offsets ``(L + 1,)`` state offsets, K, D ``(dof,)``, backend.
    """

    def __init__(self, models: Sequence, *, backend: str = "numba") -> None:
        self.models = list(models)
        if not self.models:
            raise ValueError("MultiLimbModel needs at least one limb model")
        self.backend = check_backend(backend)
        self.prm = NEParams.from_models(self.models)
        self.L, self.N = self.prm.L, self.prm.N
        dofs = [m.dof for m in self.models]
        self.offsets = np.concatenate([[0], np.cumsum(dofs)])
        self.dof = int(self.offsets[-1])
        self.K = np.concatenate([m.K for m in self.models])
        self.D = np.concatenate([m.D for m in self.models])
        self.gravity = np.stack([np.asarray(m.gravity, dtype=float) for m in self.models])
        # flat state index -> padded (L * N * 4) index
        self._index = np.concatenate([i * 4 * self.N + np.arange(d) for i, d in enumerate(dofs)])
        self._dofs = dofs
        self._buf = np.zeros((2, self.L * self.N * 4))  # padded q, qd (the padding stays zero)
        self._diag: dict[tuple[float, float], FloatArray] = {}
        # compiled path: the real pieces only, concatenated like the state (no padding)
        _, padded = self.prm.packed()
        counts = np.array([m.n for m in self.models], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self._limbs = np.ascontiguousarray(np.stack([starts, counts], axis=1))
        self._pieces = np.ascontiguousarray(padded[self._index[::4] // 4])
        self._use_drag = self.prm.drag is not None
        self._no_load = np.zeros((self.L, 3))  # read-only inputs of the kernels
        self._no_tau = np.zeros(self.dof)

    @classmethod
    def from_limbs(cls, limbs: Sequence, pieces_per_segment: int = 10, **kwargs) -> MultiLimbModel:
        """Build the limb models (same keyword arguments as ``LimbModel``) and batch them."""
        from sim.models.newton_euler import LimbModel

        return cls([LimbModel(limb, pieces_per_segment, **kwargs) for limb in limbs])

    def rest_state(self) -> FloatArray:
        """Straight, unstrained state ``(dof,)`` zeros."""
        return np.zeros(self.dof)

    def split(self, x: FloatArray) -> list[FloatArray]:
        """Per-limb views of a ``(dof,)`` vector."""
        return [x[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=True)]

    def _pad(self, x: FloatArray) -> FloatArray:
        out = np.zeros(self.L * self.N * 4)
        out[self._index] = x
        return out.reshape(self.L, self.N, 4)

    @staticmethod
    def _loads(x: FloatArray | None) -> FloatArray | None:
        return None if x is None else np.asarray(x, dtype=float).reshape(-1, 3)

    def _kernel_loads(self, x: FloatArray | None) -> FloatArray:
        return self._no_load if x is None else _limb_loads(x, self.L)

    def _gravity(self) -> FloatArray:
        return _limb_loads(self.gravity, self.L)

    def _vector(self, x: FloatArray) -> FloatArray:
        """``(dof,)`` float64 C-contiguous (no copy if ``x`` already is one)."""
        x = np.asarray(x, dtype=float)
        if x.shape != (self.dof,):
            x = np.broadcast_to(x, (self.dof,))
        return np.ascontiguousarray(x)

    def dynamics(
        self,
        q: FloatArray,
        qd: FloatArray,
        tip_force: FloatArray | None = None,
        tip_moment: FloatArray | None = None,
        *,
        with_mass: bool = True,
    ) -> tuple[list[FloatArray] | None, FloatArray]:
        """Per-limb mass matrices (list of ``(4 n_l, 4 n_l)``) and Q ``(dof,)``; loads ``(L, 3)``."""
        if self.backend == "numba":
            L, N = self.L, self.N
            Qf = np.empty(self.dof)
            Mb = np.zeros((L, 4 * N, 4 * N) if with_mass else (L, 0, 0))
            ne_kernels.dynamics_kernel(
                self._limbs,
                self._pieces,
                self._use_drag,
                self._gravity(),
                self._kernel_loads(tip_force),
                self._kernel_loads(tip_moment),
                self._vector(q),
                self._vector(qd),
                with_mass,
                Qf,
                Mb,
            )
            M: FloatArray | None = Mb if with_mass else None
        else:
            M, Q = ne_dynamics(
                self.prm,
                self._pad(q),
                self._pad(qd),
                self.gravity,
                self._loads(tip_force),
                self._loads(tip_moment),
                with_mass=with_mass,
                backend="numpy",
            )
            Qf = Q.reshape(-1)[self._index]
        if M is None:
            return None, Qf
        return [M[i, :d, :d] for i, d in enumerate(self._dofs)], Qf

    def acceleration(
        self,
        q: FloatArray,
        qd: FloatArray,
        tau: FloatArray | None = None,
        tip_force: FloatArray | None = None,
        tip_moment: FloatArray | None = None,
    ) -> FloatArray:
        """Strain accelerations ``(dof,)`` from the full equations of motion (explicit)."""
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        if self.backend == "numba":
            _, _, a, ok = self._step_kernel(q, qd, 0.0, tau, 0.5, tip_force, tip_moment)
            if ok:
                return a
        M, Q = ne_dynamics(
            self.prm,
            self._pad(q),
            self._pad(qd),
            self.gravity,
            self._loads(tip_force),
            self._loads(tip_moment),
            symmetric=False,
            backend="numpy",
        )
        assert M is not None  # the numpy backend always forms M
        rhs = Q.reshape(-1)[self._index] - self.K * q - self.D * qd
        if tau is not None:
            rhs = rhs + tau
        return self._solve_blocks(M, rhs)

    def _solve_blocks(self, M: FloatArray, rhs: FloatArray) -> FloatArray:
        out = np.empty(self.dof)
        for i, d in enumerate(self._dofs):
            a, b = self.offsets[i], self.offsets[i + 1]
            out[a:b] = solve_spd_lower(M[i, :d, :d], rhs[a:b])
        return out

    def step(
        self,
        q: FloatArray,
        qd: FloatArray,
        dt: float,
        tau: FloatArray | None = None,
        *,
        theta: float = 0.5,
        tip_force: FloatArray | None = None,
        tip_moment: FloatArray | None = None,
    ) -> tuple[FloatArray, FloatArray]:
        """One step of :func:`sim.models.integrators.step` for all limbs (same scheme, same results).

        With the ``"numba"`` backend the whole step is one call of
        :func:`sim.models.ne_kernels.step_kernel`; if a limb's matrix is not numerically positive
        definite there, the step is redone by the numpy path (whose solve falls back to LU).
        """
        if self.backend == "numba":
            qn, qdn, _, ok = self._step_kernel(q, qd, dt, tau, theta, tip_force, tip_moment)
            if ok:
                return qn, qdn
        return self._step_numpy(q, qd, dt, tau, theta, tip_force, tip_moment)

    def _step_kernel(
        self,
        q: FloatArray,
        qd: FloatArray,
        dt: float,
        tau: FloatArray | None,
        theta: float,
        tip_force: FloatArray | None,
        tip_moment: FloatArray | None,
    ) -> tuple[FloatArray, FloatArray, FloatArray, bool]:
        """One call of :func:`sim.models.ne_kernels.step_kernel`: ``(q', qd', acceleration, ok)``
        (``dt = 0``: the explicit acceleration)."""
        return ne_kernels.step_kernel(
            self._limbs,
            self._pieces,
            self._use_drag,
            self._gravity(),
            self._kernel_loads(tip_force),
            self._kernel_loads(tip_moment),
            self._vector(q),
            self._vector(qd),
            self._no_tau if tau is None else self._vector(tau),
            self._vector(self.K),
            self._vector(self.D),
            float(dt),
            float(theta),
        )

    def _step_numpy(
        self,
        q: FloatArray,
        qd: FloatArray,
        dt: float,
        tau: FloatArray | None,
        theta: float,
        tip_force: FloatArray | None,
        tip_moment: FloatArray | None,
    ) -> tuple[FloatArray, FloatArray]:
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        L, N = self.L, self.N
        buf = self._buf
        buf[0, self._index] = q + 0.5 * dt * qd
        buf[1, self._index] = qd
        M, Q = ne_dynamics(
            self.prm,
            buf[0].reshape(L, N, 4),
            buf[1].reshape(L, N, 4),
            self.gravity,
            self._loads(tip_force),
            self._loads(tip_moment),
            symmetric=False,
            backend="numpy",
        )
        assert M is not None  # the numpy backend always forms M
        K, D = self.K, self.D
        rhs = Q.reshape(-1)[self._index] - K * (q + theta * dt * qd) - D * qd
        if tau is not None:
            rhs += tau
        diag = self._diag.get((dt, theta))
        if diag is None:
            diag = np.zeros(L * N * 4)
            diag[self._index] = theta * dt * D + (theta * dt) ** 2 * K
            diag = self._diag.setdefault((dt, theta), diag.reshape(L, -1))
        M.reshape(L, -1)[:, :: 4 * N + 1] += diag
        a = self._solve_blocks(M, rhs)
        qd_new = qd + dt * a
        return q + dt * ((1.0 - theta) * qd + theta * qd_new), qd_new
