"""Pose files: a robot's limbs posed segment by segment, in degrees and millimetres.

A pose file is a TOML file (or a JSON file with the same keys, ``.json``) read by :func:`load_pose_file` and
accepted by ``pccbullet pose --pose-file`` and ``pccbullet export --pose-file``; the bundled ones
(``assets/poses``, e.g. ``ursula_fig10``) are found by name. Format::

    robot = "ursula"               # bundled robot name or robot TOML path (relative to this file)
    description = "..."            # optional free text

    [[limbs.camera.segments]]      # one table per segment of the limb, base to tip, all of them
    bend_deg = 180.0               # total arc angle (deg), |bend| <= the segment's bend_max_deg
    plane_deg = -5.0               # bending plane about the segment's base z, from x (deg),
                                   # |plane| <= plane_max_deg
    length_mm = 600.0              # arc length (mm), in [length_min_mm, length_max_mm]; default: rest length

``bend``, ``plane`` and ``length`` are pccbullet's PCC parameters
(:class:`~pccbullet.urdf_gen.pcc.PccConfig`); a segment's plane is measured in the frame its predecessor's
tip leaves (as in the robot). Seed 001 calls half of ``bend`` its "theta" (the chord angle), see
:func:`~pccbullet.urdf_gen.pcc.bend_from_paper_theta`.
Limbs the file does not list stay straight at their rest length. Every value is checked against the
robot's limits; a bad one raises :class:`~pccbullet.core.errors.SpecError` naming the file, the
field (``limbs.camera.segments[0].bend_deg``), the value and the allowed range.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from pccbullet.core.errors import ConfigurationError, PccBulletError, SpecError, cap, clip
from pccbullet.core.fields import (
    MAX_DEPTH,
    MAX_TOML_BYTES,
    Fields,
    as_finite,
    nesting_depth,
    read_limited,
    read_toml,
)
from pccbullet.urdf_gen.pcc import PccConfig, rest_configs
from pccbullet.urdf_gen.spec_loader import load_robot, resolve_robot_path
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec, SegmentSpec

__all__ = ["PoseFile", "load_pose_file", "poses_dir", "resolve_pose_path"]


@dataclass(frozen=True, slots=True)
class PoseFile:
    """A validated pose file.

    Attributes:
        source: the pose file.
        robot: the robot the poses were checked against.
        description: the file's ``description`` ("" when absent).
        configs: per posed limb, the configurations of its segments, base to tip (SI: rad, rad, m).
    """

    source: Path
    robot: RobotSpec
    description: str
    configs: dict[str, tuple[PccConfig, ...]]

    def limb_configs(self, limb: str) -> list[PccConfig]:
        """``limb``'s segment configurations: as posed, or straight at rest length when not listed."""
        if limb in self.configs:
            return list(self.configs[limb])
        return rest_configs(self.robot.limb(limb).segments)


def poses_dir() -> Path:
    """The folder of bundled pose files (``assets/poses``, installed as ``pccbullet.assets``)."""
    return Path(str(files("pccbullet.assets") / "poses"))


def resolve_pose_path(pose: str | Path) -> Path:
    """A pose-file path, or the name of a bundled pose file (``"ursula_fig10"``) -> its path.

    A path (ending in ``.toml``, with a folder part, or naming something that exists) is returned as
    given; a bare name is looked up in :func:`poses_dir`. Raises :class:`ConfigurationError` listing the
    bundled names otherwise.
    """
    candidate = Path(pose)
    if candidate.suffix in (".toml", ".json") or len(candidate.parts) != 1 or candidate.exists():
        return candidate
    bundled = poses_dir() / f"{candidate.name}.toml"
    if bundled.is_file():
        return bundled
    names = ", ".join(sorted(p.stem for p in poses_dir().glob("*.toml")))
    raise ConfigurationError(f"unknown pose file {cap(str(pose))}: not a TOML file and not bundled ({names})")


