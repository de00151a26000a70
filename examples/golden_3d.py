"""Post-processing of the 3D golden data (``62_elastica_3d_reference.py``), without PyElastica.

Richardson limits of tips, frames and frequencies from n, 2n, 4n elements; the per-angle expectations of the
straight limb derived by rotation; Saint-Venant's twist of the tapered rod; the Euler–Bernoulli beam of the
camera limb (:mod:`eb_cantilever`) and its frequencies. Importable by path (``sys.path`` holding
``examples/``) so that a test can rebuild any derived entry of ``tests/data/elastica_3d_reference.json``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eb_cantilever import TaperedCantilever

from pccbullet.sim.medium import AIR, WATER, Medium
from pccbullet.urdf_gen.pcc import rot_z
from pccbullet.urdf_gen.spec_loader import load_robot

LIMB = "camera"
ELEMENTS = (50, 100, 200)
ANGLES_DEG = (0, 30, 45, 60, 90)
MEDIA = {"air": AIR, "water": WATER}


def beam(
    medium: Medium, *, camera: str = "rigid", rotary_inertia: bool = False, length: float | None = None
) -> TaperedCantilever:
    """The Euler–Bernoulli model of the limb in ``medium``; ``camera``: ``"rigid"`` (40 g, centre 5 mm
    beyond the tip, a solid sphere of the tip radius as in the URDF) or ``"point"`` (40 g at the tip).
    ``length``: only the distal part of this length (m) of the limb, clamped at its base."""
    limb = load_robot("ursula").limb(LIMB)
    seg, p = limb.segments[0], limb.payload
    rigid = camera == "rigid"
    length = seg.length if length is None else length
    r0 = seg.radius_at(1.0 - length / seg.length)
    return TaperedCantilever(
        length, r0, seg.radius_tip, limb.material.youngs_modulus, limb.material.density,
        added_density=medium.added_mass_coefficient * medium.density,
        tip_mass=p.mass if p else 0.0,
        tip_offset=(p.offset[2] if p else 0.0) if rigid else 0.0,
        tip_inertia=0.4 * (p.mass if p else 0.0) * seg.radius_tip**2 if rigid else 0.0,
        rotary_inertia=rotary_inertia,
    )  # fmt: skip


def richardson(values: list) -> dict[str, object]:
    """Richardson limit of a quantity from n, 2n, 4n (arrays of one shape) with the
    observed order ``log2(|v1 - v0| / |v2 - v1|)`` (clipped to 2 outside 0.5..4, like example 60)."""
    v = [np.asarray(x, dtype=float) for x in values]
    d1, d2 = float(np.linalg.norm(v[1] - v[0])), float(np.linalg.norm(v[2] - v[1]))
    order = math.log2(d1 / d2) if d1 > 0 and d2 > 0 else 2.0
    p = order if 0.5 < order < 4.0 else 2.0
    limit = v[2] + (v[2] - v[1]) / (2.0**p - 1.0)
    return {
        "limit": limit,
        "observed_order": order,
        "order_used": p,
        "error_of_finest": float(np.linalg.norm(limit - v[2])),
    }


def frame_limit(frames: list) -> dict[str, object]:
    """Richardson limit of rotations: rotation vectors relative to the finest frame."""
    R2 = np.asarray(frames[-1])
    vecs = [Rotation.from_matrix(R2.T @ np.asarray(R)).as_rotvec() for R in frames]
    ex = richardson(vecs)
    R = R2 @ Rotation.from_rotvec(ex["limit"]).as_matrix()
    return {
        "tip_R": R.tolist(),
        "observed_order": ex["observed_order"],
        "order_used": ex["order_used"],
        "error_of_n200_deg": math.degrees(ex["error_of_finest"]),
    }


def twist_deg(R: np.ndarray) -> float:
    """Twist (deg) about z of a frame whose tangent stays along z (the straight rod under a torque)."""
    R = np.asarray(R)
    return math.degrees(math.atan2(R[1, 0] - R[0, 1], R[0, 0] + R[1, 1]))


def saint_venant_twist(torque: float) -> float:
    """Twist (rad) of the tapered rod under an end torque: ``integral_0^L T / (G J(s)) ds``, J = pi r^4 / 2,
    r linear from r0 to r1: ``T L / (G pi / 2) * (r1^-3 - r0^-3) / (3 (r0 - r1))``."""
    limb = load_robot("ursula").limb(LIMB)
    seg = limb.segments[0]
    r0, r1 = seg.radius_base, seg.radius_tip
    integral = seg.length * (r1**-3 - r0**-3) / (3.0 * (r0 - r1))  # integral of r^-4 ds (m^-3)
    return torque * integral / (limb.material.shear_modulus * math.pi / 2.0)


def case_entry(name: str, setup: dict[str, object], runs: list[dict[str, object]]) -> dict[str, object]:
    """A case of the golden file: its ``setup``, its ``runs`` (coarse to fine) and, from the last three,
    the ``extrapolated`` tip and frame (static) or frequency (vibration); the straight torque case also
    gets the twist of every run and its limit."""
    entry: dict[str, object] = {"setup": setup, "runs": runs}
    if len(runs) < 3:
        return entry
    last3 = runs[-3:]
    if setup["vibration"]:
        ex = richardson([[r["frequency_hz"]] for r in last3])
        entry["extrapolated"] = {
            "frequency_hz": float(ex["limit"][0]),
            "observed_order": ex["observed_order"],
            "order_used": ex["order_used"],
            "error_of_n200_hz": ex["error_of_finest"],
        }
        return entry
    ex = richardson([r["tip_m"] for r in last3])
    fr = frame_limit([r["tip_R"] for r in last3])
    entry["extrapolated"] = {
        "tip_m": ex["limit"].tolist(),
        "observed_order": ex["observed_order"],
        "order_used": ex["order_used"],
        "error_of_n200_m": ex["error_of_finest"],
        "tip_R": fr["tip_R"],
        "frame_observed_order": fr["observed_order"],
        "frame_order_used": fr["order_used"],
        "frame_error_of_n200_deg": fr["error_of_n200_deg"],
    }
    if name == "straight_torque":
        tw = richardson([[twist_deg(r["tip_R"])] for r in last3])
        for r in runs:
            r["twist_deg"] = twist_deg(r["tip_R"])
        entry["extrapolated"]["twist_deg"] = float(tw["limit"][0])  # type: ignore[index]
        entry["extrapolated"]["twist_observed_order"] = tw["observed_order"]  # type: ignore[index]
    return entry


def angle_table(entry: dict[str, object]) -> dict[str, object]:
    """Expected tip and frame of the straight limb for gravity at each angle to the commanded plane,
    derived from the 0 deg case by rotation about the limb axis (the rod is circular and isotropic)."""
    ex = entry["extrapolated"]  # type: ignore[index]
    p0, R0 = np.asarray(ex["tip_m"]), np.asarray(ex["tip_R"])
    g = float(np.linalg.norm(entry["setup"]["gravity"]))  # type: ignore[index]
    out = {}
    for deg in ANGLES_DEG:
        a = math.radians(deg)
        Rz = rot_z(a)
        out[str(deg)] = {
            # plane 0 commanded (clamp material frame = clamp frame), gravity turned by the angle
            "gravity_rotated": {
                "plane_rad": 0.0,
                "gravity_m_s2": (g * Rz[:, 0]).tolist(),
                "tip_m": (Rz @ p0).tolist(),
                "tip_R": (Rz @ R0 @ Rz.T).tolist(),
            },
            # gravity along clamp +x (down on the URSULA mount), plane = angle commanded (bend 0): the
            # limb's material frame is turned by the angle about its axis, the shape is the 0 deg one
            "plane_rotated": {
                "plane_rad": a,
                "gravity_m_s2": [g, 0.0, 0.0],
                "tip_m": p0.tolist(),
                "tip_R": (R0 @ Rz).tolist(),
            },
        }
    return out


def vibration_reference() -> dict[str, object]:
    """The Euler–Bernoulli first (and second) frequencies of the limb in each medium, three camera models,
    converged over ``ELEMENTS``."""
    out: dict[str, object] = {
        "method": "Euler-Bernoulli beam, Hermite cubic elements, exact Gauss quadrature (eb_cantilever.py); "
        "scipy.linalg.eigh of M v = K v / omega^2 (well conditioned for the lowest modes)",
        "added_mass": "C_a rho_f pi r(s)^2 per length across the axis, from the world's Medium record "
        "(air too)",
    }
    variants = {
        "rigid_camera": ("camera 40 g with its centre 5 mm beyond the tip, rotary inertia of a solid sphere "
                         "of the tip radius (2/5 m r_tip^2, as the URDF's camera link); no rotary inertia of "
                         "the rod: the limb as specified, the reference for the chain and the model",
                         {"camera": "rigid"}),
        "point_camera": ("camera 40 g as a point mass at the tip node, no rotary inertia: the known sanity "
                         "figures (air 0.2265 Hz, water 0.1797 Hz)", {"camera": "point"}),
        "point_camera_rayleigh": ("point camera plus the rod's own rotary inertia rho I per length: the "
                                  "Euler-Bernoulli counterpart of the Elastica cross-check",
                                  {"camera": "point", "rotary_inertia": True}),
    }  # fmt: skip
    for name, medium in MEDIA.items():
        per: dict[str, object] = {
            "density_kg_m3": medium.density,
            "added_mass_coefficient": medium.added_mass_coefficient,
        }
        for key, (text, kw) in variants.items():
            b = beam(medium, **kw)  # type: ignore[arg-type]
            conv = {str(n): float(b.frequencies(n)[0]) for n in ELEMENTS}
            per[key] = {
                "description": text,
                "first_frequency_hz": conv[str(ELEMENTS[-1])],
                "second_frequency_hz": float(b.frequencies(ELEMENTS[-1])[1]),
                "first_by_n_elements": conv,
            }
        out[name] = per
    return out
