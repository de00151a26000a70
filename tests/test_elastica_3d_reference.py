"""Internal consistency of the 3D golden data of the camera tentacle (no PyElastica, no simulation).

``tests/data/elastica_3d_reference.json`` comes from ``examples/62_elastica_3d_reference.py``: a tapered
Cosserat rod (PyElastica) clamped in pccbullet's limb base frame, out-of-plane static cases at n_elements =
50, 100, 200 with Richardson limits, and the first bending frequency against an Euler–Bernoulli
finite-element eigen solve. These tests check that the file is what it says: settled, converged, its
derived per-angle entries are rotations of the computed case, the twist agrees with Saint-Venant and the
frequencies with the beam. Comparisons of the project's chain and model against it live in
``examples/63_3d_comparison.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

DATA = json.loads((Path(__file__).parent / "data" / "elastica_3d_reference.json").read_text())
OLD = json.loads((Path(__file__).parent / "data" / "elastica_camera_tentacle.json").read_text())
LENGTH = DATA["length_m"]
CASES = DATA["cases"]
STATIC = [name for name, c in CASES.items() if not c["setup"]["vibration"]]
MOVING = [name for name in STATIC if name != "straight_torque"]  # the straight rod's tip stays put


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _angle_deg(R: np.ndarray) -> float:
    """Rotation angle (deg) of ``R`` ``(3, 3)``, accurate for small angles too."""
    sin = 0.5 * np.linalg.norm([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return math.degrees(math.atan2(sin, 0.5 * (np.trace(R) - 1.0)))


def test_file_lists_every_case_at_three_resolutions() -> None:
    assert set(CASES) == {
        "straight_gravity_air",
        "straight_gravity_water",
        "prebent_gravity_air",
        "prebent_gravity_water",
        "straight_torque",
        "prebent_torque",
        "vibration_air",
        "vibration_water",
    }
    for entry in CASES.values():
        assert [r["n_elements"] for r in entry["runs"]] == [50, 100, 200]
        assert "extrapolated" in entry
    assert DATA["gravity_m_s2"] == 9.80665
    assert DATA["media"]["water"]["density_kg_m3"] == 1000.0


@pytest.mark.parametrize("name", STATIC)
def test_static_runs_settled_with_proper_frames(name: str) -> None:
    """Every run stopped with its tip slower than 0.1 mm/s and turning slower than 4e-4 rad/s (the settle
    test: < 20 um and < 1e-4 rad per 0.25 s); frames are rotations."""
    for run in CASES[name]["runs"]:
        assert run["final_tip_speed_m_s"] < 1e-4
        assert run["final_tip_turn_rate_rad_s"] < 4e-4
        for key in ("tip_R", "last_element_R"):
            R = np.asarray(run[key])
            np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-9)
            assert np.linalg.det(R) == pytest.approx(1.0)


@pytest.mark.parametrize("name", MOVING)
def test_tip_converges_at_first_order(name: str) -> None:
    """Elastica's clamp fixes the whole first element, so the tip converges as 1/n: the differences halve
    with n, the observed order is ~1, and the n = 200 tip is within 0.5 % of L (2 mm) of the limit."""
    tips = [np.asarray(r["tip_m"]) for r in CASES[name]["runs"]]
    d1, d2 = np.linalg.norm(tips[1] - tips[0]), np.linalg.norm(tips[2] - tips[1])
    assert d2 < 0.6 * d1
    ex = CASES[name]["extrapolated"]
    assert 0.8 < ex["observed_order"] < 1.3
    assert ex["error_of_n200_m"] < 0.005 * LENGTH
    # the limit is the n = 200 tip plus the extrapolated remainder
    np.testing.assert_allclose(
        ex["tip_m"], tips[2] + (tips[2] - tips[1]) / (2 ** ex["order_used"] - 1), atol=1e-12
    )


@pytest.mark.parametrize("name", STATIC)
def test_tip_frame_converges(name: str) -> None:
    """The tip frame of n = 200 is within 0.25 deg of the limit; the limit is a rotation."""
    ex = CASES[name]["extrapolated"]
    assert ex["frame_error_of_n200_deg"] < 0.25
    R = np.asarray(ex["tip_R"])
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-9)
    R200 = np.asarray(CASES[name]["runs"][-1]["tip_R"])
    assert _angle_deg(R200.T @ R) == pytest.approx(ex["frame_error_of_n200_deg"], rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("medium", ["air", "water"])
def test_straight_case_reproduces_the_2d_reference(medium: str) -> None:
    """The straight gravity case is example 60's rod built in the limb base frame: the same tips at every n
    (examples 60's frame: x along the rod, z up = limb base (z, -x))."""
    new = CASES[f"straight_gravity_{medium}"]
    for old_run, run in zip(OLD["media"][medium]["runs"], new["runs"], strict=True):
        x, _, z = old_run["tip_m"]
        np.testing.assert_allclose(run["tip_m"], [-z, 0.0, x], atol=1e-9)
    x, _, z = OLD["media"][medium]["extrapolated"]["tip_m"]
    np.testing.assert_allclose(new["extrapolated"]["tip_m"], [-z, 0.0, x], atol=1e-9)


@pytest.mark.parametrize("medium", ["air", "water"])
def test_angle_table_is_the_computed_case_rotated(medium: str) -> None:
    """Gravity at 0..90 deg to the commanded plane: the rod is isotropic, so the expected tip and frame are
    the 0 deg case turned about the limb axis (gravity turned), or the material frame relabelled (plane
    turned); the 0 deg entries are the computed case."""
    entry = CASES[f"straight_gravity_{medium}"]
    p0, R0 = np.asarray(entry["extrapolated"]["tip_m"]), np.asarray(entry["extrapolated"]["tip_R"])
    assert sorted(entry["angles_deg"], key=float) == ["0", "30", "45", "60", "90"]
    for deg, both in entry["angles_deg"].items():
        a = math.radians(float(deg))
        g = both["gravity_rotated"]
        np.testing.assert_allclose(g["gravity_m_s2"], 9.80665 * np.array([math.cos(a), math.sin(a), 0.0]))
        np.testing.assert_allclose(g["tip_m"], _rz(a) @ p0, atol=1e-12)
        np.testing.assert_allclose(g["tip_R"], _rz(a) @ R0 @ _rz(a).T, atol=1e-12)
        # the sag points along gravity: tip displacement across the axis is parallel to it
        across, down = np.asarray(g["tip_m"])[:2], np.asarray(g["gravity_m_s2"])[:2]
        assert across[0] * down[1] - across[1] * down[0] == pytest.approx(0.0, abs=1e-9)
        p = both["plane_rotated"]
        assert p["plane_rad"] == pytest.approx(a)
        np.testing.assert_allclose(p["gravity_m_s2"], [9.80665, 0.0, 0.0])
        np.testing.assert_allclose(p["tip_m"], p0, atol=1e-12)
        np.testing.assert_allclose(p["tip_R"], R0 @ _rz(a), atol=1e-12)
    np.testing.assert_allclose(entry["angles_deg"]["0"]["gravity_rotated"]["tip_R"], R0, atol=1e-12)


def test_buoyancy_lifts_both_shapes() -> None:
    for shape in ("straight", "prebent"):
        air = CASES[f"{shape}_gravity_air"]["extrapolated"]["tip_m"]
        water = CASES[f"{shape}_gravity_water"]["extrapolated"]["tip_m"]
        assert water[0] < air[0] - 0.1  # x is down on the URSULA mount


def test_prebent_gravity_is_out_of_plane() -> None:
    """The quarter circle bends towards +y (plane 90 deg); gravity along +x pulls it out of that plane:
    the tip drops by most of L and the tip tangent turns from +y towards +x."""
    rest_tip = np.array([0.0, 1.0, 1.0]) * LENGTH / (math.pi / 2)
    for medium in ("air", "water"):
        ex = CASES[f"prebent_gravity_{medium}"]["extrapolated"]
        tip, R = np.asarray(ex["tip_m"]), np.asarray(ex["tip_R"])
        assert tip[0] > 0.7 * LENGTH
        assert np.linalg.norm(tip - rest_tip) > 0.5 * LENGTH
        assert R[0, 2] > 0.9  # tangent now mostly along gravity


def _saint_venant_deg(torque: float) -> float:
    """Twist of the tapered rod, integral of T / (G pi r^4 / 2) ds, by the trapezoid rule on 200001 points."""
    s = np.linspace(0.0, LENGTH, 200_001)
    r = DATA["radius_base_m"] + (DATA["radius_tip_m"] - DATA["radius_base_m"]) * s / LENGTH
    f = torque / (DATA["shear_modulus_pa"] * math.pi * r**4 / 2.0)
    return math.degrees(float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(s))))


