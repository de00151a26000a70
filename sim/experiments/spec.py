"""Experiment files (TOML) -> :class:`ExperimentSpec`.

Format (see ``assets/experiments/*.toml``)::

    name = "camera_sweep"            # default: the file stem
    robot = "ursula"                 # bundled name or TOML path (relative to this file)
    mode = "kinematic"               # kinematic | dynamic | model
    model = "newton_euler"           # model mode only: name in pccbullet.sim.experiments.runner.MODELS
    medium = "air"                   # air | water | seawater | vacuum
    chain = "rod"                    # rod | rrp (pccbullet.urdf_gen.rod); default: rod if dynamic, else rrp
    drive = "tendons"                # dynamic mode: joints (spring targets, default) | tendons (rod chain)
                                     #   | chambers (rod chain; the channels, or the inputs' statics)
    shape_loop_hz = 50               # drive = tendons: the shape loop's rate (0: off, default); a divisor
                                     #   of 1000 (pccbullet.sim.limb.tendons.TendonDrive.follow_shape)
    duration_s = 2.0                 # > 0
    record_hz = 100                  # must divide the 1000 Hz physics rate
    sections = 4                     # optional: override N of every segment
    seed = 0                         # optional default seed
    outputs = ["csv", "npz"]         # any of csv, npz, plots
    limbs = ["camera"]               # optional: limbs to record (default: all)

    [inputs.bend]                    # one table per PCC input, any name
    target = "camera.s1.bend_deg"    # limb.sK.parameter; bend|plane (rad), bend_deg|plane_deg,
    kind = "ramp"                    #   length (m), length_mm
    t0_s = 0.0
    t1_s = 1.0
    start = 0
    end = 90

    [channels.tendon_1]              # named actuator-channel inputs: the model mode's, and the chambers'
                                     #   with drive = "chambers" (motor_i or pressure_i, as the model's)
    kind = "step"
    t0_s = 0.5
    after = 1.5

Segments without an input stay straight at their rest length; parameters without one keep
bend = 0, plane = 0, length = rest length.

Refused: a duration shorter than one recording period; a limb listed twice in ``limbs`` (or an output
twice in ``outputs``); an input aimed at a limb that ``limbs`` does not record; a run whose recorded
samples (tips, segment tips, PCC and the 4x4 pose of every section, float64) would exceed
:data:`MAX_RECORD_BYTES` (1 GiB; the runner holds them in memory): the message gives the estimate.
"""

from __future__ import annotations

import copy
import hashlib
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from importlib.resources import files
from pathlib import Path
from typing import Any

from pccbullet.core.errors import ConfigurationError, PccBulletError, SpecError, cap
from pccbullet.core.fields import Fields, read_toml
from pccbullet.sim.experiments.inputs import Profile, parse_profile
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.medium import MEDIA as WORLD_MEDIA
from pccbullet.sim.world import WorldMode
from pccbullet.urdf_gen.spec_loader import load_robot, resolve_robot_path
from pccbullet.urdf_gen.specs import RobotSpec
from pccbullet.urdf_gen.topology import Topology

PHYSICS_HZ = 1000  # Hz, the world's physics rate (dt = 1 ms)
MEDIA = tuple(WORLD_MEDIA)  # air, water, seawater, vacuum
OUTPUTS = ("csv", "npz", "plots")
PARAMETERS = {"bend": 1.0, "plane": 1.0, "length": 1.0, "bend_deg": math.pi / 180.0}
PARAMETERS |= {"plane_deg": math.pi / 180.0, "length_mm": 1e-3}
_TARGET = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\.s([0-9]{1,6})\.([a-z_]+)$")
MAX_RECORD_BYTES = 2**30  # bytes, largest estimated size of the recorded samples of one run (float64)


class ExperimentMode(StrEnum):
    """What runs an experiment: a kinematic or a dynamic :class:`~pccbullet.sim.world.World`, or a model
    whose shapes pose a kinematic one. A ``str``: it prints and serializes as its name."""

    KINEMATIC = "kinematic"
    """The inputs' PCC arcs are the limbs' joints (PCC is the truth)."""
    DYNAMIC = "dynamic"
    """The inputs drive compliant limbs (spring targets or tendons); PyBullet integrates."""
    MODEL = "model"
    """A model (:data:`pccbullet.sim.experiments.runner.MODELS`) turns the inputs into shapes."""

    @property
    def world(self) -> WorldMode:
        """The mode of the world the run loads (a model's shapes pose a kinematic world)."""
        return WorldMode.DYNAMIC if self is ExperimentMode.DYNAMIC else WorldMode.KINEMATIC


