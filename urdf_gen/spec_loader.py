"""TOML robot descriptions -> :class:`~pccbullet.urdf_gen.specs.RobotSpec`.

Units at this edge: lengths in millimetres (``*_mm``), angles in degrees (``*_deg``), masses in kilograms
(``*_kg``) or grams (``*_g``), moduli in pascals (``*_pa``). Everything returned is SI.

The file format is documented by example in ``assets/robots/ursula.toml``. Bundled robots are found by
name (``load_robot("ursula")``); anything else is read as a path.

Limits (besides each field's range): a file of at most 1 MB (:mod:`pccbullet.core.fields`), names of
at most 64 characters, at most :data:`MAX_LIMBS` limbs of at most :data:`MAX_SEGMENTS` segments, limb names
used once, mount positions and payload offsets within +-:data:`MAX_MOUNT_MM` mm, mount angles within +-360
deg.
"""

from __future__ import annotations

import math
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

from pccbullet.core.errors import RobotNotFoundError, SpecError, cap
from pccbullet.core.fields import Fields, read_toml
from pccbullet.urdf_gen.specs import (
    BODY_BASES,
    BODY_SHAPES,
    ActuatorSpec,
    HeadSpec,
    LimbSpec,
    Material,
    Payload,
    RobotSpec,
    SegmentSpec,
    TendonSpec,
)
from pccbullet.urdf_gen.tendon_fields import read_tendons

MM = 1e-3  # m per mm
DEG = math.pi / 180.0  # rad per degree
MAX_SECTIONS = 200
MAX_LIMBS = 32  # limbs per robot
MAX_SEGMENTS = 32  # segments per limb
MAX_MOUNT_MM = 1e4  # mm, largest |coordinate| of a limb mount or payload offset (10 m)
MAX_ANGLE_DEG = 360.0  # deg, largest |angle| of a mount orientation

PAYLOAD_KINDS = ("camera", "light", "force_sensor")
ACTUATOR_KINDS = ("tendon", "chamber")
# top-level tables parsed by model modules (and the chamber drive), kept raw
MODEL_TABLES = ("hydraulic_drive", "model", "pressure_drive", "pressure_law", "bending_law")


def robots_dir() -> Path:
    """The folder of bundled robot TOML files (``assets/robots``, installed as ``pccbullet.assets``)."""
    return Path(str(files("pccbullet.assets") / "robots"))


def bundled_robots() -> list[str]:
    """Names of the bundled PCC robots (TOML files whose ``kind`` is ``"pcc"``), sorted."""
    names = []
    for path in sorted(robots_dir().glob("*.toml")):
        if read_toml(path).get("kind", "pcc") == "pcc":
            names.append(path.stem)
    return names


def resolve_robot_path(robot: str | Path) -> Path:
    """A bundled robot name or a TOML path -> an existing file path."""
    shown = cap(str(robot))
    try:
        candidate = Path(robot)
        if candidate.suffix == ".toml" or candidate.exists():
            if not candidate.is_file():
                raise RobotNotFoundError(f"robot file {shown} does not exist")
            return candidate
        bundled = robots_dir() / f"{robot}.toml"
        if bundled.is_file():
            return bundled
    except (OSError, ValueError) as exc:  # a name too long for the file system, an embedded NUL
        raise RobotNotFoundError(
            f"robot {shown} is not a usable file name ({exc.__class__.__name__})"
        ) from exc
    names = ", ".join(bundled_robots())
    raise RobotNotFoundError(f"unknown robot {shown}: not a TOML file and not bundled ({names})")


def load_robot(robot: str | Path, *, sections: int | None = None) -> RobotSpec:
    """Read a robot description.

    Args:
        robot: bundled name (``"ursula"``) or path to a TOML file.
        sections: override N, the sections per segment, for every segment (``None`` keeps the file's).

    Raises:
        RobotNotFoundError: ``robot`` is neither bundled nor a file.
        SpecError: any field is missing, unknown, of the wrong type or out of range.
    """
    path = resolve_robot_path(robot)
    top = Fields(read_toml(path), path)
    top.string("kind", choices=("pcc",), default="pcc")
    name = top.identifier("name")
    description = top.raw("description", "")
    if not isinstance(description, str):
        raise top.error("description", description, "a string")
    n_default = top.integer("sections_per_segment", 1, MAX_SECTIONS, default=10)
    if sections is not None and not (
        isinstance(sections, int) and not isinstance(sections, bool) and 1 <= sections <= MAX_SECTIONS
    ):
        raise SpecError("<argument>", "sections", sections, f"an integer in [1, {MAX_SECTIONS}]")

    materials = {}
    mat_table = top.sub("materials")
    for key in list(mat_table.table):
        materials[key] = _material(key, mat_table.sub(key))
    mat_table.finish()

    head = _head(top.sub("head"))
    limb_fields = top.table_list("limbs", max_items=MAX_LIMBS)
    limbs = tuple(_limb(f, materials, n_default, sections) for f in limb_fields)
    extra = {key: top.raw(key) for key in MODEL_TABLES if top.has(key)}
    top.finish()
    seen: set[str] = set()
    for i, limb in enumerate(limbs):
        if limb.name in seen:
            raise SpecError(path, f"limbs[{i}].name", limb.name, "a name not used by another limb")
        seen.add(limb.name)
    return RobotSpec(name=name, head=head, limbs=limbs, source=path, description=description, extra=extra)


