"""PCC arc vs RRP chain: exact tip frames for any N, the inverse map, seed 001's equations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.urdf_gen.pcc import (
    PccConfig,
    arc_points,
    arc_transform,
    bend_from_paper_theta,
    chain_frames,
    chain_transform,
    limb_joints,
    limb_transform,
    paper_theta_from_bend,
    pcc_from_joints,
    rotation_angle,
    segment_joints,
)

SECTIONS = [1, 2, 3, 5, 10, 20, 37]


def _random_configs(seed: int, n: int) -> list[tuple[float, float, float]]:
    rng = np.random.default_rng(seed)
    return [
        (rng.uniform(-math.pi, math.pi), rng.uniform(-2 * math.pi, 2 * math.pi), rng.uniform(0.05, 0.6))
        for _ in range(n)
    ]


@pytest.mark.parametrize("sections", SECTIONS, ids=[f"N={n}" for n in SECTIONS])
def test_chain_tip_frame_equals_arc_tip_frame(sections: int) -> None:
    for bend, plane, length in _random_configs(sections, 200):
        T_arc = arc_transform(bend, plane, length)
        T_chain = chain_transform(segment_joints(bend, plane, length, sections))
        assert np.linalg.norm(T_chain[:3, 3] - T_arc[:3, 3]) < 1e-9
        assert rotation_angle(T_chain[:3, :3].T @ T_arc[:3, :3]) < 1e-9


@pytest.mark.parametrize("sections", SECTIONS, ids=[f"N={n}" for n in SECTIONS])
def test_joints_round_trip_to_pcc(sections: int) -> None:
    for bend, plane, length in _random_configs(100 + sections, 200):
        c = pcc_from_joints(segment_joints(bend, plane, length, sections))
        assert (c.bend, c.plane, c.length) == pytest.approx((bend, plane, length), abs=1e-12)


def test_section_ends_lie_on_the_arc_at_equal_arc_lengths() -> None:
    bend, plane, length, n = math.radians(90), math.radians(30), 0.6, 10
    frames = chain_frames(segment_joints(bend, plane, length, n))
    expected = arc_points(bend, plane, length, np.linspace(length / n, length, n))
    np.testing.assert_allclose(frames[:n, :3, 3], expected, atol=1e-12)


def test_seed001_eq7_to_eq9_chord_angles_and_lengths() -> None:
    """Eq. 7: chord k leaves the base tangent at (2k - 1) bend / 2N; eq. 8: its plane; eq. 9: its length."""
    bend, plane, length, n = math.radians(45), math.radians(30), 0.6, 10
    pts = np.vstack([np.zeros(3), arc_points(bend, plane, length, np.linspace(length / n, length, n))])
    d = np.diff(pts, axis=0)
    theta_k = np.arctan2(np.hypot(d[:, 0], d[:, 1]), d[:, 2])  # eq. 7
    phi_k = np.arctan2(d[:, 1], d[:, 0])  # eq. 8
    ell_k = np.linalg.norm(d, axis=1)  # eq. 9
    q = segment_joints(bend, plane, length, n)
    np.testing.assert_allclose(np.cumsum(q[1:-1:3]), theta_k, atol=1e-12)
    np.testing.assert_allclose(phi_k, plane, atol=1e-12)
    np.testing.assert_allclose(q[2:-1:3], ell_k, atol=1e-12)


def test_seed001_eq15_to_eq20_tip_position_and_orientation() -> None:
    bend, phi, length = math.radians(60), math.radians(-25), 0.3
    r = length / bend
    T = arc_transform(bend, phi, length)
    p_star = -r * math.cos(bend) + r  # eq. 15
    np.testing.assert_allclose(
        T[:3, 3], [p_star * math.cos(phi), p_star * math.sin(phi), r * math.sin(bend)], atol=1e-15
    )
    c, s, cp, sp = math.cos(bend), math.sin(bend), math.cos(phi), math.sin(phi)
    eq20 = np.array([[c * cp, -sp, s * cp], [c * sp, cp, s * sp], [-s, 0.0, c]])
    np.testing.assert_allclose(T[:3, :3], eq20, atol=1e-15)


def test_straight_limit_is_finite_and_exact() -> None:
    for bend in (0.0, 1e-14, -1e-9):
        T = arc_transform(bend, 1.0, 0.6)
        assert np.all(np.isfinite(T))
        np.testing.assert_allclose(T[:3, 3], [0.0, 0.0, 0.6], atol=1e-9)
        q = segment_joints(bend, 1.0, 0.6, 10)
        np.testing.assert_allclose(q[2:-1:3], 0.06, atol=1e-12)


def test_paper_theta_is_half_the_bend() -> None:
    bend = math.radians(90)
    assert paper_theta_from_bend(bend) == pytest.approx(math.radians(45))
    assert bend_from_paper_theta(math.radians(45)) == pytest.approx(bend)
    # the paper's theta is the angle between base z and the chord to the tip
    p = arc_transform(bend, 0.0, 0.6)[:3, 3]
    assert math.atan2(p[0], p[2]) == pytest.approx(paper_theta_from_bend(bend), abs=1e-12)


def test_two_segment_limb_composes_arcs_in_series() -> None:
    configs = [
        PccConfig(math.radians(30), math.radians(10), 0.31),
        PccConfig(math.radians(60), math.radians(30), 0.31),
    ]
    q = limb_joints(configs, [10, 10])
    T = chain_transform(q[:31]) @ chain_transform(q[31:])
    np.testing.assert_allclose(T, limb_transform(configs), atol=1e-12)
    assert T[2, 3] < 0.62


def test_bad_joint_vectors_and_section_counts_raise() -> None:
    with pytest.raises(
        ConfigurationError, match=r"joint vector of shape \(5,\) is invalid; allowed: \(3N \+ 1,\)"
    ):
        pcc_from_joints(np.zeros(5))
    with pytest.raises(ConfigurationError, match=r"sections = 0 is invalid; allowed: an integer >= 1"):
        segment_joints(0.1, 0.0, 0.3, 0)
    with pytest.raises(ConfigurationError, match=r"1 configurations given for a limb of 2 segments"):
        limb_joints([PccConfig(0, 0, 0.3)], [10, 10])
    with pytest.raises(ConfigurationError, match=r"sections = \[10, 0\] is invalid; allowed: integers >= 1"):
        limb_joints([PccConfig(0, 0, 0.3)] * 2, [10, 0])


def test_limb_joints_concatenate_the_segments() -> None:
    configs = [PccConfig(0.4, -0.2, 0.3), PccConfig(-1.1, 2.0, 0.29)]
    q = limb_joints(configs, [7, 3])
    expected = np.concatenate([segment_joints(0.4, -0.2, 0.3, 7), segment_joints(-1.1, 2.0, 0.29, 3)])
    assert q.dtype == np.float64 and q.shape == (22 + 10,)
    assert np.array_equal(q, expected)


def test_limb_transform_of_no_segment_is_the_identity_and_of_one_is_its_arc() -> None:
    assert np.array_equal(limb_transform([]), np.eye(4))
    assert np.array_equal(limb_transform([PccConfig(0.8, -0.3, 0.3)]), arc_transform(0.8, -0.3, 0.3))
    R = arc_transform(0.8, -0.3, 0.3)[:3, :3]
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-15)
    assert abs(np.linalg.det(R) - 1.0) < 1e-15
