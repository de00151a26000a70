"""The dynamic chain and the Newton–Euler model against the 3D golden data (no PyElastica needed).

For the URSULA camera tentacle (``tests/data/elastica_3d_reference.json``, written by
``62_elastica_3d_reference.py``) it sets up every golden case on

* the dynamic chain (:class:`pccbullet.sim.world.World`, camera limb only, N sections): the limb mount of
  ursula.toml (base z horizontal, base x down), the world's gravity down, the commanded plane via
  ``robot.set_pcc(..., mode="reset")`` (the spring targets and the start pose), critical damping for
  the static cases (the equilibrium does not depend on it), loads held until the tip moves < 10 um/s
  and turns < 1e-4 rad/s;
* the same on the rod chain (implementation ``rod``, ``World(chain="rod")``): its tip link is the material
  frame, which does not turn with the commanded plane; it is turned to the golden frames' PCC labelling
  (``R Rz(plane)``) before the comparison;
* the Newton–Euler model (:func:`pccbullet.sim.models.newton_euler.statics.static_equilibrium`): gravity in
  the limb base frame, a rest shape through the actuation ``tau = K q_rest``, dead tip moments,

and prints the tip error (mm and % of L), the tip orientation error (deg; ``tangent``: of the tip tangent
alone), the twist (straight torque case) and the first bending frequency (vibration cases).

Cases: ``straight``: gravity at 0/30/45/60/90 deg to the commanded bending plane: the chain is
commanded ``plane = angle`` (bend 0) under gravity down; the model, which has no plane at bend 0, gets
gravity turned by the angle instead (the golden file's ``plane_rotated`` and ``gravity_rotated``
expectations). ``prebent``: PCC bend 90 deg in plane 90 deg (horizontal), gravity perpendicular to it.
``torque``: a dead 2 mN m tip torque along the unloaded tip tangent, gravity off, ramped in over 2 s
(chain: the generalized torques ``J^T tau`` in the compliant limb's ``offset``, which its implicit
spring step includes; ``chain-pb``: PyBullet's ``applyExternalTorque`` on the tip link instead, as a
user or a contact loads the limb, which the implicit step does not see, see :func:`chain_static`;
model: ``tip_moment``). ``vibration``: gravity off, no material damping; the chain starts from a small
PCC bend (5 mm at the tip) released to straight, and its frequency comes from the tip's zero crossings
over four periods; the model's from its linearization at the straight pose (``M(0)``, ``K``).

Measured (% of L = tip error, N = 10 / 20). The RRP chain (``chain``): in plane (0 deg) it matches example
61 (air 0.75 / 1.54, water 0.21 / 0.48); out of plane air 7.8-19.8, water 15.4-39.0 at 30-89.9 deg, its tip
frame twisted by about the angle (orientation error 45-131 deg, tangent 3-11 deg); at exactly 90 deg it
stays straight (127 / 94); pre-bent 12-14 (air), 20-23 (water). Straight torque twist 22.1 / 25.9 deg
against 30.34 (the plane joints' torsion springs stop half a section short of the tip, where the thin end
has a quarter of the compliance at N = 10); with PyBullet's torque 74.6 / 99.2 deg. Frequency in air
-0.5 / -0.3 %, in water -0.4 / -0.2 % (the slices' added mass). The rod chain (``rod``): every straight
case as the RRP chain's in plane, at every angle; pre-bent air 1.27 / 1.72 (tip frame 3.9 / 1.4 deg),
water 1.19 / 0.89 (3.3 / 1.3 deg); twist 29.90 / 30.21 deg; pre-bent torque 0.14 / 0.07; frequencies as
the RRP chain's; with PyBullet's torque (``rod-pb``) 130.6 / 131.2 deg: the implicit step does not see a
load PyBullet adds, and the rod's twist joints carry little inertia. The model: 0.2-2.7 % of L in every
case, the same at every angle; twist 29.7 / 30.2 deg; frequencies within 1.2 %.

Reusable set-up: :func:`chain_static`, :func:`chain_frequency`, :func:`model_static`,
:func:`model_frequency`, :func:`reference`, :func:`compare`; import this file by path, e.g.
``importlib.util.spec_from_file_location("cmp3d", "examples/63_3d_comparison.py")`` (register it in
``sys.modules`` before ``exec_module``: it defines a dataclass).

Usage: python examples/63_3d_comparison.py [--sections 10 20] [--cases straight prebent torque vibration]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pccbullet.core import strict_json  # noqa: E402
from pccbullet.sim.bullet import pb  # noqa: E402
from pccbullet.sim.medium import medium as medium_by_name  # noqa: E402
from pccbullet.sim.models.newton_euler.model import LimbModel  # noqa: E402
from pccbullet.sim.models.newton_euler.statics import static_equilibrium  # noqa: E402
from pccbullet.sim.world import STANDARD_GRAVITY, World  # noqa: E402
from pccbullet.urdf_gen import naming  # noqa: E402
from pccbullet.urdf_gen.pcc import PccConfig, rot_z, rotation_angle  # noqa: E402
from pccbullet.urdf_gen.spec_loader import load_robot  # noqa: E402

DATA_PATH = ROOT / "tests" / "data" / "elastica_3d_reference.json"
LIMB = "camera"
# 89.9: at exactly 90 deg the straight chain sits in a symmetric equilibrium it never leaves (no bend
# joint feels gravity, no plane joint is twisted by it); a tenth of a degree off it sags like its neighbours
ANGLES_DEG = (0, 30, 45, 60, 89.9, 90)
TORQUE_RAMP_S = 2.0  # s, the chain's tip torque ramps in (smoothstep)
SETTLE_TOL_M = 1e-5  # m of tip motion per second: settled (and the tip frame turned < SETTLE_TOL_RAD)
SETTLE_TOL_RAD = 1e-4  # rad of tip rotation per second
MAX_SETTLE_S = 60  # s of simulated time before giving up
EXCITATION_TIP_M = 0.005  # m, initial tip deflection of the vibration runs
VIBRATION_PERIODS = 4.0


@dataclass(frozen=True)
class Setup:
    """One comparison case.

    Attributes:
        kind: ``"straight"``, ``"prebent"``, ``"torque"`` or ``"vibration"``.
        medium: ``"air"`` or ``"water"`` (``"air"`` for the torque cases: no gravity, the medium only drags).
        angle_deg: gravity's angle to the commanded bending plane (straight only).
        bend, plane: commanded PCC rest shape (rad). golden: the golden file's case name.
    """

    kind: str
    medium: str
    angle_deg: float = 0.0
    bend: float = 0.0
    plane: float = 0.0
    golden: str = ""

    @property
    def label(self) -> str:
        extra = f" {self.angle_deg:g}deg" if self.kind == "straight" else ""
        return f"{self.golden}{extra}"


def setups(kinds: tuple[str, ...] = ("straight", "prebent", "torque", "vibration")) -> list[Setup]:
    """The cases of the golden file, straight ones at every angle."""
    bent = {"bend": math.pi / 2, "plane": math.pi / 2}
    out: list[Setup] = []
    for medium in ("air", "water"):
        if "straight" in kinds:
            out += [Setup("straight", medium, a, golden=f"straight_gravity_{medium}") for a in ANGLES_DEG]
        if "prebent" in kinds:
            out.append(Setup("prebent", medium, golden=f"prebent_gravity_{medium}", **bent))
    if "torque" in kinds:
        out += [
            Setup("torque", "air", golden="straight_torque"),
            Setup("torque", "air", golden="prebent_torque", **bent),
        ]
    if "vibration" in kinds:
        out += [Setup("vibration", m, golden=f"vibration_{m}") for m in ("air", "water")]
    return out


def load_data(path: Path = DATA_PATH) -> dict:  # type: ignore[type-arg]
    return json.loads(Path(path).read_text())


def reference(data: dict, setup: Setup, implementation: str = "chain") -> dict[str, object]:  # type: ignore[type-arg]
    """Golden expectation in the limb base frame: ``tip_m`` ``(3,)``, ``tip_R`` ``(3, 3)`` (columns d1 d2 d3
    with the chain's labelling, ``Rz(plane) Ry(bend)`` at rest), ``twist_deg`` or ``frequency_hz``.
    ``implementation``: ``"chain"`` (plane turned) or ``"model"`` (gravity turned) for the straight cases."""
    if setup.kind == "vibration":
        vib = data["vibration_reference"][setup.medium]
        return {
            "frequency_hz": vib["rigid_camera"]["first_frequency_hz"],
            "elastica_hz": data["cases"][setup.golden]["extrapolated"]["frequency_hz"],
        }
    entry = data["cases"][setup.golden]
    if setup.kind == "straight":
        key = "gravity_rotated" if implementation == "model" else "plane_rotated"
        table = entry["angles_deg"]
        if f"{setup.angle_deg:g}" in table:
            exp = table[f"{setup.angle_deg:g}"][key]
        else:  # an angle the file does not list: the same rotation of the computed case
            Rz = rot_z(math.radians(setup.angle_deg))
            p0, R0 = np.asarray(entry["extrapolated"]["tip_m"]), np.asarray(entry["extrapolated"]["tip_R"])
            if key == "plane_rotated":
                exp = {"tip_m": p0, "tip_R": R0 @ Rz}
            else:
                exp = {"tip_m": Rz @ p0, "tip_R": Rz @ R0 @ Rz.T}
    else:
        exp = entry["extrapolated"]
    out: dict[str, object] = {"tip_m": np.asarray(exp["tip_m"]), "tip_R": np.asarray(exp["tip_R"])}
    if setup.golden == "straight_torque":
        out["twist_deg"] = entry["extrapolated"]["twist_deg"]
        out["saint_venant_deg"] = entry["saint_venant_twist_deg"]
    return out


def _camera_only(n: int, damping_ratio: float):
    spec = load_robot("ursula", sections=n)
    limb = spec.limb(LIMB)
    limb = dataclasses.replace(limb, material=dataclasses.replace(limb.material, damping_ratio=damping_ratio))
    return dataclasses.replace(spec, limbs=(limb,))


def _link_index(body: int, link: str, client: int) -> int:
    for j in range(pb.getNumJoints(body, physicsClientId=client)):
        if pb.getJointInfo(body, j, physicsClientId=client)[12].decode() == link:
            return j
    raise KeyError(link)


def _smoothstep(x: float) -> float:
    x = min(max(x, 0.0), 1.0)
    return x * x * (3.0 - 2.0 * x)


def chain_static(
    n: int,
    medium: str,
    *,
    bend: float = 0.0,
    plane: float = 0.0,
    gravity: bool = True,
    tip_torque: tuple[float, float, float] | None = None,
    torque_via: str = "offset",
    chain: str = "rrp",
    external_loads: bool = False,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Settle the dynamic chain (N = ``n``, critical damping) commanded to PCC ``bend``, ``plane``; gravity
    down (on the URSULA mount: limb base +x) or off; an optional dead tip torque (N m, limb base frame).

    ``torque_via``: ``"offset"``: as generalized joint torques ``J_w^T tau`` (the tip link's angular
    Jacobian, ``pb.calculateJacobian`` every step) in the compliant limb's ``offset``, which its implicit
    spring step accounts for;
    ``"pybullet"``: ``pb.applyExternalTorque`` on the tip link. The implicit step does not know of a load
    PyBullet adds: at rest its springs then hold ``(I + (dt C + dt^2 K) M^-1) J^T tau`` instead of
    ``J^T tau``, too compliant wherever ``dt^2 K`` is not small against the joint's inertia, unless the
    limb estimates such loads (``external_loads``, :class:`pccbullet.sim.limb.dynamics.CompliantLimb`).

    Returns:
        tip position ``(3,)`` (m) and tip rotation ``(3, 3)`` in the limb base frame, simulated seconds.
    """
    g = (0.0, 0.0, -STANDARD_GRAVITY) if gravity else (0.0, 0.0, 0.0)
    with World(medium=medium, gravity=g, chain=chain) as world:
        robot = world.load_robot(_camera_only(n, damping_ratio=1.0), external_loads=external_loads)
        limb = robot.limb(LIMB)
        robot.set_pcc(LIMB, [PccConfig(bend, plane, limb.segments[0].length)], mode="reset")
        T_base_world = np.linalg.inv(robot.T_world_limbbase(LIMB))
        torque_world = None
        if tip_torque is not None:
            torque_base = np.asarray(tip_torque, dtype=float)
            torque_world = robot.T_world_limbbase(LIMB)[:3, :3] @ torque_base
            body = robot.bodies[LIMB]
            cid = world.client
            link = _link_index(body, naming.tip_link(LIMB), cid)
        tip, R = np.full(3, np.inf), np.eye(3)
        for second in range(MAX_SETTLE_S):
            for k in range(1000):
                if torque_world is not None:
                    scale = _smoothstep((second + k * world.dt) / TORQUE_RAMP_S)
                    if torque_via == "pybullet":
                        load = (scale * torque_world).tolist()
                        pb.applyExternalTorque(body, link, load, pb.WORLD_FRAME, physicsClientId=cid)
                    else:  # J^T tau in the limb base frame, from the limb's own chain model
                        compliant = robot.compliant[LIMB]
                        q, _ = compliant.read_state()
                        compliant.offset[:] = compliant.chain.generalized_force(
                            q, naming.tip_link(LIMB), torque=scale * torque_base
                        )
                world.step(1)
            T = T_base_world @ robot.tip_pose(LIMB)
            moved = float(np.linalg.norm(T[:3, 3] - tip))
            turned = rotation_angle(R.T @ T[:3, :3])
            tip, R = T[:3, 3], T[:3, :3]
            calm = moved < SETTLE_TOL_M and turned < SETTLE_TOL_RAD
            if calm and second + 1 >= (TORQUE_RAMP_S if torque_world is not None else 1):
                # a rod chain's tip link is its material frame; the golden frames are labelled as the
                # PCC frame, which is the material frame turned by the plane about the tangent
                return tip, (R @ rot_z(plane) if chain == "rod" else R), float(second + 1)
        raise RuntimeError(
            f"chain N={n} ({medium}, bend {bend}, plane {plane}) not settled in {MAX_SETTLE_S} s"
        )


def zero_crossing_frequency(t: np.ndarray, x: np.ndarray) -> float:
    """Frequency (Hz) of an oscillation ``x(t)`` from its zero crossings, up- and down-crossings fitted
    apart (a small offset of its centre cancels)."""
    i = np.flatnonzero(np.sign(x[:-1]) * np.sign(x[1:]) < 0)
    c = t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])
    periods = [np.polyfit(np.arange(len(s)), s, 1)[0] for s in (c[0::2], c[1::2]) if len(s) >= 2]
    if not periods:
        raise RuntimeError(f"{len(c)} zero crossings: too few to measure a period")
    return 1.0 / float(np.mean(periods))