def load_pose_file(
    pose: str | Path, robot: str | Path | RobotSpec | None = None, *, sections: int | None = None
) -> PoseFile:
    """Read and check a pose file (a path or a bundled name, see :func:`resolve_pose_path`).

    Args:
        pose: the pose file.
        robot: the robot to pose instead of the file's ``robot`` (a name, a TOML path or a loaded spec);
            ``None``: the file's.
        sections: sections per segment when the robot is loaded here (``None``: the robot file's).

    Raises:
        SpecError: a bad field (file, field, value, allowed range in the message).
        ConfigurationError: an unknown bundled pose name.
    """
    path = resolve_pose_path(pose)
    f = Fields(_read_table(path), path)
    name = f.string("robot")
    description = f.string("description", default="") if f.has("description") else ""
    if isinstance(robot, RobotSpec):
        spec = robot
    else:
        target: str | Path = name if robot is None else robot
        if robot is None and name.endswith(".toml") and not Path(name).is_absolute():
            target = path.parent / name
        try:
            spec = load_robot(resolve_robot_path(target), sections=sections)
        except PccBulletError as exc:
            raise f.error("robot", name, f"a bundled PCC robot name or a robot TOML path ({exc})") from exc
    limbs = f.sub("limbs")
    by_name = {limb.name: limb for limb in spec.limbs}
    configs = {}
    for key in list(limbs.table):
        if key not in by_name:
            known = ", ".join(repr(n) for n in by_name)
            raise limbs.error(key, limbs.table[key], f"a limb of robot '{spec.name}' ({known})")
        configs[key] = _limb(limbs.sub(key), by_name[key])
    limbs.finish()
    f.finish()
    return PoseFile(path, spec, description, configs)


def _read_table(path: Path) -> dict:
    """A pose file's table: JSON for a ``.json`` file (the same keys as the TOML), else TOML."""
    if path.suffix.lower() != ".json":
        return read_toml(path)
    data = read_limited(path, MAX_TOML_BYTES, "JSON file")
    try:
        table = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SpecError(path, "<file>", clip(str(exc)), "a JSON object in UTF-8") from exc
    if not isinstance(table, dict) or nesting_depth(table) > MAX_DEPTH:
        raise SpecError(
            path, "<file>", type(table).__name__, f"a JSON object nested at most {MAX_DEPTH} deep"
        )
    return table


def _limb(f: Fields, limb: LimbSpec) -> tuple[PccConfig, ...]:
    n = len(limb.segments)
    tables = f.table_list("segments")
    if len(tables) != n:
        raise f.error(
            "segments", f.table["segments"], f"{n} segment tables (limb '{limb.name}' has {n} segments)"
        )
    out = []
    for k, (t, seg) in enumerate(zip(tables, limb.segments, strict=True)):
        where = f"limb '{limb.name}' segment {k + 1}"
        bend = _ranged(t, "bend_deg", math.degrees(seg.bend_max), f"{where}: bend_max_deg")
        plane = _ranged(t, "plane_deg", math.degrees(seg.plane_max), f"{where}: plane_max_deg")
        length = _length(t, seg, where)
        t.finish()
        out.append(PccConfig(math.radians(bend), math.radians(plane), length))
    f.finish()
    return tuple(out)


def _ranged(f: Fields, key: str, limit: float, what: str) -> float:
    """A required finite number in ``[-limit, limit]``; ``what`` names where the limit comes from."""
    value = f.raw(key)
    x = as_finite(value)
    if x is None or abs(x) > limit + 1e-9:
        raise f.error(key, value, f"a number in [{-limit:g}, {limit:g}] ({what})")
    return x


def _length(f: Fields, seg: SegmentSpec, where: str) -> float:
    """``length_mm`` in the segment's limits (m), default its rest length."""
    lo, hi = seg.length_min * 1e3, seg.length_max * 1e3
    if not f.has("length_mm"):
        f.raw("length_mm", None)
        return seg.length
    value = f.raw("length_mm")
    x = as_finite(value)
    if x is None or not lo - 1e-9 <= x <= hi + 1e-9:
        raise f.error(
            "length_mm", value, f"a number in [{lo:g}, {hi:g}] ({where}: length_min_mm, length_max_mm)"
        )
    return min(max(x * 1e-3, seg.length_min), seg.length_max)
