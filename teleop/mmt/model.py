"""The master's model of the robot's limbs: ``command + prediction + residual`` per segment.

The operator's device drives :class:`~pccbullet.teleop.mapping.OperatorMapping`, which solves the IK
through the model's offsets (on the bend vector, :mod:`pccbullet.urdf_gen.pcc_fit`). :class:`MasterModel`
turns each command into the model:

* prediction (``predict=True``): the Newton–Euler model of each limb driven by the command
  (:class:`~pccbullet.teleop.predict.SagPredictor`) predicts the sag; offset = model shape - command;
* residual: what the robot measured minus what the master predicted
  (:class:`~pccbullet.teleop.mmt.corrections.Corrections`), given to :meth:`MasterModel.update`.

The IK solves through the offsets low-passed (:data:`IK_OFFSET_TAU`). The haptic limb's model is updated
every tick (its contact is rendered from it); the limbs are posed in the master world, which only shows
them, in turns every :data:`SHOW_EVERY` ticks.
"""

from __future__ import annotations

import numpy as np

from pccbullet.sim.models.joint_targets import state_from_pcc
from pccbullet.sim.robot import Robot
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.predict import SagPredictor
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.pcc_fit import add_offset, bend_vectors, canonical_limb

IK_OFFSET_TAU = 0.2  # s, low-pass of the offsets the operator's IK solves through
SHOW_TOLERANCE = 1e-6  # rad or m: smaller changes of a limb's model are not shown (tip moves < 2 um)
SHOW_EVERY = 20  # ticks between two poses of the limbs that only show (50 Hz); the haptic one: every tick


class MasterModel:
    """The model of every limb the master shows and renders the contact from.

    Args:
        robot: the robot in the master world (posed to show the model).
        cfg: the setup (``predict``, ``medium``, ``haptic_limb``).
        T_world_base: limb -> ``(4, 4) float``, the limb's base frame in the world.

    Attributes:
        configs: limb -> the model's per-segment configurations (the haptic limb's updated every tick,
            the others' when they are shown).
        ik_offset: limb -> ``(S, 3) float``, the offsets the operator's IK solves through (low-passed).
        pred_offset: limb -> ``(S, 3) float``, the prediction's offsets (views of :attr:`prediction`).
        command_u: ``(n, 3) float``, the command's bend vectors and lengths, limbs stacked.
        prediction: ``(n, 3) float``, the prediction's offsets, stacked like :attr:`command_u`.
        predictor: the sag predictor, ``None`` without prediction.
    """

    def __init__(self, robot: Robot, cfg: MmtConfig, T_world_base: dict[str, np.ndarray]) -> None:
        spec = robot.spec
        self.robot = robot
        self.haptic_limb = cfg.haptic_limb
        shape = [(limb.name, len(limb.segments)) for limb in spec.limbs]
        self._order = [n for n, _ in shape]
        self.predictor = (
            SagPredictor(spec, T_world_base, cfg.medium, robot.world.gravity, every_tick=cfg.haptic_limb)
            if cfg.predict
            else None
        )
        self._rows: dict[str, slice] = {}
        k = 0
        for n, s in shape:
            self._rows[n] = slice(k, k + s)
            k += s
        # per segment of every limb, stacked (one array operation a tick for all limbs); the dicts hold
        # each limb's rows (views, updated in place)
        self.prediction, self._ik_all, self.command_u = np.zeros((3, k, 3))
        self.pred_offset = {n: self.prediction[sl] for n, sl in self._rows.items()}
        self.ik_offset = {n: self._ik_all[sl] for n, sl in self._rows.items()}
        self._cmd_u = {n: self.command_u[sl] for n, sl in self._rows.items()}
        # the limbs are posed in turns on ticks k % 4 == 3, when the predictor steps none of the other
        # limbs (with URSULA's four they take k % 4 = 0, 1, 2): no tick does both
        self._show_slot = {n: (4 * i + 3) % SHOW_EVERY for i, n in enumerate(self._order)}
        self._cmd_key: dict[str, tuple[PccConfig, ...]] = {}
        self._cmd_canon: dict[str, list[PccConfig]] = {}
        self._shown: dict[str, list[PccConfig]] = {}
        self.configs: dict[str, list[PccConfig]] = cfg.start_configs(spec)
        for (
            name,
            _,
        ) in cfg.start:  # the model starts where the robot does: posed, its prediction at rest there
            robot.set_pcc(name, self.configs[name])
            if self.predictor is not None:
                m = self.predictor.models[name]
                self.predictor.q[name][:] = state_from_pcc(m, self.configs[name])

    def update(self, k: int, dt: float, cmd: dict[str, list[PccConfig]], residuals: np.ndarray) -> None:
        """Tick ``k`` (of ``dt`` s): predict the robot's shape for command ``cmd`` (limb -> per-segment PCC),
        add the ``residuals`` (``(n, 3) float``, stacked like :attr:`prediction`), low-pass the IK's
        offsets and pose the limbs whose turn it is in the master world."""
        for name in self._order:
            key = tuple(cmd[name])
            if self._cmd_key.get(name) != key:  # canonical command and its bend vectors, once a change
                self._cmd_key[name] = key
                self._cmd_canon[name] = canonical_limb(cmd[name])
                self._cmd_u[name][:] = bend_vectors(self._cmd_canon[name])
        if self.predictor is not None:
            for name in self._order:
                u = self.predictor.update(name, cmd[name], k, dt)
                if u is not None:
                    self.pred_offset[name][:] = u - self._cmd_u[name]
        # the IK solves through the offsets low-passed (IK_OFFSET_TAU): the fixed point command -> static
        # sag -> command, under-relaxed (solved offline it converged by a factor ~0.55-0.8 an iteration
        # for the palpation arm above the rock). Through the live prediction every tick, its motion fed
        # back into the command and the loop did not settle.
        offsets = self.prediction + residuals
        self._ik_all += (dt / IK_OFFSET_TAU) * (offsets - self._ik_all)
        for name in self._order:
            show = k % SHOW_EVERY == self._show_slot[name]  # the limbs take turns: one reset a tick
            if name != self.haptic_limb and not show:
                continue
            offset = offsets[self._rows[name]]
            model = [add_offset(c, o) for c, o in zip(self._cmd_canon[name], offset, strict=True)]
            self.configs[name] = model
            if show:
                self._show(name, model)

    def _show(self, name: str, model: list[PccConfig]) -> None:
        shown = self._shown.get(name)
        if (
            shown is None
            or max(
                max(abs(a.bend - b.bend), abs(a.plane - b.plane), abs(a.length - b.length))
                for a, b in zip(model, shown, strict=True)
            )
            > SHOW_TOLERANCE
        ):  # a joint reset costs ~50 us: not for sub-micrometre changes
            self.robot.set_joints(name, self.robot.pcc_joints(name, model, check_limits=False))
            self._shown[name] = model

    def rest_mask(self) -> int:
        """Bit i set: limb i's prediction is at rest (every bit without prediction)."""
        rest = 0
        for i, name in enumerate(self._order):
            if self.predictor is None or self.predictor.settled(name):
                rest |= 1 << i
        return rest