def chain_frequency(
    n: int, medium: str, duration: float | None = None, chain: str = "rrp"
) -> dict[str, float]:
    """First bending frequency (Hz) of the chain without gravity and without material damping: start
    bent (PCC, 5 mm at the tip, plane 0), targets straight, tip deflection along limb base x sampled
    every step. Also the chain's linear estimate (``CompliantLimb.omega_1``, its lowest mode of any kind)."""
    with World(medium=medium, gravity=(0.0, 0.0, 0.0), chain=chain) as world:
        robot = world.load_robot(_camera_only(n, damping_ratio=0.0))
        L = robot.limb(LIMB).segments[0].length
        robot.set_pcc(LIMB, [PccConfig(2.0 * EXCITATION_TIP_M / L, 0.0, L)], mode="reset")
        robot.set_pcc(LIMB, [PccConfig(0.0, 0.0, L)], mode="target")
        T_base_world = np.linalg.inv(robot.T_world_limbbase(LIMB))
        omega_1 = robot.compliant[LIMB].omega_1
        steps = int(round((duration or VIBRATION_PERIODS * 2 * math.pi / omega_1 * 1.1) / world.dt))
        t, x = np.empty(steps), np.empty(steps)
        for k in range(steps):
            world.step(1)
            t[k] = world.time
            x[k] = (T_base_world @ robot.tip_pose(LIMB))[0, 3]
        return {"frequency_hz": zero_crossing_frequency(t, x), "linear_hz": omega_1 / (2 * math.pi)}