@dataclass(frozen=True, slots=True)
class InputSpec:
    """One PCC input: a profile driving one parameter of one segment.

    Attributes:
        name: the input's table name. limb: limb name. segment: 0-based segment index.
        parameter: ``"bend"`` (rad), ``"plane"`` (rad) or ``"length"`` (m); profile values are SI.
        profile: the time profile (already scaled to SI).
    """

    name: str
    limb: str
    segment: int
    parameter: str
    profile: Profile


@dataclass(frozen=True, slots=True)
class ExperimentSpec:
    """A parsed experiment.

    Attributes:
        name: experiment name. robot: the loaded robot spec. robot_path: its TOML file.
        robot_sha256: SHA-256 of the robot TOML bytes. mode: kinematic | dynamic | model.
        model: model name for the model mode ("" otherwise). medium: air | water | seawater | vacuum.
        chain: the limbs' chain, rod | rrp (default: rod in dynamic mode, rrp otherwise).
        drive: dynamic mode: what follows the inputs, ``"joints"`` (spring targets), ``"tendons"`` (every
            limb's tendons, :mod:`pccbullet.sim.limb.tendons`; the rod chain, limbs that declare tendons) or
            ``"chambers"`` (every limb's chambers, :mod:`pccbullet.sim.limb.chambers`: the channels, or
            the pressures that hold the inputs' arcs; the rod chain, limbs that declare chambers).
        shape_loop_hz: with tendons, the rate of their shape loop (measured segment ends; 0: off).
        duration: simulated time (s). record_hz: recording rate (Hz). seed: default seed.
        inputs: PCC inputs. channels: named actuator-channel profiles (model mode).
        outputs: files to write. limbs: limbs to record. source: the experiment file (or "<dict>").
        table: the raw TOML table (for sweeps and metadata).
    """

    name: str
    robot: RobotSpec
    robot_path: Path
    robot_sha256: str
    mode: ExperimentMode
    model: str
    medium: str
    duration: float
    record_hz: int
    seed: int
    inputs: tuple[InputSpec, ...]
    channels: tuple[tuple[str, Profile], ...]
    outputs: tuple[str, ...]
    limbs: tuple[str, ...]
    source: str
    sections: int | None = None
    table: dict[str, Any] = field(default_factory=dict, compare=False)
    chain: Topology = Topology.RRP
    drive: Drive = Drive.JOINTS
    shape_loop_hz: int = 0

    @property
    def substeps(self) -> int:
        """Physics steps per recorded sample."""
        return PHYSICS_HZ // self.record_hz

    @property
    def n_steps(self) -> int:
        """Physics steps in the whole run."""
        return round(self.duration * PHYSICS_HZ)


def _values(kind: type[StrEnum]) -> tuple[str, ...]:
    """The names a TOML field of ``kind`` (a mode's enum) takes, in the enum's order."""
    return tuple(member.value for member in kind)


def experiments_dir() -> Path:
    """The folder of bundled experiment and sweep TOML files (``assets/experiments``)."""
    return Path(str(files("pccbullet.assets") / "experiments"))


def resolve_experiment_path(experiment: str | Path) -> Path:
    """A TOML path, or the name of a bundled experiment or sweep file (``"camera_sweep"``) -> its path.

    A path (ending in ``.toml``, or naming something that exists) is returned as given; a bare name is looked
    up in :func:`experiments_dir`. Raises :class:`ConfigurationError` listing the bundled names otherwise.
    """
    candidate = Path(experiment)
    if candidate.suffix == ".toml" or candidate.exists() or len(candidate.parts) != 1:
        return candidate
    bundled = experiments_dir() / f"{candidate.name}.toml"
    if bundled.is_file():
        return bundled
    names = ", ".join(sorted(p.stem for p in experiments_dir().glob("*.toml")))
    raise ConfigurationError(
        f"unknown experiment {cap(str(experiment))}: not a TOML file and not bundled ({names})"
    )


def load_experiment(path: str | Path) -> ExperimentSpec:
    """Read and validate an experiment TOML file (or a bundled one by name, see
    :func:`resolve_experiment_path`); raises :class:`SpecError` naming file, field, value."""
    path = resolve_experiment_path(path)
    return experiment_from_table(read_toml(path), path, base_dir=path.parent)


