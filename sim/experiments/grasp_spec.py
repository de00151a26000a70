"""Grasp experiment files (``kind = "grasp"``) -> :class:`GraspSpec`.

Format (see ``assets/experiments/grasper_grasp.toml``)::

    kind = "grasp"
    name = "grasper_grasp"           # default: the file stem
    robot = "ursula"                 # bundled name or TOML path (relative to this file)
    limbs = ["grasper"]              # the limbs loaded (default: all); the grasping limb among them
    sections = 5                     # optional: override N of every segment
    medium = "water"                 # air | water | seawater | vacuum
    drive = "tendons"                # the only drive of a grasp: every loaded limb through its tendons
    external_loads = true            # contacts estimated into the limbs' implicit step (default true)
    record_hz = 100                  # must divide the 1000 Hz physics rate
    seabed_z_mm = -600               # optional: a seabed plane at this height
    outputs = ["csv", "plots"]       # any of csv, plots (metrics.json and metadata.json always)

    [[objects]]                      # one table per placed object (pccbullet.sim.objects.place)
    name = "can"
    shape = "cylinder"               # sphere | cylinder | box
    radius_mm = 45                   # sphere, cylinder
    length_mm = 100                  # cylinder (along its body z)
    size_mm = [40, 40, 300]          # box edges
    density_kg_m3 = 1100             # or mass_kg (0: static); exactly one
    material = "pla"                 # friction against the limbs (pccbullet.sim.objects.friction)
    position_mm = [500, -150, -110]
    orientation_xyzw = [0, 0, 0, 1]  # optional
    fixed = false                    # optional

    [grasp]
    limb = "grasper"                 # the grasping limb
    object = "can"                   # the object it grasps (a free one)
    start_pcc = [[30, 180, 300], [0, 0, 300]]   # per segment [bend_deg, plane_deg, length_mm]
    settle_s = 2.0                   # the start pose is held this long before the approach

    [grasp.approach]                 # then close, lift, hold: each phase's goal, reached by a linear
    duration_s = 4.0                 #   ramp from the previous goal over ramp_s (default: 3/4 of it)
    pcc = [[3, 180, 300], [0, 90, 300]]         # the tendon controller's goal, or
    # tensions_n = [...]             # every tendon's tension (N), in the limb's tendon order
    # grip_n = [0, 0, 0, 8]          # with pcc: the distal segment's tendons held at these (N)

A phase without ``pcc`` and ``tensions_n`` keeps the previous phase's goal (a hold). Bad values are refused
in one line naming the file, the field, the value and what is allowed.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pccbullet.core.fields import Fields
from pccbullet.sim.experiments.spec import MEDIA, PHYSICS_HZ
from pccbullet.sim.objects.spec import MAX_OBJECTS, ObjectSpec, object_from_fields
from pccbullet.urdf_gen.specs import RobotSpec

PHASES = ("approach", "close", "lift", "hold")
GRASP_OUTPUTS = ("csv", "plots")
MAX_PHASE_S = 600.0


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    """One phase of the grasp.

    Attributes:
        name: approach | close | lift | hold. duration: s. ramp: s (the goal is reached linearly by then).
        pcc: per segment ``(bend, plane, length)`` (rad, rad, m), or ``None``.
        tensions: per tendon (N), or ``None``; neither: keep the previous goal.
        grip: with a PCC goal, the tensions (N) the distal segment's set is held at
            (:meth:`pccbullet.sim.limb.tendons.TendonDrive.hold`), or ``None``: keep the previous grip.
    """

    name: str
    duration: float
    ramp: float
    pcc: tuple[tuple[float, float, float], ...] | None
    tensions: tuple[float, ...] | None
    grip: tuple[float, ...] | None = None


@dataclass(frozen=True, slots=True)
class GraspSpec:
    """A parsed grasp experiment (see the module docstring for the fields)."""

    name: str
    robot: RobotSpec
    robot_path: Path
    robot_sha256: str
    limbs: tuple[str, ...]
    medium: str
    record_hz: int
    seabed_z: float | None
    outputs: tuple[str, ...]
    objects: tuple[ObjectSpec, ...]
    limb: str
    target: str
    start_pcc: tuple[tuple[float, float, float], ...]
    settle: float
    phases: tuple[PhaseSpec, ...]
    source: str
    sections: int | None = None
    external_loads: bool = True
    table: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def duration(self) -> float:
        """Simulated time after settling (s)."""
        return sum(p.duration for p in self.phases)


def _pcc(f: Fields, key: str, robot: RobotSpec, limb: str) -> tuple[tuple[float, float, float], ...]:
    segs = robot.limb(limb).segments
    value = f.raw(key)
    allowed = (
        f"{len(segs)} rows [bend_deg, plane_deg, length_mm], one per segment of '{limb}', each bend in "
        "[0, bend_max], |plane| <= plane_max, length in [length_min, length_max]"
    )
    if not isinstance(value, list) or len(value) != len(segs):
        raise f.error(key, value, allowed)
    out = []
    for row, seg in zip(value, segs, strict=True):
        ok = isinstance(row, list) and len(row) == 3
        ok = ok and all(isinstance(v, int | float) and not isinstance(v, bool) for v in row)
        if ok:
            bend, plane, length = math.radians(row[0]), math.radians(row[1]), row[2] * 1e-3
            ok = all(math.isfinite(v) for v in (bend, plane, length))
            ok = ok and 0.0 <= bend <= seg.bend_max + 1e-12 and abs(plane) <= seg.plane_max + 1e-12
            ok = ok and seg.length_min - 1e-12 <= length <= seg.length_max + 1e-12
        if not ok:
            raise f.error(key, value, allowed)
        out.append((bend, plane, length))
    return tuple(out)


def _phase(f: Fields, name: str, robot: RobotSpec, limb: str, n_tendons: int, n_grip: int) -> PhaseSpec:
    duration = f.number("duration_s", 0.0, MAX_PHASE_S, lo_open=True)
    if abs(duration * PHYSICS_HZ - round(duration * PHYSICS_HZ)) > 1e-6:
        raise f.error("duration_s", duration, f"a whole number of physics steps (1/{PHYSICS_HZ} s)")
    ramp = f.number("ramp_s", 0.0, duration, default=0.75 * duration)
    if f.has("pcc") and f.has("tensions_n"):
        raise f.error("tensions_n", f.table["tensions_n"], "either pcc or tensions_n, not both")
    pcc = _pcc(f, "pcc", robot, limb) if f.has("pcc") else None
    tensions = f.vector("tensions_n", n_tendons, 0.0, 1000.0, unit="N") if f.has("tensions_n") else None
    if f.has("grip_n") and tensions is not None:
        raise f.error("grip_n", f.table["grip_n"], "a grip with PCC goals, not with tensions_n")
    grip = f.vector("grip_n", n_grip, 0.0, 1000.0, unit="N") if f.has("grip_n") else None
    f.finish()
    return PhaseSpec(name, duration, ramp, pcc, tensions, grip)


def grasp_from_table(table: dict[str, Any], source: str | Path, *, base_dir: Path) -> GraspSpec:
    """Validate a parsed ``kind = "grasp"`` table; raises :class:`SpecError` naming file, field, value."""
    import copy

    from pccbullet.sim.experiments.spec import _strings, read_robot

    raw = copy.deepcopy(table)
    f = Fields(copy.deepcopy(table), Path(source))
    f.constant("kind", "grasp")
    name = f.identifier("name", default=Path(source).stem.replace("-", "_") or "grasp")
    robot, robot_path, sections = read_robot(f, base_dir)
    names = tuple(limb.name for limb in robot.limbs)
    limbs = _strings(f, "limbs", names, names)
    medium = f.string("medium", choices=MEDIA, default="water")
    f.string("drive", choices=("tendons",), default="tendons")
    external_loads = f.raw("external_loads", True)
    if not isinstance(external_loads, bool):
        raise f.error("external_loads", external_loads, "true or false")
    record_hz = f.integer("record_hz", 1, PHYSICS_HZ, default=100)
    if PHYSICS_HZ % record_hz:
        raise f.error("record_hz", record_hz, f"a divisor of the {PHYSICS_HZ} Hz physics rate")
    seabed = f.number("seabed_z_mm", -100_000.0, 100_000.0) * 1e-3 if f.has("seabed_z_mm") else None
    outputs = _strings(f, "outputs", GRASP_OUTPUTS, GRASP_OUTPUTS)
    f.string("description", default="-")
    objects = tuple(object_from_fields(o) for o in f.table_list("objects", max_items=MAX_OBJECTS))
    seen = [o.name for o in objects]
    if len(set(seen)) != len(seen):
        raise f.error("objects", seen, "distinct object names")
    g = f.sub("grasp")
    limb = g.string("limb", choices=limbs)
    tendons = robot.limb(limb).tendons
    if not tendons:
        raise g.error("limb", limb, "a limb that declares tendons ([[limbs.tendons]])")
    n_tendons = len(tendons)
    target = g.string("object", choices=tuple(seen))
    obj = objects[seen.index(target)]
    if obj.fixed or obj.mass == 0.0:
        raise g.error("object", target, "a free object (not fixed, mass > 0)")
    start = _pcc(g, "start_pcc", robot, limb)
    settle = g.number("settle_s", 0.0, MAX_PHASE_S, default=2.0)
    n_grip = sum(t.anchor_segment == len(robot.limb(limb).segments) - 1 for t in tendons)
    phases = tuple(_phase(g.sub(p), p, robot, limb, n_tendons, n_grip) for p in PHASES)
    g.finish()
    f.finish()
    return GraspSpec(
        name=name, robot=robot, robot_path=robot_path,
        robot_sha256=hashlib.sha256(robot_path.read_bytes()).hexdigest(), limbs=limbs, medium=medium,
        record_hz=record_hz, seabed_z=seabed, outputs=outputs, objects=objects, limb=limb, target=target,
        start_pcc=start, settle=settle, phases=phases, source=str(source), sections=sections,
        external_loads=external_loads, table=raw,
    )  # fmt: skip
