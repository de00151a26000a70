"""The tendons of an MJCF export (:mod:`pccbullet.sim.mjcf.writer`): spatial tendons through a site at
every slice end and their pull-only motors (``ctrl`` = tension, N); and the chambers, pushing actuators
along their fibres (``ctrl`` = pressure, Pa; :func:`write_chambers`).

A limb's dynamic-mode tendons (``[[limbs.tendons]]``, :class:`~pccbullet.urdf_gen.specs.TendonSpec`) run
from the limb base to their anchor segment's end disk at their tapering offset, bounded by their
actuator's stall tension; a limb with only an actuator block of tendons
(:class:`~pccbullet.urdf_gen.specs.ActuatorSpec`, the Newton-Euler model's) gets per segment ``count``
tendons from the segment's base disk to its end disk (:mod:`pccbullet.sim.models.actuators`), bounded by
:func:`~pccbullet.sim.mjcf.material.tendon_tension_bound`.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from pccbullet.sim.mjcf.material import tendon_tension_bound
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen import urdf_xml as ux
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec

SITE_SIZE = 0.002  # m, tendon sites
SITE_GROUP = "4"
Elements = tuple[ET.Element, ET.Element, dict[str, ET.Element]]


def _carriers(limb: LimbSpec, last: int) -> list[tuple[str, float]]:
    """The links a tendon's channel passes from the limb base to segment ``last``'s end disk (1-based), each
    with its arc length from the limb base (m): the base, every slice end, every segment end."""
    out = [(naming.base_link(limb.name), 0.0)]
    start = 0.0
    for s, seg in enumerate(limb.segments[:last], start=1):
        out += [
            (naming.section_prefix(limb.name, s, k), start + seg.length * k / seg.sections)
            for k in range(1, seg.sections)
        ]
        start += seg.length
        out.append((naming.segment_end_link(limb.name, s), start))
    return out


def _spatial(out: Elements, name: str, sites: list[tuple[str, list[float]]], bound: float) -> None:
    """One spatial tendon through sites at ``(link, position in its frame)`` and its pull-only motor."""
    tendon, actuator, bodies = out
    spatial = ET.SubElement(tendon, "spatial", name=name, width=ux.num(0.5 * SITE_SIZE))
    for m, (carrier, where) in enumerate(sites):
        site = f"{name}_{m}"
        ET.SubElement(
            bodies[carrier], "site", name=site, pos=ux.fmt(where), size=ux.num(SITE_SIZE), group=SITE_GROUP
        )
        ET.SubElement(spatial, "site", site=site)
    ET.SubElement(
        actuator, "motor", name=name, tendon=name, gear="-1", ctrllimited="true",
        ctrlrange=ux.fmt([0.0, bound]),
    )  # fmt: skip


def write_tendons(
    tendon: ET.Element, actuator: ET.Element, bodies: dict[str, ET.Element], limb: LimbSpec
) -> None:
    """The limb's tendons (see the module) and their motors into the MJCF ``<tendon>`` and ``<actuator>``
    elements, with their sites on ``bodies`` (MJCF bodies by URDF link name); none: nothing."""
    out = (tendon, actuator, bodies)
    length = limb.rest_length
    for t in limb.tendons:
        e = (math.cos(t.angle), math.sin(t.angle))
        sites = [
            (link, [t.offset_at(s / length) * e[0], t.offset_at(s / length) * e[1], 0.0])
            for link, s in _carriers(limb, t.anchor_segment + 1)
        ]
        _spatial(out, t.name, sites, t.max_tension)
    act = limb.actuators
    if limb.tendons or act is None or act.kind != "tendon":
        return
    for s in range(1, len(limb.segments) + 1):
        carriers = _carriers(limb, s)[-(limb.segments[s - 1].sections + 1) :]  # this segment's own
        bound = tendon_tension_bound(limb, s)
        for j, angle in enumerate(act.angles, start=1):
            where = [act.offset * math.cos(angle), act.offset * math.sin(angle), 0.0]
            _spatial(out, f"{limb.name}_s{s}_t{j}", [(link, where) for link, _ in carriers], bound)


def write_chambers(
    tendon: ET.Element, actuator: ET.Element, bodies: dict[str, ET.Element], limb: LimbSpec, robot: RobotSpec
) -> int:
    """The limb's chambers (:mod:`pccbullet.sim.limb.chambers`; none: nothing) as actuators: per chamber a
    spatial tendon along its fibre, through a site at its offset and angle on every slice end of its segment,
    and a ``<general>`` actuator with ``gear`` 1 and gain ``A``, ``ctrl`` the gauge pressure (Pa): the force
    ``p A`` along the fibre, pushing (the chamber's generalized force ``p A dL/dq``). A ``[pressure_drive]``
    lag is written as the actuator's first-order filter (``dyntype="filter"``, ``dynprm`` its time
    constant) and its limits as ``ctrlrange``; a ``[hydraulic_drive]`` line is not (its ``ctrl`` is the
    chamber pressure; ``ctrlrange`` the pressures its motors hold). Chambers given by a ``[pressure_law]``
    are not written (their forces are no gain times ``ctrl``). Returns the number written."""
    from pccbullet.sim.limb.chambers import VACUUM_GAUGE, chamber_rotation, declares_chambers, pressure_line

    act = limb.actuators
    if (
        act is None
        or not declares_chambers(limb)
        or "pressure_law" in robot.extra
        or "bending_law" in robot.extra
    ):
        return 0  # a law's forces (pccbullet.sim.limb.chamber_law) are no gain on ctrl: not written
    rotation = chamber_rotation(robot, limb)
    count = act.count * len(limb.segments)
    dynamics: dict[str, str] = {}
    if "hydraulic_drive" in robot.extra:
        from pccbullet.sim.models.hydraulics import load_hydraulic_drive

        params = load_hydraulic_drive(robot)
        hi = float(params.steady_pressure(params.max_torque))
        lo = max(VACUUM_GAUGE, -hi)
    else:
        line = pressure_line(robot, count)
        lo, hi = line.lo, line.hi
        dynamics = {"dyntype": "filter", "dynprm": ux.num(line.time_constant)}
    limits = {"ctrllimited": "true", "ctrlrange": ux.fmt([lo, hi])} if math.isfinite(hi) else {}
    for s in range(1, len(limb.segments) + 1):
        carriers = _carriers(limb, s)[-(limb.segments[s - 1].sections + 1) :]  # this segment's own
        for j, angle in enumerate(act.angles):
            phi = angle + rotation[s - 1]
            where = [act.offset * math.cos(phi), act.offset * math.sin(phi), 0.0]
            name = f"{limb.name}_s{s}_c{j}"
            spatial = ET.SubElement(tendon, "spatial", name=name, width=ux.num(0.5 * SITE_SIZE))
            for m, (link, _) in enumerate(carriers):
                site = f"{name}_{m}"
                ET.SubElement(
                    bodies[link],
                    "site",
                    name=site,
                    pos=ux.fmt(where),
                    size=ux.num(SITE_SIZE),
                    group=SITE_GROUP,
                )
                ET.SubElement(spatial, "site", site=site)
            attrib = {
                "name": name,
                "tendon": name,
                "gear": "1",
                "gainprm": ux.num(act.area),
                "biastype": "none",
            }
            ET.SubElement(actuator, "general", attrib={**attrib, **dynamics, **limits})
    return count
