"""Pressure actuation of a compliant rod limb: its fluid chambers, their pressures and the lines feeding them.

A limb whose robot file declares chambers (``[limbs.actuators]`` with ``kind = "chamber"`` and an
``area_mm2``, :class:`pccbullet.urdf_gen.specs.ActuatorSpec`) has ``count`` chambers in every segment, at
the offset ``r`` from the backbone and the angles ``phi_j`` about it (plus a per-segment rotation where the
``[hydraulic_drive]`` table gives ``section_rotation_deg``). A chamber of gauge pressure ``p`` and area
``A`` is a fibre of its segment that pushes with ``p A``: on the rod chain (:mod:`pccbullet.urdf_gen.rod`)
its generalized force is ``+p A dL/dq`` of the fibre length ``L(q)`` (seed 000 eqs. 12-13): at every node
of its segment the cross-section's moment ``p A r`` (about ``b = z x e_phi``: it bends the segment away
from the chamber), along every chord of its segment the axial force ``p A``. It is a tendon that pushes,
only in its own segment: the fibre geometry is the tendons' (:mod:`pccbullet.sim.limb.chain.tendons`), so
the force enters the same implicit step as the springs at the step's own ``q`` (mode ``3`` of
:func:`~pccbullet.sim.limb.chain.tendons.tendon_tensions`: the forces as set, pushing too, no coupling),
through PyBullet's C API or not alike.

Pressure dynamics, per chamber, advanced once a step before the limb's torques (:meth:`ChamberDrive.advance`):

* a robot file with a ``[hydraulic_drive]`` table (seed 000): its line and valve model,
  :class:`pccbullet.sim.models.hydraulics.HydraulicDrive` (servo motor, ball screw, piston, cylinder,
  laminar pipe, chamber; seed 000 eqs. 29-33), one drive per chamber; a commanded pressure ``p*`` sets
  the motor torque that holds it statically, ``T = p* s A_c / eta`` (clipped to ``max_torque_nm``), or
  the motor torques are set directly (:meth:`ChamberDrive.set_motor_torques`);
* otherwise a first-order lag ``tau p' = p* - p`` (exact over a step) with the limits of the optional
  ``[pressure_drive]`` table (``time_constant_ms``, default 50; ``min_pressure_kpa``, default vacuum,
  -101.325; ``max_pressure_kpa``, default none).

A chamber given by a kinematic law, from pressure to length (``[pressure_law]``, seed 004) or to bend
(``[bending_law]``, seed 002), pushes instead with the force that holds the law's shape against the rod's
springs (:mod:`pccbullet.sim.limb.chamber_law`).

Chamber walls. Where the ``[hydraulic_drive]`` table gives a wall area ``annulus_area_m2`` (``A_s``), the
chords' axial stiffness is the walls' (:func:`wall_stiffness`): ``count E A_s / h`` per chord (seed 000
eq. 10, the paper's linear law; :class:`pccbullet.sim.models.chambers.ChamberWallLimb` with ``law =
"linear"``) instead of the solid disk's ``E pi r^2 / h``; bending and torsion keep the disk's.

Commands. :meth:`ChamberDrive.set_pressures` commands each chamber's pressure;
:meth:`ChamberDrive.command_vector` commands the pressures that hold a joint vector (a PCC shape)
statically: the least-squares pressures (>= 0, in the springs' energy norm) that balance the springs,
gravity and buoyancy there, the way the tendons' feed-forward is found. Chambers are numbered segment by
segment, ``count`` per segment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.fields import Fields
from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain.ends import no_holds
from pccbullet.sim.limb.chain.kernels import PRISMATIC, SPHERICAL
from pccbullet.sim.limb.chain.rigid import ChainModel
from pccbullet.sim.limb.chain.tendons import static_load, tendon_geometry
from pccbullet.sim.limb.chamber_law import BendingLawForces, LengthLawForces
from pccbullet.urdf_gen.specs import LimbSpec, RobotSpec

PRESSURE_MODE = 3
"""The tendon kernel's mode for forces applied as set, pushing too
(:func:`~pccbullet.sim.limb.chain.tendons.tendon_tensions`)."""
VACUUM_GAUGE = -101325.0  # Pa, the lowest gauge pressure
DEFAULT_TIME_CONSTANT = 0.05  # s, the lag of a line without a model in the robot file
KPA = 1e3  # Pa per kPa


def declares_chambers(limb: LimbSpec) -> bool:
    """Whether ``limb``'s file declares chambers with an area (``[limbs.actuators]``, ``kind =
    "chamber"``)."""
    act = limb.actuators
    return act is not None and act.kind == "chamber" and act.area > 0.0


def chamber_rotation(robot: RobotSpec | None, limb: LimbSpec) -> tuple[float, ...]:
    """Each segment's rotation of its chamber pattern about its base z (rad): the ``[hydraulic_drive]``
    table's ``section_rotation_deg`` where the file has one, else zeros."""
    n_seg = len(limb.segments)
    if robot is None or "hydraulic_drive" not in robot.extra:
        return (0.0,) * n_seg
    from pccbullet.sim.models.hydraulics import load_hydraulic_drive

    rot = load_hydraulic_drive(robot).section_rotation
    return tuple(rot[s] if s < len(rot) else 0.0 for s in range(n_seg))


