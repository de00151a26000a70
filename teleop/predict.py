"""The master's prediction of the soft slave: the Newton–Euler model of every limb, driven by the command.

The slave's limbs are compliant chains whose joint springs pull towards the commanded PCC shape
(:meth:`pccbullet.sim.world.Robot.set_pcc` with ``mode="target"``) while gravity, buoyancy and drag bend them
away from it. The same physics in the Newton–Euler strain model
(:mod:`pccbullet.sim.models.newton_euler.model`, seed 000) is ``M q'' = Q(q, q') + tau - K q - D q'`` with the
commanded strains ``q*`` as the springs' rest point, i.e. ``tau = K q*``: the model sags under its net weight
in the medium exactly as the slave does, with its own discretization (lumped nodes instead of rigid slices)
and its own drag law. Each limb's model is stepped in the master's loop with the current command; its shape is
read as one PCC arc per segment through the model's segment ends
(:func:`pccbullet.urdf_gen.pcc_fit.pcc_from_points`, the same fit the slave applies to its chain, through the
compiled :func:`segment_ends`), so the master shows, and the operator's IK solves for, the sagging arm.

The prediction is quasi-static: the models are critically damped (:data:`QUASI_STATIC_DAMPING`) and
run :data:`TIME_SCALE` times faster than real time, so they relax to the command's static sag without
swinging and about as fast as the real limb falls. A model that swung like the limb (damping ratio 0.1)
fed its oscillation back into the operator's IK and the command went unstable; one at real-time speed
lagged the limb's fall and the IK overshot (the grasper by 25 cm before it settled).

Cost: one compiled model step is ~15 us a limb at 10 pieces a segment; :meth:`SagPredictor.update`
calls the kernel (:func:`pccbullet.sim.models.newton_euler.kernels.step_kernel`, the same one as
:func:`pccbullet.sim.models.newton_euler.integrators.step`, bit for bit) with arguments prepared once, turns
the command into the springs' rest point (:func:`spring_torques`) and the new state into bend vectors
(:func:`shape_vectors`) in compiled code: ~20 us a tick for the haptic limb instead of ~55.
The haptic limb is stepped every tick; the other limbs every ``stride`` ticks with a step of
``stride * dt`` (the integrator is implicit in the stiff terms), one of them per tick, so a tick pays
for at most two limb steps. A limb whose command has not changed and whose model has come to rest
(every strain rate below :data:`REST_RATE`) is not stepped until its command changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.medium import medium as medium_by_name
from pccbullet.sim.models.newton_euler import kernels as ne_kernels
from pccbullet.sim.models.newton_euler.integrators import step as model_step
from pccbullet.sim.models.newton_euler.model import LimbModel
from pccbullet.sim.models.newton_euler.params import kernel_loads
from pccbullet.urdf_gen.pcc import PccConfig, sinc
from pccbullet.urdf_gen.pcc_fit import pcc_from_points
from pccbullet.urdf_gen.specs import RobotSpec

TIME_SCALE = 4.0  # model seconds per real second: the quasi-static model relaxes this much faster
QUASI_STATIC_DAMPING = 1.0  # -, critical damping of the first mode: the model relaxes to its static sag
SETTLED_RATE = 0.05  # 1/s or 1/(m s): the model is close enough to rest to compare with the slave
REST_RATE = 1e-4  # 1/s (strain rate) or 1/(m s) (curvature rate): below it a limb's model is at rest


@numba.njit(cache=True)
def segment_ends(q: FloatArray, l0: FloatArray, last: np.ndarray, out: FloatArray) -> None:
    """Tip positions of the segments (the tips of pieces ``last``) in the limb base frame into ``out``
    ``(S, 3)`` (m): :meth:`LimbModel.forward_kinematics`
    (:func:`pccbullet.sim.models.newton_euler.kinematics.piece_pose`) for the points it needs, compiled (the
    numpy version took most of a master tick)."""
    R = np.eye(3)
    pos = np.zeros(3)
    Rp = np.empty((3, 3))
    loc = np.empty((3, 3))
    s = 0
    for i in range(len(l0)):
        rx, ry, tau = l0[i] * q[4 * i + 1], l0[i] * q[4 * i + 2], l0[i] * q[4 * i + 3]
        arc = l0[i] * (1.0 + q[4 * i])
        th = math.hypot(rx, ry)
        if th < 0.05:  # the series of ne_kinematics._coeffs
            t2 = th * th
            A = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
            B = 1.0 - t2 / 6.0 + t2 * t2 / 120.0
        else:
            A = (1.0 - math.cos(th)) / (th * th)
            B = math.sin(th) / th
        p0, p1, p2 = arc * ry * A, -arc * rx * A, arc * B
        for r in range(3):
            pos[r] += R[r, 0] * p0 + R[r, 1] * p1 + R[r, 2] * p2
        b00, b01, b02 = 1.0 - A * ry * ry, A * rx * ry, B * ry
        b10, b11, b12 = A * rx * ry, 1.0 - A * rx * rx, -B * rx
        b20, b21, b22 = -B * ry, B * rx, 1.0 - A * th * th
        ct, st = math.cos(tau), math.sin(tau)
        loc[0, 0], loc[0, 1], loc[0, 2] = b00 * ct + b01 * st, -b00 * st + b01 * ct, b02
        loc[1, 0], loc[1, 1], loc[1, 2] = b10 * ct + b11 * st, -b10 * st + b11 * ct, b12
        loc[2, 0], loc[2, 1], loc[2, 2] = b20 * ct + b21 * st, -b20 * st + b21 * ct, b22
        for r in range(3):
            for c in range(3):
                Rp[r, c] = R[r, 0] * loc[0, c] + R[r, 1] * loc[1, c] + R[r, 2] * loc[2, c]
        R[:, :] = Rp
        if s < len(last) and i == last[s]:
            out[s] = pos
            s += 1


@numba.njit(cache=True)
def spring_torques(
    bend: FloatArray,
    plane: FloatArray,
    length: FloatArray,
    seg: np.ndarray,
    rest: FloatArray,
    K: FloatArray,
    out: FloatArray,
) -> None:
    """``K * state_from_pcc(model, configs)`` (:func:`pccbullet.sim.models.joint_targets.state_from_pcc`): the
    springs' torques that hold the model at the PCC arcs ``(bend, plane, length)`` ``(S,)`` each, into
    ``out`` ``(4 n,)``. ``seg`` ``(n,)``: each piece's segment; ``rest`` ``(S,)``: the segments' rest
    lengths (m)."""
    offset = 0.0
    a = np.empty(len(bend))
    b = np.empty(len(bend))
    c = np.empty(len(bend))
    for s in range(len(bend)):
        psi = plane[s] + offset
        a[s] = length[s] / rest[s] - 1.0
        b[s] = -math.sin(psi) * bend[s] / rest[s]
        c[s] = math.cos(psi) * bend[s] / rest[s]
        offset = psi
    for i in range(len(seg)):
        s = seg[i]
        out[4 * i] = K[4 * i] * a[s]
        out[4 * i + 1] = K[4 * i + 1] * b[s]
        out[4 * i + 2] = K[4 * i + 2] * c[s]
        out[4 * i + 3] = K[4 * i + 3] * 0.0


_sinc = numba.njit(cache=True)(sinc)  # pccbullet.urdf_gen.pcc.sinc, compiled


@numba.njit(cache=True)
def shape_vectors(q: FloatArray, l0: FloatArray, last: np.ndarray, out: FloatArray) -> None:
    """The model's shape as one fitted arc per segment, as bend vectors ``(S, 3)`` into ``out``:
    ``bend_vectors(pcc_from_points(ends))`` (:mod:`pccbullet.urdf_gen.pcc_fit`) of the :func:`segment_ends`,
    compiled."""
    S = len(last)
    ends = np.empty((S, 3))
    segment_ends(q, l0, last, ends)
    R = np.eye(3)
    o = np.zeros(3)
    A = np.empty((3, 3))
    Rn = np.empty((3, 3))
    for s in range(S):
        d0, d1, d2 = ends[s, 0] - o[0], ends[s, 1] - o[1], ends[s, 2] - o[2]
        x = R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2  # R^T (p - o): the end in the arc's base frame
        y = R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2
        z = R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2
        rho = math.hypot(x, y)  # pccbullet.urdf_gen.pcc_fit.arc_through
        theta = math.atan2(rho, z)
        plane = math.atan2(y, x) if rho > 0.0 else 0.0
        bend = 2.0 * theta
        length = math.sqrt(rho * rho + z * z) / _sinc(theta)
        cp, sp = math.cos(plane), math.sin(plane)
        out[s, 0], out[s, 1], out[s, 2] = bend * cp, bend * sp, length
        half = 0.5 * bend  # pccbullet.urdf_gen.pcc.arc_transform: the next arc starts at this one's end frame
        ax = length * math.sin(half) * _sinc(half)
        az = length * _sinc(bend)
        cb, sb = math.cos(bend), math.sin(bend)
        A[0, 0], A[0, 1], A[0, 2] = cp * cb, -sp, cp * sb
        A[1, 0], A[1, 1], A[1, 2] = sp * cb, cp, sp * sb
        A[2, 0], A[2, 1], A[2, 2] = -sb, 0.0, cb
        t0, t1, t2 = cp * ax, sp * ax, az
        for r in range(3):
            o[r] += R[r, 0] * t0 + R[r, 1] * t1 + R[r, 2] * t2
            for c in range(3):
                Rn[r, c] = R[r, 0] * A[0, c] + R[r, 1] * A[1, c] + R[r, 2] * A[2, c]
        R[:, :] = Rn


class SagPredictor:
    """Newton–Euler models of a robot's limbs in a medium, stepped towards their commands.

    Args:
        spec: the robot. T_world_base: limb -> world pose of its base ``(4, 4)`` (gravity direction).
        medium: world medium name (``"air"``, ``"water"``, ``"seawater"``).
        gravity: world gravity ``(3,)`` (m/s^2).
        every_tick: the limb stepped every tick (the haptic one); the others every ``stride`` ticks.
        stride: ticks between two steps of the other limbs.
        damping_ratio: the models' material damping ratio. The default (1, critical) makes the
            prediction quasi-static: it relaxes to the static sag of the command in ~1 / omega_1 without
            swinging. The operator's IK solves through it every tick; a model that swings like the
            real limb (0.1) fed its oscillation back into the command and the loop went unstable.
    """

    def __init__(
        self,
        spec: RobotSpec,
        T_world_base: dict[str, Transform],
        medium: str,
        gravity: Sequence[float],
        *,
        every_tick: str,
        stride: int = 4,
        damping_ratio: float = QUASI_STATIC_DAMPING,
    ) -> None:
        self.names = [limb.name for limb in spec.limbs]
        self.models: dict[str, LimbModel] = {}
        self._ends: dict[str, np.ndarray] = {}  # index of each segment's last piece
        self._kernel_args: dict[str, tuple[np.ndarray, ...]] = {}  # step_kernel's constant arguments
        self._rests: dict[str, FloatArray] = {}  # segments' rest lengths (m)
        self._rate: dict[str, float] = {}  # max |qd| after the last step
        self.q: dict[str, FloatArray] = {}
        self.qd: dict[str, FloatArray] = {}
        med = medium_by_name(medium)
        for limb in spec.limbs:
            g_base = T_world_base[limb.name][:3, :3].T @ np.asarray(gravity, dtype=float)
            m = LimbModel(
                limb, limb.segments[0].sections, gravity=g_base, medium=med, damping_ratio=damping_ratio
            )
            self.models[limb.name] = m
            self._ends[limb.name] = np.flatnonzero(np.diff(np.append(m.segment, -1)) != 0).astype(np.int64)
            self.q[limb.name] = m.rest_state()
            self.qd[limb.name] = np.zeros(m.dof)
            self._rate[limb.name] = 0.0
            limbs, pieces = m.batch_params().packed()
            K, D = np.ascontiguousarray(m.K, dtype=float), np.ascontiguousarray(m.D, dtype=float)
            self._kernel_args[limb.name] = (limbs, pieces, kernel_loads(1, m.gravity, None, None), K, D)
            self._rests[limb.name] = np.array(
                [float(m.l0[m.segment == s].sum()) for s in range(len(limb.segments))]
            )
        self.every_tick = every_tick
        self.time_scale = TIME_SCALE
        self.stride = max(1, int(stride))
        others = [n for n in self.names if n != every_tick]
        # the other limbs take turns: limb i on ticks with k % stride == i % stride
        self._slot = {n: i % self.stride for i, n in enumerate(others)}
        self._command: dict[str, tuple[PccConfig, ...]] = {}
        self._tau: dict[str, FloatArray] = {}
        self._rest: set[str] = set()
        self.steps = 0
        for name in self.names:  # compile or load the kernels now, not in the first tick of a loop
            self.shape(name)
            tau = self._torques(name, [PccConfig(0.0, 0.0, s.length) for s in spec.limb(name).segments])
            self.shape_vectors(name)
            limbs, pieces, loads, K, D = self._kernel_args[name]
            ne_kernels.step_kernel(limbs, pieces, loads, self.q[name], self.qd[name], tau, K, D, 0.0, 0.5)

    def shape(self, name: str) -> list[PccConfig]:
        """The model's present shape of limb ``name``: one fitted arc per segment."""
        m = self.models[name]
        ends = np.empty((len(m.limb.segments), 3))
        segment_ends(self.q[name], m.l0, self._ends[name], ends)
        return pcc_from_points(ends)

    def shape_vectors(self, name: str) -> FloatArray:
        """:meth:`shape` as bend vectors ``(S, 3)`` (:func:`~pccbullet.urdf_gen.pcc_fit.bend_vectors`),
        compiled."""
        out = np.empty((len(self._ends[name]), 3))
        shape_vectors(self.q[name], self.models[name].l0, self._ends[name], out)
        return out

    def settled(self, name: str) -> bool:
        """Whether limb ``name``'s model has (nearly) come to rest: every strain rate below
        :data:`SETTLED_RATE`."""
        return self._rate[name] < SETTLED_RATE

    def _torques(self, name: str, command: Sequence[PccConfig]) -> FloatArray:
        m = self.models[name]
        if len(command) != len(m.limb.segments):  # what state_from_pcc says
            raise ConfigurationError(
                f"{len(command)} configurations for a limb of {len(m.limb.segments)} segments"
            )
        arr = np.array([(c.bend, c.plane, c.length) for c in command], dtype=float)
        tau = np.empty(m.dof)
        spring_torques(arr[:, 0], arr[:, 1], arr[:, 2], m.segment, self._rests[name], m.K, tau)
        return tau

    def due(self, name: str, k: int) -> bool:
        """Whether limb ``name`` is stepped on tick ``k``."""
        return name == self.every_tick or k % self.stride == self._slot[name]

    def update(self, name: str, command: Sequence[PccConfig], k: int, dt: float) -> FloatArray | None:
        """Step limb ``name`` towards ``command`` if tick ``k`` is its turn; returns its new shape as bend
        vectors (:meth:`shape_vectors`), or ``None`` when it was not stepped (not its turn, or at rest
        with an unchanged command)."""
        if not self.due(name, k):
            return None
        cmd = tuple(command)
        if cmd != self._command.get(name):
            self._command[name] = cmd
            self._tau[name] = self._torques(name, cmd)
            self._rest.discard(name)
        elif name in self._rest:
            return None
        h = self.time_scale * (dt if name == self.every_tick else dt * self.stride)
        limbs, pieces, loads, K, D = self._kernel_args[name]
        q, qd, _, ok = ne_kernels.step_kernel(
            limbs, pieces, loads, self.q[name], self.qd[name], self._tau[name], K, D, h, 0.5
        )
        if not ok:  # not numerically positive definite: the model's own (Cholesky / LU) step
            q, qd = model_step(self.models[name], self.q[name], self.qd[name], h, self._tau[name])
        self.q[name], self.qd[name] = q, qd
        self.steps += 1
        self._rate[name] = rate = float(np.abs(qd).max())
        if rate < REST_RATE:
            self._rest.add(name)
        return self.shape_vectors(name)
