"""The equivalent chamber forces of a kinematic pressure law (seed 004): chambers whose robot file gives a
pressure-to-length law instead of a force.

Seed 004's extending actuators are modelled by a law ``l(P) = l0 + a P + b P^2`` (``[pressure_law]`` of the
robot file: ``length_per_bar_mm`` = a, ``length_per_bar2_mm`` = b; :mod:`pccbullet.urdf_gen.pressure_law`),
a kinematic map from pressure to length, not a force. A chamber driven by it pushes along its fibre with
the force that holds the law's shape against the rod's own springs. Per segment of ``n`` chambers evenly
spaced at offset ``r`` (moment directions ``b_i``), with ``k_a`` the segment's axial stiffness (its chords
in series) and ``k_b`` its bending stiffness (its nodes in series): the law's lengths ``l_i`` give the
segment's stretch ``dl = mean(l_i) - l0`` and its rotation ``Theta`` (``sum_i b_i (l_i - l0) = -r (n / 2)
Theta``, the PCC fibre lengths of :mod:`pccbullet.sim.limb.chain.tendons`, least squares for ``n > 3``);
the fibre forces that hold them, ``k_a dl = sum F_i`` and ``k_b Theta = -r sum F_i b_i``, are::

    F_i = k_a dl / n - (2 k_b / (n r)) b_i . Theta

This is exact for the rod's linear springs without gravity (planar bends: the nodes' rotation vectors add
up); gravity, shear and the springs' nonlinearity in a spatial bend make the shape differ from the law's
there, as a real robot's would. The stiffnesses are the rod's (the robot file's material and diameter), so
the forces are model quantities, not the actuators' measured forces; a force per unit pressure is not
defined (``F_i`` depends on every chamber of the segment unless ``k_a = 2 k_b / r^2``, the stiffness of
the ``n`` fibres alone).
"""

from __future__ import annotations

import numpy as np

from pccbullet.core.fields import Fields
from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec

BAR = 1e5  # Pa per bar
MM = 1e-3  # m per mm


class LengthLawForces:
    """The fibre forces ``(n_chambers,)`` (N, pushing positive) of a pressure-to-length law; see the module.

    Args:
        robot: the robot spec with the ``[pressure_law]`` table.
        limb: the limb (its chambers: ``actuators``; ``l0`` each segment's length).
        angles: each chamber's angle about its segment's base z (rad), segment by segment.
        K: the limb's joint stiffness ``(n_dof,)``.
        node_dofs, chord_dofs: per segment, the velocity index of each node and of each chord.
    """

    def __init__(
        self,
        robot: RobotSpec,
        limb: LimbSpec,
        angles: FloatArray,
        K: FloatArray,
        node_dofs: list[list[int]],
        chord_dofs: list[list[int]],
    ) -> None:
        source = robot.source if robot.source is not None else "<robot>"
        from pathlib import Path

        f = Fields(robot.extra["pressure_law"], Path(source), "pressure_law")
        self.a = f.number("length_per_bar_mm", -1e6, 1e6) * MM / BAR
        """``a`` (m/Pa)."""
        self.b = f.number("length_per_bar2_mm", -1e6, 1e6) * MM / BAR**2
        """``b`` (m/Pa^2)."""
        f.finish()
        act = limb.actuators
        assert act is not None
        self.count = act.count
        self.offset = act.offset
        self.directions = np.stack([-np.sin(angles), np.cos(angles)], axis=1)  # b_i, (n_chambers, 2)
        self.k_axial = np.array([1.0 / np.sum(1.0 / K[c]) for c in chord_dofs])
        """Each segment's axial stiffness (N/m)."""
        self.k_bend = np.array([1.0 / np.sum(1.0 / K[n]) for n in node_dofs])
        """Each segment's bending stiffness (N m/rad)."""

    def pressures_for(self, elongations: FloatArray) -> FloatArray:
        """The pressures (Pa, >= 0) whose law elongations are ``elongations`` (m), one per chamber."""
        return _quadratic_root(self.a, self.b, np.asarray(elongations, dtype=float))

    def lengths(self, pressures: FloatArray) -> FloatArray:
        """The law's fibre elongations ``l(P) - l0`` (m) at the pressures (Pa)."""
        p = np.asarray(pressures, dtype=float)
        return self.a * p + self.b * p * p

    def forces(self, pressures: FloatArray) -> FloatArray:
        """The fibre forces (N) that hold the law's shape at the chambers' ``pressures`` (Pa)."""
        n, r = self.count, self.offset
        dL = self.lengths(pressures).reshape(-1, n)
        b = self.directions.reshape(-1, n, 2)
        out = np.empty_like(dL)
        for s in range(dL.shape[0]):
            stretch = float(dL[s].mean())
            theta = -(2.0 / (n * r)) * (b[s].T @ dL[s])  # the segment's rotation vector (x, y)
            out[s] = self.k_axial[s] * stretch / n - (2.0 * self.k_bend[s] / (n * r)) * (b[s] @ theta)
        return out.reshape(-1)


