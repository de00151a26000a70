"""Tendon actuation of a compliant rod limb: the tendons, their actuators and the controller.

A limb's tendons (``[[limbs.tendons]]`` of the robot file, :class:`pccbullet.urdf_gen.specs.TendonSpec`) run
in channels parallel to the backbone from the head to the end disk of a segment. On the dynamic rod chain
(:mod:`pccbullet.urdf_gen.rod`) a tendon's tension ``T`` is the generalized force ``-T dL/dq`` of its
length ``L(q)``: at every node it passes the cross-section's moment ``T r`` (``r`` its offset there),
along every chord the compression ``T``, in the same implicit step as the material's springs
(:mod:`pccbullet.sim.limb.chain.tendons`, :func:`pccbullet.sim.limb.chain.solve.spring_torques`).

Each tendon has an actuator in the head: it pulls, never pushes; it pulls with at most ``max_tension``
at rest and less while it reels in, down to nothing at ``max_speed`` (a DC motor's torque-speed line);
it keeps ``pretension`` on the tendon. A :class:`TendonDrive` runs them in one of three modes:

* ``"slack"``: no tension (the limb is passive, or follows spring targets);
* ``"tension"``: the tensions a user sets (:meth:`TendonDrive.set_tensions`), clipped by the actuators;
* ``"pcc"``: the controller follows per-segment PCC commands (:meth:`TendonDrive.set_pcc`): it measures
  the tendon lengths (a robot's motor encoders) and pulls them towards the lengths the commanded arcs
  have, with the statics' tensions as feed-forward (the tensions that hold the commanded shape against
  the springs, gravity and buoyancy, least squares in the springs' energy norm, non-negative); see
  :mod:`pccbullet.sim.limb.chain.tendons` for the feedback. A segment's set can be held at set tensions
  meanwhile (:meth:`TendonDrive.hold`: a grip that squeezes with a set force).

What tendons can do, a limb does: a tendon-driven segment bends in any plane and shortens, but cannot
lengthen beyond its rest length, and bending compresses it (the tendons press the elastomer along the
backbone); a tapered limb bends more where it is thin: not the commanded arc even at its tendon lengths.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.limb.chain.ends import no_holds
from pccbullet.sim.limb.chain.kernels import ADDED_MASS, PRISMATIC, SPHERICAL
from pccbullet.sim.limb.chain.rigid import MASS_COLUMN, ChainModel
from pccbullet.sim.limb.chain.tendons import N_GAINS, static_load, tendon_geometry
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.topology import Topology

MODES = ("slack", "tension", "pcc")
SHAPE_GAIN = 0.5
"""Integral gain of the shape loop (:meth:`TendonDrive.follow_shape`), per second: slower than the tendon
loop, which settles in about 3 s."""
BANDWIDTH_HZ = 0.5
"""The bend loop's crossover (Hz): ``kp = I w^2`` with ``I`` the segment's and the limb beyond's rotary
inertia about the segment base (added mass included), ``w = 2 pi BANDWIDTH_HZ``."""
DAMPING_RATIO = 0.7  # of the bend loop: tau_d = 2 zeta / w
LENGTH_GAIN = 5.0  # the length loop's kp in units of the segment's axial stiffness


def _bend_vector(c: PccConfig) -> tuple[float, float, float]:
    """A PCC arc as its bend vector (rad) and length (m): ``(bend cos plane, bend sin plane, length)``."""
    return (c.bend * math.cos(c.plane), c.bend * math.sin(c.plane), c.length)


class TendonLimb(Protocol):
    """What a :class:`TendonDrive` uses of its limb (:class:`pccbullet.sim.limb.dynamics.CompliantLimb`)."""

    spec: LimbSpec
    kind: Topology
    chain: ChainModel
    rest: FloatArray
    K: FloatArray
    gravity_base: FloatArray
    pcc_vector: Callable[[Sequence[PccConfig]], FloatArray]
    measure: Callable[[], list[PccConfig]] | None


class TendonDrive:
    """The tendons of one compliant rod limb (:class:`pccbullet.sim.limb.dynamics.CompliantLimb`).

    Args:
        limb: the compliant limb; its spec must declare tendons and its chain must be the rod chain.

    Arrays (one entry per tendon, :attr:`names` order) are read-only views of what the last step used.
    """

    def __init__(self, limb: TendonLimb) -> None:
        spec = limb.spec
        if not spec.tendons:
            raise ConfigurationError(f"limb '{spec.name}' declares no tendons ([[limbs.tendons]])")
        if not limb_topology(limb.kind).tendons:
            raise ConfigurationError(
                f"limb '{spec.name}': tendons need the rod chain; chain = {limb.kind.value!r} is not allowed"
            )
        self._limb = limb
        self.specs = spec.tendons
        """The tendons' specs (:class:`pccbullet.urdf_gen.specs.TendonSpec`)."""
        self.names: tuple[str, ...] = tuple(t.name for t in spec.tendons)
        """Tendon names, e.g. ``"grasper_s2_t0"``."""
        ch = limb.chain
        nodes = sorted(
            (int(ch.dof[i]), int(ch.qpos[i])) for i in range(len(ch.links)) if ch.jtype[i] == SPHERICAL
        )
        chords = sorted(
            (int(ch.dof[i]), int(ch.qpos[i])) for i in range(len(ch.links)) if ch.jtype[i] == PRISMATIC
        )
        segs = spec.segments
        total = sum(s.length for s in segs)
        node_seg, node_s, chord_seg = [], [], []
        s0 = 0.0
        for k, seg in enumerate(segs):
            h = seg.length / seg.sections
            node_seg += [k] * (seg.sections + 1)
            node_s += [(s0 + i * h) / total for i in range(seg.sections + 1)]
            chord_seg += [k] * seg.sections
            s0 += seg.length
        if len(nodes) != len(node_seg) or len(chords) != len(chord_seg):
            raise ConfigurationError(f"limb '{spec.name}': the chain's joints are not the rod chain's")
        nt, n_seg = len(self.specs), len(segs)
        angles = np.array([t.angle for t in self.specs])
        self.b = np.stack([-np.sin(angles), np.cos(angles)], axis=1)  # moment direction per unit T r
        W = np.zeros((nt, len(nodes), 3))
        Wc = np.zeros((nt, len(chords)))
        Rseg = np.zeros((nt, n_seg))
        starts = np.cumsum([0.0] + [s.length for s in segs]) / total
        for j, t in enumerate(self.specs):
            for n, (sg, frac) in enumerate(zip(node_seg, node_s, strict=True)):
                if sg <= t.anchor_segment:
                    W[j, n, :2] = t.offset_at(frac) * self.b[j]
            Wc[j] = [1.0 if sg <= t.anchor_segment else 0.0 for sg in chord_seg]
            for sg in range(t.anchor_segment + 1):
                Rseg[j, sg] = t.offset_at(0.5 * (starts[sg] + starts[sg + 1]))
        anchors = [t.anchor_segment for t in self.specs]
        if anchors != sorted(anchors):
            raise ConfigurationError(f"limb '{spec.name}': tendons must be ordered by anchor segment")
        set_seg = sorted(set(anchors))
        set_start = [anchors.index(a) for a in set_seg] + [nt]
        P = np.zeros((3, nt))
        for k, sg in enumerate(set_seg):
            lo, hi = set_start[k], set_start[k + 1]
            B = np.column_stack(
                [-Rseg[lo:hi, sg] * self.b[lo:hi, 0], -Rseg[lo:hi, sg] * self.b[lo:hi, 1], np.ones(hi - lo)]
            )
            P[:, lo:hi] = np.linalg.pinv(B)
        self.sets: tuple[int, ...] = tuple(set_seg)
        """The segments (0-based) that anchor tendons: one controller set each."""
        self.gains = self._default_gains(set_seg)
        """Controller gains per set, ``(n_sets, 5)``: ``kp`` (N m/rad) and ``ki`` (N m/(rad s)) of the
        bend, ``kp`` (N/m) and ``ki`` (N/(m s)) of the length, the damping time ``tau_d`` (s); change in
        place."""
        self._mode = np.zeros(1, dtype=np.int64)
        self._goal: FloatArray | None = None
        self._goal_planes: list[float] | None = None
        self._correction = np.zeros((n_seg, 3))
        self._correction_cap = np.array([[s.bend_max, s.bend_max, s.length_max - s.length_min] for s in segs])
        self._td = (
            np.array([q for _, q in nodes], np.int64), np.array([u for u, _ in nodes], np.int64),
            np.array([q for _, q in chords], np.int64), np.array([u for u, _ in chords], np.int64),
            W, Wc, np.zeros(nt), np.zeros(nt), np.zeros((nt, ch.n_dof)), np.zeros(nt), np.zeros(nt),
            np.array(set_start, np.int64), np.array(set_seg, np.int64), P, Rseg, self.b, np.zeros((n_seg, 2)),
            np.zeros((len(set_seg), 3)), self.gains, np.array([t.pretension for t in self.specs]),
            np.array([t.max_tension for t in self.specs]), np.array([t.max_speed for t in self.specs]),
            np.array([t.spool_mass for t in self.specs]), np.zeros(nt), np.zeros(nt), np.zeros((nt, nt)),
            np.zeros(nt), np.zeros(nt), np.full((nt, 2), np.nan), self._mode, *no_holds(ch.n_dof),
        )  # fmt: skip

    @staticmethod
    def empty(n_dof: int) -> tuple:
        """The arrays of :attr:`arrays` for a limb without tendons."""
        i0, f0 = np.zeros(0, np.int64), np.zeros(0)
        return (
            i0, i0, i0, i0, np.zeros((0, 0, 3)), np.zeros((0, 0)), f0, f0, np.zeros((0, n_dof)), f0, f0,
            np.zeros(1, np.int64), i0, np.zeros((3, 0)), np.zeros((0, 0)), np.zeros((0, 2)), np.zeros((0, 2)),
            np.zeros((0, 3)), np.zeros((0, N_GAINS)), f0, f0, f0, f0, f0, f0, np.zeros((0, 0)), f0, f0,
            np.zeros((0, 2)), np.zeros(1, np.int64), *no_holds(n_dof),
        )  # fmt: skip

    @property
    def arrays(self) -> tuple:
        """The arrays :func:`~pccbullet.sim.limb.chain.tendons.limb_torques` takes (shared, in place)."""
        return self._td

    def _default_gains(self, set_seg: list[int]) -> FloatArray:
        limb = self._limb
        ch, spec = limb.chain, limb.spec
        q_rest = ch.positions(limb.rest)
        com = ch.com_positions(q_rest)
        mass = ch.params[:, MASS_COLUMN] + ch.params[:, ADDED_MASS]
        w = 2.0 * math.pi * BANDWIDTH_HZ
        E = spec.material.youngs_modulus
        gains = np.zeros((len(set_seg), N_GAINS))
        s0 = np.cumsum([0.0] + [s.length for s in spec.segments])
        for k, sg in enumerate(set_seg):
            seg = spec.segments[sg]
            base = np.array([0.0, 0.0, s0[sg]])  # the segment base on the straight limb (base frame z)
            d2 = np.sum((com - base) ** 2, axis=1) * (com[:, 2] > s0[sg] - 1e-9)
            inertia = float(np.sum(mass * d2))
            s = np.linspace(0.0, 1.0, 201)
            axial = 1.0 / float(np.trapezoid(1.0 / (E * math.pi * seg.radius_at(s) ** 2), s * seg.length))
            gains[k] = [
                inertia * w * w,
                inertia * w**3 / 4.0,
                LENGTH_GAIN * axial,
                LENGTH_GAIN * axial * w / 4.0,
                2.0 * DAMPING_RATIO / w,
            ]
        return gains

    # --- commands ----------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """``"slack"``, ``"tension"`` or ``"pcc"`` (see the module docstring)."""
        return MODES[int(self._mode[0])]

    def slacken(self) -> None:
        """Release every tendon (no tension from the next step on)."""
        self._mode[0] = 0

    def set_tensions(self, tensions: Sequence[float] | FloatArray) -> None:
        """Pull with ``tensions`` (N, one per tendon, >= 0) from the next step on; the actuators clip them
        to what they can (:attr:`caps`)."""
        T = np.asarray(tensions, dtype=float)
        if T.shape != (len(self.names),) or not np.isfinite(T).all() or (T < 0.0).any():
            raise ConfigurationError(
                f"tensions = {np.asarray(tensions).tolist()!r} is invalid; allowed: {len(self.names)} finite "
                "numbers >= 0 (N)"
            )
        self._td[10][:] = T
        self._mode[0] = 1

    def hold(self, segment: int, tensions: Sequence[float] | FloatArray) -> None:
        """Hold the set of tendons anchored at segment ``segment`` (0-based) at ``tensions`` (N, one per
        tendon of the set, >= 0; clipped by the actuators) while the other sets follow :meth:`set_pcc` and
        make up for its moment (a grip: the distal segment squeezes with a set force, the proximal ones
        hold their shape). Until :meth:`release`, :meth:`set_tensions` or :meth:`slacken`; mode ``"pcc"``.
        Drops the shape loop's correction (:meth:`follow_shape`): learned on the free limb, it bends a
        gripping one away from its goal (pause the loop while a set is held)."""
        if segment not in self.sets or self.mode != "pcc":
            why = f"allowed: {list(self.sets)}" if segment not in self.sets else "hold needs mode 'pcc' first"
            raise ConfigurationError(f"segment = {segment!r} cannot be held; {why}")
        lo, hi = self._set_range(segment)
        T = np.asarray(tensions, dtype=float)
        if T.shape != (hi - lo,) or not np.isfinite(T).all() or (T < 0.0).any():
            got = np.asarray(tensions).tolist()
            raise ConfigurationError(f"tensions = {got!r} is invalid; allowed: {hi - lo} numbers >= 0 (N)")
        self._td[10][lo:hi] = T
        if self._goal is not None and self._correction.any():
            self._correction[:] = 0.0
            self._command(self._limb.pcc_vector(self._corrected()))

    def release(self, segment: int) -> None:
        """Let the controller drive segment ``segment``'s set again (after :meth:`hold`)."""
        if segment in self.sets and self.mode == "pcc":
            lo, hi = self._set_range(segment)
            self._td[10][lo:hi] = np.nan

    @property
    def held(self) -> tuple[int, ...]:
        """The segments whose sets are held at set tensions (:meth:`hold`)."""
        pcc, T_set, start = self.mode == "pcc", self._td[10], self._td[11]
        return tuple(g for k, g in enumerate(self.sets) if pcc and not np.isnan(T_set[start[k]]))

    def _set_range(self, segment: int) -> tuple[int, int]:
        k = self.sets.index(segment)
        return int(self._td[11][k]), int(self._td[11][k + 1])

    def set_pcc(self, configs: Sequence[PccConfig]) -> None:
        """Follow per-segment PCC ``configs`` from the next step on: the tendon lengths of the commanded arcs,
        the statics' tensions as feed-forward (validated against the segments' limits); with
        :meth:`follow_shape` called, plus the shape loop's correction."""
        limb = self._limb
        limb.pcc_vector(configs)  # the limits' check
        self._goal = np.array([_bend_vector(c) for c in configs])
        self._goal_planes = [c.plane for c in configs]
        self._command(limb.pcc_vector(self._corrected()))

    def follow_shape(self, dt: float) -> None:
        """One step of the shape loop, for a robot that measures its segments' end points (a shape sensor:
        the arcs of :meth:`pccbullet.sim.robot.Robot.measured_pcc`): the integral of the commanded arcs'
        bend vectors and lengths less the measured ones, at :data:`SHAPE_GAIN` per second, shifts the
        tendon controller's goal until the segment ends are where the commanded arcs put them (as far as
        the tendons reach: limits clip it). Call it every ``dt`` seconds (e.g. 20 ms) in mode ``"pcc"``."""
        if self._goal is None or self.mode != "pcc":
            return
        if self._limb.measure is None:
            raise ConfigurationError("follow_shape: the limb has no measured shape (not in a Robot)")
        measured = np.array([_bend_vector(c) for c in self._limb.measure()])
        self._correction += SHAPE_GAIN * dt * (self._goal - measured)
        np.clip(self._correction, -self._correction_cap, self._correction_cap, out=self._correction)
        self._command(self._limb.pcc_vector(self._corrected()))

    @property
    def shape_correction(self) -> FloatArray:
        """The shape loop's correction per segment ``(S, 3)``: bend vector x, y (rad), length (m)."""
        return self._correction.copy()

    def _corrected(self) -> list[PccConfig]:
        assert self._goal is not None and self._goal_planes is not None
        out = []
        segments = self._limb.spec.segments
        twist = 0.0  # how much the planes so far turned the next segment's base frame away from the goal's
        corrected = self._goal + self._correction
        for (bx, by, length), seg, goal in zip(corrected, segments, self._goal_planes, strict=True):
            bend = min(math.hypot(bx, by), seg.bend_max)
            # a PCC segment's end frame turns by its plane (Rz(plane) Ry(bend)): an arc written with another
            # plane (a straight one, or a negative bend as a positive one) turns the next segments' planes
            plane = math.atan2(by, bx) if bend > 1e-12 else goal
            plane = goal + math.remainder(plane - goal, 2.0 * math.pi) - twist
            plane = math.remainder(plane, 2.0 * math.pi)
            if abs(plane) > seg.plane_max:
                plane = math.copysign(seg.plane_max, plane)
            twist = math.remainder(plane + twist - goal, 2.0 * math.pi)
            out.append(PccConfig(bend, plane, min(max(length, seg.length_min), seg.length_max)))
        return out

    def command_vector(self, vector: FloatArray) -> None:
        """Follow the limb's joint vector ``vector`` (rod chain, :mod:`pccbullet.urdf_gen.rod`): its tendon
        lengths and the statics' tensions that hold it (what :meth:`set_pcc` does for PCC arcs; no PCC
        goal for :meth:`follow_shape` then)."""
        self._goal = None
        self._command(vector)

    def _command(self, vector: FloatArray) -> None:
        limb = self._limb
        ch = limb.chain
        q = ch.positions(vector)
        td = self._td
        L, Ld, G = np.zeros(len(self.names)), np.zeros(len(self.names)), np.zeros((len(self.names), ch.n_dof))
        tendon_geometry(q, np.zeros(ch.n_dof), td[0], td[1], td[2], td[3], td[4], td[5], L, Ld, G)
        load = np.zeros(ch.n_dof)
        rest = limb.rest
        static_load(ch.parent, ch.jtype, ch.dof, ch.qpos, ch.params, q, limb.gravity_base, rest, limb.K, load)
        from scipy.optimize import nnls

        scale = 1.0 / np.sqrt(limb.K)
        T_ff, _ = nnls(G.T * scale[:, None], load * scale)
        Mff = np.zeros_like(td[16])
        for sg in range(Mff.shape[0]):
            Mff[sg] = (T_ff * td[14][:, sg]) @ self.b
        new_target = td[9].copy()
        new_target[:] = L
        if self._mode[0] != 2:
            td[17][:] = 0.0  # integrators start afresh
            td[10][:] = np.nan  # no set held
        td[9][:] = new_target
        td[16][:] = Mff
        self.feed_forward = T_ff
        self._mode[0] = 2

    # --- state -------------------------------------------------------------------------------------

    @property
    def lengths(self) -> FloatArray:
        """Tendon lengths at the last step's start (m): chords less ``r b . theta`` at the nodes (a straight
        limb at rest: the length from the base to the anchor)."""
        return self._td[6].copy()

    @property
    def rates(self) -> FloatArray:
        """Tendon length rates at the last step's start (m/s; negative: reeled in)."""
        return self._td[7].copy()

    @property
    def tensions(self) -> FloatArray:
        """Tendon tensions the last step applied (N): the motor's force plus its spool's inertia."""
        return self._td[24].copy()

    @property
    def motor_forces(self) -> FloatArray:
        """The motors' forces in the last step (N), within the motors' limits (:attr:`caps`)."""
        return self._td[23].copy()

    @property
    def caps(self) -> FloatArray:
        """The most each motor could pull at its spool's speed in the last step (N)."""
        return self._td[26].copy()

    @property
    def peak_tensions(self) -> FloatArray:
        """The largest tension each actuator applied since the limb was made or :meth:`reset_peaks` (N)."""
        return self._td[27].copy()

    def reset_peaks(self) -> None:
        """Start the peak tensions afresh."""
        self._td[27][:] = 0.0

    @property
    def commanded_lengths(self) -> FloatArray:
        """The tendon lengths the controller pulls towards (m; mode ``"pcc"``)."""
        return self._td[9].copy()

    @property
    def spool_speeds(self) -> FloatArray:
        """How fast each spool reels in after the last step (m/s; negative: pays out)."""
        return -self._td[28][:, 1].copy()

    def forget(self) -> None:
        """Reset the controller's integrators and put the spools on the tendons (after the limb's state was
        reset)."""
        self._td[17][:] = 0.0
        self._td[28][:] = np.nan
