"""Scalar kernels of the rolling-snake static model (seed 003): joint geometry, eq. (16), Algorithms 1-4.

Everything here works on plain Python floats and tuples (``math`` only): for the 5-11 joints of the
paper's robots this is several times faster than numpy on tiny arrays.
:mod:`pccbullet.sim.models.rolling_snake.model` wraps these kernels in the typed public API.

Frames (our convention, documented in :mod:`pccbullet.urdf_gen.rolling_snake.spec`): link frame ``{i}`` sits
at the centre of link ``i`` with z along the link towards the tip; in the straight pose every link frame is
parallel to the world frame, whose origin is the centre of the base link's bottom face. Joint ``k``
bends about ``a_k = (-sin psi_k, cos psi_k, 0)``; positive ``theta_k`` tilts the distal links towards
``b_k = (cos psi_k, sin psi_k, 0)``.

Rolling-joint geometry (``L`` link length, ``R`` contact radius, ``h0 = L/2 - R``): the transform from
link ``k + 1`` to link ``k`` is ``T(h0 z) Ra(theta/2) T(2R z) Ra(theta/2) T(h0 z)``; the contact point
in the upper frame is ``R sin(theta/2) b - (h0 + R cos(theta/2)) z``; a cable at signed distance ``d``
from the joint's neutral plane spans ``2 (R - d sin(theta/2) - sqrt(R^2 - d^2) cos(theta/2))``.
"""

from __future__ import annotations

import math

Vec = tuple[float, float, float]


def rot_about(cp: float, sp: float, ct: float, st: float, v: Vec) -> Vec:
    """``Ra(theta) @ v``: rotate ``v`` by theta about ``a = Rz(psi) y`` (cp, sp = cos, sin psi)."""
    x, y, z = v
    vb = x * cp + y * sp
    va = -x * sp + y * cp
    nb = vb * ct + z * st
    nz = -vb * st + z * ct
    return (nb * cp - va * sp, nb * sp + va * cp, nz)


def joint_offset(cp: float, sp: float, h0: float, big_r: float, theta: float) -> Vec:
    """Origin of link ``k + 1`` in frame ``{k}`` for joint angle ``theta`` (rad), ``(3,)`` in m."""
    s2 = math.sin(0.5 * theta)
    c2 = math.cos(0.5 * theta)
    pb = 2.0 * big_r * s2 + h0 * math.sin(theta)
    pz = h0 + 2.0 * big_r * c2 + h0 * math.cos(theta)
    return (pb * cp, pb * sp, pz)


def cable_sums(
    phases: tuple[float, ...], tensions: tuple[float, ...], psi: float, r: float, big_r: float
) -> tuple[float, float]:
    """``(sum T_j h_j, sum T_j d_j)`` of one joint with bending-plane angle ``psi`` (N m).

    ``d_j = r cos(phi_j - psi)`` is the cable's signed distance from the neutral plane, ``h_j =
    sqrt(R^2 - d_j^2)`` the height of its exit point above the contact cylinder's axis.
    """
    sh = 0.0
    sd = 0.0
    for phi, t in zip(phases, tensions, strict=True):
        d = r * math.cos(phi - psi)
        sh += t * math.sqrt(big_r * big_r - d * d)
        sd += t * d
    return sh, sd


def solve_eq16(a: float, b: float, c: float, previous: float, limit: float) -> float:
    """Root ``theta`` of ``a sin(theta/2) + b cos(theta/2) + c = 0`` (seed 003, eq. 16), analytically.

    Of the (up to two) roots with ``|theta| < limit`` the one closest to ``previous`` is returned;
    ``nan`` if there is none.
    """
    rho = math.hypot(a, b)
    if rho == 0.0 or abs(c) > rho:
        return math.nan
    # a sin x + b cos x = rho sin(x + phi0), phi0 = atan2(b, a)
    phi0 = math.atan2(b, a)
    base = math.asin(-c / rho)
    best = math.nan
    best_dist = math.inf
    for x in (base - phi0, math.pi - base - phi0):
        x = (x + math.pi) % (2.0 * math.pi) - math.pi  # half angle in [-pi, pi)
        theta = 2.0 * x
        if abs(theta) < limit and abs(theta - previous) < best_dist:
            best, best_dist = theta, abs(theta - previous)
    return best


def closest_eq16(a: float, b: float, c: float, limit: float) -> float:
    """Where ``a sin(theta/2) + b cos(theta/2)`` comes closest to ``-c`` (used when eq. 16 has no root).

    The result is clipped to ``|theta| <= limit``.
    """
    x = math.copysign(0.5 * math.pi, -c) - math.atan2(b, a)
    x = (x + math.pi) % (2.0 * math.pi) - math.pi
    return max(-limit, min(limit, 2.0 * x))


