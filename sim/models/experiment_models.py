"""Models for ``mode = "model"`` experiments (``pccbullet.sim.experiments``): the Newton–Euler limb model.

Channels drive the actuators, named by the robot's actuation:

* robots with a ``[hydraulic_drive]`` table (seed 000): ``motor_1`` ... ``motor_K`` motor torques (N·m)
  through the water-hydraulic drive to the chambers (K = chambers per segment x segments); the limb is a
  :class:`~pccbullet.sim.models.chambers.ChamberWallLimb` (the chamber walls resist the axial strain);
* chamber robots without a drive: ``pressure_1`` ... (Pa, gauge);
* tendon robots: ``tension_1`` ... (N; negative values are clamped to 0 by the actuator model).

Missing channels are 0. Every limb with actuators is simulated; each step returns per-segment PCC
fitted to the model's pieces (bend and plane from the summed bending rotation, length from the strains).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pccbullet.urdf_gen.pcc import PccConfig


def _segment_pcc(model: Any, q: np.ndarray) -> list[PccConfig]:
    qs = q.reshape(model.n, 4)
    out = []
    for s in range(len(model.limb.segments)):
        sel = model.segment == s
        rx, ry = (model.l0[sel, None] * qs[sel, 1:3]).sum(axis=0)
        length = float((model.l0[sel] * (1.0 + qs[sel, 0])).sum())
        out.append(PccConfig(float(np.hypot(rx, ry)), float(np.arctan2(-rx, ry)), length))
    return out


class _LimbRunner:
    def __init__(self, spec: Any, limb: Any, pieces: int) -> None:
        from pccbullet.sim.medium import medium
        from pccbullet.sim.models.actuators import ChamberActuation, TendonActuation
        from pccbullet.sim.models.chambers import ChamberWallLimb
        from pccbullet.sim.models.hydraulics import HydraulicDrive, load_hydraulic_drive
        from pccbullet.sim.models.newton_euler.model import LimbModel

        self.limb = limb
        count = limb.actuators.count * len(limb.segments)
        self.drive = None
        rotation = None
        if "hydraulic_drive" in spec.robot.extra:
            params = load_hydraulic_drive(spec.robot)
            # the chamber walls resist the axial strain (E A_s of seed 000 Table 1), as in
            # simulate_hydraulic_arm and the sec. 3.1 bending limits; the disk keeps bending and torsion
            self.model: LimbModel = ChamberWallLimb(
                limb, pieces, wall_area=params.annulus_area, medium=medium(spec.medium)
            )
            self.drive = HydraulicDrive(params, count)
            rotation = params.section_rotation
            self.names = [f"motor_{i + 1}" for i in range(count)]
        else:
            self.model = LimbModel(limb, pieces, medium=medium(spec.medium))
            kind = "pressure" if limb.actuators.kind == "chamber" else "tension"
            self.names = [f"{kind}_{i + 1}" for i in range(count)]
        self.q = self.model.rest_state()
        self.qd = np.zeros_like(self.q)
        actuation = ChamberActuation if limb.actuators.kind == "chamber" else TendonActuation
        self.actuation = actuation(self.model, rotation)

    def __call__(self, channels: Mapping[str, float], dt: float) -> list[PccConfig]:
        from pccbullet.sim.models.newton_euler.integrators import step

        u = np.array([channels.get(name, 0.0) for name in self.names])
        if self.drive is not None:
            u = self.drive.step(u, dt)
        self.q, self.qd = step(self.model, self.q, self.qd, dt, self.actuation.tau(u))
        return _segment_pcc(self.model, self.q)


def newton_euler_experiment(spec: Any) -> Any:
    """Experiment model factory: ``inputs -> {limb: [PccConfig per segment]}`` (see module docstring)."""
    pieces = spec.sections or 5
    runners = [_LimbRunner(spec, limb, pieces) for limb in spec.robot.limbs if limb.actuators is not None]

    def model(inputs: Any) -> dict[str, Sequence[PccConfig]]:
        return {r.limb.name: r(inputs.channels, inputs.dt) for r in runners}

    return model
