"""Run a virtual experiment at 1 kHz and record tips, segment tips, PCC and section poses.

Modes:
    kinematic  the input PCC is the truth: joints are reset every physics step.
    dynamic    the input PCC is the compliant limbs' spring target (``set_pcc(..., mode="target")``: the
               material's springs pull towards it); PyBullet integrates the chains (``chain``: rod or
               rrp) in the medium, and the recorded PCC is fitted to the shape read back
               (:meth:`pccbullet.sim.robot.Robot.measured_pcc`).
    model      a :class:`PccModel` (e.g. the Newton–Euler model of :mod:`pccbullet.sim.models`) steps its own
    state
               from the inputs every physics step and returns per-segment PCC, which is then reset
               kinematically. Models are found in :data:`MODELS` (see :func:`register_model`) or as a
               factory ``experiment_model(spec)`` in ``pccbullet.sim.models.<name>``.

Outputs in ``out_dir``: ``run.csv`` (time + tip xyz per limb + segment-tip xyz + PCC per segment;
every column name ends in its unit: ``time_s``, ``camera_tip_x_m``, ``camera_s1_bend_rad``),
``run.npz`` (the same columns plus ``{limb}_sections``: ``(T, N_total, 4, 4)`` section poses, metres),
``metadata.json`` (versions, seed, robot SHA-256, fingerprint, command line; keys in
docs/guide/experiments.md) and ``manifest.json`` (the files this run wrote). Files are written atomically
(temporary file + rename); a rerun into the same folder first removes the files the previous run's manifest
lists, and nothing else (:mod:`pccbullet.sim.experiments.outputs`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from tqdm import tqdm

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.core.types import FloatArray
from pccbullet.sim.bullet_internals import symbols
from pccbullet.sim.experiments.outputs import Manifest, remove_recorded, save_csv, save_npz, write_json
from pccbullet.sim.experiments.record import PARAMS, record, shape_loop
from pccbullet.sim.experiments.spec import PHYSICS_HZ, ExperimentMode, ExperimentSpec, load_experiment
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.robot import Robot
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig

if TYPE_CHECKING:
    from pccbullet.sim.views.web.view import WebView

CSV_NAME, NPZ_NAME, META_NAME = "run.csv", "run.npz", "metadata.json"
PLOT_NAMES = ("tips.png", "tips.svg", "shapes.png", "shapes.svg")
# Installed versions that shape a run's numbers: part of its fingerprint (plotting libraries are not).
FINGERPRINT_PACKAGES = ("pccbullet", "pybullet", "numpy", "scipy")


@dataclass(frozen=True, slots=True)
class ModelInputs:
    """What a model sees each physics step.

    Attributes:
        t: time at the end of the step (s). dt: step (s). medium: ``"air"`` or ``"water"``.
        pcc: commanded PCC per limb (from the experiment's PCC inputs), one config per segment.
        channels: actuator-channel values by name (units of the channel, e.g. N·m or Pa).
    """

    t: float
    dt: float
    medium: str
    pcc: Mapping[str, tuple[PccConfig, ...]]
    channels: Mapping[str, float]


class PccModel(Protocol):
    """A model stepped once per physics step: inputs -> per-limb, per-segment PCC (limbs may be omitted)."""

    def __call__(self, inputs: ModelInputs) -> Mapping[str, Sequence[PccConfig]]: ...


ModelFactory = Callable[[ExperimentSpec], PccModel]
MODELS: dict[str, ModelFactory] = {}


def _newton_euler(spec: ExperimentSpec) -> PccModel:
    from pccbullet.sim.models.experiment_models import newton_euler_experiment

    return newton_euler_experiment(spec)


MODELS["newton_euler"] = _newton_euler


def register_model(name: str, factory: ModelFactory) -> None:
    """Make ``mode = "model"``, ``model = name`` use ``factory(spec)``."""
    MODELS[name] = factory


def resolve_model(spec: ExperimentSpec) -> PccModel:
    """The model of a model-mode experiment (registry first, then ``sim.models.<name>.experiment_model``)."""
    factory = MODELS.get(spec.model)
    if factory is None:
        try:
            module = importlib.import_module(f"pccbullet.sim.models.{spec.model}")
            factory = module.experiment_model
        except (ImportError, AttributeError) as exc:
            known = ", ".join(sorted(MODELS)) or "none registered"
            raise ConfigurationError(
                f"model = {spec.model!r} is unavailable ({exc}); allowed: a registered model ({known}) or a "
                f"module pccbullet.sim.models.{spec.model} with an experiment_model(spec) factory"
            ) from exc
    return factory(spec)


@dataclass(frozen=True, slots=True)
class RunResult:
    """A finished run: recorded columns ``name -> (T,) float`` (``time_s`` first; names end in their
    unit), section poses ``limb -> (T, N_total, 4, 4) float``, the files written and its fingerprint."""

    columns: dict[str, FloatArray]
    sections: dict[str, FloatArray]
    out_dir: Path
    files: tuple[Path, ...]
    fingerprint: str = ""

    @property
    def time(self) -> FloatArray:
        """Recording times ``(T,) float`` (s)."""
        return self.columns["time_s"]


def command_schedule(spec: ExperimentSpec, t: FloatArray, seed: int) -> dict[str, FloatArray]:
    """Commanded PCC per limb at times ``t`` ``(n,)``: ``(n, segments, 3)`` float (bend, plane, length)."""
    out = {}
    for limb in spec.robot.limbs:
        cmd = np.zeros((len(t), len(limb.segments), 3))
        cmd[:, :, 2] = [seg.length for seg in limb.segments]
        out[limb.name] = cmd
    seeds = np.random.SeedSequence(seed).spawn(len(spec.inputs) + len(spec.channels))
    for inp, ss in zip(spec.inputs, seeds, strict=False):
        values = inp.profile.sample(t, np.random.default_rng(ss))
        out[inp.limb][:, inp.segment, PARAMS.index(inp.parameter)] = values
        seg = spec.robot.limb(inp.limb).segments[inp.segment]
        lo, hi = {
            "bend": (-seg.bend_max, seg.bend_max),
            "plane": (-seg.plane_max, seg.plane_max),
            "length": (seg.length_min, seg.length_max),
        }[inp.parameter]
        bad = np.flatnonzero((values < lo - 1e-12) | (values > hi + 1e-12))
        if bad.size:
            i = bad[0]
            raise SpecError(
                spec.source,
                f"inputs.{inp.name}",
                f"{values[i]:.6g} at t = {t[i]:.6g} s",
                f"{inp.parameter} in [{lo:.6g}, {hi:.6g}] (SI) for {inp.limb} segment {inp.segment + 1}",
            )
    return out


def _channel_schedule(spec: ExperimentSpec, t: FloatArray, seed: int) -> dict[str, FloatArray]:
    seeds = np.random.SeedSequence(seed).spawn(len(spec.inputs) + len(spec.channels))[len(spec.inputs) :]
    return {
        name: prof.sample(t, np.random.default_rng(ss))
        for (name, prof), ss in zip(spec.channels, seeds, strict=True)
    }


def _configs(row: FloatArray) -> tuple[PccConfig, ...]:
    return tuple(PccConfig(float(b), float(p), float(ln)) for b, p, ln in row)


def spec_fingerprint(spec: ExperimentSpec, seed: int) -> str:
    """SHA-256 (hex) of everything that decides a run's numbers: the resolved experiment table, the
    parsed inputs and channels (recorded-input files included, by value), the robot file's SHA-256,
    the seed, the physics rate and the versions of :data:`FINGERPRINT_PACKAGES`."""
    versions = package_versions()
    canonical = json.dumps(
        {
            "table": spec.table,
            "inputs": repr(spec.inputs),
            "channels": repr(spec.channels),
            "robot_sha256": spec.robot_sha256,
            "sections": spec.sections,
            "seed": int(seed),
            "physics_hz": PHYSICS_HZ,
            "versions": {k: versions[k] for k in FINGERPRINT_PACKAGES},
        },
        sort_keys=True,
        default=str,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def run_experiment(
    experiment: str | Path | ExperimentSpec,
    out_dir: str | Path,
    *,
    seed: int | None = None,
    model: ModelFactory | None = None,
    progress: bool = True,
    command_line: Sequence[str] | None = None,
    clean: bool = True,
    view: WebView | str | None = None,
) -> RunResult:
    """Simulate an experiment and write its outputs.

    Args:
        experiment: an experiment TOML path or a parsed spec.
        out_dir: output folder (created). Other files in it are left alone.
        seed: seed of the input noise (default: the file's ``seed``).
        model: factory for the model mode (default: :func:`resolve_model`).
        progress: show a tqdm progress bar.
        command_line: recorded in the metadata (default ``sys.argv``).
        clean: first remove the files a previous run listed in the folder's ``manifest.json``
            (``False``: append to that manifest, for a caller that manages the folder, e.g. a sweep).
        view: show the run live: a :class:`~pccbullet.sim.views.web.view.WebView` (left open after the run),
            or ``"web"`` (a new one, its address logged, closed after the run); ``None``: no view.
    """
    spec = experiment if isinstance(experiment, ExperimentSpec) else load_experiment(experiment)
    seed = spec.seed if seed is None else int(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if clean:
        remove_recorded(out)
    dt = 1.0 / PHYSICS_HZ
    t_steps = np.arange(spec.n_steps + 1, dtype=float) * dt
    commands = command_schedule(spec, t_steps, seed)
    channels = _channel_schedule(spec, t_steps, seed)
    is_model = spec.mode is ExperimentMode.MODEL
    pcc_model = (model(spec) if model is not None else resolve_model(spec)) if is_model else None
    world_mode = spec.mode.world
    rec_steps = range(0, spec.n_steps + 1, spec.substeps)
    columns: dict[str, list[float]] = {"time_s": []}
    sections: dict[str, list[FloatArray]] = {name: [] for name in spec.limbs}
    # The medium goes to the world when it models media (buoyancy and drag), and always to the model.
    medium: dict[str, Any] = (
        {"medium": spec.medium} if "medium" in inspect.signature(World).parameters else {}
    )
    with World(mode=world_mode, chain=spec.chain, **medium) as world:
        drive = spec.drive if world_mode.integrates else Drive.JOINTS
        robot = world.load_robot(spec.robot, drive=drive)
        physics = {
            "broadphase_margin_m": world.broadphase_margin,
            "contact_breaking_threshold_m": world.contact_breaking_threshold,
            "bullet_globals_held": sorted(world.bullet_globals.values),
            "bullet_internals": symbols.enabled(),
            "joint_io": {
                name: ("c_api" if limb.direct_io else "python") for name, limb in robot.compliant.items()
            },
            "chain": world.chain,
            "drive": drive if world_mode.integrates else None,
            "shape_loop_hz": spec.shape_loop_hz,
            "added_mass_kg": {name: limb.added_mass for name, limb in robot.compliant.items()},
        }
        if spec.shape_loop_hz:
            world.step_hooks.append(shape_loop(world, robot, spec.shape_loop_hz))
        current = {name: _configs(cmd[0]) for name, cmd in commands.items()}
        for name, configs in current.items():
            robot.set_pcc(name, configs, mode="reset")
        shown, own = (None, False)
        if view is not None:  # published after the world's steps, never waiting for the page
            from pccbullet.sim.views.web.live import attach, finish

            shown, own = attach(world, view)
        bar = tqdm(total=spec.n_steps, desc=spec.name, unit="step", disable=not progress, mininterval=0.5)
        for k in range(spec.n_steps + 1):
            if k > 0:
                current = _apply(robot, spec, commands, channels, k, dt, pcc_model, current)
                world.step()
                if k % spec.substeps == 0:
                    bar.update(spec.substeps)
            if k % spec.substeps == 0:
                record(robot, spec, current, k * dt, columns, sections)
        bar.close()
        if shown is not None:
            finish(world, close=own)
    cols = {key: np.asarray(v, dtype=float) for key, v in columns.items()}
    secs = {name: np.asarray(v, dtype=float) for name, v in sections.items()}
    if len(cols["time_s"]) != len(rec_steps):
        raise ConfigurationError(f"recorded {len(cols['time_s'])} samples; expected {len(rec_steps)}")
    fingerprint = spec_fingerprint(spec, seed)
    manifest = Manifest(out)
    files = _write(spec, manifest, cols, secs, seed, command_line, {"fingerprint": fingerprint, **physics})
    if "plots" in spec.outputs:
        from pccbullet.sim.experiments.plots import plot_shapes, plot_tips

        manifest.add(*PLOT_NAMES)
        files += plot_tips(cols, out / "tips") + plot_shapes(secs, cols["time_s"], out / "shapes")
    return RunResult(cols, secs, out, tuple(files), fingerprint)


def _apply(
    robot: Robot,
    spec: ExperimentSpec,
    commands: dict[str, FloatArray],
    channels: dict[str, FloatArray],
    k: int,
    dt: float,
    pcc_model: PccModel | None,
    current: dict[str, tuple[PccConfig, ...]],
) -> dict[str, tuple[PccConfig, ...]]:
    cmd = {name: _configs(c[k]) for name, c in commands.items()}
    if pcc_model is None and spec.drive is Drive.CHAMBERS and spec.channels:  # the channels drive
        values = {name: float(v[k]) for name, v in channels.items()}
        for limb in robot.compliant.values():
            if limb.chambers is not None:
                limb.chambers.set_channels(values)
        return cmd
    if pcc_model is None:
        mode = "target" if spec.mode.world.integrates else "reset"
        for name, configs in cmd.items():
            if k == 1 or configs != current[name]:
                robot.set_pcc(name, configs, mode=mode)
        return cmd
    ch = {name: float(v[k]) for name, v in channels.items()}
    result = pcc_model(ModelInputs(k * dt, dt, spec.medium, cmd, ch))
    new = dict(cmd)
    for name, model_configs in result.items():
        new[name] = tuple(model_configs)
        robot.set_joints(name, robot.pcc_joints(name, new[name], check_limits=False), mode="reset")
    return new


def package_versions() -> dict[str, str]:
    """Installed versions of pccbullet and the libraries that shape its results."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> tuple[tuple[str, str], ...]:  # ~2 ms a package: once per process
    out = [("python", sys.version.split()[0])]
    for pkg in ("pccbullet", "numpy", "scipy", "pybullet", "trimesh", "pyvista", "matplotlib", "tqdm"):
        try:
            out.append((pkg, metadata.version(pkg)))
        except metadata.PackageNotFoundError:
            out.append((pkg, "not installed"))
    return tuple(out)


def _write(
    spec: ExperimentSpec,
    manifest: Manifest,
    cols: dict[str, FloatArray],
    secs: dict[str, FloatArray],
    seed: int,
    command_line: Sequence[str] | None,
    extra: dict[str, Any],
) -> list[Path]:
    out = manifest.folder
    names = [n for key, n in (("csv", CSV_NAME), ("npz", NPZ_NAME)) if key in spec.outputs]
    manifest.add(*names, META_NAME)  # recorded before anything is written
    files = []
    if "csv" in spec.outputs:
        save_csv(out / CSV_NAME, cols, np.column_stack(list(cols.values())))
        files.append(out / CSV_NAME)
    if "npz" in spec.outputs:
        arrays: dict[str, Any] = {**cols, **{f"{k}_sections": v for k, v in secs.items()}}
        save_npz(out / NPZ_NAME, arrays)
        files.append(out / NPZ_NAME)
    meta = {
        "experiment": spec.name,
        "source": spec.source,
        "robot": spec.robot.name,
        "robot_path": str(spec.robot_path),
        "robot_sha256": spec.robot_sha256,
        "sections": spec.sections,
        "mode": spec.mode,
        "model": spec.model,
        "medium": spec.medium,
        "duration_s": spec.duration,
        "record_hz": spec.record_hz,
        "physics_hz": PHYSICS_HZ,
        "seed": seed,
        "limbs": list(spec.limbs),
        "channels": [name for name, _ in spec.channels],
        **extra,
        "versions": package_versions(),
        "command_line": list(sys.argv if command_line is None else command_line),
        "experiment_table": spec.table,
    }
    write_json(out / META_NAME, meta)
    files.append(out / META_NAME)
    return files
