"""Independent large-deflection reference: the URSULA camera tentacle as a tapered Cosserat rod (PyElastica).

The camera limb of ``assets/robots/ursula.toml`` (600 mm, Ecoflex 00-30, 60 -> 20 mm diameter, 40 g camera
5 mm beyond the tip) is clamped horizontally (+x) under gravity (-z, 9.80665 m/s^2, the PyBullet world's
value), in air and in water (buoyancy on the rod with the world's water density, 1000 kg/m^3; none on the
camera, whose volume is unknown, as in pccbullet.sim.limb.dynamics and the Newton-Euler model). PyElastica (a
Cosserat rod code nobody here wrote: stretch, shear, bend and twist) integrates it with velocity damping while
the loads ramp up over 6 s (a sudden release makes the soft rod whip) until it settles; a Laplace
dissipation filter (PyElastica's, order 5) stops a round-off tip oscillation that otherwise grows at
n >= 100 a few seconds after settling. The settled tip (the last node) is written to
``tests/data/elastica_camera_tentacle.json`` for n_elements = 50, 100, 200 with a Richardson-extrapolated
limit (the convergence is first order: the clamp fixes the director of the whole first element).
``--diagnostic-stiff-shear N`` settles n = N in air with 10x the shear stiffness (how much is shear).

Rod model details (PyElastica 1.0's ``CosseratRod.straight_rod``): element radius = the frustum's radius at
the element centre, so mass and stiffness converge as O(1/n^2) to the frustum's; shear stiffness
``27/28 G A`` (Elastica's fixed shear coefficient, Kaneko 1975 for nu = 0.5); ``G = E / (2 (1 + nu))``
with the TOML's nu = 0.49. Gravity, buoyancy and the camera's weight (a force on the last node and the
couple of its 5 mm offset along the tip tangent) enter through one custom forcing.

Needs the optional extra: ``pip install -e ".[reference]"``. Takes a few minutes (n = 200).
Usage: python examples/60_elastica_reference.py [--out tests/data/elastica_camera_tentacle.json]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from pathlib import Path

import numpy as np

from pccbullet.core import strict_json
from pccbullet.sim.medium import AIR, WATER
from pccbullet.sim.world import STANDARD_GRAVITY
from pccbullet.urdf_gen.spec_loader import load_robot

ROOT = Path(__file__).resolve().parents[1]

try:
    import elastica as ea
except ImportError as exc:  # pragma: no cover - optional extra
    raise SystemExit('PyElastica is missing: pip install -e ".[reference]"') from exc

LIMB = "camera"
ELEMENTS = (50, 100, 200)
RAMP_S = 6.0  # s, loads ramp from 0 to full (smoothstep)
DAMPING = 3.0  # 1/s, uniform velocity damping of the settle (no effect on the equilibrium)
FILTER_ORDER = 5  # LaplaceDissipationFilter order (PyElastica recommends 3-7); 0 = none
SETTLE_S = 7.0  # s of simulated time before the convergence check (the ramp and a second)
DT_FACTOR = 0.1  # time step as a fraction of the axial wave transit time of an element
CHUNK_S = 0.25  # s, settling check interval
TOL_M = 2e-5  # m: settled when the tip moved less than this in each of two chunks in a row
MAX_S = 14.0  # s, give up


class _Loads(ea.NoForces):
    """Net weight of the rod's nodes (gravity minus buoyancy) and the tip payload's weight and couple."""

    def __init__(self, g_net: float, g: float, payload_mass: float, payload_offset: float) -> None:
        super().__init__()
        self.g_net = np.array([0.0, 0.0, -g_net])
        self.f_payload = np.array([0.0, 0.0, -g * payload_mass])
        self.offset = payload_offset

    def _scale(self, time: float) -> float:
        """Loads ramp up smoothly over ``RAMP_S`` (a sudden release makes the soft rod whip)."""
        x = min(max(time / RAMP_S, 0.0), 1.0)
        return x * x * (3.0 - 2.0 * x)

    def apply_forces(self, system, time: float = 0.0) -> None:
        s = self._scale(time)
        system.external_forces += np.outer(s * self.g_net, system.mass)
        system.external_forces[:, -1] += s * self.f_payload

    def apply_torques(self, system, time: float = 0.0) -> None:
        d3 = system.director_collection[2, :, -1]  # tip tangent in the world frame
        couple = np.cross(self.offset * d3, self._scale(time) * self.f_payload)
        system.external_torques[:, -1] += system.director_collection[:, :, -1] @ couple  # material frame


class _Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping, ea.CallBacks):
    pass


def settle(n_elements: int, medium_density: float, shear_factor: float = 1.0) -> dict[str, object]:
    """Settle the clamped rod; returns the tip (m, rod base frame: x along the rod, z up) and run data.

    ``shear_factor`` multiplies the rod's shear stiffness (a diagnostic: 10 leaves 1/10 of the shear).
    """
    spec = load_robot("ursula")
    limb = spec.limb(LIMB)
    seg = limb.segments[0]
    mat = limb.material
    length = seg.length
    centres = (np.arange(n_elements) + 0.5) / n_elements
    radius = np.asarray(seg.radius_at(centres), dtype=float)
    g = STANDARD_GRAVITY
    g_net = g * (1.0 - medium_density / mat.density)
    payload = limb.payload
    sim = _Sim()
    rod = ea.CosseratRod.straight_rod(
        n_elements,
        np.zeros(3),
        np.array([1.0, 0.0, 0.0]),
        np.array([0.0, 0.0, 1.0]),
        length,
        radius,
        mat.density,
        youngs_modulus=mat.youngs_modulus,
        shear_modulus=mat.shear_modulus,
    )
    rod.shear_matrix[0, 0, :] *= shear_factor
    rod.shear_matrix[1, 1, :] *= shear_factor
    sim.append(rod)
    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,))
    sim.add_forcing_to(rod).using(
        _Loads, g_net, g, payload.mass if payload else 0.0, payload.offset[2] if payload else 0.0
    )
    wave = math.sqrt(mat.youngs_modulus / mat.density)  # m/s, axial wave speed
    dt = DT_FACTOR * (length / n_elements) / wave
    sim.dampen(rod).using(ea.AnalyticalLinearDamper, uniform_damping_constant=DAMPING, time_step=dt)
    if FILTER_ORDER:  # low-pass on the velocities: stops a round-off tip oscillation growing at n >= 100
        sim.dampen(rod).using(ea.LaplaceDissipationFilter, filter_order=FILTER_ORDER)
    sim.finalize()
    stepper = ea.PositionVerlet()
    t0 = time.perf_counter()
    elapsed = ea.integrate(stepper, sim, SETTLE_S, int(round(SETTLE_S / dt)), progress_bar=False)
    # Settle in 0.25 s chunks until the tip moved less than TOL_M over two chunks in a row. Stop there:
    # left running for seconds after settling, the n >= 100 rods of this soft material develop a
    # growing tip oscillation in PyElastica (from round-off, with or without the camera, at dt / 2 too).
    calm = 0
    speed = math.inf
    while calm < 2:
        if elapsed > MAX_S:
            raise RuntimeError(f"n = {n_elements}: not settled after {MAX_S} s (tip speed {speed} m/s)")
        before = rod.position_collection[:, -1].copy()
        elapsed = ea.integrate(
            stepper, sim, CHUNK_S, int(round(CHUNK_S / dt)), restart_time=elapsed, progress_bar=False
        )
        moved = float(np.linalg.norm(rod.position_collection[:, -1] - before))
        speed = moved / CHUNK_S
        calm = calm + 1 if moved < TOL_M else 0
    tip = rod.position_collection[:, -1].copy()
    return {
        "n_elements": n_elements,
        "tip_m": [float(v) for v in tip],
        "simulated_s": round(float(elapsed), 3),
        "dt_s": dt,
        "final_tip_speed_m_s": speed,
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def extrapolate(runs: list[dict[str, object]]) -> dict[str, object]:
    """Richardson limit from the two finest runs with the observed order of the three."""
    tips = np.array([r["tip_m"] for r in runs], dtype=float)
    d1 = np.linalg.norm(tips[1] - tips[0])
    d2 = np.linalg.norm(tips[2] - tips[1])
    order = math.log2(d1 / d2) if d2 > 0 and d1 > 0 else 2.0
    p = order if 0.5 < order < 4.0 else 2.0
    limit = tips[2] + (tips[2] - tips[1]) / (2.0**p - 1.0)
    return {
        "tip_m": [float(v) for v in limit],
        "observed_order": order,
        "order_used": p,
        "error_of_n200_m": float(np.linalg.norm(limit - tips[2])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "elastica_camera_tentacle.json")
    parser.add_argument("--elements", type=int, nargs="+", default=list(ELEMENTS))
    parser.add_argument("--workers", type=int, default=2, help="parallel processes")
    parser.add_argument(
        "--diagnostic-stiff-shear",
        type=int,
        metavar="N",
        help="instead: settle n_elements = N in air with --shear-factor x the shear stiffness, print the tip",
    )
    parser.add_argument("--shear-factor", type=float, default=10.0)
    args = parser.parse_args()
    if args.diagnostic_stiff_shear:
        settled = settle(args.diagnostic_stiff_shear, AIR.density, shear_factor=args.shear_factor)
        print(strict_json.dumps(settled))
        return
    spec = load_robot("ursula")
    limb = spec.limb(LIMB)
    out: dict[str, object] = {
        "source": "examples/60_elastica_reference.py (PyElastica "
        + getattr(ea, "__version__", "1.0.0")
        + "): URSULA camera tentacle as a tapered Cosserat rod, clamped horizontal, settled under gravity",
        "frame": "rod base frame: x along the undeformed rod, z up (against gravity); tip = last node (m)",
        "limb": LIMB,
        "length_m": limb.segments[0].length,
        "radius_base_m": limb.segments[0].radius_base,
        "radius_tip_m": limb.segments[0].radius_tip,
        "density_kg_m3": limb.material.density,
        "youngs_modulus_pa": limb.material.youngs_modulus,
        "shear_modulus_pa": limb.material.shear_modulus,
        "elastica_shear_coefficient": 27.0 / 28.0,
        "gravity_m_s2": STANDARD_GRAVITY,
        "payload_mass_kg": limb.payload.mass if limb.payload else 0.0,
        "payload_offset_m": limb.payload.offset[2] if limb.payload else 0.0,
        "damping_1_s": DAMPING,
        "laplace_filter_order": FILTER_ORDER,
        "load_ramp_s": RAMP_S,
        "settled_when": f"tip moved < {TOL_M} m in each of two {CHUNK_S} s chunks",
        "media": {},
    }
    media = ((AIR.name, AIR.density), (WATER.name, WATER.density))
    cases = [(n, rho) for n in sorted(args.elements, reverse=True) for _, rho in media]  # longest first
    with multiprocessing.Pool(args.workers) as pool:
        results = dict(zip(cases, pool.starmap(settle, cases), strict=True))
    for name, rho in media:
        runs = []
        for n in args.elements:
            run = results[(n, rho)]
            print(f"{name:5s} n={n:3d}: tip {np.round(np.asarray(run['tip_m']) * 1e3, 3)} mm  {run}")
            runs.append(run)
        entry: dict[str, object] = {"medium_density_kg_m3": rho, "runs": runs}
        if len(runs) >= 3:
            entry["extrapolated"] = extrapolate(runs[-3:])
            print(f"{name:5s} limit: {entry['extrapolated']}")
        out["media"][name] = entry  # type: ignore[index]
    args.out.write_text(strict_json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
