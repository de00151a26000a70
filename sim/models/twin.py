"""Model/physics twin: the Newton–Euler model of a limb stepped in lockstep with its PyBullet chain.

Both start straight at rest and see the same gravity and medium; each physics step the model takes one
step of the same ``dt``. The twin logs, per step, the distance between the two tips (world frame) and
each segment's bend against the sum of the model's piece bends (the turn of the backbone tangent over the
segment), as the chain's topology reads it (:attr:`pccbullet.sim.limb.topology.LimbTopology.bends`): on
an RRP chain the PCC fit of its joints (the sum of its bend joints), on a rod chain the angle between the
tangents at the segment's ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.robot import Robot


class ModelTwin:
    """Run the Newton–Euler model of ``limb`` beside the PyBullet chain of ``robot``.

    Args:
        robot: a loaded :class:`pccbullet.sim.robot.Robot` in a dynamic world.
        limb: limb name.
        pieces_per_segment: model pieces per segment (default: the chain's sections per segment).
        tau: constant generalized actuation of the model ``(4 n,)`` (default none).
    """

    def __init__(
        self, robot: Robot, limb: str, pieces_per_segment: int | None = None, tau: FloatArray | None = None
    ):
        from pccbullet.sim.models.newton_euler.integrators import step
        from pccbullet.sim.models.newton_euler.model import LimbModel

        self.robot = robot
        self.limb = limb
        spec = robot.limb(limb)
        self.T_world_base = robot.T_world_limbbase(limb)
        gravity = self.T_world_base[:3, :3].T @ np.asarray(robot.world.gravity, dtype=float)
        n = pieces_per_segment or spec.segments[0].sections
        self.model = LimbModel(spec, n, gravity=gravity, medium=robot.world.medium)
        self.q = self.model.rest_state()
        self.qd = np.zeros_like(self.q)
        self.tau = tau
        self._step = step
        self._segments = len(spec.segments)
        self.log: dict[str, list[Any]] = {"t": [], "tip_distance": [], "bend_physics": [], "bend_model": []}

    def attach(self) -> ModelTwin:
        """Step and record after every physics step of the robot's world."""
        self.robot.world.step_hooks.append(self.update)
        return self

    def update(self) -> None:
        """One model step of the world's ``dt``, then record the divergence."""
        self.q, self.qd = self._step(self.model, self.q, self.qd, self.robot.world.dt, self.tau)
        self.record()

    def record(self) -> None:
        """Append the current tip distance (m) and per-segment bends (rad) to :attr:`log`."""
        from pccbullet.sim.models.joint_targets import piece_pcc

        tip_model = self.T_world_base[:3, :3] @ self.model.tip_position(self.q) + self.T_world_base[:3, 3]
        tip_physics = self.robot.tip_pose(self.limb)[:3, 3]
        bend_physics = self._chain_bends()
        bends, _, _ = piece_pcc(self.model, self.q)
        bend_model = [float(bends[self.model.segment == s].sum()) for s in range(self._segments)]
        self.log["t"].append(self.robot.world.time)
        self.log["tip_distance"].append(float(np.linalg.norm(tip_model - tip_physics)))
        self.log["bend_physics"].append(bend_physics)
        self.log["bend_model"].append(bend_model)

    def _chain_bends(self) -> list[float]:
        """Each segment's bend (rad) on the chain, as the model's: see the module docstring."""
        return limb_topology(self.robot.chain).bends(self.robot, self.limb)