def _material(key: str, f: Fields) -> Material:
    mat = Material(
        name=key,
        density=f.number("density_kg_m3", 1e-3, 1e5),
        youngs_modulus=f.number("youngs_modulus_pa", 1.0, 1e12),
        poisson_ratio=f.number("poisson_ratio", 0.0, 0.5),
        damping_ratio=f.number("damping_ratio", 0.0, 10.0, default=0.1),
    )
    f.raw("tensile_strength_pa", None)  # documented, not used by the models
    f.finish()
    return mat


def _head(f: Fields) -> HeadSpec:
    """The ``[head]`` table: ``shape`` (:data:`~pccbullet.urdf_gen.specs.BODY_SHAPES`, default
    ``"cylinder"``) with its sizes (``diameter_mm`` and ``length_mm``, ``size_mm``, ``diameter_mm``, ``mesh``
    and ``mesh_scale``), exactly one of ``mass_kg`` and ``density_kg_m3`` (a body without a shape: the
    mass), and ``base`` (:data:`~pccbullet.urdf_gen.specs.BODY_BASES`, default ``"fixed"``)."""
    shape = f.string("shape", choices=BODY_SHAPES, default="cylinder")
    diameter = length = 0.0
    size = (0.0, 0.0, 0.0)
    mesh, scale = None, 1.0
    if shape in ("cylinder", "sphere"):
        diameter = f.number("diameter_mm", 1e-3, 1e4) * MM
    if shape == "cylinder":
        length = f.number("length_mm", 1e-3, 1e4) * MM
    if shape == "box":
        x, y, z = f.vector("size_mm", 3, 1e-3, 1e4, unit="mm")
        size = (x * MM, y * MM, z * MM)
    if shape == "mesh":
        mesh = (f.source.parent / f.string("mesh")).resolve()
        if not mesh.is_file():
            raise f.error("mesh", str(mesh), "an existing mesh file (a path relative to the robot file)")
        scale = f.number("mesh_scale", 1e-6, 1e3, default=1.0)
    if shape == "none" and f.has("density_kg_m3"):
        raise f.error("density_kg_m3", f.raw("density_kg_m3"), "nothing for shape = 'none' (give mass_kg)")
    if f.has("mass_kg") == f.has("density_kg_m3"):
        raise f.error("mass_kg", f.raw("mass_kg", None), "exactly one of mass_kg and density_kg_m3")
    base = f.string("base", choices=BODY_BASES, default="fixed")
    head = HeadSpec(diameter, length, 1.0, shape, size, mesh, scale, base)
    if f.has("mass_kg"):
        mass = f.number("mass_kg", 1e-6, 1e4)
    else:
        mass = f.number("density_kg_m3", 1.0, 1e5) * head.volume
    f.finish()
    return replace(head, mass=mass)


