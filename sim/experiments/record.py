"""One recorded sample of a run (:mod:`pccbullet.sim.experiments.runner`): its row of columns and the section
poses.

Columns per recorded limb (world frame, SI, the unit last): the tip ``{limb}_tip_{x,y,z}_m``; the tip of the
commanded PCC arcs ``{limb}_cmd_tip_{x,y,z}_m`` (the inputs' configurations through the PCC kinematics:
where the tip would be if the limb were its commanded arcs); per segment its end ``{limb}_s{i}_{x,y,z}_m``
and its PCC ``{limb}_s{i}_{bend,plane}_rad``, ``{limb}_s{i}_length_m`` (the commanded ones in kinematic
and model mode, fitted to the shape read back in dynamic mode). A limb with tendons in dynamic mode adds
per tendon its tension ``{tendon}_tension_n``, its motor's force ``{tendon}_motor_n`` and its length
``{tendon}_length_m`` (:mod:`pccbullet.sim.limb.tendons`); a limb its chambers drive, per chamber its
pressure ``{chamber}_pressure_pa`` (:mod:`pccbullet.sim.limb.chambers`).
"""

from __future__ import annotations

from collections.abc import Callable

from pccbullet.core.types import FloatArray
from pccbullet.sim.experiments.spec import ExperimentSpec
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.robot import Robot, RobotWorld
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform

PARAMS = ("bend", "plane", "length")
PARAM_UNITS = {"bend": "rad", "plane": "rad", "length": "m"}


def record(
    robot: Robot,
    spec: ExperimentSpec,
    current: dict[str, tuple[PccConfig, ...]],
    t: float,
    columns: dict[str, list[float]],
    sections: dict[str, list[FloatArray]],
) -> None:
    """Append the sample at time ``t`` (s) to ``columns`` and the limbs' section poses to ``sections``;
    ``current``: the commanded configurations."""
    row: dict[str, float] = {"time_s": t}
    for name in spec.limbs:
        for axis, v in zip("xyz", robot.tip_pose(name)[:3, 3], strict=True):
            row[f"{name}_tip_{axis}_m"] = float(v)
        commanded = robot.T_world_limbbase(name) @ limb_transform(list(current[name]))
        for axis, v in zip("xyz", commanded[:3, 3], strict=True):
            row[f"{name}_cmd_tip_{axis}_m"] = float(v)
        configs = robot.measured_pcc(name) if spec.mode.world.integrates else list(current[name])
        for s, c in enumerate(configs, start=1):
            pos = robot.link_pose(naming.segment_end_link(name, s))[:3, 3]
            for axis, v in zip("xyz", pos, strict=True):
                row[f"{name}_s{s}_{axis}_m"] = float(v)
            for p in PARAMS:
                row[f"{name}_s{s}_{p}_{PARAM_UNITS[p]}"] = float(getattr(c, p))
        tendons = robot.compliant[name].tendons if name in robot.compliant else None
        if tendons is not None:
            for tname, T, F, L in zip(
                tendons.names, tendons.tensions, tendons.motor_forces, tendons.lengths, strict=True
            ):
                row[f"{tname}_tension_n"] = float(T)
                row[f"{tname}_motor_n"] = float(F)
                row[f"{tname}_length_m"] = float(L)
        chambers = robot.compliant[name].chambers if name in robot.compliant else None
        if chambers is not None:
            for cname, pressure in zip(chambers.names, chambers.pressures, strict=True):
                row[f"{cname}_pressure_pa"] = float(pressure)
        sections[name].append(robot.section_poses(name))
    for key, v in row.items():
        columns.setdefault(key, []).append(v)


def shape_loop(world: RobotWorld, robot: Robot, rate_hz: int) -> Callable[[], None]:
    """A step hook running every tendon-driven limb's shape loop
    (:meth:`pccbullet.sim.limb.tendons.TendonDrive.follow_shape`) at ``rate_hz``."""
    every = round(1.0 / (rate_hz * world.dt))
    limbs = robot.compliant.values()
    drives = [c.tendons for c in limbs if c.drive is Drive.TENDONS and c.tendons is not None]
    count = [0]

    def hook() -> None:
        count[0] += 1
        if count[0] % every == 0:
            for tendons in drives:
                tendons.follow_shape(every * world.dt)

    return hook