def wall_stiffness(robot: RobotSpec | None, limb: LimbSpec, chain: ChainModel, K: FloatArray) -> FloatArray:
    """``K`` ``(n_dof,)`` with every chord's axial stiffness the chamber walls' ``count E A_s / h`` where
    ``robot``'s ``[hydraulic_drive]`` table gives the wall area ``A_s`` (else ``K`` unchanged)."""
    if robot is None or "hydraulic_drive" not in robot.extra or limb.actuators is None:
        return K
    from pccbullet.sim.models.hydraulics import load_hydraulic_drive

    rigidity = limb.actuators.count * limb.material.youngs_modulus * load_hydraulic_drive(robot).annulus_area
    chords = sorted(int(chain.dof[i]) for i in range(len(chain.links)) if chain.jtype[i] == PRISMATIC)
    h = np.concatenate([[s.length / s.sections] * s.sections for s in limb.segments])
    out = K.copy()
    out[chords] = rigidity / h
    return out


class LagLine:
    """First-order lag ``tau p' = p* - p`` per chamber within ``[lo, hi]`` (Pa); see the module docstring."""

    def __init__(self, count: int, time_constant: float, lo: float, hi: float) -> None:
        self.time_constant, self.lo, self.hi = time_constant, lo, hi
        self.pressure = np.zeros(count)

    def advance(self, command: FloatArray, dt: float) -> FloatArray:
        """Advance ``dt`` (s) towards ``command`` (Pa, clipped to the limits); returns the pressures."""
        goal = np.clip(command, self.lo, self.hi)
        self.pressure += (goal - self.pressure) * (1.0 - math.exp(-dt / self.time_constant))
        return self.pressure


def pressure_line(robot: RobotSpec | None, count: int) -> LagLine:
    """The lag of ``robot``'s ``[pressure_drive]`` table (or the defaults) for ``count`` chambers."""
    table = {} if robot is None else robot.extra.get("pressure_drive", {})
    source = robot.source if robot is not None and robot.source is not None else Path("<robot>")
    f = Fields(table, source, "pressure_drive")
    tau = f.number("time_constant_ms", 0.0, 1e6, lo_open=True, default=DEFAULT_TIME_CONSTANT * 1e3) * 1e-3
    lo = f.number("min_pressure_kpa", VACUUM_GAUGE / KPA, 1e6, default=VACUUM_GAUGE / KPA) * KPA
    has_max = f.has("max_pressure_kpa")
    hi = f.number("max_pressure_kpa", lo / KPA, 1e6, lo_open=True) * KPA if has_max else math.inf
    f.finish()
    return LagLine(count, tau, lo, hi)


class ChamberLimb(Protocol):
    """What a :class:`ChamberDrive` uses of its limb (:class:`pccbullet.sim.limb.dynamics.CompliantLimb`)."""

    spec: LimbSpec
    chain: ChainModel
    rest: FloatArray
    K: FloatArray
    gravity_base: FloatArray


