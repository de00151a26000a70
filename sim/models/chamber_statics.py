"""Statics of chamber-driven limbs over their pressures: the pressure workspace of one section and the
steady poses under motor torques (seed 000, Micromachines 13:130, sec. 3.1 Fig. 5 and sec. 4.2 Fig. 11).

Both solve the Newton–Euler statics (:func:`~pccbullet.sim.models.newton_euler.statics.static_equilibrium`)
of a :class:`~pccbullet.sim.models.chambers.ChamberWallLimb`: bending by the section's ``E I``, axial
strain by the chamber walls (``E A_s``), driven by ``A_d P`` per chamber.

* :func:`pressure_workspace`: the tips of one section, alone and without gravity (the paper treats each
  section as one arc for its workspace), over a grid of chamber pressures in ``[0, p_max]`` per chamber.
  Without gravity the moment is constant along the section, so one piece is exact (constant curvature).
* :func:`steady_poses`: the whole limb hanging in its medium under constant motor torques, the chamber
  pressures being the drive's static map ``P = eta T / (s A_c)``
  (:meth:`~pccbullet.sim.models.hydraulics.HydraulicDriveParams.steady_pressure`).

Positions are in the limb base frame (m, z along the undeformed limb), angles in rad, pressures in Pa.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen.specs import RobotSpec

__all__ = ["PressureWorkspace", "SteadyPose", "plot_pressure_workspace", "pressure_workspace", "steady_poses"]


@dataclass(frozen=True, slots=True)
class PressureWorkspace:
    """Tips of one section over a grid of chamber pressures.

    Attributes:
        pressures: ``(n, k) float`` chamber pressures (Pa), k chambers of the section.
        tips: ``(n, 3) float`` tip positions in the section's base frame (m).
        bend: ``(n,) float`` total arc angle (rad). length: ``(n,) float`` arc length (m).
    """

    pressures: FloatArray
    tips: FloatArray
    bend: FloatArray
    length: FloatArray

    @property
    def extent(self) -> FloatArray:
        """``(3,) float`` size of the tips' bounding box along x, y, z (m)."""
        return np.ptp(self.tips, axis=0)


@dataclass(frozen=True, slots=True)
class SteadyPose:
    """A limb at rest under constant motor torques.

    Attributes:
        torques: ``(K,) float`` motor torques (N m). pressures: ``(K,) float`` chamber pressures (Pa).
        bend: ``(S,) float`` each segment's total arc angle (rad, >= 0).
        length: ``(S,) float`` each segment's arc length (m).
        segment_tips: ``(S, 3) float`` segment tip positions in the limb base frame (m).
        nodes: ``(n + 1, 3) float`` the model's node positions (base first), limb base frame (m).
    """

    torques: FloatArray
    pressures: FloatArray
    bend: FloatArray
    length: FloatArray
    segment_tips: FloatArray
    nodes: FloatArray


def _hydraulic(robot: RobotSpec | str | Path):  # -> (RobotSpec, HydraulicDriveParams)
    from pccbullet.sim.models.hydraulics import load_hydraulic_drive
    from pccbullet.urdf_gen.spec_loader import load_robot

    spec = robot if isinstance(robot, RobotSpec) else load_robot(robot)
    return spec, load_hydraulic_drive(spec)


def pressure_workspace(
    robot: RobotSpec | str | Path = "hydraulic_arm",
    *,
    samples: int = 11,
    max_pressure: float = 1e6,
    law: str = "planar_neo_hookean",
    pieces: int = 1,
) -> PressureWorkspace:
    """Tips of the first section of ``robot``'s first limb, alone and without gravity, over the grid of
    ``samples`` pressures per chamber in ``[0, max_pressure]`` (Pa): ``samples ** k`` static solves of a
    model with ``pieces`` pieces (one is exact here: the moment is constant along the section).

    Raises:
        ConfigurationError: ``samples < 2`` or a bad ``max_pressure``.
        SpecError: the robot has no ``[hydraulic_drive]`` table (its ``A_s`` is read from there).
    """
    from pccbullet.sim.medium import VACUUM
    from pccbullet.sim.models.actuators import ChamberActuation
    from pccbullet.sim.models.chambers import ChamberWallLimb
    from pccbullet.sim.models.newton_euler.statics import static_equilibrium

    if not (isinstance(samples, int) and samples >= 2):
        raise ConfigurationError(f"samples = {samples!r} is invalid; allowed: an integer >= 2")
    if not (np.isfinite(max_pressure) and max_pressure > 0.0):
        raise ConfigurationError(
            f"max_pressure = {max_pressure!r} is invalid; allowed: a finite pressure > 0 (Pa)"
        )
    spec, params = _hydraulic(robot)
    limb = spec.limbs[0]
    section = dataclasses.replace(limb, segments=limb.segments[:1])
    model = ChamberWallLimb(
        section, pieces, wall_area=params.annulus_area, law=law, gravity=np.zeros(3), medium=VACUUM
    )
    act = ChamberActuation(model)
    grid = np.linspace(0.0, max_pressure, samples)
    pressures = np.array(list(itertools.product(grid, repeat=limb.actuators.count)))
    tips, bend, length = [], [], []
    for p in pressures:
        q = static_equilibrium(model, act.tau(p), load_steps=4)
        qs = q.reshape(model.n, 4)
        rot = model.l0 @ qs[:, 1:3]
        tips.append(model.segment_tip_positions(q)[0])
        bend.append(float(np.hypot(rot[0], rot[1])))
        length.append(float(model.l0 @ (1.0 + qs[:, 0])))
    return PressureWorkspace(pressures, np.array(tips), np.array(bend), np.array(length))


