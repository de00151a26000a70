"""First bending frequencies of a tapered Euler–Bernoulli cantilever with a rigid tip body (finite elements).

A helper of ``62_elastica_3d_reference.py`` (importable by path, no PyElastica needed). The beam is a
frustum of circular cross-section (radius linear from ``radius_base`` at the clamp to ``radius_tip``),
``EI(x) = E pi r^4 / 4``, mass per length ``(rho + C_a rho_f) pi r^2``: the added mass of the fluid
``C_a rho_f A`` per length across the axis (Morison; :class:`pccbullet.sim.medium.Medium` gives ``rho_f`` and
``C_a``). Elements: Hermite cubics (deflection and slope per node); the element matrices are integrated by
6-point Gauss quadrature, exact for these polynomial ``EI`` (degree 4) and ``A`` (degree 2), so the only
error is the element's (frequencies converge as ``h^4``). Optional: the rod's rotary inertia
``rho I(x)`` per length (a Rayleigh beam; off by default, Euler–Bernoulli proper).

The tip body: mass ``m`` whose centre sits ``e`` beyond the tip along the tip tangent, with rotary
inertia ``I_c`` about its centre: kinetic energy ``1/2 m (w' + e theta')^2 + 1/2 I_c theta'^2`` with
``w``, ``theta`` the tip node's deflection and slope. ``e = I_c = 0`` is a point mass at the tip.
The generalized eigenproblem ``K v = omega^2 M v`` is solved by ``scipy.linalg.eigh`` after a symmetric
diagonal scaling (``D K D``, ``D M D`` with ``D = diag(K)^-1/2``) that keeps it well conditioned at 200
elements (without it the n = 200 frequency wanders by ~1e-6 relative from round-off).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh


@dataclass(frozen=True)
class TaperedCantilever:
    """A clamped-free frustum beam with a rigid tip body (SI units).

    Attributes:
        length: L (m). radius_base, radius_tip: frustum radii (m). youngs_modulus: E (Pa).
        density: rho of the beam (kg/m^3). added_density: ``C_a rho_f`` (kg/m^3), the fluid's added mass
        per beam volume (transverse only). tip_mass: m (kg). tip_offset: e (m) beyond the tip along the
        tangent. tip_inertia: I_c (kg m^2) about the body's centre, about an axis across the beam.
        rotary_inertia: include the beam's own ``rho I`` rotary inertia (a Rayleigh beam).
    """

    length: float
    radius_base: float
    radius_tip: float
    youngs_modulus: float
    density: float
    added_density: float = 0.0
    tip_mass: float = 0.0
    tip_offset: float = 0.0
    tip_inertia: float = 0.0
    rotary_inertia: bool = False

    def matrices(self, n_elements: int) -> tuple[np.ndarray, np.ndarray]:
        """Stiffness and mass matrices ``(2n, 2n)`` with the clamp's two DOFs removed."""
        n, L = n_elements, self.length
        h = L / n
        size = 2 * (n + 1)
        K = np.zeros((size, size))
        M = np.zeros((size, size))
        xi, wq = np.polynomial.legendre.leggauss(6)
        t = 0.5 * (xi + 1.0)
        w = 0.5 * h * wq
        # Hermite shape functions on [0, 1] (DOFs: w0, theta0, w1, theta1) and their x-derivatives
        N = np.stack(
            [1 - 3 * t**2 + 2 * t**3, h * (t - 2 * t**2 + t**3), 3 * t**2 - 2 * t**3, h * (t**3 - t**2)]
        )
        dN = (
            np.stack([6 * (t**2 - t), h * (1 - 4 * t + 3 * t**2), 6 * (t - t**2), h * (3 * t**2 - 2 * t)]) / h
        )
        B = np.stack([12 * t - 6, h * (6 * t - 4), 6 - 12 * t, h * (6 * t - 2)]) / h**2
        for k in range(n):
            x = (k + t) * h
            r = self.radius_base + (self.radius_tip - self.radius_base) * x / L
            area, second = math.pi * r**2, math.pi * r**4 / 4.0
            ke = (B * (self.youngs_modulus * second * w)) @ B.T
            me = (N * ((self.density + self.added_density) * area * w)) @ N.T
            if self.rotary_inertia:
                me += (dN * (self.density * second * w)) @ dN.T
            sl = slice(2 * k, 2 * k + 4)
            K[sl, sl] += ke
            M[sl, sl] += me
        m, e = self.tip_mass, self.tip_offset
        M[-2:, -2:] += np.array([[m, m * e], [m * e, m * e * e + self.tip_inertia]])
        return K[2:, 2:], M[2:, 2:]

    def frequencies(self, n_elements: int, count: int = 2) -> np.ndarray:
        """The lowest ``count`` natural frequencies (Hz), ``(count,)``."""
        K, M = self.matrices(n_elements)
        d = 1.0 / np.sqrt(np.diag(K))
        size = len(K)
        # M v = mu K v with mu = 1 / omega^2: the lowest modes are the largest mu, which round-off
        # perturbs only relative to themselves (K v = omega^2 M v loses ~1e-6 of omega_1 at n = 200)
        mu = eigh(
            d[:, None] * M * d,
            d[:, None] * K * d,
            eigvals_only=True,
            subset_by_index=[size - count, size - 1],
        )
        return 1.0 / np.sqrt(mu[::-1]) / (2.0 * math.pi)

    def first_mode(self, n_elements: int) -> tuple[np.ndarray, np.ndarray]:
        """First mode at the ``n + 1`` equally spaced nodes: deflection (tip = 1) and slope (1/m),
        ``(n + 1,)`` each, clamp included (zeros)."""
        K, M = self.matrices(n_elements)
        d = 1.0 / np.sqrt(np.diag(K))
        size = len(K)
        _, v = eigh(d[:, None] * M * d, d[:, None] * K * d, subset_by_index=[size - 1, size - 1])
        u = np.concatenate([[0.0, 0.0], d * v[:, 0]])
        u /= u[-2]
        return u[0::2], u[1::2]
