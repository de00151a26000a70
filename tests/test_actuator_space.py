"""Actuator-space layer: PCC <-> routing lengths for tendons and chambers at arbitrary angles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError, PccBulletError
from pccbullet.urdf_gen.actuator_space import (
    ActuatorLayout,
    hydraulic_arm_chambers,
    lengths_from_pcc,
    lengths_jacobian,
    pcc_from_lengths,
    three_actuator_chambers,
    ursula_tendons,
)

LAYOUTS = {
    "seed004_3x120": three_actuator_chambers(0.024),
    "seed000_3x120": hydraulic_arm_chambers(0.03),
    "ursula_4x90": ursula_tendons(0.02),
    "irregular_5": ActuatorLayout((0.1, 1.3, 2.0, 3.9, 5.5), 0.015),
}


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def _random_configs(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bend = rng.uniform(1e-3, math.radians(170.0), n)
    plane = rng.uniform(-math.pi, math.pi, n)
    length = rng.uniform(0.05, 0.5, n)
    return np.column_stack([bend, plane, length])


@pytest.mark.parametrize("name", list(LAYOUTS), ids=list(LAYOUTS))
def test_round_trip_pcc_lengths_pcc(name: str) -> None:
    layout = LAYOUTS[name]
    for bend, plane, length in _random_configs(seed=1, n=200):
        lengths = lengths_from_pcc(layout, bend, plane, length)
        back = pcc_from_lengths(layout, lengths)
        assert back.bend == pytest.approx(bend, abs=1e-9)
        assert _wrap(back.plane - plane) == pytest.approx(0.0, abs=1e-9 / max(bend, 1e-3) * 10)
        assert back.length == pytest.approx(length, abs=1e-12)


@pytest.mark.parametrize("name", list(LAYOUTS), ids=list(LAYOUTS))
def test_round_trip_lengths_pcc_lengths(name: str) -> None:
    layout = LAYOUTS[name]
    for bend, plane, length in _random_configs(seed=2, n=100):
        lengths = lengths_from_pcc(layout, bend, plane, length)
        again = lengths_from_pcc(layout, *pcc_from_lengths(layout, lengths))
        np.testing.assert_allclose(again, lengths, atol=1e-12)


@pytest.mark.parametrize("name", list(LAYOUTS), ids=list(LAYOUTS))
def test_jacobian_matches_central_differences(name: str) -> None:
    layout = LAYOUTS[name]
    h = 1e-6
    for config in _random_configs(seed=3, n=50):
        J = lengths_jacobian(layout, *config)
        J_fd = np.empty_like(J)
        for j in range(3):
            step = np.zeros(3)
            step[j] = h
            J_fd[:, j] = (
                lengths_from_pcc(layout, *(config + step)) - lengths_from_pcc(layout, *(config - step))
            ) / (2 * h)
        # central differences of a trigonometric function: truncation error ~ h^2, rounding ~ eps/h
        assert np.linalg.norm(J - J_fd) <= 1e-6 * np.linalg.norm(J)


@pytest.mark.parametrize("name", list(LAYOUTS), ids=list(LAYOUTS))
def test_zero_bend_has_no_nan(name: str) -> None:
    layout = LAYOUTS[name]
    lengths = lengths_from_pcc(layout, 0.0, 1.234, 0.3)
    np.testing.assert_allclose(lengths, 0.3, atol=0)
    back = pcc_from_lengths(layout, lengths)
    assert back.bend == pytest.approx(0.0, abs=1e-14)
    assert math.isfinite(back.plane) and math.isfinite(back.length)
    assert back.length == pytest.approx(0.3, abs=1e-15)
    J = lengths_jacobian(layout, 0.0, 1.234, 0.3)
    assert np.all(np.isfinite(J))
    np.testing.assert_allclose(J[:, 1], 0.0)


def test_exactly_equal_lengths_give_plane_zero() -> None:
    back = pcc_from_lengths(ursula_tendons(0.02), np.full(4, 0.25))
    assert (back.bend, back.plane) == (0.0, 0.0)


def test_sign_convention_routing_on_bend_side_is_shortest() -> None:
    layout = ursula_tendons(0.02)
    lengths = lengths_from_pcc(layout, 1.0, math.pi / 2, 0.3)  # bend towards +y: tendon at 90 deg
    assert int(np.argmin(lengths)) == 1
    assert int(np.argmax(lengths)) == 3
    assert lengths[1] == pytest.approx(0.3 - 1.0 * 0.02)


def test_least_squares_for_inconsistent_four_tendons() -> None:
    layout = ursula_tendons(0.02)
    exact = lengths_from_pcc(layout, 0.8, 0.3, 0.25)
    noisy = exact + np.array([1e-4, -2e-4, 0.5e-4, 1e-4])
    fit = pcc_from_lengths(layout, noisy)
    residual = noisy - lengths_from_pcc(layout, *fit)
    A = np.column_stack([np.ones(4), -0.02 * np.cos(layout.angles_rad), -0.02 * np.sin(layout.angles_rad)])
    np.testing.assert_allclose(A.T @ residual, 0.0, atol=1e-15)  # normal equations of the fit
    assert fit.length == pytest.approx(np.mean(noisy), abs=1e-15)  # symmetric layout: mean length


@pytest.mark.parametrize(
    ("angles", "radius", "match"),
    [
        ((0.0, 1.0), 0.01, r"at least 3 routings.*got 2"),
        ((0.0, math.pi, 0.0), 0.01, r"do not determine the bending plane"),
        ((0.0, 2.0, 4.0), -0.01, r"radius_m must be a finite number > 0; got -0.01"),
    ],
    ids=["two_routings", "collinear", "negative_radius"],
)
def test_bad_layouts_raise(angles: tuple[float, ...], radius: float, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        ActuatorLayout(angles, radius)


def test_wrong_number_of_lengths_raises() -> None:
    with pytest.raises(PccBulletError, match=r"lengths must be 3 finite numbers"):
        pcc_from_lengths(three_actuator_chambers(0.024), np.array([0.2, 0.2]))
