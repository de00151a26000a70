"""Axial extension of fluid-chamber sections (seed 000, sec. 2.2.2 eq. 10 and sec. 3.1).

Seed 000 separates the axial elasticity of a section from its bending: the elastic force along the axis is
``f_e = E A_s sum_j (l_j - l_0)`` over the three soft units (``A_s`` the cross-section of a unit's annular
elastomer wall, Table 1), the driving force ``A_d sum_j P_j`` (``A_d`` the unit's effective inner area,
Table 1), and the bending moment ``K kappa`` with the section's ``E I``. :class:`LimbModel` ties both to one
solid disk (``E pi r^2`` along the axis); :class:`ChamberWallLimb` keeps that disk for bending and torsion
and gives the axial strain the stiffness of the chamber walls.

Wall law. The units are fabric-reinforced: the fabric holds a unit's circumference, the elastomer wall
(nearly incompressible) then stretches in planar tension (pure shear) rather than uniaxially. For a
neo-Hookean solid with small-strain modulus ``E`` (shear modulus ``E / 3``) the nominal axial force of
one wall at stretch ``lambda = 1 + eps`` is::

    N(lambda) = (E / 3) A_s (lambda - lambda^-3)          (planar tension; slope 4 E A_s / 3 at rest)

``law = "linear"`` gives the paper's eq. 10 literally, ``N = E A_s eps``. The linear part
``K_eps = l_0 * dN/deps(0) * count`` stays in ``K`` (the integrators treat it implicitly); the nonlinear
remainder enters the generalized forces ``Q`` returned by :meth:`ChamberWallLimb.dynamics`.
"""

from __future__ import annotations

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.sim.models.strain_model import Loads, Vec
from pccbullet.urdf_gen.specs import LimbSpec

LAWS = ("planar_neo_hookean", "linear")
_MIN_STRETCH = 0.05  # -, floor of lambda in the wall law (a wall cannot be squeezed to zero length)


class ChamberWallLimb(LimbModel):
    """A :class:`LimbModel` whose axial strain is resisted by the chamber walls only.

    Args:
        limb: the limb spec; its ``actuators.count`` is the number of walls per section.
        pieces_per_segment: n, pieces of each segment.
        wall_area: ``A_s``, cross-section of one chamber's elastomer wall (m^2), > 0.
        law: ``"planar_neo_hookean"`` (default, fabric-reinforced wall) or ``"linear"`` (eq. 10).
        **kwargs: passed to :class:`LimbModel` (gravity, medium, damping_ratio).

    Attributes:
        wall_rigidity: ``count * E * A_s`` (N), the paper's axial rigidity of a section (eq. 10).
        axial_stiffness: small-strain axial stiffness of a section (N): ``4/3`` of ``wall_rigidity``
            for the planar law, equal to it for the linear law.
    """

    def __init__(
        self,
        limb: LimbSpec,
        pieces_per_segment: int = 10,
        *,
        wall_area: float,
        law: str = "planar_neo_hookean",
        **kwargs: object,
    ) -> None:
        if law not in LAWS:
            raise ConfigurationError(f"law = {law!r} is invalid; allowed: {', '.join(LAWS)}")
        if not (isinstance(wall_area, int | float) and wall_area > 0.0 and np.isfinite(wall_area)):
            raise ConfigurationError(
                f"wall_area = {wall_area!r} is invalid; allowed: a finite area > 0 (m^2)"
            )
        if limb.actuators is None or limb.actuators.count < 1:
            raise ConfigurationError(f"limb '{limb.name}' has no chambers")
        super().__init__(limb, pieces_per_segment, **kwargs)  # type: ignore[arg-type]
        self.law = law
        self.wall_rigidity = limb.actuators.count * limb.material.youngs_modulus * float(wall_area)
        self.axial_stiffness = self.wall_rigidity * (4.0 / 3.0 if law == "planar_neo_hookean" else 1.0)
        K = self.K.copy()
        K[0::4] = self.l0 * self.axial_stiffness
        self.K = K
        self.D = self.beta * K

    def axial_force(self, eps: FloatArray) -> FloatArray:
        """Axial force of a section's walls (N) at axial strain ``eps`` (any shape)."""
        eps = np.asarray(eps, dtype=float)
        if self.law == "linear":
            return self.wall_rigidity * eps
        lam = np.maximum(1.0 + eps, _MIN_STRETCH)
        return self.wall_rigidity / 3.0 * (lam - lam**-3)

    def _dynamics(self, q: Vec, qd: Vec, loads: Loads, with_mass: bool) -> tuple[FloatArray | None, Vec]:
        """As :meth:`LimbModel.dynamics`, plus the nonlinear part of the wall force in ``Q``."""
        M, Q = super()._dynamics(q, qd, loads, with_mass)
        if self.law == "linear":
            return M, Q
        eps = np.asarray(q, dtype=float)[0::4]
        Q = Q.copy()
        Q[0::4] -= self.l0 * (self.axial_force(eps) - self.axial_stiffness * eps)
        return M, Q

    def energy(self, q: FloatArray, qd: FloatArray) -> float:
        """As :meth:`LimbModel.energy` with the wall law's strain energy in place of the linear one."""
        base = super().energy(q, qd)
        eps = np.asarray(q, dtype=float)[0::4]
        if self.law == "linear":
            return base
        lam = np.maximum(1.0 + eps, _MIN_STRETCH)
        # W(lambda) = (E A_s count / 3) l0 (lambda^2/2 + lambda^-2/2 - 1): its derivative is N(lambda) l0
        wall = float(np.sum(self.l0 * self.wall_rigidity / 3.0 * (0.5 * lam**2 + 0.5 * lam**-2 - 1.0)))
        return base - 0.5 * float(np.sum(self.K[0::4] * eps * eps)) + wall