def _limb(f: Fields, materials: dict[str, Material], n_default: int, override: int | None) -> LimbSpec:
    name = f.identifier("name")
    mat_name = f.string("material")
    if mat_name not in materials:
        raise f.error("material", mat_name, "one of the [materials] tables: " + ", ".join(materials))
    seg_fields = f.table_list("segments", max_items=MAX_SEGMENTS)
    rest = [s.number("length_mm", 1e-3, 1e5) for s in seg_fields]
    diameters = _diameters(f, seg_fields, rest)

    segments = []
    for sf, length, (d0, d1) in zip(seg_fields, rest, diameters, strict=True):
        if override and sf.has("sections"):
            sf.integer("sections", 1, MAX_SECTIONS)  # still validated when overridden
        lmin = sf.number("length_min_mm", 1e-3, 1e5, default=length)
        lmax = sf.number("length_max_mm", 1e-3, 1e5, default=length)
        if lmin > lmax:
            raise sf.error("length_min_mm", lmin, f"a number <= length_max_mm = {lmax:g}")
        if not lmin <= length <= lmax:
            raise sf.error(
                "length_mm", length, f"a number in [length_min_mm, length_max_mm] = [{lmin:g}, {lmax:g}]"
            )
        segments.append(
            SegmentSpec(
                length=length * MM,
                length_min=lmin * MM,
                length_max=lmax * MM,
                bend_max=sf.number("bend_max_deg", 1e-3, 360.0) * DEG,
                plane_max=sf.number("plane_max_deg", 0.0, 360.0, default=360.0) * DEG,
                sections=override or sf.integer("sections", 1, MAX_SECTIONS, default=n_default),
                radius_base=0.5 * d0 * MM,
                radius_tip=0.5 * d1 * MM,
            )
        )
        sf.finish()
    d_min = min(min(d) for d in diameters)  # mm, the narrowest cross-section of the limb

    actuators = None
    af = f.sub("actuators", default=None)
    if af is not None:
        kind = af.string("kind", choices=ACTUATOR_KINDS)
        offset = af.number("offset_mm", 0.0, 0.5 * d_min, lo_open=True)
        actuators = ActuatorSpec(
            kind=kind,
            count=af.integer("count", 1, 64),
            offset=offset * MM,
            first_angle=af.number("first_angle_deg", -360.0, 360.0, default=0.0) * DEG,
            area=af.number("area_mm2", 0.0, 1e8, default=0.0) * MM * MM,
        )
        if kind == "chamber" and actuators.area <= 0.0:
            raise af.error("area_mm2", af.table.get("area_mm2"), "a number > 0 for chambers")
        af.finish()
    payload = None
    pf = f.sub("payload", default=None)
    if pf is not None:
        payload = Payload(
            kind=pf.string("kind", choices=PAYLOAD_KINDS),
            frame=pf.identifier("frame"),
            mass=pf.number("mass_g", 0.0, 1e6) * 1e-3,
            offset=tuple(
                v * MM
                for v in pf.vector("offset_mm", 3, -MAX_MOUNT_MM, MAX_MOUNT_MM, default=[0.0, 0.0, 0.0])
            ),  # type: ignore[arg-type]
        )
        pf.finish()
    tendons: tuple[TendonSpec, ...] = ()
    if f.has("tendons"):
        tendons = read_tendons(f.table_list("tendons"), name, tuple(segments))
    limb = LimbSpec(
        name=name,
        material=materials[mat_name],
        segments=tuple(segments),
        actuators=actuators,
        mount_xyz=tuple(v * MM for v in f.vector("mount_xyz_mm", 3, -MAX_MOUNT_MM, MAX_MOUNT_MM)),  # type: ignore[arg-type]
        mount_rpy=tuple(v * DEG for v in f.vector("mount_rpy_deg", 3, -MAX_ANGLE_DEG, MAX_ANGLE_DEG)),  # type: ignore[arg-type]
        payload=payload,
        tendons=tendons,
    )
    f.finish()
    return limb


def _diameters(f: Fields, seg_fields: list[Fields], rest: list[float]) -> list[tuple[float, float]]:
    """Each segment's base and tip diameter (mm): one linear taper over the limb (``base_diameter_mm``,
    ``tip_diameter_mm`` of the limb, cut at the segments' rest lengths) or the segments' own
    ``diameter_mm = [base, tip]`` (a piecewise taper, continuous or stepped); exactly one of the two."""
    own = [sf.has("diameter_mm") for sf in seg_fields]
    limb_level = f.has("base_diameter_mm") or f.has("tip_diameter_mm")
    if any(own):
        if limb_level:
            key = "base_diameter_mm" if f.has("base_diameter_mm") else "tip_diameter_mm"
            raise f.error(
                key, f.table[key], "absent when the segments give diameter_mm (one taper or the other)"
            )
        if not all(own):
            i = own.index(False)
            raise seg_fields[i].error(
                "diameter_mm", None, "[base, tip] (mm) in every segment once one segment gives it"
            )
        return [sf.vector("diameter_mm", 2, 1e-3, 1e4, unit="mm") for sf in seg_fields]  # type: ignore[misc]
    d_base = f.number("base_diameter_mm", 1e-3, 1e4)
    d_tip = f.number("tip_diameter_mm", 1e-3, 1e4)
    total = sum(rest)
    out, s0 = [], 0.0
    for length in rest:
        d0 = d_base + (d_tip - d_base) * s0 / total
        d1 = d_base + (d_tip - d_base) * (s0 + length) / total
        out.append((d0, d1))
        s0 += length
    return out
