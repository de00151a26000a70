"""Water-hydraulic drive of seed 000 (sec. 2.3): servo motor -> ball screw -> piston -> cylinder ->
laminar pipe -> soft chamber, one drive per chamber.

Per drive (seed 000 eqs. 29–33), with motor torque ``T`` (N m) as the input::

    m_b x''   = eta T / s - f(x') - P_c A_c - d_v x'                 (piston; x' = omega s)
    C_a P_a'  = G (P_c - P_a),      C_a = A_d^2 l_0 / (E A_s) + V_1 / K   (chamber)
    C_c P_c'  = A_c x' - G (P_c - P_a),   C_c = V_2 / K                  (cylinder)
    G = pi d_p^4 / (128 mu l_p)                                          (Hagen–Poiseuille pipe)

Seed 000 Table 1 symbols and where they live (``assets/robots/hydraulic_arm.toml``):

======  ==========================  ==================================================================
symbol  Table 1                     meaning (seed 000 sec. 2.2–2.3) -> TOML field / attribute here
======  ==========================  ==================================================================
l_0     0.25 m                      initial length of a section / soft unit -> ``chamber_length_m``
E       1.2 MPa                     elastic modulus of the soft manipulator -> the limb material's
                                    ``youngs_modulus_pa`` (read from there, not repeated)
K       2.18e9 Pa                   bulk modulus of water -> ``bulk_modulus_pa``
A_d     3.14e-4 m^2                 effective (driving) area inside a soft unit, eq. 12 ->
                                    ``chamber_area_m2`` (= the limb's ``actuators.area_mm2``)
A_c     0.0021 m^2                  cross-sectional area of the piston, eq. 29 -> ``piston_area_m2``
A_s     3.93e-4 m^2                 cross-section of the annular solid of a soft unit (its elastic
                                    area, eq. 10) -> ``annulus_area_m2``; chamber stiffness ``E A_s``
l_p     1.61 m                      length of the connecting pipe -> ``pipe_length_m``
eta     0.9                         power-loss coefficient of motor + screw, eq. 30 -> ``efficiency``
m_b     1.2 kg                      mass of the piston, eq. 29 -> ``piston_mass_kg``
s       4 mm                        lead of the ball screw (per revolution) -> ``screw_lead_mm``;
                                    used per radian, ``s / (2 pi)`` (eq. 30 with omega in rad/s)
mu      1.01e-3 Pa s                absolute viscosity of water -> ``viscosity_pa_s``
V_1     7.85e-5 m^3                 initial volume of a soft unit (= A_d l_0) -> ``chamber_volume_m3``
V_2     7.35e-4 m^3                 initial volume of the cylinder -> ``cylinder_volume_m3``
d_p     0.004 m                     diameter of the connecting pipe -> ``pipe_diameter_m``
======  ==========================  ==================================================================

Not in Table 1 (documented choices in the TOML): the piston damping ``d_v``, the seal friction ``f``
(seed 000 writes a plain ``f``; here a smoothed Coulomb friction ``f_c tanh(x' / v_s)``, zero at rest so the
static pressure is exactly ``eta T / (s A_c)``) and the torque limit.

With Table 1's values the static map is ``P = eta T / (s A_c)`` = 0.673 MPa per N m: the 1.5 N m steps of
sec. 3.2 give 1.01 MPa (the 1 MPa safety limit), while sec. 3.1's "2.5 N m gives 1 MPa" is not reproduced
(1.68 MPa; it would need a 6.7 mm lead or ~1.4 kN of piston friction). The cylinder mode is very stiff
(``C_c / G`` ~ 1e-4 s), so :meth:`HydraulicDrive.step` uses linearly implicit Euler (friction linearized)
with sub-steps; it is L-stable at any ``dt``.

Parameters come from the top-level ``[hydraulic_drive]`` table of a robot TOML plus ``E`` of the first
limb's material; :func:`load_hydraulic_drive` validates every value (and that ``A_d`` and ``l_0`` agree
with the limb's chambers and segments) and raises :class:`~pccbullet.core.errors.SpecError` naming file,
field, value and allowed range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.core.fields import Fields
from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen.specs import RobotSpec

MM = 1e-3  # m per mm


@dataclass(frozen=True, slots=True)
class HydraulicDriveParams:
    """Seed 000 Table 1 parameters (plus the free ones), SI.

    Attributes:
        efficiency: eta (-). lead: screw lead per radian, ``s / (2 pi)`` (m/rad). piston_area: A_c (m^2).
        piston_mass: m_b (kg). piston_damping: d_v (N s/m). friction: f_c (N). friction_velocity: v_s (m/s).
        pipe_diameter: d_p (m). pipe_length: l_p (m). viscosity: mu (Pa s). bulk_modulus: K (Pa).
        cylinder_volume: V_2 (m^3). chamber_volume: V_1 (m^3). chamber_area: A_d (m^2).
        chamber_length: l_0 (m). youngs_modulus: E (Pa). annulus_area: A_s (m^2).
        max_torque: |T| limit (N m).
        section_rotation: rotation of each section's chamber pattern about its base z (rad).
    """

    efficiency: float
    lead: float
    piston_area: float
    piston_mass: float
    piston_damping: float
    friction: float
    friction_velocity: float
    pipe_diameter: float
    pipe_length: float
    viscosity: float
    bulk_modulus: float
    cylinder_volume: float
    chamber_volume: float
    chamber_area: float
    chamber_length: float
    youngs_modulus: float
    annulus_area: float
    max_torque: float
    section_rotation: tuple[float, ...] = ()

    @property
    def chamber_stiffness(self) -> float:
        """Axial stiffness ``E A_s`` (N) of one soft unit's annular solid."""
        return self.youngs_modulus * self.annulus_area

    @property
    def conductance(self) -> float:
        """Pipe conductance G = pi d_p^4 / (128 mu l_p) (m^3 / (s Pa))."""
        return math.pi * self.pipe_diameter**4 / (128.0 * self.viscosity * self.pipe_length)

    @property
    def chamber_compliance(self) -> float:
        """C_a = A_d^2 l_0 / (E A_s) + V_1 / K (m^3/Pa)."""
        return (
            self.chamber_area**2 * self.chamber_length / self.chamber_stiffness
            + self.chamber_volume / self.bulk_modulus
        )

    @property
    def cylinder_compliance(self) -> float:
        """C_c = V_2 / K (m^3/Pa)."""
        return self.cylinder_volume / self.bulk_modulus

    def steady_pressure(self, torque: float | FloatArray) -> float | FloatArray:
        """Static chamber pressure (Pa) for a motor torque (N m): ``eta T / (s A_c)``."""
        return self.efficiency * np.asarray(torque) / (self.lead * self.piston_area)

    def system_matrix(self) -> FloatArray:
        """``A`` ``(3, 3)`` of seed 000 eq. 33 on ``y = [x', P_a, P_c]`` (without friction)."""
        G, Ca, Cc = self.conductance, self.chamber_compliance, self.cylinder_compliance
        mb = self.piston_mass
        return np.array(
            [
                [-self.piston_damping / mb, 0.0, -self.piston_area / mb],
                [0.0, -G / Ca, G / Ca],
                [self.piston_area / Cc, G / Cc, -G / Cc],
            ]
        )


