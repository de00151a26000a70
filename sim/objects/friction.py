"""Friction between the limbs' silicone and the objects they touch: one coefficient per material, dry and wet.

The URSULA limbs are cast in Ecoflex 00-30 (a platinum-cure silicone of Shore hardness 00-30). PyBullet
has one Coulomb coefficient per contact for sticking and sliding, and makes it the *product* of the two
bodies' coefficients. The convention here:

* every limb link keeps :data:`LIMB_FRICTION` = 0.5 (set explicitly by :class:`pccbullet.sim.robot.Robot`),
  which is also PyBullet's default for every other body (the seabed, the rock, walls, the head);
* an object of a material carries ``mu / LIMB_FRICTION`` (:func:`bullet_coefficients`), so that its
  contact with a limb has exactly ``mu``, the silicone-on-material coefficient of :data:`MATERIALS`; its
  contact with a body of default friction (the seabed) has ``mu`` as well;
* two objects touching each other get ``mu_1 mu_2 / LIMB_FRICTION^2``: PyBullet knows no per-pair value,
  so object-on-object friction is only an estimate (set an object's ``friction`` where it matters).

Rolling and spinning friction (PyBullet's ``rollingFriction``, ``spinningFriction``) are lever arms in
metres: the contact resists rolling with a torque up to ``b N``; PyBullet combines them as
``b_1 mu_2 + b_2 mu_1``, so an object stores ``b / LIMB_FRICTION`` like its lateral coefficient. A sphere
on a plane then decelerates at ``5 b g / (7 R)`` (checked in ``tests/test_objects.py``). Without them a
sphere or a lying cylinder rolls forever in air. The lever arm is :data:`ROLLING_RESISTANCE` times the
radius (a rolling-resistance coefficient of 0.01: the order of hard rubber on a firm surface; sand is
0.1-0.3; an assumption, not a measurement of silicone or seabed), for spinning too.

Values (:data:`MATERIALS`, kinetic where the source distinguishes; "wet" is under water): ``pla`` and ``abs``
dry 1.5, wet 0.9; ``steel`` and ``glass`` 1.0, 0.6; ``rock`` 0.8, 0.6. PLA's is measured (a silicone on a
PLA plate), steel's and rock's are handbook values for rubber, ABS and glass are taken as PLA and steel,
and wet is 0.6 x dry for the smooth materials (an assumption: no measurement of Ecoflex under water was
found). The sources: ``docs/guide/objects.md``, "Friction on the limbs".
"""

from __future__ import annotations

from dataclasses import dataclass

from pccbullet.core.errors import ConfigurationError, cap
from pccbullet.sim.medium import Medium

LIMB_FRICTION = 0.5  # -, PyBullet coefficient of every limb link (and PyBullet's default for any body)
ROLLING_RESISTANCE = 0.01  # -, rolling and spinning lever arm over the radius (an assumption)
MAX_FRICTION = 10.0  # -, PyBullet clamps a contact's combined coefficient to this
WET_DENSITY = 100.0  # kg/m^3, media denser than this are liquids: objects in them touch wet


@dataclass(frozen=True, slots=True)
class Material:
    """Friction of the limbs' silicone (Ecoflex 00-30) on an object's material.

    Attributes:
        name: the material's key in :data:`MATERIALS`.
        dry: Coulomb coefficient in air (-).
        wet: Coulomb coefficient under water (-).
        rgba: the colour objects of this material get by default.
        basis: where the values come from (``"measured"``, ``"handbook"`` or ``"assumption"``).
    """

    name: str
    dry: float
    wet: float
    rgba: tuple[float, float, float, float]
    basis: str

    def coefficient(self, medium: Medium) -> float:
        """The silicone-on-material coefficient in ``medium``: :attr:`wet` in a liquid (density above
        :data:`WET_DENSITY`), else :attr:`dry`."""
        return self.wet if is_wet(medium) else self.dry


MATERIALS: dict[str, Material] = {
    m.name: m
    for m in (
        Material("pla", 1.5, 0.9, (0.92, 0.92, 0.88, 1.0), "measured"),
        Material("abs", 1.5, 0.9, (0.85, 0.25, 0.20, 1.0), "assumption"),
        Material("steel", 1.0, 0.6, (0.62, 0.64, 0.68, 1.0), "handbook"),
        Material("glass", 1.0, 0.6, (0.70, 0.85, 0.90, 0.6), "assumption"),
        Material("rock", 0.8, 0.6, (0.45, 0.45, 0.50, 1.0), "handbook"),
    )
}
"""Materials objects can be made of, by name (see the module's table for the sources)."""


def is_wet(medium: Medium) -> bool:
    """Whether contacts in ``medium`` are wet (a liquid: density above :data:`WET_DENSITY`)."""
    return medium.density > WET_DENSITY


def material(name: str) -> Material:
    """A material of :data:`MATERIALS` by name; raises :class:`ConfigurationError` listing the names."""
    if not isinstance(name, str) or name not in MATERIALS:
        allowed = ", ".join(repr(n) for n in MATERIALS)
        raise ConfigurationError(f"material = {cap(name)} is invalid; allowed: {allowed}")
    return MATERIALS[name]


def bullet_coefficients(friction: float, rolling: float, spinning: float) -> dict[str, float]:
    """PyBullet ``changeDynamics`` keywords that give a body the pair values ``friction`` (-), ``rolling``
    and ``spinning`` (lever arms, m) against a limb or any body of default friction (:data:`LIMB_FRICTION`):
    each divided by :data:`LIMB_FRICTION`, as PyBullet multiplies lateral coefficients and combines rolling
    and spinning ones as ``b_1 mu_2 + b_2 mu_1``."""
    return {
        "lateralFriction": friction / LIMB_FRICTION,
        "rollingFriction": rolling / LIMB_FRICTION,
        "spinningFriction": spinning / LIMB_FRICTION,
    }
