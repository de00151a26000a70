"""Improved Newton–Euler dynamics of a soft limb (seed 000, Micromachines 13:130, sec. 2.1–2.2).

Model (seed 000's symbols in brackets). Each segment of a limb is cut into ``n`` pieces [segments i]
of rest length ``l0``; piece i has the strain state ``q_i = [eps_i, kx_i, ky_i, kz_i]`` (axial strain,
bending curvatures about x and y, torsion; see :mod:`pccbullet.sim.models.newton_euler.kinematics` for the
piece transform [H^{i-1}_i] and the curvature convention). The limb state is ``q`` ``(4 n_total,)`` and
``qd``.

* Lumped masses [m_i]: node i is the tip of piece i [mass at the top centre]. The frustum mass of each
  piece is split half to each of its end nodes (the base half of piece 1 sits on the fixed base), which
  makes gravity moments second-order accurate in 1/n (the paper puts the whole piece mass at its top,
  a first-order error of ~4/(3n) in a cantilever's tip deflection). Node inertia [I_i] is the paper's
  disk: ``Ix = Iy = m r^2 / 4``, ``Iz = m r^2 / 2`` with the local radius r (the URSULA frustum tapers).
  A tip payload adds its mass to the last node.
* Elastic forces [f_e, M_e = K_i q]: ``K_i = l0 diag(E A, E I, E I, G J)`` with ``A = pi r^2``,
  ``I = pi r^4 / 4``, ``J = pi r^4 / 2`` at the piece's mid radius: generalized force ``-K q``.
* Damping [d_v, d_w]: Kelvin–Voigt material damping ``-D qd`` with ``D = beta K``,
  ``beta = 2 zeta / omega_1`` (``zeta`` the material damping ratio at the estimated first bending mode).
* Gravity [G_i] and, in water, buoyancy ``-rho_w V g`` at each node, added mass ``C_a rho_w V`` (applied
  isotropically to the node's translational inertia) and Morison quadratic drag on the velocity normal
  to the backbone, ``f = -1/2 rho_w C_d (2 r l) |v_n| v_n`` with ``C_d = 1.2`` (circular cylinder,
  subcritical Reynolds number). Axial skin friction is neglected. The fluid is a
  :class:`pccbullet.sim.medium.Medium` (the record the PyBullet world reads too); ``C_d`` is its
  ``drag_normal``.
* External tip load [f_load, M_load]: force and moment at the last node, limb-base frame.
* Actuation [tau(p)]: generalized forces from :mod:`pccbullet.sim.models.actuators`.

Equations [M(q) q'' + C(q, q') q' + N(q) = tau]. Velocities and the velocity-product accelerations of
all nodes are propagated outwards (Newton–Euler forward recursion, vectorized with cumulative sums);
inertial, gravity, drag and load wrenches are summed inwards (backward recursion) and projected onto the
strain coordinates with the piece Jacobians (the paper's Jacobian projection). ``M(q)`` comes from the
composite-rigid-body algorithm (one ``(4n, 6) x (6, 4n)`` product). The result is split as::

    M(q) q'' = Q(q, q') + tau - K q - D q'

with ``Q`` = gravity, buoyancy, drag, load and Coriolis/centrifugal terms, so integrators can treat the
stiff linear ``K``, ``D`` terms implicitly (:mod:`pccbullet.sim.models.newton_euler.integrators`).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.medium import AIR, Medium
from pccbullet.sim.models.newton_euler import kernels as ne_kernels
from pccbullet.sim.models.newton_euler.batch_dynamics import ne_dynamics, solve_spd_lower
from pccbullet.sim.models.newton_euler.kinematics import chain_rotations, piece_pose
from pccbullet.sim.models.newton_euler.params import NEParams, kernel_loads
from pccbullet.sim.models.strain_model import Loads, Opt, Pair, StrainModel, Vec, implicit_rhs, theta_update
from pccbullet.urdf_gen.specs import LimbSpec

G_EARTH = 9.81  # m/s^2


def gravity_in_limb_base(
    limb: LimbSpec, g_head: tuple[float, float, float] = (0.0, 0.0, -G_EARTH)
) -> FloatArray:
    """Gravity ``(3,)`` (m/s^2) in the limb base frame, given in the head frame (head z up by default)."""
    return limb.T_head_base()[:3, :3].T @ np.asarray(g_head, dtype=float)


class LimbModel(StrainModel):
    """Newton–Euler strain-space model of one limb (see the module docstring).

    Args:
        limb: the limb spec (segments, frustum radii, material, payload).
        pieces_per_segment: n, pieces of each segment (>= 1).
        gravity: gravity in the limb base frame ``(3,)`` (m/s^2); default from the limb mount, head z up.
        medium: :data:`~pccbullet.sim.medium.VACUUM`, :data:`~pccbullet.sim.medium.AIR`,
            :data:`~pccbullet.sim.medium.SEAWATER` or a custom :class:`~pccbullet.sim.medium.Medium`.
        damping_ratio: overrides the material's damping ratio (-); 0 disables material damping.

    Attributes:
        n: number of pieces; dof = 4 n. l0 ``(n,)`` rest lengths (m). segment ``(n,)`` segment index.
        K, D: ``(4n,)`` diagonal stiffness and damping in strain coordinates.
    """

    def __init__(
        self,
        limb: LimbSpec,
        pieces_per_segment: int = 10,
        *,
        gravity: FloatArray | None = None,
        medium: Medium = AIR,
        damping_ratio: float | None = None,
    ) -> None:
        if not (isinstance(pieces_per_segment, int) and pieces_per_segment >= 1):
            raise ConfigurationError(
                f"pieces_per_segment = {pieces_per_segment!r} is invalid; allowed: an integer >= 1"
            )
        self.limb = limb
        self.medium = medium
        self.pieces_per_segment = pieces_per_segment
        mat = limb.material
        npc = pieces_per_segment
        l0, rb, rt, seg = [], [], [], []
        for s, sp in enumerate(limb.segments):
            f = np.arange(npc + 1) / npc
            radii = sp.radius_base + (sp.radius_tip - sp.radius_base) * f
            l0 += [sp.length / npc] * npc
            rb += list(radii[:-1])
            rt += list(radii[1:])
            seg += [s] * npc
        self.l0 = np.asarray(l0)
        self.segment = np.asarray(seg)
        self.n = n = len(self.l0)
        self.dof = 4 * n
        r0, r1 = np.asarray(rb), np.asarray(rt)
        rm = 0.5 * (r0 + r1)
        vol = math.pi * self.l0 / 3.0 * (r0 * r0 + r0 * r1 + r1 * r1)
        piece_mass = mat.density * vol
        # half of each piece to each end node; node i = tip of piece i
        self.mass = 0.5 * piece_mass + np.append(0.5 * piece_mass[1:], 0.0)
        self.volume = 0.5 * vol + np.append(0.5 * vol[1:], 0.0)
        self.drag_area = 0.5 * (2 * rm * self.l0) + np.append(0.5 * (2 * rm * self.l0)[1:], 0.0)
        if limb.payload is not None:
            self.mass[-1] += limb.payload.mass
        self.inertial_mass = self.mass + medium.added_mass_coefficient * medium.density * self.volume
        self.node_radius = r1
        self.inertia_body = self.mass[:, None] * (r1 * r1)[:, None] * np.array([0.25, 0.25, 0.5])
        E, G = mat.youngs_modulus, mat.shear_modulus
        area, second = math.pi * rm**2, math.pi * rm**4 / 4.0
        self.K = (
            self.l0[:, None] * np.stack([E * area, E * second, E * second, G * 2 * second], axis=1)
        ).ravel()
        zeta = mat.damping_ratio if damping_ratio is None else damping_ratio
        self.omega1 = self._first_mode_estimate()
        self.beta = 2.0 * zeta / self.omega1
        self.D = self.beta * self.K
        self.gravity = gravity_in_limb_base(limb) if gravity is None else np.asarray(gravity, dtype=float)
        blk = np.repeat(np.arange(n), 4)
        self._lower = blk[:, None] >= blk[None, :]

    def _first_mode_estimate(self) -> float:
        """First bending frequency (rad/s) of a uniform clamped rod with the limb's mean radius."""
        L = float(self.l0.sum())
        r = float(np.mean(self.node_radius))
        E, rho = self.limb.material.youngs_modulus, self.limb.material.density
        return 1.875**2 * math.sqrt(E * (r * r / 4.0) / (rho * L**4))

    # ------------------------------------------------------------------ kinematics
    def rest_state(self) -> FloatArray:
        """Straight, unstrained state ``(4n,)`` zeros."""
        return np.zeros(self.dof)

    def forward_kinematics(self, q: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Node frames in the limb base frame.

        Returns:
            positions ``(n + 1, 3)`` (m, row 0 the base) and rotations ``(n + 1, 3, 3)``.
        """
        R, p = piece_pose(np.asarray(q, dtype=float).reshape(self.n, 4), self.l0)
        Rw = chain_rotations(R)
        pos = np.zeros((self.n + 1, 3))
        pos[1:] = np.cumsum(np.einsum("nij,nj->ni", Rw[:-1], p), axis=0)
        return pos, Rw

    def tip_position(self, q: FloatArray) -> FloatArray:
        """Limb tip position ``(3,)`` (m) in the limb base frame."""
        return self.forward_kinematics(q)[0][-1]

    def segment_tip_positions(self, q: FloatArray) -> FloatArray:
        """Positions of every segment's tip ``(n_segments, 3)`` (m), limb base frame."""
        pos = self.forward_kinematics(q)[0]
        ends = np.flatnonzero(np.diff(np.append(self.segment, -1)) != 0) + 1
        return pos[ends]

    # ------------------------------------------------------------------ dynamics
    def batch_params(self) -> NEParams:
        """The model's node arrays as a one-limb :class:`~pccbullet.sim.models.newton_euler.params.NEParams`.

        Cached; rebuilt whenever one of ``l0, mass, volume, inertial_mass, inertia_body, drag_area,
        medium`` is rebound to a new object (arrays are not expected to be modified in place).
        """
        key = (
            self.l0,
            self.mass,
            self.volume,
            self.inertial_mass,
            self.inertia_body,
            self.drag_area,
            self.medium,
        )
        cached = getattr(self, "_prm_cache", None)
        if cached is not None and all(a is b for a, b in zip(cached[0], key, strict=True)):
            return cached[1]
        med = self.medium
        drag = None
        if med.drag_coefficient > 0.0:
            drag = (0.5 * med.density * med.drag_coefficient * self.drag_area)[None]
        prm = NEParams(
            self.l0[None],
            (self.mass - med.density * self.volume)[None],
            self.inertial_mass[None],
            self.inertia_body[None],
            drag,
            np.array([self.n - 1]),
        )
        prm._lower = self._lower
        self._prm_cache = (key, prm)
        return prm

    def _dynamics(self, q: Vec, qd: Vec, loads: Loads, with_mass: bool) -> tuple[FloatArray | None, Vec]:
        """:meth:`dynamics` by the fused kernel
        :func:`pccbullet.sim.models.newton_euler.batch_dynamics.ne_dynamics` (exact, analytic bias terms); its
        ``backend="numpy"`` is a vectorized evaluation of the same equations, the reference."""
        n = self.n
        tip_force, tip_moment = loads
        M, Q = ne_dynamics(
            self.batch_params(),
            np.asarray(q, dtype=float).reshape(1, n, 4),
            np.asarray(qd, dtype=float).reshape(1, n, 4),
            self.gravity[None],
            None if tip_force is None else np.asarray(tip_force, dtype=float).reshape(1, 3),
            None if tip_moment is None else np.asarray(tip_moment, dtype=float).reshape(1, 3),
            with_mass=with_mass,
        )
        return (None if M is None else M[0]), Q[0]

    def _acceleration(self, q: Vec, qd: Vec, tau: Opt, loads: Loads) -> Vec:
        M, Q = self._dynamics(q, qd, loads, True)
        assert M is not None  # with_mass=True
        rhs = Q - self.K * q - self.D * qd
        if tau is not None:
            rhs = rhs + tau
        return cast(Vec, np.linalg.solve(M, rhs))

    def _step(self, q: Vec, qd: Vec, dt: float, tau: Opt, theta: float, loads: Loads) -> Pair:
        """A plain limb: one call of the compiled
        :func:`pccbullet.sim.models.newton_euler.kernels.step_kernel`; a subclass with forces of its own, or a
        mass matrix that is not numerically positive definite there: its
        :meth:`dynamics` and a Cholesky solve (which falls back to LU)."""
        if type(self) is LimbModel:
            n = self.dof
            prm = self.batch_params()
            limbs, pieces = prm.packed()
            qn, qdn, _, ok = ne_kernels.step_kernel(
                limbs,
                pieces,
                kernel_loads(1, self.gravity, *loads),
                np.ascontiguousarray(q, dtype=float),
                np.ascontiguousarray(qd, dtype=float),
                np.zeros(n) if tau is None else np.ascontiguousarray(np.broadcast_to(tau, (n,)), dtype=float),
                np.ascontiguousarray(self.K, dtype=float),
                np.ascontiguousarray(self.D, dtype=float),
                float(dt),
                float(theta),
            )
            if ok:
                return qn, qdn
        M, Q = self._dynamics(q + 0.5 * dt * qd, qd, loads, True)
        assert M is not None  # with_mass=True
        rhs = implicit_rhs(self, Q, q, qd, tau, theta * dt)
        M.flat[:: len(M) + 1] += theta * dt * self.D + (theta * dt) ** 2 * self.K  # a fresh array
        return theta_update(q, qd, solve_spd_lower(M, rhs), dt, theta)  # M is SPD: Cholesky

    def energy(self, q: FloatArray, qd: FloatArray) -> float:
        """Kinetic + elastic + gravity/buoyancy potential energy (J); potential zero at the base."""
        M, _ = self.dynamics(q, np.zeros_like(q))
        assert M is not None  # with_mass=True
        pos = self.forward_kinematics(q)[0][1:]
        net = self.mass - self.medium.density * self.volume
        pot = -float(np.sum(net * (pos @ self.gravity)))
        return 0.5 * float(qd @ M @ qd) + 0.5 * float(np.sum(self.K * q * q)) + pot