def _agrees(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b))


def load_hydraulic_drive(robot: RobotSpec) -> HydraulicDriveParams:
    """Read and validate ``robot.extra["hydraulic_drive"]``; ``E`` is the first limb's Young's modulus.

    Raises:
        SpecError: the table is missing, a field is missing, unknown or out of range, or ``chamber_area_m2``
            / ``chamber_length_m`` disagree with the limb's chamber area / segment lengths.
    """
    source = robot.source if robot.source is not None else Path("<robot>")
    if "hydraulic_drive" not in robot.extra:
        raise SpecError(source, "hydraulic_drive", None, "a [hydraulic_drive] table")
    f = Fields(robot.extra["hydraulic_drive"], source, "hydraulic_drive")
    n_seg = max((len(limb.segments) for limb in robot.limbs), default=1)
    rot = f.vector("section_rotation_deg", n_seg, default=[0.0] * n_seg)
    for i, r in enumerate(rot):
        if not -360.0 <= r <= 360.0:
            raise f.error("section_rotation_deg", list(rot), f"numbers in [-360, 360]; element {i} is not")
    if not robot.limbs:
        raise SpecError(source, "limbs", None, "a limb whose material gives E for the chambers")
    limb = robot.limbs[0]
    params = HydraulicDriveParams(
        efficiency=f.number("efficiency", 0.0, 1.0, lo_open=True),
        lead=f.number("screw_lead_mm", 0.0, 100.0, lo_open=True) * MM / (2.0 * math.pi),
        piston_area=f.number("piston_area_m2", 0.0, 1.0, lo_open=True),
        piston_mass=f.number("piston_mass_kg", 0.0, 100.0, lo_open=True),
        piston_damping=f.number("piston_damping_ns_m", 0.0, 1e6),
        friction=f.number("friction_n", 0.0, 1e4),
        friction_velocity=f.number("friction_velocity_mm_s", 0.0, 1e4, lo_open=True) * MM,
        pipe_diameter=f.number("pipe_diameter_m", 0.0, 0.1, lo_open=True),
        pipe_length=f.number("pipe_length_m", 0.0, 100.0, lo_open=True),
        viscosity=f.number("viscosity_pa_s", 0.0, 10.0, lo_open=True),
        bulk_modulus=f.number("bulk_modulus_pa", 1e6, 1e11),
        cylinder_volume=f.number("cylinder_volume_m3", 0.0, 0.1, lo_open=True),
        chamber_volume=f.number("chamber_volume_m3", 0.0, 0.1, lo_open=True),
        chamber_area=f.number("chamber_area_m2", 0.0, 1.0, lo_open=True),
        chamber_length=f.number("chamber_length_m", 0.0, 10.0, lo_open=True),
        youngs_modulus=limb.material.youngs_modulus,
        annulus_area=f.number("annulus_area_m2", 0.0, 1.0, lo_open=True),
        max_torque=f.number("max_torque_nm", 0.0, 1e3, lo_open=True),
        section_rotation=tuple(math.radians(r) for r in rot),
    )
    f.finish()
    act = limb.actuators
    if act is not None and act.area > 0.0 and not _agrees(params.chamber_area, act.area):
        raise f.error(
            "chamber_area_m2",
            params.chamber_area,
            f"the limb's chamber area actuators.area_mm2 = {act.area:g} m^2",
        )
    lengths = sorted({sp.length for sp in limb.segments})
    if lengths and not all(_agrees(params.chamber_length, length) for length in lengths):
        raise f.error("chamber_length_m", params.chamber_length, f"the limb's segment length(s) {lengths} m")
    return params