def experiment_from_table(table: dict[str, Any], source: str | Path, *, base_dir: Path) -> ExperimentSpec:
    """Validate a parsed experiment table.

    Args:
        table: the TOML table (not modified).
        source: file name used in error messages.
        base_dir: folder that relative robot and recorded-input paths are resolved against.
    """
    raw = copy.deepcopy(table)
    f = Fields(copy.deepcopy(table), Path(source))
    if table.get("kind") == "grasp":
        raise f.error(
            "kind", "grasp", "no kind here: a grasp experiment is run by run_grasp or pccbullet run"
        )
    name = f.identifier("name", default=Path(source).stem.replace("-", "_") or "experiment")
    robot, robot_path, sections = read_robot(f, base_dir)
    mode = ExperimentMode(f.string("mode", choices=_values(ExperimentMode), default=ExperimentMode.KINEMATIC))
    model = f.identifier("model") if f.has("model") else ""
    if mode is ExperimentMode.MODEL and not model:
        raise f.error("model", None, "a model name (required when mode = 'model')")
    medium = f.string("medium", choices=MEDIA, default="air")
    chain = Topology(f.string("chain", choices=_values(Topology), default=mode.world.default_chain))
    drive = Drive(f.string("drive", choices=_values(Drive), default=Drive.JOINTS))
    if drive in (Drive.TENDONS, Drive.CHAMBERS) and not (
        mode.world.integrates and limb_topology(chain).tendons
    ):
        raise f.error("drive", drive.value, "'joints' unless mode = 'dynamic' and chain = 'rod'")
    shape_loop_hz = f.integer("shape_loop_hz", 0, PHYSICS_HZ, default=0)
    if shape_loop_hz and (drive is not Drive.TENDONS or PHYSICS_HZ % shape_loop_hz):
        raise f.error(
            "shape_loop_hz", shape_loop_hz, f"0, or with drive = 'tendons' a divisor of {PHYSICS_HZ}"
        )
    duration = f.number("duration_s", 0.0, 3600.0, lo_open=True)
    record_hz = f.integer("record_hz", 1, PHYSICS_HZ, default=100)
    if PHYSICS_HZ % record_hz:
        raise f.error("record_hz", record_hz, f"a divisor of the {PHYSICS_HZ} Hz physics rate")
    periods = duration * record_hz
    if abs(periods - round(periods)) > 1e-9 or round(periods) < 1:
        raise f.error(
            "duration_s", duration, f"a whole number >= 1 of recording periods (1/{record_hz} s at record_hz)"
        )
    seed = f.integer("seed", 0, 2**32 - 1, default=0)
    outputs = _strings(f, "outputs", OUTPUTS, ("csv", "npz"))
    limb_names = tuple(limb.name for limb in robot.limbs)
    limbs = _strings(f, "limbs", limb_names, limb_names)
    f.string("description", default="-")
    _check_record_size(f, robot, limbs, round(periods) + 1, record_hz)

    inputs = []
    table_in = f.sub("inputs", default=None)
    if table_in is not None:
        for key in sorted(table_in.table):
            inputs.append(_input(key, table_in.sub(key), robot, base_dir))
            table_in.used.add(key)
        table_in.finish()
    seen: dict[tuple[str, int, str], str] = {}
    for inp in inputs:
        if inp.limb not in limbs:
            raise SpecError(
                source,
                f"inputs.{inp.name}.target",
                f"{inp.limb}.s{inp.segment + 1}",
                "a limb recorded by the experiment (limbs = [" + ", ".join(map(repr, limbs)) + "]); "
                f"add {inp.limb!r} to limbs",
            )
        k = (inp.limb, inp.segment, inp.parameter)
        if k in seen:
            raise SpecError(
                source, f"inputs.{inp.name}.target", inp.name, f"a target not driven by {seen[k]}"
            )
        seen[k] = f"inputs.{inp.name}"
    channels = []
    table_ch = f.sub("channels", default=None)
    if table_ch is not None:
        for key in sorted(table_ch.table):
            sub = table_ch.sub(key)
            channels.append((key, parse_profile(sub, base_dir)))
            sub.finish()
        table_ch.finish()
    if drive is Drive.CHAMBERS:
        _check_chamber_channels(f, robot, [name for name, _ in channels], bool(inputs))
    f.finish()
    return ExperimentSpec(
        name=name,
        robot=robot,
        robot_path=robot_path,
        robot_sha256=hashlib.sha256(robot_path.read_bytes()).hexdigest(),
        mode=mode,
        model=model,
        medium=medium,
        duration=duration,
        record_hz=record_hz,
        seed=seed,
        inputs=tuple(inputs),
        channels=tuple(channels),
        outputs=outputs,
        limbs=limbs,
        source=str(source),
        sections=sections,
        table=raw,
        chain=chain,
        drive=drive,
        shape_loop_hz=shape_loop_hz,
    )