class Kernel:
    """Precomputed constants of one robot and one set of cable tensions.

    Args:
        n_links: number of links ``n``.
        length: link length ``L`` (m).
        big_r: contact radius ``R`` (m).
        psis: bending-plane angle of joints 1..n-1 (rad), length ``n - 1``.
        sums: ``(sum T h, sum T d)`` of joints 1..n-1 from :func:`cable_sums`.
        weight: gravity force on one link in the world frame (N), ``(3,)``.
    """

    __slots__ = ("n", "half", "h0", "big_r", "cps", "sps", "sh", "sd", "weight", "limit", "clamped")

    def __init__(
        self,
        n_links: int,
        length: float,
        big_r: float,
        psis: list[float],
        sums: list[tuple[float, float]],
        weight: Vec,
        limit: float = 0.5 * math.pi,
    ) -> None:
        self.n = n_links
        self.half = 0.5 * length
        self.h0 = 0.5 * length - big_r
        self.big_r = big_r
        self.cps = [math.cos(p) for p in psis]
        self.sps = [math.sin(p) for p in psis]
        self.sh = [s[0] for s in sums]
        self.sd = [s[1] for s in sums]
        self.weight = weight
        self.limit = limit
        self.clamped = False

    def no_gravity(self) -> list[float]:
        """Joint angles (rad) without gravity: ``tan(theta/2) = sum T d / sum T h`` per joint."""
        return [2.0 * math.atan2(sd, sh) for sh, sd in zip(self.sh, self.sd, strict=True)]

    def gravity_in_links(self, thetas: list[float]) -> list[Vec]:
        """Algorithm 1: the weight of one link expressed in each link frame ``{1} .. {n}`` (N)."""
        g = self.weight
        out = [g]
        for k, th in enumerate(thetas):
            g = rot_about(self.cps[k], self.sps[k], math.cos(th), -math.sin(th), g)
            out.append(g)
        return out

    def tip(self, thetas: list[float]) -> Vec:
        """Algorithm 3: tip position in the world frame (m) for joint angles ``thetas`` (rad)."""
        p = (0.0, 0.0, self.half)
        for k in range(self.n - 2, -1, -1):
            th = thetas[k]
            cp, sp = self.cps[k], self.sps[k]
            q = rot_about(cp, sp, math.cos(th), math.sin(th), p)
            o = joint_offset(cp, sp, self.h0, self.big_r, th)
            p = (q[0] + o[0], q[1] + o[1], q[2] + o[2])
        return (p[0], p[1], p[2] + self.half)

    def sweep(self, thetas: list[float], grav: list[Vec], out: list[float]) -> Vec:
        """Algorithm 2: backward evaluation of all joint angles with frozen link gravities.

        Joint ``k`` is solved from eq. (16) in the frame of link ``k + 1`` with the subchain's gravity
        resultant ``F`` and moment ``M`` (about the link origin) built from the angles already updated
        in this sweep. Writes the new angles into ``out`` and returns the resulting tip position in
        the world frame (m). A joint without an admissible root takes the angle of
        :func:`closest_eq16` and sets ``self.clamped`` (the sweep is then no equilibrium).
        """
        self.clamped = False
        big_r, h0, half = self.big_r, self.h0, self.half
        gn = grav[self.n - 1]
        fx, fy, fz = gn
        mx = my = mz = 0.0
        tx, ty, tz = 0.0, 0.0, half  # tip in the current frame
        for k in range(self.n - 2, -1, -1):
            cp, sp = self.cps[k], self.sps[k]
            f_b = fx * cp + fy * sp
            m_a = -mx * sp + my * cp
            a = self.sh[k] - big_r * fz
            b = -self.sd[k] - big_r * f_b
            c = -m_a - h0 * f_b
            th = solve_eq16(a, b, c, thetas[k], self.limit)
            if th != th:  # nan: no root
                th = closest_eq16(a, b, c, self.limit)
                self.clamped = True
            out[k] = th
            ct, st = math.cos(th), math.sin(th)
            s2, c2 = math.sin(0.5 * th), math.cos(0.5 * th)
            pb = 2.0 * big_r * s2 + h0 * st
            px, py, pz = pb * cp, pb * sp, h0 + 2.0 * big_r * c2 + h0 * ct
            # rotate F, M and the tip into frame {k} (inline rot_about for speed)
            vb = fx * cp + fy * sp
            va = -fx * sp + fy * cp
            nb = vb * ct + fz * st
            fz = -vb * st + fz * ct
            fx, fy = nb * cp - va * sp, nb * sp + va * cp
            vb = mx * cp + my * sp
            va = -mx * sp + my * cp
            nb = vb * ct + mz * st
            mz = -vb * st + mz * ct
            mx, my = nb * cp - va * sp, nb * sp + va * cp
            vb = tx * cp + ty * sp
            va = -tx * sp + ty * cp
            nb = vb * ct + tz * st
            tz = -vb * st + tz * ct + pz
            tx, ty = nb * cp - va * sp + px, nb * sp + va * cp + py
            # M += p x F (F already in frame {k}), then add link k's own weight at its origin
            mx += py * fz - pz * fy
            my += pz * fx - px * fz
            mz += px * fy - py * fx
            gk = grav[k]
            fx += gk[0]
            fy += gk[1]
            fz += gk[2]
        return (tx, ty, tz + half)