class HydraulicDrive:
    """``count`` independent drives sharing one parameter set; state ``x, x', P_a, P_c`` per drive.

    Args:
        params: the drive parameters. count: number of drives (actuators). substeps: implicit sub-steps
            per :meth:`step`.

    Attributes:
        x: ``(count,)`` piston displacement (m).
        y: ``(count, 3)`` = ``[x' (m/s), P_a (Pa), P_c (Pa)]``.
    """

    def __init__(self, params: HydraulicDriveParams, count: int, substeps: int = 4) -> None:
        self.params = params
        self.count = count
        self.substeps = max(1, int(substeps))
        self.A = params.system_matrix()
        self.x = np.zeros(count)
        self.y = np.zeros((count, 3))
        self._h = math.nan
        self._Minv: np.ndarray = np.eye(3)

    @property
    def chamber_pressure(self) -> FloatArray:
        """P_a of every drive ``(count,)`` (Pa, gauge)."""
        return self.y[:, 1]

    def step(self, torque: FloatArray, dt: float) -> FloatArray:
        """Advance ``dt`` (s) with motor torques ``(count,)`` (N m, clipped to max_torque); returns P_a.

        Each sub-step solves ``(I - h A + c e0 e0^T) y' = rhs`` with ``c = h f'(x') / m_b`` (the linearized
        friction) by Sherman–Morrison on the cached ``(I - h A)^-1``.
        """
        p = self.params
        T = np.clip(np.asarray(torque, dtype=float), -p.max_torque, p.max_torque)
        h = dt / self.substeps
        if h != self._h:
            self._h = h
            self._Minv = np.linalg.inv(np.eye(3) - h * self.A)
        Mi = self._Minv
        drive = h * p.efficiency * T / (p.lead * p.piston_mass)
        for _ in range(self.substeps):
            v0 = self.y[:, 0]
            th = np.tanh(v0 / p.friction_velocity)
            dfr = p.friction / p.friction_velocity * (1.0 - th * th)
            c = h * dfr / p.piston_mass
            rhs = self.y.copy()
            rhs[:, 0] += drive - h * (p.friction * th - dfr * v0) / p.piston_mass
            z = rhs @ Mi.T
            z -= (c * z[:, 0] / (1.0 + c * Mi[0, 0]))[:, None] * Mi[:, 0][None, :]
            self.y = z
            self.x += h * z[:, 0]
        return self.chamber_pressure


# ---------------------------------------------------------------- seed 000 virtual experiments (sec. 3.2)
STEP_TORQUE = 1.5  # N m


def motor_torque_profile(profile: str, t: float) -> FloatArray:
    """Motor torques ``(6,)`` (N m) of actuators 1..6 at time ``t`` (s) for a seed 000 sec. 3.2 profile.

    ``"step_uni"``: 1.5 N m steps on actuators 5, 6 at 2 s and 1 at 6 s (both sections bend the same way);
    ``"step_bi"``: actuator 4 at 2 s and 1 at 6 s (sections bend in opposite directions, sec. 4.3.1);
    ``"ramp"``: ``T5 = T6 = 1.5 (t - 2)`` on 2..3 s, ``T1 = 1.5 (t - 6)`` on 6..7 s, then held (sec. 3.2.3).
    """
    T = np.zeros(6)
    if profile == "step_uni":
        T[[4, 5]] = STEP_TORQUE if t >= 2.0 else 0.0
        T[0] = STEP_TORQUE if t >= 6.0 else 0.0
    elif profile == "step_bi":
        T[3] = STEP_TORQUE if t >= 2.0 else 0.0
        T[0] = STEP_TORQUE if t >= 6.0 else 0.0
    elif profile == "ramp":
        T[[4, 5]] = STEP_TORQUE * min(max(t - 2.0, 0.0), 1.0)
        T[0] = STEP_TORQUE * min(max(t - 6.0, 0.0), 1.0)
    else:
        raise ConfigurationError(f"profile = {profile!r} is invalid; allowed: 'step_uni', 'step_bi', 'ramp'")
    return T