def steady_poses(
    torques: Sequence[Sequence[float]],
    robot: RobotSpec | str | Path = "hydraulic_arm",
    *,
    pieces: int = 4,
    medium: str = "air",
    law: str = "planar_neo_hookean",
) -> list[SteadyPose]:
    """Static poses of ``robot``'s first limb (hanging as mounted, gravity of ``medium``) under each row of
    ``torques`` ``(m, K)`` (N m, motors 1..K), through the drive's static pressure map; ``law``: the
    chamber walls' (:class:`~pccbullet.sim.models.chambers.ChamberWallLimb`)."""
    from pccbullet.sim.medium import medium as medium_named
    from pccbullet.sim.models.actuators import ChamberActuation
    from pccbullet.sim.models.chambers import ChamberWallLimb
    from pccbullet.sim.models.newton_euler.statics import static_equilibrium

    spec, params = _hydraulic(robot)
    limb = spec.limbs[0]
    model = ChamberWallLimb(limb, pieces, wall_area=params.annulus_area, law=law, medium=medium_named(medium))
    act = ChamberActuation(model, params.section_rotation)
    to_segment = np.zeros((len(limb.segments), model.n))
    to_segment[model.segment, np.arange(model.n)] = model.l0
    out = []
    for row in np.atleast_2d(np.asarray(torques, dtype=float)):
        pressures = np.asarray(params.steady_pressure(row), dtype=float)
        q = static_equilibrium(model, act.tau(pressures), load_steps=8)
        qs = q.reshape(model.n, 4)
        rot = to_segment @ qs[:, 1:3]
        out.append(
            SteadyPose(
                row,
                pressures,
                np.hypot(rot[:, 0], rot[:, 1]),
                to_segment @ (1.0 + qs[:, 0]),
                model.segment_tip_positions(q),
                model.forward_kinematics(q)[0],
            )
        )
    return out


def plot_pressure_workspace(ws: PressureWorkspace, path: str | Path) -> Path:
    """Plot the tips in 3D and their x-z section (|y| < 1 mm) into ``path`` (PNG), extents in the title."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    mm = 1e3 * ws.tips
    fig = Figure(figsize=(9, 4.2))
    ax = fig.add_subplot(1, 2, 1, projection="3d")
    ax.scatter(mm[:, 0], mm[:, 1], mm[:, 2], c=np.degrees(ws.bend), s=3, cmap="viridis")
    ax.set_xlabel("x (mm)")
    ax.set_ylabel("y (mm)")
    ax.set_zlabel("z (mm)")
    ax.set_aspect("equal")
    ex = 1e3 * ws.extent
    ax.set_title(f"{len(mm)} tips: {ex[0]:.0f} x {ex[1]:.0f} x {ex[2]:.0f} mm", fontsize="medium")
    ax2 = fig.add_subplot(1, 2, 2)
    flat = np.abs(mm[:, 1]) < 1.0
    sc = ax2.scatter(mm[flat, 0], mm[flat, 2], c=np.degrees(ws.bend[flat]), s=8, cmap="viridis")
    fig.colorbar(sc, ax=ax2, label="bend (deg)")
    ax2.set_xlabel("x (mm)")
    ax2.set_ylabel("z (mm)")
    ax2.set_aspect("equal")
    ax2.grid(True, alpha=0.3)
    ax2.set_title("tips in the x-z plane (|y| < 1 mm)", fontsize="medium")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return path
