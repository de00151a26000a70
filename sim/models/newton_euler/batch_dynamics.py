"""One dynamics evaluation of ``L`` padded limbs: :func:`ne_dynamics` (compiled or numpy reference).

``backend="numba"`` calls :func:`pccbullet.sim.models.newton_euler.kernels.dynamics_kernel`; ``"numpy"`` is
the vectorized reference below. The pieces of all limbs are held in padded ``(L, N)`` arrays (``L`` limbs,
``N`` the largest piece count; padding pieces have zero length and mass, so they are inert and never couple to
the real ones), and:

* the local kinematics of every piece come from
:func:`pccbullet.sim.models.newton_euler.piece_kinematics.piece_kinematics`
  and the world rotations from a parallel prefix product; the local matrices are rotated to the world
  with one stacked matmul;
* cross products are products with skew matrices built by one matmul with the Levi-Civita tensor; the
  node inertia (a disk: ``Ix = Iy``) uses ``Iw = a I + (c - a) t t^T``;
* the composite rigid-body inertias are reverse cumulative sums of the nodes' mass, first and second
  moments; the mass matrix of all limbs comes from one ``(L, 4N, 6) x (L, 6, 4N)`` product, and a
  system with it is solved with a Cholesky factorization (LAPACK ``dposv``, :func:`solve_spd_lower`) that
  reads one triangle only (no symmetrization).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler import kernels as ne_kernels
from pccbullet.sim.models.newton_euler.params import NEParams, check_backend, kernel_loads
from pccbullet.sim.models.newton_euler.piece_kinematics import piece_kinematics, prefix_rotations

# skew(w).reshape(..., 9) = w @ _LEVI
_LEVI = np.zeros((3, 9))
_LEVI[2, 1], _LEVI[1, 2], _LEVI[2, 3] = -1.0, 1.0, 1.0
_LEVI[0, 5], _LEVI[1, 6], _LEVI[0, 7] = -1.0, -1.0, 1.0


def _dot(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.einsum("...i,...i->...", a, b)


def _matvec(A: FloatArray, x: FloatArray) -> FloatArray:
    return np.einsum("...ij,...j->...i", A, x)


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
        backend: ``"numba"``: the compiled kernel
            :func:`pccbullet.sim.models.newton_euler.kernels.dynamics_kernel` (scalar
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
        kernel_loads(L, gravity, tip_force, tip_moment),
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