def simulate_hydraulic_arm(
    profile: str, duration: float = 10.0, dt: float = 1e-3, pieces: int = 5, record_every: int = 10
):
    """Simulate the seed 000 arm (``hydraulic_arm.toml``) with its hydraulic drives at a fixed step.

    Args:
        profile: see :func:`motor_torque_profile`. duration, dt: simulated time and fixed step (s).
        pieces: pieces per section. record_every: record every this many steps.

    Returns:
        dict with ``t`` ``(m,)`` (s), ``torque`` ``(m, 6)`` (N m), ``pressure`` ``(m, 6)`` (Pa),
        ``tips`` ``(m, 2, 3)``: section-tip positions (m) in the arm base frame (z down along the arm), and
        ``bend`` ``(m, 2, 2)``: each section's bending rotation ``sum l0 (kx, ky)`` (rad; about the section's
        base x and y, the in-plane bend angle for planar motion).
    """
    from pccbullet.sim.models.actuators import ChamberActuation
    from pccbullet.sim.models.chambers import ChamberWallLimb
    from pccbullet.sim.models.newton_euler.integrators import step
    from pccbullet.urdf_gen.spec_loader import load_robot

    robot = load_robot("hydraulic_arm")
    params = load_hydraulic_drive(robot)
    # axial strain resisted by the chamber walls (E A_s of Table 1, pccbullet.sim.models.chambers), bending by
    # E I
    model = ChamberWallLimb(robot.limbs[0], pieces, wall_area=params.annulus_area)
    act = ChamberActuation(model, params.section_rotation)
    drive = HydraulicDrive(params, 6)
    q, qd = model.rest_state(), np.zeros(model.dof)
    steps = int(round(duration / dt))
    rec: dict[str, list] = {"t": [], "torque": [], "pressure": [], "tips": [], "bend": []}
    n_seg = len(robot.limbs[0].segments)
    to_section = np.zeros((n_seg, model.n))
    to_section[model.segment, np.arange(model.n)] = model.l0
    for k in range(steps + 1):
        t = k * dt
        T = motor_torque_profile(profile, t)
        if k % record_every == 0:
            rec["t"].append(t)
            rec["torque"].append(T)
            rec["pressure"].append(drive.chamber_pressure.copy())
            rec["tips"].append(model.segment_tip_positions(q))
            rec["bend"].append(to_section @ q.reshape(model.n, 4)[:, 1:3])
        if k == steps:
            break
        P = drive.step(T, dt)
        q, qd = step(model, q, qd, dt, act.tau(P))
    return {key: np.asarray(val) for key, val in rec.items()}


def settling_time(t: FloatArray, x: FloatArray, t0: float, t1: float, band: float = 0.05) -> float:
    """Time after ``t0`` (s) until ``x`` ``(m, ...)`` stays within ``band`` of its change on [t0, t1].

    The final value is ``x`` at ``t1``; the band is relative to the largest change ``|x(t1) - x(t0)|``.
    """
    sel = (t >= t0) & (t <= t1)
    xs = x[sel].reshape(int(sel.sum()), -1)
    change = np.linalg.norm(xs[-1] - xs[0])
    err = np.linalg.norm(xs - xs[-1], axis=1)
    outside = np.flatnonzero(err > band * max(float(change), 1e-12))
    return 0.0 if len(outside) == 0 else float(t[sel][outside[-1]] - t0)


def overshoot(t: FloatArray, x: FloatArray, t0: float, t1: float) -> float:
    """Largest excursion beyond the final value on [t0, t1], relative to the change (-).

    ``x`` ``(m, ...)``: a scalar signal or a vector one (e.g. all section tips ``(m, 2, 3)``), whose
    excursion is measured along the direction of its net change ``x(t1) - x(t0)``.
    """
    sel = (t >= t0) & (t <= t1)
    xs = np.asarray(x, dtype=float)[sel].reshape(int(sel.sum()), -1)
    change = xs[-1] - xs[0]
    size = float(np.linalg.norm(change))
    if size < 1e-12:
        return 0.0
    return float(max(0.0, np.max((xs - xs[-1]) @ change)) / size**2)
