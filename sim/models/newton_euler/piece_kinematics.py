"""Vectorized (numpy) piece kinematics of the batched Newton–Euler model
(:mod:`pccbullet.sim.models.newton_euler.batch`).

Every entry of a piece's rotation and of its packed local matrix (Jacobians, position, velocities,
bias terms: ``(3, 13)``) is a polynomial in ~22 per-piece quantities; all of them are evaluated with a
few gathers/multiplies (one per monomial degree) and one sparse-matrix product
(:func:`piece_kinematics`). The world rotations of a chain come from a parallel prefix product
(:func:`prefix_rotations`, ``log2 N`` stacked matmuls) instead of a Python loop over pieces. The bias
terms are analytic (closed-form derivatives of the piece transform; no central differences).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler.piece_kernels import SERIES_BELOW, SERIES_TERMS, series_matrix

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
        :func:`pccbullet.sim.models.newton_euler.kinematics.piece_jacobians`). The bias columns are exact time
        derivatives at zero strain acceleration. With ``rho = l0 (kx, ky)``, ``u = l0 (kxd, kyd)``, ``e = l0
        epsd``, ``w = l0 kzd``, ``rp = (ry, -rx)``, ``up = (uy, -ux)``, ``cr = rx uy - ry ux`` and ``X' =
        dX/dt`` (``A' = (A'/th) rho.u``, ``A'' = (A'/th) u.u + ((A'/th)'/th) (rho.u)^2``, same for B, C)::

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
