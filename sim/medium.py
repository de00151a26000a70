"""The fluid around a robot: one :class:`Medium` for the PyBullet world and the Newton–Euler model.

Both the dynamic mode (:mod:`pccbullet.sim.limb.dynamics`: buoyancy and Morison drag on the chain's slices)
and the strain-space model (:mod:`pccbullet.sim.models.newton_euler.model`: buoyancy, added mass and Morison
drag at its nodes) read the same record, so a limb in "water" feels the same fluid in both.

Coefficients. A limb section is a circular cylinder of diameter d = 20-60 mm moving across its axis at
v = 1 cm/s to 0.5 m/s: the Reynolds number ``Re = v d / nu`` (:meth:`Medium.reynolds_number`) is ~2e2 to
3e4 in water and ~10 to 2e3 in air at the same speeds. Between Re ~ 1e3 and the drag crisis near
Re ~ 2e5-3e5 (subcritical, laminar boundary layer) the drag coefficient of a long smooth circular cylinder
is a plateau near ``C_d = 1.2`` (Hoerner, *Fluid-Dynamic Drag*, 1965, ch. 3; White, *Fluid Mechanics*,
fig. 7.16a; Roshko, J. Fluid Mech. 10:345, 1961, notes the subcritical measurements agree well); it dips
to ~1.0 near Re ~ 2e3-5e3 and rises toward ~1.5 at Re ~ 1e2. 1.2 is the plateau where most of the working
range in water lies; the dynamic mode and the model use the same value. The added-mass coefficient
``C_a = 1.0`` (potential flow around a circular cylinder) is a property of the shape, so it applies in air too
(there ``C_a rho V`` is ~0.1 % of an elastomer limb's mass). Axial skin friction ``C_f = 0.01`` is used by the
dynamic mode only; the Newton–Euler model neglects it. Kinematic viscosities at 20 degC: fresh water 1.004e-6,
sea water (35 g/kg) 1.05e-6, air 1.50e-5 m^2/s (dynamic viscosity 1.81e-5 Pa s over 1.204 kg/m^3).
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, fields

from pccbullet.core.errors import ConfigurationError

CYLINDER_DRAG_COEFFICIENT = 1.2  # -, circular cylinder in cross flow, subcritical Re ~ 1e3..2e5
CYLINDER_ADDED_MASS_COEFFICIENT = 1.0  # -, potential flow around a circular cylinder
SKIN_FRICTION_COEFFICIENT = 0.01  # -, along a slice's axis (dynamic mode only)
FRESH_WATER_DENSITY = 1000.0  # kg/m^3
SEAWATER_DENSITY = 1025.0  # kg/m^3


@dataclass(frozen=True, slots=True)
class Medium:
    """The fluid around the robot.

    Attributes:
        name: ``"air"``, ``"water"`` (fresh), ``"seawater"`` or ``"vacuum"``.
        density: rho (kg/m^3).
        kinematic_viscosity: nu (m^2/s); for Reynolds numbers (:meth:`reynolds_number`).
        drag_normal: drag coefficient C_d across a limb's axis (-), circular cylinder in cross flow.
        drag_axial: skin-friction coefficient along it (-); the dynamic mode's slices only.
        added_mass_coefficient: C_a (-); added mass ``C_a rho V`` (Newton–Euler model).

    Raises:
        ConfigurationError: a number is negative or not finite, or the name is empty.
    """

    name: str
    density: float
    _: KW_ONLY
    kinematic_viscosity: float = 0.0
    drag_normal: float = CYLINDER_DRAG_COEFFICIENT
    drag_axial: float = SKIN_FRICTION_COEFFICIENT
    added_mass_coefficient: float = CYLINDER_ADDED_MASS_COEFFICIENT

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigurationError(f"Medium.name = {self.name!r} is invalid; allowed: a non-empty string")
        for f in fields(self):
            value = getattr(self, f.name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if f.name != "name" and not (number and math.isfinite(value) and value >= 0):
                raise ConfigurationError(
                    f"Medium.{f.name} = {value!r} is invalid ({self.name!r}); allowed: a finite number >= 0"
                )

    @property
    def is_vacuum(self) -> bool:
        """Whether nothing surrounds the robot (density 0): no buoyancy, drag or added mass."""
        return self.density == 0.0

    @property
    def drag_coefficient(self) -> float:
        """C_d across the axis (-): :attr:`drag_normal` (the Newton–Euler model's name for it)."""
        return self.drag_normal

    def reynolds_number(self, speed: float, diameter: float) -> float:
        """``v d / nu`` (-) of a cylinder of ``diameter`` (m) at ``speed`` (m/s); 0 in a vacuum."""
        return speed * diameter / self.kinematic_viscosity if self.kinematic_viscosity > 0.0 else 0.0


VACUUM = Medium("vacuum", 0.0, drag_normal=0.0, drag_axial=0.0, added_mass_coefficient=0.0)  # nothing
AIR = Medium("air", 1.204, kinematic_viscosity=1.50e-5)  # 20 degC
WATER = Medium("water", FRESH_WATER_DENSITY, kinematic_viscosity=1.004e-6)  # fresh, 20 degC
SEAWATER = Medium("seawater", SEAWATER_DENSITY, kinematic_viscosity=1.05e-6)  # 35 g/kg, 20 degC
MEDIA = {m.name: m for m in (AIR, WATER, SEAWATER, VACUUM)}  # the media a world can be filled with


def medium(name: str | Medium) -> Medium:
    """A world medium by name (:data:`MEDIA`), or ``name`` itself if it is a :class:`Medium` already (a
    custom fluid, or :data:`VACUUM`); raises :class:`ConfigurationError` listing the names."""
    if isinstance(name, Medium):
        return name
    if not isinstance(name, str) or name not in MEDIA:
        allowed = ", ".join(repr(n) for n in MEDIA)
        raise ConfigurationError(f"medium = {repr(name)[:80]} is invalid; allowed: {allowed}")
    return MEDIA[name]
