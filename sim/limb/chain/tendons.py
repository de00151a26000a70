"""Compiled (numba) tendons of a rod chain: their lengths and Jacobian, and the controller's tensions.

Length. A tendon at offset ``r`` and angle ``phi`` about the backbone of a rod whose node turns by the
rotation vector ``theta`` (the node's log map) is shortened by ``r b . theta`` with ``b = z x e_phi =
(-sin phi, cos phi, 0)`` (the PCC fibre length of :mod:`pccbullet.sim.models.actuators`, node by node: the
node represents its stretch of the rod, the channel crosses it at the offset in the frame halfway through
its turn, where ``b . theta`` is the same as in the frames before and after it). A chord adds its length.
So ``L = sum_chords c - sum_nodes r b . theta`` over the nodes and chords from the limb base to the
tendon's anchor, and ``dL/domega = J_r^-T(theta) (-r b)`` per node (the log map's Jacobian of
:mod:`pccbullet.sim.limb.chain.rotation`; ``omega`` the node's relative angular velocity in child axes), ``1``
per chord. A tension ``T`` gives the generalized force ``-T dL/dq``: at a node the moment ``T r b`` of
the continuum rod's cross-section (exact for a tendon parallel to the backbone), at a chord the axial
compression ``T``. Neglected: friction in the channels, the tendon's mass and stretch, the small slope of
a tendon that follows the taper, shear.

Controller (:func:`tendon_tensions`). The tendons anchored at one segment's end disk form that segment's
*set*. From the measured tendon lengths' errors ``e`` (encoders: ``L - L_ref``, plus ``tau_d`` times their
rates for damping) each set's least-squares inverse gives the segment's bend error (two components) and
its length error (``(dbx, dby, dl) = P e``, the PCC map's pseudo-inverse). The moment the set must make
in its segment is the statics' feed-forward ``M_ff`` less ``kp`` and ``ki`` times the bend error and its
integral, less the moment the tendons of the sets beyond already make there (they pass through it);
it is made by the pair of the set's tendons whose directions enclose it (the least tension), on top of
every tendon's pretension and an equal share of the compression ``F = kp_l dl + ki_l int dl >= 0`` (a
tendon can only shorten the segment: a segment shorter than commanded is left to its elasticity). Sets are
visited from the tip to the base.
"""

from __future__ import annotations

import numba
import numpy as np

from pccbullet.sim.limb.chain.kernels import AT_REST, _bias_and_fluid, _kinematics
from pccbullet.sim.limb.chain.rotation import log_jacobian_transpose_apply, quat_log
from pccbullet.sim.limb.chain.solve import moving_spring_torques
from pccbullet.sim.limb.chain.springs import joint_springs

# gains columns of a set
KP_BEND, KI_BEND, KP_LENGTH, KI_LENGTH, TAU_D = range(5)
N_GAINS = 5
SLACK = 1e-6  # m: a path this much shorter than its spool's length leaves the tendon slack


@numba.njit(cache=True)
def tendon_geometry(q, qd, node_q, node_u, chord_q, chord_u, W, Wc, L, Ld, G) -> None:
    """Tendon lengths ``L (n_t,)`` (m), their rates ``Ld`` and Jacobian ``G (n_t, n_dof)`` at the position
    vector ``q`` and velocities ``qd``.

    ``node_q``, ``node_u``: position and velocity index of every node; ``chord_q``, ``chord_u``: of every
    chord; ``W (n_t, n_nodes, 3)``: ``r b`` of each tendon at each node (zero beyond its anchor); ``Wc
    (n_t, n_chords)``: 1 where the tendon runs along the chord, else 0.
    """
    nt = W.shape[0]
    G[:, :] = 0.0
    L[:] = 0.0
    if nt == 0:
        return
    for n in range(node_q.shape[0]):
        k = node_q[n]
        u = node_u[n]
        t0, t1, t2 = quat_log(q[k], q[k + 1], q[k + 2], q[k + 3])
        for j in range(nt):
            w0, w1, w2 = W[j, n, 0], W[j, n, 1], W[j, n, 2]
            if w0 == 0.0 and w1 == 0.0 and w2 == 0.0:
                continue
            L[j] -= w0 * t0 + w1 * t1 + w2 * t2
            g0, g1, g2 = log_jacobian_transpose_apply(t0, t1, t2, -w0, -w1, -w2)
            G[j, u], G[j, u + 1], G[j, u + 2] = g0, g1, g2
    for c in range(chord_q.shape[0]):
        for j in range(nt):
            if Wc[j, c] != 0.0:
                L[j] += Wc[j, c] * q[chord_q[c]]
                G[j, chord_u[c]] = Wc[j, c]
    for j in range(nt):
        acc = 0.0
        for i in range(qd.shape[0]):
            acc += G[j, i] * qd[i]
        Ld[j] = acc