def _model(n: int, medium: str, gravity: np.ndarray) -> LimbModel:
    limb = load_robot("ursula").limb(LIMB)
    return LimbModel(limb, n, gravity=gravity, medium=medium_by_name(medium))


def rest_strain(model: LimbModel, bend: float, plane: float) -> np.ndarray:
    """Strain state ``(4n,)`` of a constant-curvature arc of total ``bend`` in ``plane`` (rad): the model's
    curvature about x bends towards -y, about y towards +x."""
    kappa = bend / float(model.l0.sum())
    return np.tile([0.0, -kappa * math.sin(plane), kappa * math.cos(plane), 0.0], model.n)


def model_static(
    n: int,
    medium: str,
    *,
    bend: float = 0.0,
    plane: float = 0.0,
    gravity: np.ndarray | None = None,
    tip_moment: tuple[float, float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Static equilibrium of the Newton–Euler model (n pieces) with rest shape PCC ``bend``, ``plane``
    (actuation ``tau = K q_rest``), ``gravity`` in the limb base frame (default none) and a dead tip moment.

    Returns:
        tip position ``(3,)`` (m) and tip rotation ``(3, 3)`` in the limb base frame, relabelled to the
        chain's material frame (``R Rz(plane)``: the model's clamp frame is the base frame itself).
    """
    model = _model(n, medium, np.zeros(3) if gravity is None else np.asarray(gravity, dtype=float))
    q_rest = rest_strain(model, bend, plane)
    q = static_equilibrium(
        model,
        tau=model.K * q_rest,
        tip_moment=None if tip_moment is None else np.asarray(tip_moment, dtype=float),
    )
    pos, R = model.forward_kinematics(q)
    return pos[-1], R[-1] @ rot_z(plane)


def model_frequency(n: int, medium: str) -> float:
    """Lowest bending frequency (Hz) of the model linearized at the straight pose, no gravity: the
    generalized eigenproblem ``K v = omega^2 M(0) v`` (modes dominated by bending strains)."""
    from scipy.linalg import eigh

    model = _model(n, medium, np.zeros(3))
    M, _ = model.dynamics(np.zeros(model.dof), np.zeros(model.dof))
    w2, v = eigh(np.diag(model.K), M)
    for k in np.argsort(w2):
        shape = np.abs(v[:, k].reshape(model.n, 4)) * np.sqrt(model.K.reshape(model.n, 4))
        if shape[:, 1:3].sum() > shape[:, [0, 3]].sum():
            return math.sqrt(w2[k]) / (2 * math.pi)
    raise RuntimeError("no bending mode")


def compare(data: dict, setup: Setup, implementation: str, n: int) -> dict[str, float]:  # type: ignore[type-arg]
    """Run one case on ``"chain"`` (RRP), ``"rod"`` (the rod chain), ``"model"``, ``"chain-pb"``,
    ``"rod-pb"`` (the chain with the tip torque applied by PyBullet, see :func:`chain_static`) or
    ``"rod-est"`` (the same, the limb estimating the load) with N = ``n``; errors against the golden
    data."""
    L = data["length_m"]
    ref = reference(data, setup, implementation)
    if setup.kind == "vibration":
        if implementation != "model":
            res = chain_frequency(n, setup.medium, chain="rod" if implementation.startswith("rod") else "rrp")
        else:
            res = {"frequency_hz": model_frequency(n, setup.medium)}
        f_ref = float(ref["frequency_hz"])  # type: ignore[arg-type]
        return {**res, "reference_hz": f_ref, "error_pct": 100 * (res["frequency_hz"] / f_ref - 1.0)}
    torque = None
    if setup.kind == "torque":
        torque = tuple(data["cases"][setup.golden]["setup"]["tip_torque"])
    if implementation != "model":
        plane = math.radians(setup.angle_deg) if setup.kind == "straight" else setup.plane
        via = "pybullet" if implementation.endswith(("-pb", "-est")) else "offset"
        tip, R, _ = chain_static(
            n,
            setup.medium,
            bend=setup.bend,
            plane=plane,
            gravity=setup.kind != "torque",
            tip_torque=torque,
            torque_via=via,
            chain="rod" if implementation.startswith("rod") else "rrp",
            external_loads=implementation.endswith("-est"),
        )
    else:
        gravity = None
        if setup.kind != "torque":
            a = math.radians(setup.angle_deg)
            gravity = STANDARD_GRAVITY * np.array([math.cos(a), math.sin(a), 0.0])
        tip, R = model_static(
            n, setup.medium, bend=setup.bend, plane=setup.plane, gravity=gravity, tip_moment=torque
        )
    R_ref = np.asarray(ref["tip_R"])
    err = float(np.linalg.norm(tip - np.asarray(ref["tip_m"])))
    cos_t = float(np.clip(R[:, 2] @ R_ref[:, 2], -1.0, 1.0))
    out = {
        "tip_error_mm": 1e3 * err,
        "tip_error_pct_L": 100 * err / L,
        "orientation_error_deg": math.degrees(rotation_angle(R.T @ R_ref)),
        "tangent_error_deg": math.degrees(math.acos(cos_t)),
        "tip_mm": (1e3 * tip).tolist(),
    }
    if "twist_deg" in ref:
        out["twist_deg"] = math.degrees(math.atan2(R[1, 0] - R[0, 1], R[0, 0] + R[1, 1]))
        out["reference_twist_deg"] = float(ref["twist_deg"])  # type: ignore[arg-type]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA_PATH)
    parser.add_argument("--sections", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--cases", nargs="+", default=["straight", "prebent", "torque", "vibration"])
    parser.add_argument(
        "--impl",
        nargs="+",
        default=["chain", "rod", "model", "chain-pb"],
        help="chain (RRP), rod (the rod chain), model; chain-pb, rod-pb, rod-est: torque only",
    )
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    data = load_data(args.data)
    rows = []
    head = (
        f"{'case':30s} {'N':>3s} {'impl':8s} {'tip mm':>8s} {'% L':>6s} {'orient':>7s} {'tangent':>7s}  extra"
    )
    print(head)
    print("-" * len(head))
    for setup in setups(tuple(args.cases)):
        for n in args.sections:
            for impl in args.impl:
                if impl.endswith(("-pb", "-est")) and setup.kind != "torque":
                    continue
                t0 = time.perf_counter()
                r = compare(data, setup, impl, n)
                r.update(
                    {"case": setup.label, "n": n, "impl": impl, "wall_s": round(time.perf_counter() - t0, 1)}
                )
                rows.append(r)
                if setup.kind == "vibration":
                    extra = (
                        f"f {r['frequency_hz']:.4f} Hz vs {r['reference_hz']:.4f} ({r['error_pct']:+.1f} %)"
                    )
                    if "linear_hz" in r:
                        extra += f", chain linear {r['linear_hz']:.4f}"
                    print(
                        f"{setup.label:30s} {n:3d} {impl:8s} {'':8s} {'':6s} {'':7s} {'':7s}  {extra}",
                        flush=True,
                    )
                    continue
                extra = ""
                if "twist_deg" in r:
                    extra = f"twist {r['twist_deg']:.2f} vs {r['reference_twist_deg']:.2f} deg"
                print(
                    f"{setup.label:30s} {n:3d} {impl:8s} {r['tip_error_mm']:8.1f} {r['tip_error_pct_L']:6.2f}"
                    f" {r['orientation_error_deg']:7.2f} {r['tangent_error_deg']:7.2f}  {extra}",
                    flush=True,
                )
    if args.json:
        args.json.write_text(strict_json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
