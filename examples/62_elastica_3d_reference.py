"""Independent 3D golden data: the URSULA camera tentacle as a tapered Cosserat rod (PyElastica).

Cases (``tests/data/elastica_3d_reference.json``; limb, material and camera from assets/robots/ursula.toml):

a. ``straight_gravity_{air,water}``: straight limb clamped horizontal, gravity across it (as in
   ``60_elastica_reference.py``, now with the tip frame). The rod is circular and isotropic, so this one
   case answers gravity at any angle to a commanded bending plane: the file stores the expected tip and
   tip frame for 0/30/45/60/90 deg, derived by rotation about the limb axis (``angles_deg`` in the file).
b. ``prebent_gravity_{air,water}``: at rest a constant-curvature quarter circle (arc length 600 mm, bend
   90 deg) in the horizontal plane, base axis horizontal, gravity perpendicular to the bending plane.
c. ``{straight,prebent}_torque``: a dead tip torque of 2 mN m about the unloaded tip tangent, no gravity;
   the straight one against Saint-Venant's twist of the tapered rod, ``integral of T / (G J(s)) ds``.
d. ``vibration_{air,water}``: the first bending frequency of the straight clamped limb with its camera,
   no gravity, against an Euler–Bernoulli finite-element eigen solve (``eb_cantilever.py``), with the
   fluid's added mass ``C_a rho_f A`` per length (the world's Medium records) in both media.

Frames: everything is in the clamp frame = pccbullet's limb base frame: z along the undeformed limb at the
clamp, x the direction of the commanded bending plane 0 (the URSULA mount points it down), y = z x x.
Tip frame ``tip_R``: rotation matrix whose columns are the material directors d1, d2, d3 (d3 the tip
tangent) in the clamp frame, i.e. the rotation of ``T_clamp_tip``; at the clamp the directors are the
clamp frame's axes rotated by the commanded plane (as the chain's tip frame, ``Rz(plane) Ry(bend)``).

Method: PyElastica's ``CosseratRod`` (stretch, shear, bend, twist), element radius = the frustum's at the
element centre, shear modulus ``E / (2 (1 + nu))`` with the TOML's nu, ``OneEndFixedBC`` (first node and
first element's directors fixed). Settle exactly as example 60 (the settings are imported from it): loads
ramp with a smoothstep over 6 s, uniform velocity damping 3 /s, a Laplace dissipation filter of order 5,
then 0.25 s chunks until the tip moved < 20 um (and its frame turned < 1e-4 rad: the twist) in two
chunks in a row. The pre-bent rod is built in its rest shape (equal chords of L / n turning by bend / n,
element directors ``Rz(plane) Ry(theta)``) and its rest curvature is the curvature Elastica computes for
that shape, so it starts unstressed. The tip frame
is the last element's directors turned on by half an element with the last Voronoi rotation (directors
live at element centres; the raw last-element frame is stored too). Vibration: the rod starts from the
Euler–Bernoulli first mode shape (5 mm at the tip) at rest, without damping (the Laplace filter stays: it
touches only the highest wavenumbers), the camera a point mass on the last node, the water's added mass on
the nodes (isotropic: the first bending mode hardly moves axially); the period is the slope of the tip's
zero-crossing times. Each quantity gets a Richardson limit from n = 50, 100, 200 with its observed order.
Example 60's rod is reproduced exactly: ``straight_gravity_*`` equals its tips at every n.

Derived entries (limits, angles, Saint-Venant, the beam) come from ``golden_3d.py`` (no PyElastica).
Needs the optional extra: ``pip install -e ".[reference]"``. Runs one rod at a time by default
(``--workers``); ``--cache DIR`` keeps every finished run as JSON so an interrupted build resumes.
Usage: nice -n 19 python examples/62_elastica_3d_reference.py [--out tests/data/elastica_3d_reference.json]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import math
import multiprocessing
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_3d import (  # noqa: E402
    ELEMENTS,
    LIMB,
    MEDIA,
    angle_table,
    beam,
    case_entry,
    saint_venant_twist,
    vibration_reference,
)

from pccbullet.core import strict_json  # noqa: E402
from pccbullet.sim.world import STANDARD_GRAVITY  # noqa: E402
from pccbullet.urdf_gen.pcc import arc_transform, rot_y, rot_z  # noqa: E402
from pccbullet.urdf_gen.spec_loader import load_robot  # noqa: E402

try:
    import elastica as ea
except ImportError as exc:  # pragma: no cover - optional extra
    raise SystemExit('PyElastica is missing: pip install -e ".[reference]"') from exc


def _example(name: str):
    """A sibling example script as a module (their names start with digits)."""
    spec = importlib.util.spec_from_file_location(
        name.replace(".py", "").replace("_", ""), Path(__file__).parent / name
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


EX60 = _example("60_elastica_reference.py")  # the 2D reference: its settle settings are ours
TIP_TORQUE = 2e-3  # N m
PREBEND = math.pi / 2  # rad, bend (total arc angle) of the pre-bent limb
PREBEND_PLANE = math.pi / 2  # rad: bends towards clamp +y, horizontal on the URSULA mount (x down)
VIBRATION_AMPLITUDE = 0.005  # m, initial tip deflection of the free-vibration runs
VIBRATION_PERIODS = 4.0  # periods simulated
VIBRATION_SAMPLE_S = 2e-3  # s between recorded tip samples
TOL_RAD = 1e-4  # rad: settled when the tip frame also turned less than this in each of the two chunks
MAX_STATIC_S = 30.0  # s, give up settling (example 60 stops at 14 s; the pre-bent rod may need longer)


@dataclass(frozen=True)
class Case:
    """One Elastica run's set-up, all vectors in the clamp frame.

    Attributes:
        name: key in the golden file. medium: fluid name (buoyancy, added mass) or ``"none"``.
        bend, plane: rest shape, a constant-curvature arc (rad; 0 = straight).
        gravity: (m/s^2). tip_torque: dead torque on the tip, fixed in the clamp frame (N m).
        payload: the camera's weight and couple on the tip (statics). vibration: a free-vibration run.
    """

    name: str
    medium: str
    bend: float = 0.0
    plane: float = 0.0
    gravity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tip_torque: tuple[float, float, float] = (0.0, 0.0, 0.0)
    payload: bool = True
    vibration: bool = False


def _cases() -> dict[str, Case]:
    g = (STANDARD_GRAVITY, 0.0, 0.0)  # along clamp +x: down on the URSULA mount
    tangent = arc_transform(PREBEND, PREBEND_PLANE, 1.0)[:3, 2]  # unloaded tip tangent of the pre-bent limb
    bent = {"bend": PREBEND, "plane": PREBEND_PLANE}
    cases = [
        Case("straight_gravity_air", "air", gravity=g),
        Case("straight_gravity_water", "water", gravity=g),
        Case("prebent_gravity_air", "air", gravity=g, **bent),
        Case("prebent_gravity_water", "water", gravity=g, **bent),
        Case("straight_torque", "none", tip_torque=(0.0, 0.0, TIP_TORQUE), payload=False),
        Case("prebent_torque", "none", tip_torque=tuple(TIP_TORQUE * tangent), payload=False, **bent),
        Case("vibration_air", "air", vibration=True),
        Case("vibration_water", "water", vibration=True),
    ]
    return {c.name: c for c in cases}


CASES = _cases()


class _Loads(EX60._Loads):
    """Example 60's loads (net weight of the nodes, the camera's weight and couple, the same ramp) with the
    weight in any direction and a dead tip torque."""

    def __init__(self, g_net, f_payload, offset: float, torque) -> None:
        ea.NoForces.__init__(self)
        self.g_net = np.asarray(g_net, dtype=float)
        self.f_payload = np.asarray(f_payload, dtype=float)
        self.offset = offset
        self.torque = np.asarray(torque, dtype=float)

    def apply_torques(self, system, time: float = 0.0) -> None:
        s = self._scale(time)
        d3 = system.director_collection[2, :, -1]
        couple = np.cross(self.offset * d3, s * self.f_payload) + s * self.torque  # clamp frame
        system.external_torques[:, -1] += system.director_collection[:, :, -1] @ couple  # material frame


class _Recorder(ea.CallBackBaseClass):
    def __init__(self, every: int, out: list) -> None:
        self.every, self.out = every, out

    def make_callback(self, system, time: float, current_step: int) -> None:
        if current_step % self.every == 0:
            self.out.append((float(time), *system.position_collection[:, -1]))


class _Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping, ea.CallBacks):
    pass


def _rod(case: Case, n: int):
    """The rod in its rest shape in the clamp frame; returns (rod, limb spec)."""
    limb = load_robot("ursula").limb(LIMB)
    seg, mat = limb.segments[0], limb.material
    radius = np.asarray(seg.radius_at((np.arange(n) + 0.5) / n), dtype=float)
    kwargs = {}
    if case.bend:
        theta = (np.arange(n) + 0.5) * case.bend / n  # element tangents turn by bend / n
        R = np.stack([rot_z(case.plane) @ rot_y(t) for t in theta])  # (n, 3, 3), columns d1 d2 d3
        position = np.zeros((3, n + 1))
        position[:, 1:] = np.cumsum(R[:, :, 2] * (seg.length / n), axis=0).T
        kwargs = {"position": position, "directors": np.ascontiguousarray(R.transpose(2, 1, 0))}
    rod = ea.CosseratRod.straight_rod(
        n, np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), seg.length, radius,
        mat.density, youngs_modulus=mat.youngs_modulus, shear_modulus=mat.shear_modulus, **kwargs,
    )  # fmt: skip
    if case.bend:  # rest curvature = the curvature of the rest shape (Elastica's own discrete measure)
        rod.compute_internal_forces_and_torques(0.0)
        rod.rest_kappa[:] = rod.kappa
    return rod, limb


def tip_frames(rod) -> tuple[np.ndarray, np.ndarray]:
    """(tip frame, last element frame), rotation matrices with columns d1 d2 d3: the tip frame turns the
    last element's on by half its length with the last Voronoi rotation."""
    Q = rod.director_collection
    R_last, R_prev = Q[:, :, -1].T, Q[:, :, -2].T
    turn = Rotation.from_matrix(R_prev.T @ R_last).as_rotvec()  # material frame of the last element
    lengths = rod.lengths
    frac = 0.5 * lengths[-1] / (0.5 * (lengths[-1] + lengths[-2]))
    return R_last @ Rotation.from_rotvec(frac * turn).as_matrix(), R_last