class BendingLawForces:
    """The fibre forces ``(n_chambers,)`` (N) of a pressure-to-bend law (``[bending_law]``, seed 002): each
    chamber bends its segment by ``bend(P) = c1 P + c2 P^2`` (``bend_per_kpa_deg`` = c1,
    ``bend_per_kpa2_deg`` = c2, the segment's total bend), away from itself; its force ``k_b bend(P) / r``
    at its offset ``r`` makes the moment that holds that bend against the segment's bending stiffness
    ``k_b`` (its nodes in series). The chamber's axial force is taken by the actuator's strain-limiting
    layer, so the fibre acts on the nodes only (no chords: the drive leaves them out).

    Args: as :class:`LengthLawForces` but without the chords.
    """

    def __init__(self, robot: RobotSpec, limb: LimbSpec, K: FloatArray, node_dofs: list[list[int]]) -> None:
        from pathlib import Path

        source = robot.source if robot.source is not None else "<robot>"
        f = Fields(robot.extra["bending_law"], Path(source), "bending_law")
        deg = np.pi / 180.0
        self.a = f.number("bend_per_kpa_deg", -1e6, 1e6) * deg / 1e3
        """``c1`` (rad/Pa)."""
        self.b = f.number("bend_per_kpa2_deg", -1e6, 1e6) * deg / 1e6
        """``c2`` (rad/Pa^2)."""
        f.finish()
        act = limb.actuators
        assert act is not None
        self.count, self.offset = act.count, act.offset
        self.k_bend = np.array([1.0 / np.sum(1.0 / K[n]) for n in node_dofs])
        """Each segment's bending stiffness (N m/rad)."""

    def bends(self, pressures: FloatArray) -> FloatArray:
        """The law's bends (rad) at the chambers' pressures (Pa)."""
        p = np.asarray(pressures, dtype=float)
        return self.a * p + self.b * p * p

    def forces(self, pressures: FloatArray) -> FloatArray:
        """The fibre forces (N) that hold the law's bends at ``pressures`` (Pa)."""
        k = np.repeat(self.k_bend, self.count)
        return k * self.bends(pressures) / self.offset

    def pressures_for(self, elongations: FloatArray) -> FloatArray:
        """The pressures (Pa, >= 0) whose bends make the fibre elongations ``elongations`` (m): a bend
        ``theta`` away from the chamber lengthens its fibre by ``r theta``."""
        return _quadratic_root(self.a, self.b, np.asarray(elongations, dtype=float) / self.offset)


def _quadratic_root(a: float, b: float, x: FloatArray) -> FloatArray:
    """The least ``p >= 0`` with ``a p + b p^2 = x`` (0 where none)."""
    if b == 0.0:
        p = x / a if a != 0.0 else np.zeros_like(x)
    else:
        p = (np.sqrt(np.maximum(a * a + 4.0 * b * x, 0.0)) - a) / (2.0 * b)
    return np.maximum(p, 0.0)