def _check_chamber_channels(f: Fields, robot: RobotSpec, names: list[str], inputs: bool) -> None:
    """With ``drive = "chambers"``: every limb declares chambers, the channels are theirs (``motor_i`` of a
    ``[hydraulic_drive]``, else ``pressure_i``) and PCC inputs are not given beside them."""
    from pccbullet.sim.limb.chambers import declares_chambers

    bare = [limb.name for limb in robot.limbs if not declares_chambers(limb)]
    if bare:
        raise f.error("drive", "chambers", f"a robot whose limbs declare chambers ({bare[0]!r} has none)")
    kind = "motor" if "hydraulic_drive" in robot.extra else "pressure"
    count = max(limb.actuators.count * len(limb.segments) for limb in robot.limbs if limb.actuators)
    allowed = [f"{kind}_{i + 1}" for i in range(count)]
    for name in names:
        if name not in allowed:
            raise f.error(f"channels.{name}", name, f"a channel out of {allowed[0]} ... {allowed[-1]}")
    if names and inputs:
        raise f.error("inputs", "given", "no PCC inputs beside channels with drive = 'chambers'")


def read_robot(f: Fields, base_dir: Path) -> tuple[RobotSpec, Path, int | None]:
    """The ``robot`` (a bundled name or a TOML path relative to ``base_dir``) and ``sections`` fields: the
    loaded spec, its file and the sections override."""
    robot_name = f.string("robot")
    robot_arg: str | Path = robot_name
    if robot_name.endswith(".toml") and not Path(robot_name).is_absolute():
        robot_arg = base_dir / robot_name
    sections = f.integer("sections", 1, 200, default=None) if f.has("sections") else None
    try:
        robot_path = resolve_robot_path(robot_arg)
        return load_robot(robot_path, sections=sections), robot_path, sections
    except PccBulletError as exc:
        raise f.error("robot", robot_name, f"a bundled robot name or a robot TOML path ({exc})") from exc


def _strings(f: Fields, key: str, choices: tuple[str, ...], default: tuple[str, ...]) -> tuple[str, ...]:
    """A non-empty list of distinct strings out of ``choices``."""
    value = f.raw(key, list(default))
    allowed = "a non-empty list of distinct names out of " + ", ".join(repr(c) for c in choices)
    if (
        not isinstance(value, list)
        or not value
        or any(not isinstance(v, str) or v not in choices for v in value)
    ):
        raise f.error(key, value, allowed)
    if len(set(value)) != len(value):
        dup = next(v for i, v in enumerate(value) if v in value[:i])
        raise f.error(key, value, allowed, f"{dup!r} is listed more than once")
    return tuple(value)


def record_bytes(robot: RobotSpec, limbs: tuple[str, ...], samples: int) -> int:
    """Estimated size (bytes, float64) of ``samples`` recorded rows of ``limbs``: per limb its tip xyz, per
    segment the segment-tip xyz and the PCC (bend, plane, length), per section a 4x4 pose; plus time."""
    floats = 1
    for name in limbs:
        segments = robot.limb(name).segments
        floats += 3 + 6 * len(segments) + 16 * sum(s.sections for s in segments)
    return 8 * floats * samples


def _check_record_size(
    f: Fields, robot: RobotSpec, limbs: tuple[str, ...], samples: int, record_hz: int
) -> None:
    size = record_bytes(robot, limbs, samples)
    if size > MAX_RECORD_BYTES:
        raise f.error(
            "record_hz",
            record_hz,
            f"at most {MAX_RECORD_BYTES / 1e9:.2f} GB of recorded samples; this run would record {samples} "
            f"samples of {len(limbs)} limbs = {size / 1e9:.3g} GB (lower record_hz, duration_s, sections or "
            "the recorded limbs)",
        )


def _input(key: str, f: Fields, robot: RobotSpec, base_dir: Path) -> InputSpec:
    target = f.string("target")
    m = _TARGET.match(target)
    limbs = {limb.name: limb for limb in robot.limbs}
    allowed = (
        "limb.sK.parameter with limb in ("
        + ", ".join(limbs)
        + "), K a segment number and parameter in ("
        + ", ".join(PARAMETERS)
        + ")"
    )
    if m is None or m.group(1) not in limbs or m.group(3) not in PARAMETERS:
        raise f.error("target", target, allowed)
    limb = limbs[m.group(1)]
    segment = int(m.group(2))
    if not 1 <= segment <= len(limb.segments):
        raise f.error("target", target, f"a segment of limb '{limb.name}' in s1..s{len(limb.segments)}")
    parameter = m.group(3)
    profile = parse_profile(f, base_dir, PARAMETERS[parameter])
    f.finish()
    return InputSpec(key, limb.name, segment - 1, parameter.split("_")[0], profile)
