"""A limb's far end held: pinned or clamped to a point of the world, or driven along a prescribed path.

The hold is a stiff spring-damper on the end's position (``"pinned"``) or its position and orientation
(``"clamped"``), solved inside the limb's one implicit step: its rows ``G`` (the generalized forces of a
unit force along each base axis at the end point, and of a unit moment about each) enter
:func:`pccbullet.sim.limb.chain.solve.spring_torques` through the same low-rank (Woodbury) coupling as a
tendon, with the spring's force ``T = T0 + S G qdd`` at the end of the step: ``T0 = k (e + dt v) + c (v -
v0)`` for the deviation ``e`` of the end from where its anchor will be at the step's end, its velocity
``v`` and the anchor's ``v0``, ``S = (dt^2 k + dt c)``: the stiffness and the damping act on the positions
and velocities the step ends with, as the joint springs' do, so a stiff hold is stable at 1 ms. A tendon
only pulls (a negative tension is dropped); a hold pushes as well, so each row carries a bias ``B`` in its
force that the limb's offset takes back (``G^T B``), which keeps every row's force positive in the solve.

A limb with tendons solves the hold's rows with the tendons' (one coupled system). Limits: the hold's
reaction does not act on a body (the anchor is a pose, not a body's point); a limb PyBullet holds in
parts (:mod:`pccbullet.sim.limb.parts`, e.g. the stiff test rod at N = 40) passes the hold's stiff force
through the parts' fixed constraint, which PyBullet's iterative solver resolves: the static answer is
right, the reaction chatters (0.2 N on 1 N there).

The anchor is a world pose, or a path: a function of the time since the hold was set returning the
anchor's world pose ``(4, 4)`` (a driven end; its velocity by a difference over one step). The reaction
the hold exerts on the limb is :attr:`EndHold.force` and :attr:`EndHold.moment` (world axes) after a step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from pccbullet.core.types import Choice, FloatArray
from pccbullet.sim.limb.chain.kernels import _kinematics, _transmit, joint_axes
from pccbullet.sim.limb.chain.rigid import ChainModel

BIAS = 1e6  # N (N m for a moment row): keeps a hold's rows pulling in the tendons' solve; exact to ~1e-10 N


class Hold(Choice):
    """How an end is held: ``"pinned"`` (its point, free to turn) or ``"clamped"`` (point and orientation)."""

    PINNED = "pinned"
    CLAMPED = "clamped"

    @property
    def rows(self) -> int:
        """Constraint rows: 3 forces, plus 3 moments when clamped."""
        return 3 if self is Hold.PINNED else 6


@dataclass(eq=False, slots=True)
class EndHold:
    """A held end of a compliant limb (:func:`end_rows` turns it into the step's rows).

    Attributes:
        limb: the limb's name.
        link: the held link (the limb's tip frame).
        index: its index in the limb's chain model.
        hold: :class:`Hold`.
        anchor: the anchor's world pose ``(4, 4) float``, or a path ``t -> (4, 4)`` (t: s since the hold
            was set).
        stiffness: ``(k, k_rot)``: N/m and N m/rad.
        damping: ``(c, c_rot)``: N s/m and N m s/rad.
        time: s since the hold was set (the steps taken).
        force: the hold's force on the limb after the last step ``(3,)`` (N, world axes).
        moment: its moment ``(3,)`` (N m, world axes; zero when pinned).
    """

    limb: str
    link: str
    index: int
    hold: Hold
    anchor: FloatArray | Callable[[float], FloatArray]
    stiffness: tuple[float, float]
    damping: tuple[float, float]
    time: float = 0.0
    force: FloatArray = field(default_factory=lambda: np.zeros(3))
    moment: FloatArray = field(default_factory=lambda: np.zeros(3))

    def pose(self, t: float) -> FloatArray:
        """The anchor's world pose ``(4, 4)`` at ``t`` (s since the hold was set)."""
        return np.asarray(self.anchor(t) if callable(self.anchor) else self.anchor, dtype=float)


HOLD_ARRAYS = slice(30, 33)  # where a limb's step arrays keep the holds' rows, forces and coupling


def no_holds(n_dof: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The rows, forces and coupling of held ends a limb's step arrays end with, for none."""
    return np.zeros((0, n_dof)), np.zeros(0), np.zeros((0, 0))


def hold_arrays(td: tuple, ends: list[EndHold]) -> tuple:
    """A limb's step arrays ``td`` (:func:`pccbullet.sim.limb.chain.tendons.limb_torques`) with room for
    ``ends``' rows ``G``, forces ``T`` and coupling ``S`` in their last three (the tendons' are shared)."""
    m, n_dof = sum(end.hold.rows for end in ends), td[8].shape[1]
    return (*td[: HOLD_ARRAYS.start], np.zeros((m, n_dof)), np.zeros(m), np.zeros((m, m)))


def end_rows(
    chain: ChainModel,
    q: FloatArray,
    qd: FloatArray,
    ends: list[EndHold],
    T_world_base: FloatArray,
    dt: float,
    G: FloatArray,
    T: FloatArray,
    S: FloatArray,
) -> FloatArray:
    """Fill the rows ``G (m, n_dof)``, the forces ``T (m,)`` (bias included) and the coupling ``S (m, m)``
    of ``ends`` for the step from ``q (n_q,)``, ``qd (n_dof,)``; return the offset ``G^T B`` ``(n_dof,)``
    that takes the biases back. ``T_world_base``: the limb base's world pose (the chain's frame)."""
    n = len(chain.links)
    R, p = np.zeros((n, 3, 3)), np.zeros((n, 3))
    _kinematics(chain.parent, chain.jtype, chain.qpos, chain.params, q, R, p)
    axes = np.zeros((chain.n_dof, 6))
    joint_axes(chain.jtype, chain.dof, chain.params, R, p, axes)
    R_bw, p_w = T_world_base[:3, :3].T, T_world_base[:3, 3]
    S[:, :] = 0.0
    row = 0
    for end in ends:
        i = end.index
        now, nxt = end.pose(end.time), end.pose(end.time + dt)
        x0, x1 = R_bw @ (now[:3, 3] - p_w), R_bw @ (nxt[:3, 3] - p_w)
        for k in range(end.hold.rows):
            F = np.zeros((n, 6))
            if k < 3:  # a unit force along base axis k at the end's origin
                F[i, :3] = np.cross(p[i], np.eye(3)[k])
                F[i, 3 + k] = 1.0
            else:  # a unit moment about base axis k - 3
                F[i, k - 3] = 1.0
            _transmit(chain.parent, chain.jtype, chain.dof, axes, F, G[row + k])
        g = G[row : row + 3]
        v, v0 = g @ qd, (x1 - x0) / dt
        k_lin, c_lin = end.stiffness[0], end.damping[0]
        T[row : row + 3] = k_lin * (p[i] + dt * v - x1) + c_lin * (v - v0)
        for k in range(3):
            S[row + k, row + k] = dt * dt * k_lin + dt * c_lin
        if end.hold is Hold.CLAMPED:
            g = G[row + 3 : row + 6]
            w = g @ qd
            R0, R1 = R_bw @ now[:3, :3], R_bw @ nxt[:3, :3]
            w0 = Rotation.from_matrix(R1 @ R0.T).as_rotvec() / dt
            k_rot, c_rot = end.stiffness[1], end.damping[1]
            tilt = Rotation.from_matrix(
                R[i] @ R1.T
            ).as_rotvec()  # base axes: how far the end is turned from the anchor
            T[row + 3 : row + 6] = k_rot * (tilt + dt * w) + c_rot * (w - w0)  # tilt: from R1 already
            for k in range(3, 6):
                S[row + k, row + k] = dt * dt * k_rot + dt * c_rot
        row += end.hold.rows
    T += BIAS
    return G.T @ np.full(len(T), BIAS)


def read_reactions(ends: list[EndHold], T: FloatArray, R_world_base: FloatArray, dt: float) -> None:
    """After a step: each end's force and moment on the limb (world axes, from the solved row forces ``T``,
    bias included) and its clock one step on."""
    row = 0
    for end in ends:
        force = T[row : row + end.hold.rows] - BIAS
        end.force = -R_world_base @ force[:3]
        end.moment = -R_world_base @ force[3:6] if end.hold is Hold.CLAMPED else np.zeros(3)
        end.time += dt
        row += end.hold.rows
