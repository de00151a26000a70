"""Rolling-joint snake robots (seed 003, Hu et al. 2023): the robot description and its TOML loader.

A stiffness-adjustable snake robot is a stack of ``n_links`` identical links. Neighbouring links touch
on two cylindrical contact surfaces of radius ``contact_radius`` and roll on each other (a rolling
joint). Four cables run straight through every link at distance ``cable_radius`` from the centre line
and end at the distal link.

World frame and orientation, as the paper defines them (Hu et al. 2023, sec. 2.1.1, 3.2.2, 3.3): the
world frame (WCS) has its z axis along the straight robot towards the tip; the paper places the base
link's frame by ``T_1^w = T_l(d_1) T_rz(pi + alpha_1) T_ry(pi)`` and the link frames point z towards
the base. Worked through (link 2's frame comes out as ``diag(1, -1, -1)`` for every alpha), this puts

* the odd joints (1, 3, ...) in the world x-z plane: joint ``k`` bends about ``Rz(psi_k) y`` with
  ``psi_k = 0``, a positive angle tilting the tip towards +x;
* the even joints (2, 4, ...) at ``psi_k = -alpha``: for ``alpha = 90 deg`` they bend in the y-z plane
  and a positive angle tilts the tip towards -y;
* the cables 1..4 counter-clockwise about +z (seen from the tip) at the world phases
  ``[0, pi - alpha, pi, -alpha]``: the paper's even-link set ``{0, pi + alpha, pi, alpha}`` with the
  tensions ``T_0,1..4`` in link 2's frame (whose y axis is the world's -y), and its odd-link set
  ``{0, -alpha, pi, pi - alpha}`` with the tensions ``T_0,4, T_0,1, T_0,2, T_0,3`` (the extracted text
  prints ``alpha`` for ``-alpha``; only with the minus sign do the four cables run straight).

So ``orientation_deg = 90`` is the paper's ``alpha = 90 deg`` and ``tensions[j - 1]`` is the paper's
``T_0,j``: pulling cable 2 alone moves the tip towards +y, cable 4 towards -y, cable 1 towards +x.
``cable_phases_deg`` (optional) gives the four phases directly in this world frame (about +z from +x).

Base displacement and tip point (sec. 3.3): ``d_1`` is the position of link 1's mass centre in the
world frame (default ``(0, 0, L/2)``: the world origin at the centre of the base link's bottom face, as
in the paper's simulations, Table 1); the tip is the point ``P_n^tip`` given in the paper's frame of
the distal link ``{n}`` (origin at its mass centre, z towards the base; default ``(0, 0, -L/2)``, the
centre of the free end face). Straight, the tip stands at ``d_1z + (n - 1) L - P_n^tip_z``.

TOML layout (lengths in mm, angles in degrees, everything converted to SI on loading)::

    kind = "rolling_snake"
    name = "snake003_sim_steel"
    links = 6
    link_length_mm = 12.0
    contact_radius_mm = 6.0
    cable_radius_mm = 3.5
    link_volume_mm3 = 851.0      # with density_g_cm3; or link_mass_g instead of both
    density_g_cm3 = 7.86
    orientation_deg = 0.0        # the paper's alpha, in [-180, 180]
    mount = "ground"             # or "ceiling"
    gravity_m_s2 = 9.8           # optional, default 9.81
    cable_phases_deg = [0, 180, 180, 0]   # optional, world frame, default [0, 180 - alpha, 180, -alpha]
    body_radius_mm = 4.75        # optional, outer radius of a link for URDF geometry and inertia
    base_displacement_mm = [0, 0, 6]      # optional, d_1 in the world frame, default [0, 0, L/2]
    tip_point_mm = [0, 0, -6]             # optional, P_n^tip in the distal link's frame, default [0, 0, -L/2]
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pccbullet.core.errors import SpecError
from pccbullet.core.fields import Fields, as_finite, read_toml

KIND = "rolling_snake"
MOUNTS = ("ground", "ceiling")

MAX_LINKS = 1000  # most links a rolling-joint snake TOML may ask for


def default_cable_phases(orientation: float) -> tuple[float, float, float, float]:
    """World-frame cable phases (rad) ``[0, pi - alpha, pi, -alpha]`` for the tensions ``[T1, T2, T3, T4]``.

    Cables 1 and 3 are the opposing pair in the bending plane of the odd joints, cables 2 and 4 the pair
    in the plane of the even joints, counter-clockwise about the world's +z as in seed 003, sec. 3.2.2
    (the even-link set ``{0, pi + alpha, pi, alpha}`` seen in link 2's frame, whose y is the world's -y).
    """
    return (0.0, math.pi - orientation, math.pi, -orientation)


@dataclass(frozen=True, slots=True)
class RollingSnakeSpec:
    """Parameters of a rolling-joint snake robot, SI units.

    Attributes:
        name: robot name.
        n_links: number of links ``n`` (``n - 1`` rolling joints), >= 2.
        link_length: ``L``, distance between the two contact-surface apexes of a link (m).
        contact_radius: ``R``, radius of both cylindrical contact surfaces (m).
        cable_radius: ``r``, distance of every cable from the link centre line (m), ``< R``.
        link_mass: mass of one link (kg); the base link 1 is fixed and does not load the joints.
        orientation: the paper's ``alpha`` (rad): the even joints bend in the plane at ``-alpha`` about
            the world's z from the odd joints' x-z plane (see the module docstring).
        cable_phases: world-frame phase angle of cable 1..4 about +z from +x (rad), ``(4,)``;
            :func:`default_cable_phases` gives the paper's counter-clockwise order.
        mount: ``"ground"`` (gravity along -z of the world) or ``"ceiling"`` (along +z).
        gravity: magnitude of the gravitational acceleration (m/s^2).
        body_radius: outer radius of a link, used for URDF geometry and inertia only (m).
        density: material density (kg/m^3) if the mass came from volume and density, else ``None``.
        source: where the spec came from (file path or ``"<code>"``).
        base_displacement: the paper's ``d_1``, link 1's mass centre in the world frame (m), ``(3,)``;
            ``None`` means ``(0, 0, L/2)``.
        tip_point: the paper's ``P_n^tip`` in the distal link's frame ``{n}`` (mass centre, z towards
            the base) (m), ``(3,)``; ``None`` means ``(0, 0, -L/2)``, the centre of the free end face.
    """

    name: str
    n_links: int
    link_length: float
    contact_radius: float
    cable_radius: float
    link_mass: float
    orientation: float
    cable_phases: tuple[float, float, float, float]
    mount: str = "ground"
    gravity: float = 9.81
    body_radius: float = 0.0
    density: float | None = None
    source: str = "<code>"
    base_displacement: tuple[float, float, float] | None = None
    tip_point: tuple[float, float, float] | None = None

    def __post_init__(self) -> None:
        src = self.source
        if not isinstance(self.n_links, int) or self.n_links < 2:
            raise SpecError(src, "links", self.n_links, "an integer >= 2")
        for field, value in (
            ("link_length", self.link_length),
            ("contact_radius", self.contact_radius),
            ("cable_radius", self.cable_radius),
        ):
            if not math.isfinite(value) or value <= 0.0:
                raise SpecError(src, field, value, "a finite length > 0")
        if self.cable_radius >= self.contact_radius:
            raise SpecError(
                src, "cable_radius", self.cable_radius, f"less than contact_radius = {self.contact_radius}"
            )
        if not math.isfinite(self.link_mass) or self.link_mass < 0.0:
            raise SpecError(src, "link_mass", self.link_mass, "a finite mass >= 0")
        if len(self.cable_phases) != 4:
            raise SpecError(src, "cable_phases", self.cable_phases, "exactly 4 angles")
        if self.mount not in MOUNTS:
            raise SpecError(src, "mount", self.mount, f"one of {MOUNTS}")
        if not math.isfinite(self.gravity) or self.gravity < 0.0:
            raise SpecError(src, "gravity", self.gravity, "a finite acceleration >= 0")
        for field, vec in (("base_displacement", self.base_displacement), ("tip_point", self.tip_point)):
            if vec is None:
                continue
            xyz = list(vec)
            if len(xyz) != 3 or any(as_finite(v) is None for v in xyz):
                raise SpecError(src, field, vec, "3 finite lengths (m)")

    @property
    def d1(self) -> tuple[float, float, float]:
        """The paper's ``d_1``: link 1's mass centre in the world frame (m), ``(3,)``."""
        if self.base_displacement is None:
            return (0.0, 0.0, 0.5 * self.link_length)
        return self.base_displacement

    @property
    def tip_in_link_n(self) -> tuple[float, float, float]:
        """The paper's ``P_n^tip`` in the distal link's frame ``{n}`` (z towards the base) (m), ``(3,)``."""
        if self.tip_point is None:
            return (0.0, 0.0, -0.5 * self.link_length)
        return self.tip_point

    def tip_offset(self) -> tuple[float, float, float]:
        """The tip point relative to the distal link's mass centre in our link frame (m), ``(3,)``.

        Our link frames are parallel to the world frame when the robot is straight. The paper's frame
        ``{n}`` of the distal link is, in the straight pose, ``C_n = Rz(pi + alpha_1 - s) Ry(pi)`` in
        the world with ``alpha_1 = -alpha`` and ``s`` the sum of the per-link orientations up to
        ``n - 1`` (``-alpha`` for even ``n``, 0 for odd ``n``): ``diag(1, -1, -1)`` for even ``n``,
        ``Rz(pi - alpha) Ry(pi)`` for odd ``n``. The offset is ``C_n @ P_n^tip``.
        """
        px, py, pz = self.tip_in_link_n
        gamma = 0.0 if self.n_links % 2 == 0 else -self.orientation
        # Ry(pi) (px, py, pz) = (-px, py, -pz), then Rz(pi + gamma) about z
        c, s = math.cos(math.pi + gamma), math.sin(math.pi + gamma)
        return (-c * px - s * py, -s * px + c * py, -pz)

    @property
    def body_radius_or_default(self) -> float:
        """Outer link radius (m): ``body_radius`` if set, else ``min(1.3 r, R)``."""
        if self.body_radius > 0.0:
            return self.body_radius
        return min(1.3 * self.cable_radius, self.contact_radius)

    def joint_plane(self, k: int) -> float:
        """Bending-plane angle ``psi_k`` (rad) of joint ``k`` (1-based): 0 for odd ``k``, -alpha for even.

        Joint ``k`` bends about ``Rz(psi_k) y`` in the world frame of the straight robot; a positive
        angle tilts the distal links towards ``Rz(psi_k) x``.
        """
        return 0.0 if k % 2 == 1 else -self.orientation

    def with_changes(self, **changes: Any) -> RollingSnakeSpec:
        """A copy with some fields replaced (validated again).

        If ``orientation`` changes, ``cable_phases`` is not given and the current phases are the default
        ones, the copy gets the default (paper's) phases of the new orientation.
        """
        if (
            "orientation" in changes
            and "cable_phases" not in changes
            and _same(self.cable_phases, default_cable_phases(self.orientation))
        ):
            changes["cable_phases"] = default_cable_phases(float(changes["orientation"]))
        return dataclasses.replace(self, **changes)


def _same(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Equal phase sets up to whole turns (1e-12 rad)."""
    return all(abs((x - y + math.pi) % (2.0 * math.pi) - math.pi) < 1e-12 for x, y in zip(a, b, strict=True))


def load_rolling_snake(path: str | Path) -> RollingSnakeSpec:
    """Read a ``kind = "rolling_snake"`` TOML file into a :class:`RollingSnakeSpec` (SI units).

    Raises:
        SpecError: unreadable or invalid TOML, wrong ``kind``, unknown keys, missing fields,
            non-numeric values, lengths <= 0, ``cable_radius_mm >= contact_radius_mm``, a mass given both
            ways or neither way. The message names the file, the field, the value and what is allowed.
    """
    src = Path(path)
    f = Fields(read_toml(src), src)
    f.constant("kind", KIND)
    name = f.identifier("name")
    links = f.integer("links", 2, MAX_LINKS)
    mm = 1e-3  # m per mm
    length = f.number("link_length_mm", 1e-3, 1e5) * mm
    contact_mm = f.number("contact_radius_mm", 1e-3, 1e5)
    cable_mm = f.number("cable_radius_mm", 1e-3, 1e5)
    if cable_mm >= contact_mm:
        allowed = f"a number in [0.001, contact_radius_mm = {f.table['contact_radius_mm']})"
        raise f.error("cable_radius_mm", f.table["cable_radius_mm"], allowed)
    big_r, small_r = contact_mm * mm, cable_mm * mm
    alpha = math.radians(f.number("orientation_deg", -180.0, 180.0))

    density: float | None = None
    if f.has("link_mass_g") and (f.has("link_volume_mm3") or f.has("density_g_cm3")):
        raise f.error(
            "link_mass_g",
            f.table["link_mass_g"],
            "either link_mass_g or link_volume_mm3 with density_g_cm3, not both",
        )
    if f.has("link_mass_g"):
        mass = f.number("link_mass_g", 1e-3, 1e7) * 1e-3  # kg per g
    elif f.has("link_volume_mm3") or f.has("density_g_cm3"):
        volume = f.number("link_volume_mm3", 1e-6, 1e15) * 1e-9  # m^3 per mm^3
        density = f.number("density_g_cm3", 1e-6, 100.0) * 1e3  # kg/m^3 per g/cm^3
        mass = volume * density
    else:
        raise f.error("link_mass_g", None, "link_mass_g, or link_volume_mm3 with density_g_cm3")

    mount = f.string("mount", choices=MOUNTS, default="ground")
    gravity = f.number("gravity_m_s2", 0.0, 100.0, default=9.81)
    body_radius = f.number("body_radius_mm", 1e-3, 1e5) * mm if f.has("body_radius_mm") else 0.0
    if f.has("cable_phases_deg"):
        phases_deg = f.vector("cable_phases_deg", 4, -720.0, 720.0, unit="degrees")
        phases = tuple(math.radians(v) for v in phases_deg)
    else:
        phases = default_cable_phases(alpha)
    for key in ("material", "description"):
        if not isinstance(f.raw(key, ""), str):
            raise f.error(key, f.table[key], "a string")
    vectors: dict[str, tuple[float, float, float] | None] = {}
    for key in ("base_displacement_mm", "tip_point_mm"):
        vec = f.vector(key, 3, -1e5, 1e5, unit="mm") if f.has(key) else None
        vectors[key] = None if vec is None else (vec[0] * mm, vec[1] * mm, vec[2] * mm)
    f.finish()

    return RollingSnakeSpec(
        name=name,
        n_links=links,
        link_length=length,
        contact_radius=big_r,
        cable_radius=small_r,
        link_mass=mass,
        orientation=alpha,
        cable_phases=phases,  # type: ignore[arg-type]
        mount=mount,
        gravity=gravity,
        body_radius=body_radius,
        density=density,
        source=str(src),
        base_displacement=vectors["base_displacement_mm"],
        tip_point=vectors["tip_point_mm"],
    )