@numba.njit(cache=True)
def _allocate(M0, M1, lo, hi, seg, Rseg, b, T) -> None:
    """Add to ``T[lo:hi]`` the least non-negative tensions whose moment in segment ``seg`` is ``(M0, M1)``:
    the pair whose moment directions enclose it (or the single tendon pointing most along it)."""
    best, ba, bb, ta, tb = np.inf, -1, -1, 0.0, 0.0
    for a in range(lo, hi):
        ax, ay = Rseg[a, seg] * b[a, 0], Rseg[a, seg] * b[a, 1]
        for c in range(a + 1, hi):
            cx, cy = Rseg[c, seg] * b[c, 0], Rseg[c, seg] * b[c, 1]
            det = ax * cy - ay * cx
            if abs(det) < 1e-12 * (ax * ax + ay * ay + cx * cx + cy * cy):
                continue
            x = (M0 * cy - M1 * cx) / det
            y = (ax * M1 - ay * M0) / det
            if x >= -1e-12 and y >= -1e-12 and x + y < best:
                best, ba, bb, ta, tb = x + y, a, c, max(x, 0.0), max(y, 0.0)
    if ba >= 0:
        T[ba] += ta
        T[bb] += tb
        return
    top, arg = 0.0, -1
    for a in range(lo, hi):
        ax, ay = Rseg[a, seg] * b[a, 0], Rseg[a, seg] * b[a, 1]
        m2 = ax * ax + ay * ay
        if m2 > 0.0:
            proj = (M0 * ax + M1 * ay) / m2
            if proj > top:
                top, arg = proj, a
    if arg >= 0:
        T[arg] += top


@numba.njit(cache=True)
def _command(e, T_set, set_start, set_seg, P, Rseg, b, Mff, integ, gains, pretension, T) -> None:
    """The controller's tensions ``T (n_t,)`` for the length errors ``e`` (with the damping term); see the
    module docstring. A set whose ``T_set`` is not NaN is held at those tensions (a grip) and the sets
    nearer the base make up for its moment."""
    T[:] = 0.0
    for k in range(set_start.shape[0] - 2, -1, -1):  # tip to base
        lo, hi = set_start[k], set_start[k + 1]
        seg = set_seg[k]
        if not np.isnan(T_set[lo]):
            for j in range(lo, hi):
                T[j] = T_set[j]
            continue
        c0 = c1 = c2 = 0.0
        for j in range(lo, hi):
            c0 += P[0, j] * e[j]
            c1 += P[1, j] * e[j]
            c2 += P[2, j] * e[j]
        kp, ki = gains[k, KP_BEND], gains[k, KI_BEND]
        M0 = Mff[seg, 0] - kp * c0 - ki * integ[k, 0]
        M1 = Mff[seg, 1] - kp * c1 - ki * integ[k, 1]
        for j in range(set_start[-1]):
            if (j < lo or j >= hi) and T[j] != 0.0:  # the sets beyond, already allocated
                M0 -= T[j] * Rseg[j, seg] * b[j, 0]
                M1 -= T[j] * Rseg[j, seg] * b[j, 1]
        _allocate(M0, M1, lo, hi, seg, Rseg, b, T)
        F = max(0.0, gains[k, KP_LENGTH] * c2 + gains[k, KI_LENGTH] * integ[k, 2])
        for j in range(lo, hi):
            T[j] += pretension[j] + F / (hi - lo)


