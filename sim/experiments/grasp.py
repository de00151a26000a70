"""Run a grasp experiment (``kind = "grasp"``, :mod:`pccbullet.sim.experiments.grasp_spec`): a tendon-driven
limb approaches, closes on, lifts and holds a placed object in a dynamic world, through real contact and
friction in PyBullet; record and measure it.

Each phase's goal (the tendon controller's PCC goal of the grasping limb, or every tendon's tension) is
reached by a linear ramp from the previous goal; the other loaded limbs are held straight by their
tendons. Recorded at ``record_hz`` (``grasp.csv``, world frame, SI): ``time_s``, ``phase`` (0 approach ..
3 hold), the object's centre ``object_{x,y,z}_m``, the grasping limb's tip ``tip_{x,y,z}_m``, the limb's
contact force on the object ``contact_n`` (magnitude), the force of everything else on it ``support_n``,
and per tendon ``{tendon}_tension_n``.

Metrics (``metrics.json``; :func:`grasp_metrics`):

* ``lifted_height_m``: the object's height at the end of the hold less at the start of the approach;
* ``slip_m``: the largest displacement of the object in the tip's frame during the hold, from where it
  was in that frame at the hold's start;
* ``contact_force_peak_n``: the largest limb-object contact force of the run (recorded samples);
  ``contact_force_mean_n``: its mean over the hold;
* ``peak_tensions_n``: per tendon the largest tension its actuator applied (N);
* ``off_support_s``: the longest stretch of the hold during which nothing but the limb touched the object;
* ``held``: off the support for the whole hold, lifted by more than :data:`HELD_MIN_LIFT_M` and slipping
  less than :data:`HELD_MAX_SLIP_M` (the object moved with the tip).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pccbullet.core.fields import read_toml
from pccbullet.core.types import FloatArray
from pccbullet.sim.experiments.grasp_spec import PHASES, GraspSpec, grasp_from_table
from pccbullet.sim.experiments.outputs import Manifest, remove_recorded, save_csv, write_json
from pccbullet.sim.experiments.spec import PHYSICS_HZ
from pccbullet.sim.objects.place import place_box, place_cylinder, place_sphere
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig

CSV_NAME, METRICS_NAME, META_NAME, PLOT_NAME = "grasp.csv", "metrics.json", "metadata.json", "grasp.png"
HELD_MIN_LIFT_M = 0.01  # m: held objects were lifted at least this much
HELD_MAX_SLIP_M = 0.02  # m: and moved with the tip within this
TOUCH_N = 1e-6  # N: a contact force above this touches


def load_grasp(path: str | Path) -> GraspSpec:
    """Read and validate a grasp experiment TOML (see :mod:`pccbullet.sim.experiments.grasp_spec`)."""
    path = Path(path)
    return grasp_from_table(read_toml(path), path, base_dir=path.parent)


def _configs(rows: Sequence[Sequence[float]]) -> list[PccConfig]:
    return [PccConfig(float(b), float(p), float(n)) for b, p, n in rows]


def _place(world: World, o: Any) -> Any:
    common = {
        "mass": o.mass, "density": o.density, "position": o.position, "orientation": o.orientation,
        "material": o.material, "fixed": o.fixed,
    }  # fmt: skip
    if o.shape == "sphere":
        return place_sphere(world, o.size[0], **common)
    if o.shape == "cylinder":
        return place_cylinder(world, o.size[0], o.size[1], **common)
    return place_box(world, o.size, **common)


def simulate_grasp(spec: GraspSpec) -> tuple[dict[str, FloatArray], dict[str, Any]]:
    """Run the grasp; returns the recorded columns ``name -> (T,) float`` and facts of the run (tendon
    names, caps, peak tensions and motor forces, object masses)."""
    from pccbullet.sim.objects.environment import add_seabed

    cols: dict[str, list[float]] = {}
    every = PHYSICS_HZ // spec.record_hz
    with World(mode="dynamic", medium=spec.medium) as world:
        if spec.seabed_z is not None:
            add_seabed(world, spec.seabed_z)
        # the contacts' estimate in the implicit step: without it a limb pressing on something loses most
        # of its tendon tension to its spools' inertia (docs/guide/tendons.md, "Contact")
        robot = world.load_robot(
            spec.robot, limbs=list(spec.limbs), drive="tendons", external_loads=spec.external_loads
        )
        objects = {o.name: _place(world, o) for o in spec.objects}
        target = objects[spec.target]
        for name in spec.limbs:
            if name != spec.limb:
                robot.set_pcc(name, [PccConfig(0.0, 0.0, s.length) for s in robot.spec.limb(name).segments])
        tendons = robot.compliant[spec.limb].tendons
        assert tendons is not None  # drive = "tendons"
        start = _configs(spec.start_pcc)
        robot.set_pcc(spec.limb, start, mode="reset")
        robot.set_pcc(spec.limb, start, mode="target")
        world.step(round(spec.settle * PHYSICS_HZ))
        tendons.reset_peaks()
        peak_motor = np.zeros(len(tendons.names))
        pcc_goal = np.asarray(spec.start_pcc, dtype=float)
        t_goal: FloatArray | None = None
        distal = len(robot.spec.limb(spec.limb).segments) - 1
        grip: FloatArray | None = None
        k_total = 0
        for index, phase in enumerate(spec.phases):
            pcc_from, t_from = pcc_goal.copy(), (tendons.tensions if t_goal is None else t_goal).copy()
            grip_from = grip.copy() if grip is not None else np.zeros(len(phase.grip or ()))
            n = round(phase.duration * PHYSICS_HZ)
            ramp = max(1, round(phase.ramp * PHYSICS_HZ))
            for k in range(n + (1 if index == 0 else 0)):
                if index == 0 and k == 0:
                    _record(cols, 0.0, 0, target, robot, spec.limb, tendons)
                    continue
                s = min(1.0, k / ramp)
                if k % 10 == 1 or k == ramp:  # the goal moves at 100 Hz
                    if phase.pcc is not None:
                        pcc_goal = pcc_from + (np.asarray(phase.pcc) - pcc_from) * s
                        robot.set_pcc(spec.limb, _configs(pcc_goal), mode="target")
                        t_goal = None
                    if phase.grip is not None:
                        grip = grip_from + (np.asarray(phase.grip) - grip_from) * s
                    if grip is not None and t_goal is None:
                        tendons.hold(distal, grip)
                    elif phase.tensions is not None:
                        t_goal = t_from + (np.asarray(phase.tensions) - t_from) * s
                        tendons.set_tensions(t_goal)
                world.step()
                np.maximum(peak_motor, tendons.motor_forces, out=peak_motor)
                k_total += 1
                if k_total % every == 0:
                    _record(cols, k_total / PHYSICS_HZ, index, target, robot, spec.limb, tendons)
        facts = {
            "tendons": list(tendons.names),
            "max_tension_n": [t.max_tension for t in tendons.specs],
            "peak_tensions_n": tendons.peak_tensions.tolist(),
            "peak_motor_forces_n": peak_motor.tolist(),
            "object_mass_kg": target.mass,
            "object_net_weight_n": (target.mass - world.medium.density * target.volume) * 9.80665,
            "object_friction": target.friction,
        }
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}, facts


def _record(
    cols: dict[str, list[float]], t: float, phase: int, obj: Any, robot: Any, limb: str, td: Any
) -> None:
    forces = obj.limb_forces(robot)
    total = obj.contact_force()
    row = {"time_s": t, "phase": float(phase)}
    row |= {f"object_{a}_m": float(v) for a, v in zip("xyz", obj.position(), strict=True)}
    tip = robot.tip_pose(limb)
    row |= {f"tip_{a}_m": float(v) for a, v in zip("xyz", tip[:3, 3], strict=True)}
    row |= {f"tip_r{i}{j}": float(tip[i, j]) for i in range(3) for j in range(3)}
    own = forces[limb]
    others = sum((f for name, f in forces.items() if name != limb), np.zeros(3))
    row["contact_n"] = float(np.linalg.norm(own))
    row["support_n"] = float(np.linalg.norm(total - own - others))
    row |= {f"{name}_tension_n": float(v) for name, v in zip(td.names, td.tensions, strict=True)}
    row |= {f"{name}_motor_n": float(v) for name, v in zip(td.names, td.motor_forces, strict=True)}
    for key, v in row.items():
        cols.setdefault(key, []).append(v)


def grasp_metrics(cols: dict[str, FloatArray], facts: dict[str, Any]) -> dict[str, Any]:
    """The grasp's metrics from its recorded columns (see the module docstring)."""
    t, phase = cols["time_s"], cols["phase"]
    hold = phase == PHASES.index("hold")
    p = np.stack([cols[f"object_{a}_m"] for a in "xyz"], axis=1)
    tip = np.stack([cols[f"tip_{a}_m"] for a in "xyz"], axis=1)
    R = np.stack([[cols[f"tip_r{i}{j}"] for j in range(3)] for i in range(3)]).transpose(2, 0, 1)
    local = np.einsum("tji,tj->ti", R, p - tip)  # the object in the tip's frame
    idx = np.flatnonzero(hold)
    slip = float(np.max(np.linalg.norm(local[idx] - local[idx[0]], axis=1))) if idx.size else math.nan
    lifted = float(p[idx[-1], 2] - p[0, 2]) if idx.size else math.nan
    free = cols["support_n"][idx] <= TOUCH_N
    longest = run = 0
    for f in free:
        run = run + 1 if f else 0
        longest = max(longest, run)
    dt = float(t[1] - t[0]) if len(t) > 1 else 0.0
    off = longest * dt
    held = bool(idx.size and free.all() and lifted > HELD_MIN_LIFT_M and slip < HELD_MAX_SLIP_M)
    return {
        "lifted_height_m": lifted,
        "slip_m": slip,
        "contact_force_peak_n": float(cols["contact_n"].max()),
        "contact_force_mean_n": float(cols["contact_n"][idx].mean()) if idx.size else math.nan,
        "off_support_s": off,
        "hold_s": float(idx.size * dt),
        "held": held,
        "peak_tensions_n": dict(zip(facts["tendons"], facts["peak_tensions_n"], strict=True)),
        "peak_motor_forces_n": dict(zip(facts["tendons"], facts["peak_motor_forces_n"], strict=True)),
        "max_tension_n": dict(zip(facts["tendons"], facts["max_tension_n"], strict=True)),
        "object_mass_kg": facts["object_mass_kg"],
        "object_net_weight_n": facts["object_net_weight_n"],
        "object_friction": facts["object_friction"],
    }