def test_straight_torque_twist_is_saint_venant() -> None:
    """Elastica's twist under 2 mN m converges at second order to Saint-Venant's 30.34 deg (within 2 %,
    in fact 0.01 %); the tip stays where it was and its tangent along the axis."""
    entry = CASES["straight_torque"]
    torque = entry["setup"]["tip_torque"]
    assert torque == [0.0, 0.0, 2e-3]
    sv = _saint_venant_deg(torque[2])
    assert entry["saint_venant_twist_deg"] == pytest.approx(sv, rel=1e-8)
    assert 30.0 < sv < 30.6
    ex = entry["extrapolated"]
    assert ex["twist_deg"] == pytest.approx(sv, rel=0.02)
    assert 1.5 < ex["twist_observed_order"] < 2.5
    twists = [r["twist_deg"] for r in entry["runs"]]
    assert twists[0] < twists[1] < twists[2] < sv + 0.01
    for run in entry["runs"]:
        np.testing.assert_allclose(run["tip_m"], [0.0, 0.0, LENGTH], atol=1e-12)
        np.testing.assert_allclose(np.asarray(run["tip_R"])[:, 2], [0.0, 0.0, 1.0], atol=1e-9)


def test_prebent_torque_twists_and_bends_out_of_plane() -> None:
    """The dead torque along the quarter circle's tip tangent (+y): the tip leaves the y-z plane by
    millimetres while the tip frame turns by tens of degrees."""
    entry = CASES["prebent_torque"]
    assert entry["setup"]["tip_torque"] == pytest.approx([0.0, 2e-3, 0.0], abs=1e-15)
    ex = entry["extrapolated"]
    radius = LENGTH / (math.pi / 2)
    np.testing.assert_allclose(ex["tip_m"][1:], [radius, radius], atol=2e-3)
    assert 0.002 < ex["tip_m"][0] < 0.02
    rest = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])  # Rz(90) Ry(90)
    assert 10.0 < _angle_deg(rest.T @ np.asarray(ex["tip_R"])) < 60.0