@numba.njit(cache=True)
def _limit(F, reel, cap, max_tension, max_speed, dt, S) -> None:
    """Hold the motor forces ``F`` to what the motors can: not below 0 (no coupling there); at most ``cap``,
    which while a motor reels in (at ``reel > 0``) is on its torque-speed line ``max_tension (1 - reel /
    max_speed)``: there the coupling is that line's slope over the step (implicit: the line is a stiff
    damper)."""
    for j in range(F.shape[0]):
        if F[j] <= 0.0:
            F[j] = 0.0
            S[j, :] = 0.0
        elif F[j] >= cap[j]:
            F[j] = cap[j]
            S[j, :] = 0.0
            if reel[j] > 0.0 and cap[j] > 0.0:
                S[j, j] = dt * max_tension[j] / max_speed[j]


@numba.njit(cache=True)
def tendon_tensions(
    mode, L, Ld, L_ref, T_set, set_start, set_seg, P, Rseg, b, Mff, integ, gains, pretension, max_tension,
    max_speed, spool_mass, spool, dt, F, T, S, cap,
) -> None:  # fmt: skip
    """This step's motor forces ``F (n_t,)``, the most the motors can pull ``cap (n_t,)``, the tendons'
    tensions at the step's start ``T`` and how they change over the step, ``T + S tG qdd`` with ``S (n_t,
    n_t)`` (for :func:`pccbullet.sim.limb.chain.solve.spring_torques`); the controller's integrators ``integ
    (n_sets, 3)`` advance by ``dt``.

    ``mode``: 0 slack (no tension, no coupling), 1 the forces ``T_set`` (clipped by the motors), 3 the
    forces ``T_set`` as they are (negative: the fibre pushes, a pressurized chamber), 2 the
    controller towards the lengths ``L_ref`` with the feed-forward moments ``Mff (n_segments, 2)``, but
    for the sets held at their ``T_set`` (not NaN; :func:`_command`). Motor
    j pulls with at most ``max_tension[j] * (1 - v / max_speed[j])`` while its spool reels in at ``v > 0``
    (a DC motor's torque-speed line), at most ``max_tension[j]`` otherwise, never below 0.

    Spools (``spool_mass > 0``; ``spool (n_t, 2)``: each spool's paid-out length and its rate, NaN: take
    the tendon's). A taut tendon moves with its spool: its tension is the motor's force plus the spool's
    inertia, ``T = F + spool_mass (Ld_next - v_spool) / dt``, the diagonal of ``S``: a spool running
    slower than the path is jerked along (an impact), one running faster leaves the tendon slack. A
    tendon whose path is shorter than its spool's length is slack (no tension, no coupling); its spool
    runs on under its motor. Without spool mass the tension is the motor's force and the spool the path.
    """
    nt = L.shape[0]
    S[:, :] = 0.0
    avail = cap
    reel = np.empty(nt)  # the spools' reel-in speeds
    for j in range(nt):
        if np.isnan(spool[j, 0]) or spool_mass[j] == 0.0:
            spool[j, 0], spool[j, 1] = L[j], Ld[j]
        reel[j] = -spool[j, 1]
        v = reel[j]
        avail[j] = max_tension[j] * min(1.0, max(0.0, 1.0 - v / max_speed[j])) if v > 0.0 else max_tension[j]
    if mode == 0:
        F[:] = 0.0
        T[:] = 0.0
        return
    if mode == 3:  # forces as set, pushing too, no coupling: chambers (pccbullet.sim.limb.chambers)
        for j in range(nt):
            F[j] = T_set[j]
            T[j] = T_set[j]
        return
    if mode == 1:
        for j in range(nt):
            F[j] = T_set[j]
        _limit(F, reel, avail, max_tension, max_speed, dt, S)
    else:
        tau_d = np.empty(nt)
        for k in range(set_start.shape[0] - 1):
            for j in range(set_start[k], set_start[k + 1]):
                tau_d[j] = gains[k, TAU_D]
        e = np.empty(nt)
        ep = np.empty(nt)
        for j in range(nt):
            ep[j] = L[j] - L_ref[j]
            e[j] = ep[j] + (dt + tau_d[j]) * Ld[j]
        _command(e, T_set, set_start, set_seg, P, Rseg, b, Mff, integ, gains, pretension, F)
        # how the forces change with the errors (piecewise linear: exact within the pieces), for the step
        probe = np.empty(nt)
        de = 1e-7
        for c in range(nt):
            e[c] += de
            _command(e, T_set, set_start, set_seg, P, Rseg, b, Mff, integ, gains, pretension, probe)
            e[c] -= de
            for r in range(nt):
                S[r, c] = (probe[r] - F[r]) / de * (dt * dt + tau_d[c] * dt)
        saturated = np.zeros(set_start.shape[0] - 1, dtype=np.bool_)
        for k in range(set_start.shape[0] - 1):
            for j in range(set_start[k], set_start[k + 1]):
                saturated[k] = saturated[k] or F[j] >= avail[j]
        _limit(F, reel, avail, max_tension, max_speed, dt, S)
        for k in range(set_start.shape[0] - 1):  # integrate the position errors, not while saturated or held
            if saturated[k] or not np.isnan(T_set[set_start[k]]):
                continue
            lo, hi = set_start[k], set_start[k + 1]
            for r in range(3):
                acc = 0.0
                for j in range(lo, hi):
                    acc += P[r, j] * ep[j]
                integ[k, r] += dt * acc
            if gains[k, KI_LENGTH] * integ[k, 2] < 0.0:
                integ[k, 2] = 0.0  # the compression's integral never pushes
    for j in range(nt):
        m = spool_mass[j]
        if m > 0.0 and spool[j, 0] - L[j] > SLACK:
            T[j] = 0.0  # slack: the path is shorter than the spool's length
            S[j, :] = 0.0
        else:
            T[j] = F[j] + m * (Ld[j] - spool[j, 1]) / dt
            S[j, j] += m


