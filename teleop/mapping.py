"""Operator mapping: device samples -> per-limb PCC commands within the spec's limits.

* Selection: ``select:<limb>``, ``next_limb``, ``next_segment``, ``segment:<n>`` (1-based).
* Rate keys: ``bend+/-``, ``plane+/-``, ``length+/-`` change the selected segment at bounded rates
  (:class:`Rates`), clipped to the segment's limits.
* A 6-DoF position sets a tip target for the selected limb (``T_world_device`` and ``scale`` map the
  device frame to the world); a few damped-least-squares iterations per tick (:mod:`pccbullet.teleop.ik`)
  follow it, warm-started, within the limits.
* ``follow``: the light tentacle copies the camera tentacle's command (both sit on the bow plate,
  120 mm apart, so the spotlight lights what the camera sees).
* ``grasp`` (the ``g`` key) closes or opens the selected limb's grasp, ``grasp:close[:<limb>]`` and
  ``grasp:open[:<limb>]`` set it (scripts): :attr:`OperatorMapping.grips`, a bit per limb (the first
  8), which the teleoperation master sends with every command (a tendon-driven robot holds the limb's
  distal segment's tendons at a grip tension, :mod:`pccbullet.teleop.slave`). With
  ``grasp_enabled = False`` (a robot driven by its joints) the actions only count
  (:attr:`OperatorMapping.grasp_refused`).
* ``offsets`` (model-mediated teleoperation): the local model believes the arm sits at
  ``command + offset`` (per segment, on the bend vector and the length: :mod:`pccbullet.urdf_gen.pcc_fit`);
  targets are solved for that model and the offset removed from the command.
* ``target_filter(limb, p)``: an optional hook that may move a 6-DoF tip target ``p`` (world, m) before
  the IK (the teleoperation master keeps targets out of the modelled rock: a force-aware command).
A sample with ``ok = False`` is ignored entirely: the command holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from pccbullet.core.types import FloatArray, Transform
from pccbullet.teleop.devices.base import DeviceSample
from pccbullet.teleop.ik import DAMPING, TOL, clamp_config, load_kernels
from pccbullet.teleop.ik import limits as ik_limits
from pccbullet.teleop.ik_command import command_step, load_command_kernel
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.pcc_fit import add_offset, canonical_limb
from pccbullet.urdf_gen.specs import RobotSpec

PLANE_RATE = 1.0  # rad/s, largest turn rate of a commanded bending plane from 6-DoF targets


@dataclass(frozen=True, slots=True)
class Rates:
    """Largest rates of change from rate keys: bend (rad/s), plane (rad/s), length (m/s)."""

    bend: float = 0.5
    plane: float = 1.0
    length: float = 0.01


def apply_offset(configs: list[PccConfig], offset: FloatArray | None) -> list[PccConfig]:
    """``configs + offset`` per segment, with every bend >= 0 (offset ``(S, 3)``: bend vector x, y (rad),
    length (m), in the frames of :func:`pccbullet.urdf_gen.pcc_fit.canonical_limb`). Not clipped to the
    limits: it is a model of the real arm, which sags beyond what can be commanded."""
    if offset is None:
        return list(configs)
    return [add_offset(c, o) for c, o in zip(canonical_limb(configs), offset, strict=True)]


class OperatorMapping:
    """Holds the operator's command for every limb and updates it from device samples.

    Args:
        spec: the robot. rates: rate-key speeds.
        T_world_base: limb name -> world pose of its base ``(4, 4)`` (needed for 6-DoF targets).
        T_world_device: device frame in the world ``(4, 4)``; identity makes positions world points.
        scale: device metres -> world metres.
        ik_iters: IK iterations per tick.
    """

    def __init__(
        self,
        spec: RobotSpec,
        *,
        rates: Rates | None = None,
        T_world_base: Mapping[str, Transform] | None = None,
        T_world_device: Transform | None = None,
        scale: float = 1.0,
        ik_iters: int = 3,
    ) -> None:
        self.spec = spec
        self.rates = rates or Rates()
        self.T_world_base = dict(T_world_base or {})
        self.T_world_device = np.eye(4) if T_world_device is None else np.asarray(T_world_device)
        self.scale = scale
        self.ik_iters = ik_iters
        self.names = [limb.name for limb in spec.limbs]
        self.command: dict[str, list[PccConfig]] = {
            limb.name: [PccConfig(0.0, 0.0, s.length) for s in limb.segments] for limb in spec.limbs
        }
        self.limb = self.names[0]
        self.segment = 0
        self.follow = False
        self.grips = 0  # bit i: limb i's grasp closed (names' order)
        self.grasp_enabled = True
        self.grasp_refused = 0  # grasp actions ignored because grasp_enabled is False
        self.target_world: FloatArray | None = None
        self.target_filter: Callable[[str, FloatArray], FloatArray] | None = None
        self.ik_max_step = 0.2  # largest IK step per iteration (rad or m; pccbullet.teleop.ik.solve_ik)
        # a 6-DoF target turns a segment's bending plane at most this fast (rad/s); near a straight
        # segment the bend changes sign instead of the plane jumping
        # (pccbullet.urdf_gen.pcc_fit.continue_limb)
        self.plane_rate = PLANE_RATE
        self.ik_error = 0.0
        self._limits: dict[str, tuple[FloatArray, FloatArray]] = {}  # the IK's bounds per limb
        if self.T_world_base:  # 6-DoF targets can come: have the IK ready before the loop starts
            load_kernels()
            load_command_kernel()

    def _select(self, action: str) -> None:
        if action == "next_limb":
            self.limb = self.names[(self.names.index(self.limb) + 1) % len(self.names)]
            self.segment = 0
        elif action.startswith("select:") and action[7:] in self.names:
            self.limb, self.segment = action[7:], 0
        elif action == "next_segment":
            self.segment = (self.segment + 1) % len(self.spec.limb(self.limb).segments)
        elif action.startswith("segment:") and action[8:].isdigit():
            n = int(action[8:]) - 1
            if 0 <= n < len(self.spec.limb(self.limb).segments):
                self.segment = n
        elif action == "follow":
            self.follow = not self.follow
        elif action.startswith("grasp"):
            self._grasp(action)

    def _grasp(self, action: str) -> None:
        """``grasp`` toggles the selected limb's grasp bit; ``grasp:close[:<limb>]``/``grasp:open[:<limb>]``
        set or clear it (the module docstring); unknown limbs and limbs past the 8th are ignored."""
        parts = action.split(":")
        limb = parts[2] if len(parts) == 3 else self.limb
        if parts[0] != "grasp" or len(parts) > 3 or limb not in self.names[:8]:
            return
        if len(parts) > 1 and parts[1] not in ("close", "open"):
            return
        if not self.grasp_enabled:
            self.grasp_refused += 1
            return
        bit = 1 << self.names.index(limb)
        close = not self.grips & bit if len(parts) == 1 else parts[1] == "close"
        self.grips = self.grips | bit if close else self.grips & ~bit

    def update(
        self, sample: DeviceSample, dt: float, offsets: Mapping[str, FloatArray] | None = None
    ) -> dict[str, list[PccConfig]]:
        """Apply one tick of ``sample`` (``dt`` s); returns the commands (limb -> per-segment configs)."""
        if not sample.ok:
            return self.command
        offsets = offsets or {}
        for action in sample.pressed:
            self._select(action)
        limb = self.spec.limb(self.limb)
        if sample.held:
            seg = limb.segments[self.segment]
            c = self.command[self.limb][self.segment]
            h = sample.held
            r = self.rates
            bend = c.bend + r.bend * dt * (("bend+" in h) - ("bend-" in h))
            plane = c.plane + r.plane * dt * (("plane+" in h) - ("plane-" in h))
            length = c.length + r.length * dt * (("length+" in h) - ("length-" in h))
            self.command[self.limb][self.segment] = clamp_config(PccConfig(bend, plane, length), seg)
        if sample.position is not None and self.limb in self.T_world_base:
            Td, Tb = self.T_world_device, self.T_world_base[self.limb]
            p = Td[:3, :3] @ (self.scale * np.asarray(sample.position, dtype=float)) + Td[:3, 3]
            if self.target_filter is not None:
                p = self.target_filter(self.limb, p)
            self.target_world = p
            target = Tb[:3, :3].T @ (p - Tb[:3, 3])  # in the limb base frame (a rigid transform's inverse)
            # through the model's offset, one IK iteration, the offset off again, continuous, clipped:
            # one compiled call (pccbullet.teleop.ik_command; what apply_offset, solve_ik, add_offset,
            # continue_limb and clamp_config do on configurations)
            offset = offsets.get(self.limb)
            now = np.array([(c.bend, c.plane, c.length) for c in self.command[self.limb]], dtype=float)
            off = np.zeros_like(now) if offset is None else np.ascontiguousarray(offset, dtype=float)
            lo, hi = self._limits.get(self.limb) or self._limits.setdefault(self.limb, ik_limits(limb))
            new = np.empty_like(now)
            self.ik_error = command_step(
                now, off, offset is not None, target, lo, hi, self.ik_iters, TOL, DAMPING,
                self.ik_max_step, self.plane_rate * dt, new,
            )  # fmt: skip
            self.command[self.limb] = [PccConfig(b, p, n) for b, p, n in new.tolist()]
        if self.follow and "camera" in self.command and "light" in self.command:
            self.command["light"] = [
                clamp_config(c, seg)
                for c, seg in zip(self.command["camera"], self.spec.limb("light").segments, strict=True)
            ]
        return self.command

    def model(self, offsets: Mapping[str, FloatArray] | None = None) -> dict[str, list[PccConfig]]:
        """What the local model shows: ``command + offset`` per limb (unclipped, :func:`apply_offset`)."""
        offsets = offsets or {}
        return {name: apply_offset(cmd, offsets.get(name)) for name, cmd in self.command.items()}
