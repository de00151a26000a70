"""The ``[[limbs.tendons]]`` tables of a robot file -> :class:`~pccbullet.urdf_gen.specs.TendonSpec`.

One table is a group of ``count`` tendons anchored at the end disk of one segment, evenly spaced about
the backbone::

    [[limbs.tendons]]
    anchor_segment = 2        # 1-based: the end disk of segment 2 anchors them
    count = 4
    first_angle_deg = 0       # angle of the first tendon about the backbone, from the material x axis
    offset_fraction = 0.7     # distance from the backbone: a fraction of the limb's base and tip radii,
                              # linear in between, or offset_mm = 7 for a constant distance (one of the two)
    max_tension_n = 10        # the actuator's stall tension
    max_speed_mm_s = 50       # its no-load speed
    pretension_n = 0.2        # the least tension it keeps (optional, default 0)
    spool_mass_kg = 10        # its rotor and gears seen at the tendon, J N^2 / r^2 (optional, default 0)

Every offset must lie inside the limb wherever the tendon runs (below 0.95 of the radius from the base
to the anchor).
"""

from __future__ import annotations

import math

from pccbullet.core.fields import Fields
from pccbullet.urdf_gen.specs import SegmentSpec, TendonSpec

MM = 1e-3
DEG = math.pi / 180.0
MAX_TENDONS = 64  # per limb
MAX_TENSION_N = 1e5
MAX_SPEED_MM_S = 1e5
MAX_SPOOL_KG = 1e4
INSIDE = 0.95  # an offset may reach this fraction of the local radius


def read_tendons(
    groups: list[Fields], limb: str, segments: tuple[SegmentSpec, ...]
) -> tuple[TendonSpec, ...]:
    """The tendons of ``limb`` from its ``[[limbs.tendons]]`` tables, ordered by anchor segment (base to tip),
    then by group and angle; raises :class:`~pccbullet.core.errors.SpecError` naming the field.

    A tendon's offset is linear over the limb (:class:`~pccbullet.urdf_gen.specs.TendonSpec`):
    ``offset_mm`` keeps it constant, ``offset_fraction`` scales the limb's base and tip radii. Either way
    it must stay within :data:`INSIDE` of the local radius over every segment it runs through (checked at
    each segment's ends, where a piecewise taper is narrowest against a linear offset)."""
    total = sum(s.length for s in segments)
    radius_base, radius_tip = segments[0].radius_base, segments[-1].radius_tip
    out: list[tuple[int, int, TendonSpec]] = []
    for g, f in enumerate(groups):
        anchor = f.integer("anchor_segment", 1, len(segments))
        count = f.integer("count", 1, MAX_TENDONS)
        first = f.number("first_angle_deg", -360.0, 360.0, default=0.0) * DEG
        path = segments[:anchor]  # the segments the tendon runs through
        if f.has("offset_mm") == f.has("offset_fraction"):
            raise f.error("offset_mm", f.table.get("offset_mm"), "exactly one of offset_mm, offset_fraction")
        if f.has("offset_mm"):
            limit = INSIDE * min(min(s.radius_base, s.radius_tip) for s in path) / MM
            off = f.number("offset_mm", 0.0, limit, lo_open=True) * MM
            base, tip = off, off
        else:
            frac = f.number("offset_fraction", 0.0, INSIDE, lo_open=True)
            base, tip = frac * radius_base, frac * radius_tip
            _check_inside(f, frac, path, total, base, tip)
        max_tension = f.number("max_tension_n", 0.0, MAX_TENSION_N, lo_open=True)
        max_speed = f.number("max_speed_mm_s", 0.0, MAX_SPEED_MM_S, lo_open=True) * MM
        pretension = f.number("pretension_n", 0.0, max_tension, default=0.0)
        spool_mass = f.number("spool_mass_kg", 0.0, MAX_SPOOL_KG, default=0.0)
        f.finish()
        for j in range(count):
            spec = TendonSpec(
                name=f"{limb}_s{anchor}_t{len([o for o in out if o[0] == anchor - 1])}",
                anchor_segment=anchor - 1,
                angle=first + 2.0 * math.pi * j / count,
                offset_base=base,
                offset_tip=tip,
                max_tension=max_tension,
                max_speed=max_speed,
                pretension=pretension,
                spool_mass=spool_mass,
            )
            out.append((anchor - 1, g, spec))
    if len(out) > MAX_TENDONS:
        raise groups[0].error("count", len(out), f"at most {MAX_TENDONS} tendons a limb")
    return tuple(spec for _, _, spec in sorted(out, key=lambda o: (o[0], o[1])))


def _check_inside(
    f: Fields, frac: float, path: tuple[SegmentSpec, ...], total: float, base: float, tip: float
) -> None:
    """Raise if the linear offset from ``base`` to ``tip`` (m) leaves :data:`INSIDE` of a segment's radius at
    one of its ends (a stepped limb narrower than the limb's straight taper)."""
    s0 = 0.0
    for i, seg in enumerate(path):
        for s, r in ((s0, seg.radius_base), (s0 + seg.length, seg.radius_tip)):
            offset = base + (tip - base) * s / total
            if offset > INSIDE * r * (1.0 + 1e-9):
                raise f.error(
                    "offset_fraction",
                    frac,
                    f"a fraction whose linear offset stays within {INSIDE:g} of the radius: "
                    f"{offset / MM:.3g} mm at segment {i + 1} (radius {r / MM:.3g} mm); give offset_mm",
                )
        s0 += seg.length