@numba.njit(cache=True)
def advance_spools(L, Ld, G, qdd, F, T, spool_mass, spool, dt) -> None:
    """Move the spools over the step: a taut tendon's with its path (rate ``Ld + dt G qdd``), a slack
    one's under its motor's force alone."""
    for j in range(L.shape[0]):
        rate = Ld[j]
        for i in range(qdd.shape[0]):
            rate += dt * G[j, i] * qdd[i]
        m = spool_mass[j]
        if m == 0.0 or T[j] > 0.0:
            spool[j, 0], spool[j, 1] = L[j] + dt * rate, rate
        else:
            spool[j, 1] -= dt * F[j] / m
            spool[j, 0] += dt * spool[j, 1]


@numba.njit(cache=True)
def static_load(parent, jtype, dof, qpos, params, q, gravity, target, K, out) -> None:
    """The generalized force ``out (n_dof,)`` the joints' springs, gravity and buoyancy put on a chain held
    still at the position vector ``q``: what the tendons must balance there (``-tG^T T + out = 0``)."""
    n = parent.shape[0]
    nd = out.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    _kinematics(parent, jtype, qpos, params, q, R, p)
    h = np.zeros(nd)
    tau_f = np.zeros(nd)
    loads = np.empty((2, n, 3))
    zero = np.zeros(nd)
    _bias_and_fluid(parent, jtype, dof, params, zero, gravity, R, p, h, tau_f, loads)
    arm = np.zeros((nd, 3))
    joint_springs(parent, jtype, dof, qpos, params, R, loads, q, zero, target, K, zero, 0.0, out, arm)
    for j in range(nd):
        out[j] += tau_f[j] - h[j]