def run_grasp(
    spec: GraspSpec | str | Path, out_dir: str | Path, *, command_line: Sequence[str] | None = None
) -> tuple[dict[str, Any], tuple[Path, ...]]:
    """Run a grasp experiment and write ``grasp.csv``, ``metrics.json``, ``metadata.json`` and the plot
    ``grasp.png`` (with ``plots`` in its outputs) into ``out_dir``; returns the metrics and the files."""
    from pccbullet.sim.experiments.runner import package_versions

    spec = spec if isinstance(spec, GraspSpec) else load_grasp(spec)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    remove_recorded(out)
    cols, facts = simulate_grasp(spec)
    metrics = grasp_metrics(cols, facts)
    manifest = Manifest(out)
    names = [CSV_NAME] if "csv" in spec.outputs else []
    names += [METRICS_NAME, META_NAME] + ([PLOT_NAME] if "plots" in spec.outputs else [])
    manifest.add(*names)
    if "csv" in spec.outputs:
        save_csv(out / CSV_NAME, cols, np.column_stack(list(cols.values())))
    write_json(out / METRICS_NAME, metrics)
    meta = {
        "experiment": spec.name, "kind": "grasp", "source": spec.source, "robot": spec.robot.name,
        "robot_sha256": spec.robot_sha256, "sections": spec.sections, "medium": spec.medium,
        "limbs": list(spec.limbs), "limb": spec.limb, "object": spec.target, "record_hz": spec.record_hz,
        "external_loads": spec.external_loads,
        "physics_hz": PHYSICS_HZ, "versions": package_versions(),
        "command_line": list(sys.argv if command_line is None else command_line),
        "experiment_table": spec.table,
    }  # fmt: skip
    write_json(out / META_NAME, meta)
    if "plots" in spec.outputs:
        from pccbullet.sim.experiments.grasp_plot import plot_grasp

        plot_grasp(cols, facts["tendons"], out / PLOT_NAME)
    return metrics, tuple(out / n for n in names)
