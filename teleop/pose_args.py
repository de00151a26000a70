"""``pccbullet pose``'s whole configurations: ``--set LIMB:SEG:BEND,PLANE[,LENGTH]`` entries, and the check of
every configuration against the robot's limits before anything is compiled or simulated.

``--set`` takes degrees for ``BEND`` and ``PLANE`` and metres for ``LENGTH`` (as ``--bend``, ``--plane`` and
``--length`` do); a segment without ``LENGTH`` keeps its rest length; segments no entry names stay straight.
Errors are one line naming the entry as the user typed it, the value and the allowed range.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pccbullet.core.errors import ConfigurationError, clip
from pccbullet.urdf_gen.pcc import PccConfig, check_config, rest_configs
from pccbullet.urdf_gen.specs import RobotSpec

SET_FORMAT = "LIMB:SEG:BEND,PLANE[,LENGTH] in deg, deg, m (e.g. camera:1:90,30 or grasper:2:-30,15,0.295)"
_SET = re.compile(r"^([A-Za-z][A-Za-z0-9_]*):([0-9]{1,4}):([^,]+),([^,]+)(?:,([^,]+))?$")


@dataclass(frozen=True, slots=True)
class SetEntry:
    """One ``--set`` entry: ``text`` as typed, limb, 1-based segment, bend and plane (deg), length (m or
    ``None`` for the rest length)."""

    text: str
    limb: str
    segment: int
    bend_deg: float
    plane_deg: float
    length_m: float | None


def parse_set(text: str) -> SetEntry:
    """An ``argparse`` ``type=``: ``LIMB:SEG:BEND,PLANE[,LENGTH]`` -> :class:`SetEntry` (finite numbers)."""
    m = _SET.match(text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(f"{clip(repr(text))} is invalid; allowed: {SET_FORMAT}")
    numbers: list[float | None] = []
    for part in m.group(3, 4, 5):
        if part is None:
            numbers.append(None)
            continue
        try:
            x = float(part)
        except ValueError:
            x = math.nan
        if not math.isfinite(x):
            raise argparse.ArgumentTypeError(
                f"{clip(repr(text))}: {clip(repr(part))} is not a finite number; allowed: {SET_FORMAT}"
            )
        numbers.append(x)
    bend, plane, length = numbers
    assert bend is not None and plane is not None  # the pattern requires both
    return SetEntry(text, m.group(1), int(m.group(2)), bend, plane, length)


def check_limits(spec: RobotSpec, poses: dict[str, list[PccConfig]], origin: str = "") -> None:
    """Raise :class:`ConfigurationError` (prefixed by ``origin``) for the first configuration outside its
    segment's limits (:func:`~pccbullet.urdf_gen.pcc.check_config`, the words of
    :meth:`~pccbullet.sim.robot.Robot.pcc_joints`), without PyBullet."""
    for name, configs in poses.items():
        limb = spec.limb(name)
        for s, (c, seg) in enumerate(zip(configs, limb.segments, strict=True), start=1):
            check_config(c, seg, f"{origin}limb '{limb.name}' segment {s}")


def apply_sets(
    spec: RobotSpec, poses: dict[str, list[PccConfig]], sets: Sequence[SetEntry]
) -> dict[str, list[PccConfig]]:
    """``poses`` with every entry applied (a limb no pose names starts straight at rest length), each
    entry checked: its limb, its segment and its values (errors name the entry)."""
    out = {name: list(configs) for name, configs in poses.items()}
    seen: dict[tuple[str, int], str] = {}
    names = [limb.name for limb in spec.limbs]
    for e in sets:
        origin = f"--set {clip(repr(e.text))}: "
        if e.limb not in names:
            raise ConfigurationError(
                f"{origin}robot '{spec.name}' has no limb {e.limb!r}; allowed: " + ", ".join(names)
            )
        segments = spec.limb(e.limb).segments
        if not 1 <= e.segment <= len(segments):
            raise ConfigurationError(
                f"{origin}segment {e.segment} is invalid for limb '{e.limb}'; allowed: 1..{len(segments)}"
            )
        if (e.limb, e.segment) in seen:
            raise ConfigurationError(f"{origin}segment {e.segment} of limb '{e.limb}' is set twice")
        seen[(e.limb, e.segment)] = e.text
        configs = out.setdefault(e.limb, rest_configs(segments))
        seg = segments[e.segment - 1]
        length = seg.length if e.length_m is None else e.length_m
        configs[e.segment - 1] = PccConfig(math.radians(e.bend_deg), math.radians(e.plane_deg), length)
        check_config(configs[e.segment - 1], seg, f"{origin}limb '{e.limb}' segment {e.segment}")
    return out