class ChamberDrive:
    """The chambers of one compliant rod limb (:class:`pccbullet.sim.limb.dynamics.CompliantLimb`) and their
    lines.

    Args:
        limb: the compliant limb; its spec must declare chambers (:func:`declares_chambers`).
        robot: the robot's spec, for the ``[hydraulic_drive]`` or ``[pressure_drive]`` tables (``None``:
            a lag with the defaults).

    Arrays (one entry per chamber, :attr:`names` order) are copies.
    """

    def __init__(self, limb: ChamberLimb, robot: RobotSpec | None) -> None:
        spec = limb.spec
        if not declares_chambers(spec):
            raise ConfigurationError(
                f"limb '{spec.name}' declares no chambers ([limbs.actuators] kind 'chamber')"
            )
        act = spec.actuators
        assert act is not None
        self._limb = limb
        segs = spec.segments
        rotation = chamber_rotation(robot, spec)
        self.names: tuple[str, ...] = tuple(
            f"{spec.name}_s{s + 1}_c{j}" for s in range(len(segs)) for j in range(act.count)
        )
        """Chamber names, segment by segment: ``"arm_s1_c0"`` is segment 1's chamber 0."""
        self.angles: FloatArray = np.array([a + rotation[s] for s in range(len(segs)) for a in act.angles])
        """Each chamber's angle about its segment's base z (rad)."""
        self.area: float = act.area
        """A chamber's area (m^2)."""
        ch = limb.chain
        nodes = sorted(
            (int(ch.dof[i]), int(ch.qpos[i])) for i in range(len(ch.links)) if ch.jtype[i] == SPHERICAL
        )
        chords = sorted(
            (int(ch.dof[i]), int(ch.qpos[i])) for i in range(len(ch.links)) if ch.jtype[i] == PRISMATIC
        )
        node_seg = [k for k, seg in enumerate(segs) for _ in range(seg.sections + 1)]
        chord_seg = [k for k, seg in enumerate(segs) for _ in range(seg.sections)]
        if len(nodes) != len(node_seg) or len(chords) != len(chord_seg):
            raise ConfigurationError(f"limb '{spec.name}': chambers need the rod chain's joints")
        nc = len(self.names)
        seg_of = np.repeat(np.arange(len(segs)), act.count)
        b = np.stack([-np.sin(self.angles), np.cos(self.angles)], axis=1)
        W = np.zeros((nc, len(nodes), 3))
        Wc = np.zeros((nc, len(chords)))
        for j in range(nc):
            W[j, np.array(node_seg) == seg_of[j], :2] = act.offset * b[j]
            Wc[j] = np.array(chord_seg) == seg_of[j]
        i0 = np.zeros(0, np.int64)
        self._mode = np.array([PRESSURE_MODE], np.int64)
        self._td = (
            np.array([q for _, q in nodes], np.int64), np.array([u for u, _ in nodes], np.int64),
            np.array([q for _, q in chords], np.int64), np.array([u for u, _ in chords], np.int64),
            W, Wc, np.zeros(nc), np.zeros(nc), np.zeros((nc, ch.n_dof)), np.zeros(nc), np.zeros(nc),
            np.zeros(1, np.int64), i0, np.zeros((3, 0)), np.zeros((0, 0)), np.zeros((0, 2)), np.zeros((0, 2)),
            np.zeros((0, 3)), np.zeros((0, 5)), np.zeros(nc), np.zeros(nc), np.ones(nc), np.zeros(nc),
            np.zeros(nc), np.zeros(nc), np.zeros((nc, nc)), np.zeros(nc), np.full(nc, -np.inf),
            np.full((nc, 2), np.nan), self._mode, *no_holds(ch.n_dof),
        )  # fmt: skip
        self._command = np.zeros(nc)
        self._torques: FloatArray | None = None
        self.hydraulic = None
        """The seed 000 line model (:class:`pccbullet.sim.models.hydraulics.HydraulicDrive`) or ``None``."""
        self.lag: LagLine | None = None
        """The first-order lag, where the file has no line model, else ``None``."""
        if robot is not None and "hydraulic_drive" in robot.extra:
            from pccbullet.sim.models.hydraulics import HydraulicDrive, load_hydraulic_drive

            self.hydraulic = HydraulicDrive(load_hydraulic_drive(robot), nc)
        else:
            self.lag = pressure_line(robot, nc)
        self.law: LengthLawForces | BendingLawForces | None = None
        """A kinematic law's forces (``[pressure_law]``: pressure to length; ``[bending_law]``: pressure to
        bend; :mod:`pccbullet.sim.limb.chamber_law`) in place of ``p A``, or ``None``."""
        if robot is not None and "bending_law" in robot.extra:
            node_dofs = [
                [u for (u, _), g in zip(nodes, node_seg, strict=True) if g == k] for k in range(len(segs))
            ]
            self.law = BendingLawForces(robot, spec, limb.K, node_dofs)
            Wc[:] = 0.0  # the strain-limiting layer takes the chamber's axial force
        elif robot is not None and "pressure_law" in robot.extra:
            node_dofs = [
                [u for (u, _), g in zip(nodes, node_seg, strict=True) if g == k] for k in range(len(segs))
            ]
            chord_dofs = [
                [u for (u, _), g in zip(chords, chord_seg, strict=True) if g == k] for k in range(len(segs))
            ]
            self.law = LengthLawForces(robot, spec, self.angles, limb.K, node_dofs, chord_dofs)
        self._publish(self.pressures)

    @property
    def arrays(self) -> tuple:
        """The arrays :func:`~pccbullet.sim.limb.chain.tendons.limb_torques` takes (shared, in place)."""
        return self._td

    # --- commands ----------------------------------------------------------------------------------

    def _check(self, values: Sequence[float] | FloatArray, field: str, unit: str) -> FloatArray:
        v = np.asarray(values, dtype=float)
        if v.shape != (len(self.names),) or not np.isfinite(v).all():
            raise ConfigurationError(
                f"{field} = {np.asarray(values).tolist()!r} is invalid; allowed: {len(self.names)} finite "
                f"numbers ({unit})"
            )
        return v

    def set_pressures(self, pressures: Sequence[float] | FloatArray) -> None:
        """Command each chamber's gauge pressure (Pa, :attr:`names` order) from the next step on; the line
        follows with its dynamics (module docstring) and limits."""
        p = self._check(pressures, "pressures", "Pa")
        if (p < VACUUM_GAUGE).any():
            raise ConfigurationError(
                f"pressures = {p.tolist()!r} is invalid; allowed: gauge pressures >= {VACUUM_GAUGE:g} Pa"
            )
        self._command[:] = p
        self._torques = None

    def set_motor_torques(self, torques: Sequence[float] | FloatArray) -> None:
        """Drive the seed 000 line model by its motor torques (N m, one per chamber, clipped to its limit)."""
        if self.hydraulic is None:
            raise ConfigurationError("motor torques need a [hydraulic_drive] table in the robot file")
        self._torques = self._check(torques, "torques", "N m")
        self._command[:] = self.hydraulic.params.steady_pressure(self._torques)

    def command_vector(self, vector: FloatArray) -> None:
        """Command the pressures that hold the limb's joint vector ``vector`` at rest (module docstring)."""
        from scipy.optimize import nnls

        limb = self._limb
        ch, td = limb.chain, self._td
        q = ch.positions(vector)
        nc = len(self.names)
        L, Ld, G = np.zeros(nc), np.zeros(nc), np.zeros((nc, ch.n_dof))
        tendon_geometry(q, np.zeros(ch.n_dof), td[0], td[1], td[2], td[3], td[4], td[5], L, Ld, G)
        load = np.zeros(ch.n_dof)
        static_load(
            ch.parent, ch.jtype, ch.dof, ch.qpos, ch.params, q, limb.gravity_base, limb.rest, limb.K, load
        )
        if self.law is not None:  # the pressures whose law lengths are the arcs' fibre lengths
            rest = np.zeros(nc)
            tendon_geometry(ch.positions(limb.rest), np.zeros(ch.n_dof), *td[:6], rest, Ld, G.copy())
            self.set_pressures(self.law.pressures_for(L - rest))
            return
        scale = 1.0 / np.sqrt(limb.K)
        # the chambers' force p A G^T balances the load: -p A G^T = load
        force, _ = nnls(-G.T * scale[:, None], load * scale)
        self.set_pressures(force / self.area)

    @property
    def channels(self) -> tuple[str, ...]:
        """The experiment channels that drive the chambers (:meth:`set_channels`), one per chamber: the
        motor torques ``motor_1`` ... (N m) of a ``[hydraulic_drive]``, else the pressures ``pressure_1`` ...
        (Pa), as the model mode names them (:mod:`pccbullet.sim.models.experiment_models`)."""
        kind = "motor" if self.hydraulic is not None else "pressure"
        return tuple(f"{kind}_{i + 1}" for i in range(len(self.names)))

    def set_channels(self, values: Mapping[str, float]) -> None:
        """Command the chambers by the channels' values (:attr:`channels`; missing ones are 0)."""
        u = [float(values.get(name, 0.0)) for name in self.channels]
        if self.hydraulic is not None:
            self.set_motor_torques(u)
        else:
            self.set_pressures(u)

    # --- the step ----------------------------------------------------------------------------------

    def advance(self, dt: float) -> None:
        """Advance the lines by ``dt`` (s) and put the pressures' forces into the next step."""
        if self.hydraulic is not None:
            params = self.hydraulic.params
            T = self._torques
            if T is None:
                T = self._command * params.lead * params.piston_area / params.efficiency
            p = self.hydraulic.step(T, dt)
        else:
            assert self.lag is not None
            p = self.lag.advance(self._command, dt)
        self._publish(p)

    def _publish(self, p: FloatArray) -> None:
        p = np.maximum(p, VACUUM_GAUGE)
        force = self.law.forces(p) if self.law is not None else p * self.area
        self._td[10][:] = -force  # a chamber is a fibre that pushes: "tension" -p A

    # --- state -------------------------------------------------------------------------------------

    @property
    def pressures(self) -> FloatArray:
        """Each chamber's gauge pressure (Pa) the next step applies."""
        if self.hydraulic is not None:
            return self.hydraulic.chamber_pressure.copy()
        assert self.lag is not None
        return self.lag.pressure.copy()

    @property
    def commanded(self) -> FloatArray:
        """The commanded pressures (Pa; with motor torques set: their static pressures)."""
        return self._command.copy()

    @property
    def lengths(self) -> FloatArray:
        """The chambers' fibre lengths at the last step's start (m)."""
        return self._td[6].copy()