@numba.njit(cache=True)
def limb_torques(
    parent, jtype, dof, qpos, params, q, qd, gravity, target, offset, K, C, dt, tau, qdd, memory, td
) -> None:
    """:func:`moving_limb_torques` on a fixed base (the limbs of a :class:`~pccbullet.sim.world.World`
    without a moving body)."""
    moving_limb_torques(
        parent, jtype, dof, qpos, params, q, qd, gravity, AT_REST, target, offset, K, C, dt, tau, qdd, memory,
        td,
    )  # fmt: skip


@numba.njit(cache=True)
def moving_limb_torques(
    parent, jtype, dof, qpos, params, q, qd, gravity, base, target, offset, K, C, dt, tau, qdd, memory, td
) -> None:
    """One step of a compliant limb with its tendons on a base moving with ``base (4, 3)`` (angular
    velocity, velocity, angular acceleration, acceleration of the base frame; absolute, base axes; all zero:
    a fixed base, :func:`limb_torques`): the tendons' lengths and tensions
    (:func:`tendon_geometry`, :func:`tendon_tensions`), then the implicit step with them
    (:func:`pccbullet.sim.limb.chain.solve.spring_torques`); the motor forces are left in ``td``'s ``F``, the
    tendon tensions the step applies in its ``T``, their running maximum in its ``peak``. ``td``: the
    tendon arrays of :class:`pccbullet.sim.limb.tendons.TendonDrive` (empty ones for a limb without
    tendons), ending with the rows, forces and coupling of held ends (:mod:`pccbullet.sim.limb.chain.ends`;
    solved with the tendons' rows, their forces left in the fourth-last array)."""
    (node_q, node_u, chord_q, chord_u, W, Wc, L, Ld, G, L_ref, T_set, set_start, set_seg, P, Rseg, b, Mff,
     integ, gains, pretension, max_tension, max_speed, spool_mass, F, T, S, cap, peak, spool,
     mode, hG, hT, hS) = td  # fmt: skip
    if L.shape[0] > 0:
        tendon_geometry(q, qd, node_q, node_u, chord_q, chord_u, W, Wc, L, Ld, G)
        tendon_tensions(
            mode[0], L, Ld, L_ref, T_set, set_start, set_seg, P, Rseg, b, Mff, integ, gains, pretension,
            max_tension, max_speed, spool_mass, spool, dt, F, T, S, cap,
        )  # fmt: skip
    nt, nh = T.shape[0], hT.shape[0]
    if nh == 0:
        moving_spring_torques(
            parent, jtype, dof, qpos, params, q, qd, gravity, base, target, offset, K, C, dt, tau, qdd,
            memory, G, T, S,
        )  # fmt: skip
    else:  # held ends (pccbullet.sim.limb.chain.ends): their rows after the tendons', one coupled solve
        Gc = np.empty((nt + nh, G.shape[1]))
        Tc = np.empty(nt + nh)
        Sc = np.zeros((nt + nh, nt + nh))
        Gc[:nt], Gc[nt:], Tc[:nt], Tc[nt:] = G, hG, T, hT
        Sc[:nt, :nt], Sc[nt:, nt:] = S, hS
        moving_spring_torques(
            parent, jtype, dof, qpos, params, q, qd, gravity, base, target, offset, K, C, dt, tau, qdd,
            memory, Gc, Tc, Sc,
        )  # fmt: skip
        T[:], hT[:] = Tc[:nt], Tc[nt:]
    if L.shape[0] > 0:
        advance_spools(L, Ld, G, qdd, F, T, spool_mass, spool, dt)
    for j in range(T.shape[0]):
        peak[j] = max(peak[j], T[j])