@pytest.mark.parametrize("medium", ["air", "water"])
def test_euler_bernoulli_frequencies_converged(medium: str) -> None:
    """The finite-element eigen solve has converged (Hermite cubics: h^4) and gives the known figures for
    a point camera (air 0.2265 Hz, water 0.1797 Hz); the camera's 5 mm offset and rotary inertia lower it
    by 0.7 % (air) and 0.4 % (water), the rod's rotary inertia by 0.06 %."""
    vib = DATA["vibration_reference"][medium]
    for variant in ("rigid_camera", "point_camera", "point_camera_rayleigh"):
        by_n = list(vib[variant]["first_by_n_elements"].values())
        assert max(by_n) - min(by_n) < 1e-7 * by_n[-1]
    point = vib["point_camera"]["first_frequency_hz"]
    # air's own added mass (C_a rho_air A, 0.1 % of the rod's mass) takes 0.03 % off the 0.22647 Hz in vacuum
    assert point == pytest.approx({"air": 0.2265, "water": 0.1797}[medium], abs=1.5e-4)
    assert 0.990 < vib["rigid_camera"]["first_frequency_hz"] / point < 0.997
    assert 0.999 < vib["point_camera_rayleigh"]["first_frequency_hz"] / point < 1.0


def test_water_adds_mass() -> None:
    """The added mass C_a rho_w A (about as much as the rod's own) lowers the frequency by ~21 %."""
    ref = DATA["vibration_reference"]
    ratio = (
        ref["water"]["point_camera"]["first_frequency_hz"] / ref["air"]["point_camera"]["first_frequency_hz"]
    )
    assert 0.78 < ratio < 0.80


@pytest.mark.parametrize("medium", ["air", "water"])
def test_elastica_vibration_agrees_with_the_beam(medium: str) -> None:
    """Elastica's free vibration (camera as a point mass) converges at first order to within 0.5 % below
    the Euler–Bernoulli beam with the same camera and the rod's rotary inertia: the Cosserat rod also
    shears, which lowers the frequency."""
    entry = CASES[f"vibration_{medium}"]
    freqs = [r["frequency_hz"] for r in entry["runs"]]
    assert freqs[0] > freqs[1] > freqs[2]
    ex = entry["extrapolated"]
    assert 0.8 < ex["observed_order"] < 1.3
    assert ex["error_of_n200_hz"] < 0.005 * ex["frequency_hz"]
    eb = DATA["vibration_reference"][medium]["point_camera_rayleigh"]["first_frequency_hz"]
    assert 0.995 * eb < ex["frequency_hz"] < eb