def _dt(n: int, limb) -> float:
    mat = limb.material
    return EX60.DT_FACTOR * (limb.segments[0].length / n) / math.sqrt(mat.youngs_modulus / mat.density)


def run_static(case: Case, n: int) -> dict[str, object]:
    """Settle a static case; the tip node (m) and tip frame in the clamp frame."""
    rod, limb = _rod(case, n)
    mat, payload = limb.material, limb.payload
    rho_f = MEDIA[case.medium].density if case.medium in MEDIA else 0.0
    g = np.asarray(case.gravity)
    f_payload = g * payload.mass if (payload and case.payload) else np.zeros(3)
    offset = payload.offset[2] if payload else 0.0
    sim = _Sim()
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,))
    sim.add_forcing_to(rod).using(_Loads, g * (1.0 - rho_f / mat.density), f_payload, offset, case.tip_torque)
    dt = _dt(n, limb)
    sim.dampen(rod).using(ea.AnalyticalLinearDamper, uniform_damping_constant=EX60.DAMPING, time_step=dt)
    if EX60.FILTER_ORDER:
        sim.dampen(rod).using(ea.LaplaceDissipationFilter, filter_order=EX60.FILTER_ORDER)
    sim.finalize()
    stepper = ea.PositionVerlet()
    t0 = time.perf_counter()
    elapsed = ea.integrate(stepper, sim, EX60.SETTLE_S, int(round(EX60.SETTLE_S / dt)), progress_bar=False)
    calm, speed, turn_rate = 0, math.inf, math.inf
    chunk = EX60.CHUNK_S
    while calm < 2:  # example 60's test on the tip node, and the same on the tip frame (the twist)
        if elapsed > MAX_STATIC_S:
            raise RuntimeError(f"{case.name} n = {n}: not settled after {MAX_STATIC_S} s (tip {speed} m/s)")
        before, frame = rod.position_collection[:, -1].copy(), tip_frames(rod)[0]
        elapsed = ea.integrate(
            stepper, sim, chunk, int(round(chunk / dt)), restart_time=elapsed, progress_bar=False
        )
        moved = float(np.linalg.norm(rod.position_collection[:, -1] - before))
        turned = float(np.linalg.norm(Rotation.from_matrix(frame.T @ tip_frames(rod)[0]).as_rotvec()))
        speed, turn_rate = moved / chunk, turned / chunk
        calm = calm + 1 if moved < EX60.TOL_M and turned < TOL_RAD else 0
    R_tip, R_last = tip_frames(rod)
    return {
        "n_elements": n,
        "tip_m": rod.position_collection[:, -1].tolist(),
        "tip_R": R_tip.tolist(),
        "last_element_R": R_last.tolist(),
        "simulated_s": round(float(elapsed), 3),
        "dt_s": dt,
        "final_tip_speed_m_s": speed,
        "final_tip_turn_rate_rad_s": turn_rate,
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def run_vibration(case: Case, n: int) -> dict[str, object]:
    """Free vibration from the first mode shape; the period from the tip's zero crossings."""
    rod, limb = _rod(case, n)
    medium = MEDIA[case.medium]
    seg = limb.segments[0]
    # camera: a point mass on the last node; fluid: added mass C_a rho_f V on the nodes (half an element each)
    vol = rod.volume
    added = medium.added_mass_coefficient * medium.density * vol
    rod.mass[:-1] += 0.5 * added
    rod.mass[1:] += 0.5 * added
    rod.mass[-1] += limb.payload.mass if limb.payload else 0.0
    # the clamp holds the first element's initial directors: keep it straight and start the mode
    # shape (of a beam n - 1 elements long) at its end, the discrete rod's effective clamp
    w, _ = beam(medium, camera="point", rotary_inertia=True, length=seg.length * (n - 1) / n).first_mode(
        n - 1
    )
    s = np.linspace(0.0, seg.length, n + 1)
    pos = np.stack([VIBRATION_AMPLITUDE * np.append(0.0, w), np.zeros(n + 1), s])
    chord = np.diff(pos, axis=1)
    theta = np.arctan2(chord[0], chord[2])
    rod.position_collection[:] = pos
    rod.director_collection[:] = np.stack([rot_y(t).T for t in theta], axis=2)
    sim = _Sim()
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,))
    dt = _dt(n, limb)
    if EX60.FILTER_ORDER:
        sim.dampen(rod).using(ea.LaplaceDissipationFilter, filter_order=EX60.FILTER_ORDER)
    samples: list[tuple[float, ...]] = []
    every = max(1, int(round(VIBRATION_SAMPLE_S / dt)))
    sim.collect_diagnostics(rod).using(_Recorder, every=every, out=samples)
    sim.finalize()
    f_eb = beam(medium, camera="point", rotary_inertia=True).frequencies(50)[0]
    duration = VIBRATION_PERIODS / f_eb
    t0 = time.perf_counter()
    ea.integrate(ea.PositionVerlet(), sim, duration, int(round(duration / dt)), progress_bar=False)
    data = np.array(samples)
    t, x = data[:, 0], data[:, 1]
    i = np.flatnonzero(np.sign(x[:-1]) * np.sign(x[1:]) < 0)
    crossings = t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])
    # up- and down-crossings fitted apart: a small offset of the oscillation's centre cancels
    periods = [np.polyfit(np.arange(len(c)), c, 1)[0] for c in (crossings[0::2], crossings[1::2])]
    return {
        "n_elements": n,
        "frequency_hz": 2.0 / (periods[0] + periods[1]),
        "zero_crossings": len(crossings),
        "half_period_spread_s": float(np.ptp(np.diff(crossings))),
        "initial_tip_m": VIBRATION_AMPLITUDE,
        "final_amplitude_m": float(np.max(np.abs(x[t > t[-1] - 1.0 / f_eb]))),
        "simulated_s": round(duration, 3),
        "dt_s": dt,
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def run(name: str, n: int) -> dict[str, object]:
    case = CASES[name]
    return run_vibration(case, n) if case.vibration else run_static(case, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "elastica_3d_reference.json")
    parser.add_argument("--elements", type=int, nargs="+", default=list(ELEMENTS))
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--workers", type=int, default=1, help="parallel processes (default 1)")
    parser.add_argument("--cache", type=Path, help="folder keeping every finished run as JSON (resume)")
    args = parser.parse_args()
    jobs = [(c, n) for n in sorted(args.elements, reverse=True) for c in args.cases]  # longest first
    results: dict[tuple[str, int], dict[str, object]] = {}
    todo = []
    for job in jobs:
        path = args.cache / f"{job[0]}_{job[1]}.json" if args.cache else None
        if path is not None and path.exists():
            results[job] = json.loads(path.read_text())
        else:
            todo.append(job)
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)

    def done(job: tuple[str, int], res: dict[str, object]) -> None:
        results[job] = res
        if args.cache:
            (args.cache / f"{job[0]}_{job[1]}.json").write_text(strict_json.dumps(res))
        print(f"{time.strftime('%H:%M:%S')} {job[0]} n={job[1]}: wall {res['wall_s']} s", flush=True)

    if args.workers > 1:
        with multiprocessing.Pool(args.workers) as pool:
            for job, res in zip(todo, pool.starmap(run, todo), strict=True):
                done(job, res)
    else:
        for job in todo:
            done(job, run(*job))
    limb = load_robot("ursula").limb(LIMB)
    seg, mat, payload = limb.segments[0], limb.material, limb.payload
    out: dict[str, object] = {
        "source": "examples/62_elastica_3d_reference.py (PyElastica "
        + importlib.metadata.version("pyelastica")
        + "): URSULA camera tentacle as a tapered Cosserat rod, out-of-plane cases",
        "units": "SI: m, rad (angles named *_deg in degrees), s, N, N m, Hz",
        "frame": "clamp frame = pccbullet's limb base frame: z along the undeformed limb at the clamp, x the "
        "direction of commanded bending plane 0 (down on the URSULA mount), y = z x x. tip_m: the last node. "
        "tip_R: columns d1 d2 d3 (d3 the tip tangent) in the clamp frame = rotation of T_clamp_tip; the "
        "last element's directors turned on to the tip by half an element (last_element_R: raw)",
        "limb": LIMB,
        "length_m": seg.length,
        "radius_base_m": seg.radius_base,
        "radius_tip_m": seg.radius_tip,
        "density_kg_m3": mat.density,
        "youngs_modulus_pa": mat.youngs_modulus,
        "poisson_ratio": mat.poisson_ratio,
        "shear_modulus_pa": mat.shear_modulus,
        "elastica_shear_coefficient": 27.0 / 28.0,
        "gravity_m_s2": STANDARD_GRAVITY,
        "media": {
            k: {"density_kg_m3": m.density, "added_mass_coefficient": m.added_mass_coefficient}
            for k, m in MEDIA.items()
        },
        "payload": {
            "mass_kg": payload.mass if payload else 0.0,
            "offset_m": payload.offset[2] if payload else 0.0,
            "statics": "force m g on the tip node and the couple of its offset along the tip tangent; no "
            "buoyancy (volume unknown), as in examples 60/61 and the project's models",
        },
        "loads": {
            "gravity": "net weight (1 - rho_f / rho) m g on every node, along the case's gravity vector",
            "tip_torque": f"dead torque {TIP_TORQUE} N m on the last element, fixed in the clamp frame "
            "along the unloaded tip tangent (straight: +z; pre-bent: +y); torque cases have no gravity and "
            "no camera",
            "prebent": "rest shape PCC bend = pi/2, plane = pi/2, length L: a quarter circle bending towards "
            "+y, horizontal on the URSULA mount; gravity along +x is perpendicular to the bending plane",
            "ramp": f"all loads ramp with a smoothstep over {EX60.RAMP_S} s (the soft rod whips otherwise)",
        },
        "settle": {
            "damping_1_s": EX60.DAMPING,
            "laplace_filter_order": EX60.FILTER_ORDER,
            "first_check_s": EX60.SETTLE_S,
            "settled_when": f"tip moved < {EX60.TOL_M} m and its frame turned < {TOL_RAD} rad in each of two "
            f"{EX60.CHUNK_S} s chunks in a row",
            "dt": f"{EX60.DT_FACTOR} x element length / axial wave speed sqrt(E / rho)",
        },
        "vibration": "no gravity, no damping (the Laplace filter stays, it acts on the highest "
        "wavenumbers only); the rod starts at rest in the Euler-Bernoulli first mode shape with "
        f"{VIBRATION_AMPLITUDE} m at the tip (first element straight: the clamp holds its initial "
        "directors); camera = a point mass on the last node; fluid added mass C_a rho_f V on the nodes "
        "(isotropic; the first bending mode hardly moves axially); frequency = 2 / (sum of the slopes of the "
        f"up- and down-crossing times of the tip's x over {VIBRATION_PERIODS:g} periods); its "
        "Euler-Bernoulli counterpart is vibration_reference.<medium>.point_camera_rayleigh",
        "wall_s": "wall-clock seconds of each run on a shared 2-core machine at nice 19 (other jobs running)",
        "skipped": "none: every case ran at n_elements 50, 100 and 200",
        "convergence": "n_elements 50, 100, 200; 'extrapolated': Richardson limit from the three with the "
        "observed order log2(|x100 - x50| / |x200 - x100|) (2 if outside 0.5..4); frames by their rotation "
        "vectors relative to the n = 200 frame",
        "cases": {},
    }
    for name in args.cases:
        case = CASES[name]
        runs = [results[(name, n)] for n in sorted(args.elements)]
        entry = case_entry(name, asdict(case), runs)
        out["cases"][name] = entry  # type: ignore[index]
        ex = entry.get("extrapolated")
        print(f"{name}: {strict_json.dumps(ex)}", flush=True)
    cases = out["cases"]  # type: ignore[assignment]
    for name in ("straight_gravity_air", "straight_gravity_water"):
        if name in cases and "extrapolated" in cases[name]:
            cases[name]["angles_deg"] = angle_table(cases[name])
            cases[name]["angles_note"] = (
                "derived by rotation about the limb axis from this case's extrapolated tip (the rod is "
                "circular and isotropic, so gravity at any angle to a commanded plane gives the same shape "
                "turned): 'gravity_rotated': plane 0, gravity g (cos a, sin a, 0), tip = Rz(a) p, tip_R = "
                "Rz(a) R Rz(a)^T; 'plane_rotated': gravity g (1, 0, 0), commanded plane a (bend 0), tip = p, "
                "tip_R = R Rz(a)"
            )
    if "straight_torque" in cases:
        cases["straight_torque"]["saint_venant_twist_deg"] = math.degrees(saint_venant_twist(TIP_TORQUE))
    out["vibration_reference"] = vibration_reference()
    args.out.write_text(strict_json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
