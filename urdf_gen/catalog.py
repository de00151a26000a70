"""Every bundled robot with its kind, and one URDF writer for all kinds.

Kinds (the ``kind`` field of a robot TOML):

=================  ===========================================================  ====================
kind               robots                                                       URDF writer
=================  ===========================================================  ====================
``pcc``            URSULA, the seed-000 hydraulic arm: soft limbs on a head     :mod:`urdf_writer`
``rolling_snake``  seed 003's rolling-joint snakes (``snake003_*``)             :mod:`rolling_snake_urdf`
``pneunet``        seed 002's PneuNets actuators (``pneunet_*``)                :mod:`pneunet`
``three_actuator`` seed 004's three-actuator arms (``seed004_*``)               :mod:`three_actuator`
=================  ===========================================================  ====================

Each writer builds its tree with :mod:`pccbullet.urdf_gen.urdf_xml` (the one URDF builder) and each loader
reads its TOML with :class:`pccbullet.core.fields.Fields` (the one field validator).

Only ``pcc`` robots have limbs made of PCC segments (``pose``, the simulator's ``World.load_robot``);
every kind has a URDF of the whole robot in one file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from pccbullet.core.errors import RobotNotFoundError, SpecError
from pccbullet.core.fields import read_toml
from pccbullet.urdf_gen.spec_loader import resolve_robot_path, robots_dir

log = logging.getLogger(__name__)

KINDS = ("pcc", "rolling_snake", "pneunet", "three_actuator")


@dataclass(frozen=True, slots=True)
class BundledRobot:
    """A robot TOML in ``assets/robots``: its name (file stem), kind and path."""

    name: str
    kind: str
    path: Path


def robot_kind(robot: str | Path) -> str:
    """The ``kind`` of a bundled robot name or TOML path (``"pcc"`` when the file has none).

    Raises:
        RobotNotFoundError: ``robot`` is neither bundled nor a file.
        SpecError: the kind is not one of :data:`KINDS`.
    """
    path = resolve_robot_path(robot)
    kind = read_toml(path).get("kind", "pcc")
    if kind not in KINDS:
        raise SpecError(path, "kind", kind, "one of " + ", ".join(repr(k) for k in KINDS))
    return str(kind)


def bundled() -> list[BundledRobot]:
    """Every bundled robot of every kind, sorted by name."""
    out = []
    for path in sorted(robots_dir().glob("*.toml")):
        out.append(BundledRobot(path.stem, robot_kind(path), path))
    return out


def write_robot_urdf(
    robot: str | Path,
    out_dir: str | Path,
    *,
    sections: int | None = None,
    combined: bool = False,
    mesh_uri: str | None = None,
) -> list[Path]:
    """Write the URDF files of a robot of any kind into ``out_dir`` (created if missing).

    Args:
        robot: bundled name or TOML path.
        out_dir: target folder; nothing is written elsewhere.
        sections: N per segment (``pcc`` robots only).
        combined: ``pcc`` robots: also ``{name}.urdf``, the whole robot in one file. The other kinds are
            always one file.
        mesh_uri: ``pcc`` robots: the mesh references, ``package://PKG/meshes`` or ``file://``
            (:func:`pccbullet.urdf_gen.urdf_parts.apply_mesh_uri`); the other kinds have no meshes.

    Returns:
        The URDF files written (meshes not listed), absolute paths.

    Raises:
        SpecError: ``sections`` given for a robot that has no PCC segments.
    """
    path = resolve_robot_path(robot)
    kind = robot_kind(path)
    out = Path(out_dir).expanduser().resolve()
    if kind != "pcc" and sections is not None:
        raise SpecError("<argument>", "sections", sections, f"not given: {path.stem!r} is a {kind} robot")
    if kind != "pcc" and mesh_uri is not None:
        raise SpecError(
            "<argument>", "mesh_uri", mesh_uri, f"not given: {path.stem!r} is a {kind} robot (no meshes)"
        )
    written = _write(path, kind, out, sections, combined, mesh_uri)
    for file in written:
        log.info("wrote %s", file)
    return written


def _write(
    path: Path, kind: str, out: Path, sections: int | None, combined: bool, mesh_uri: str | None = None
) -> list[Path]:
    if kind == "pcc":
        from pccbullet.urdf_gen.spec_loader import load_robot
        from pccbullet.urdf_gen.urdf_writer import write_urdf

        spec = load_robot(path, sections=sections)
        return write_urdf(spec, out, combined=combined, mesh_uri=mesh_uri).urdfs
    if kind == "rolling_snake":
        from pccbullet.urdf_gen.rolling_snake.spec import load_rolling_snake
        from pccbullet.urdf_gen.rolling_snake.urdf import write_rolling_snake_urdf

        return [write_rolling_snake_urdf(load_rolling_snake(path), out).resolve()]
    if kind == "pneunet":
        from pccbullet.urdf_gen.pneunet import load_pneunet, write_pneunet_urdf

        return [write_pneunet_urdf(load_pneunet(path), out).resolve()]
    if kind == "three_actuator":
        from pccbullet.urdf_gen.three_actuator import load_three_actuator, write_three_actuator_urdf

        return [write_three_actuator_urdf(load_three_actuator(path), out).resolve()]
    raise RobotNotFoundError(f"robot kind {kind!r} has no URDF writer")  # pragma: no cover (KINDS)
