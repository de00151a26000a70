"""Seed 004: three-actuator spatial soft robot, maps, Jacobian, workspace, URDF."""

from __future__ import annotations

import math
from pathlib import Path

import mujoco
import numpy as np
import pybullet as pb
import pytest
import yourdfpy

from pccbullet.core.errors import SpecError
from pccbullet.urdf_gen.actuator_space import lengths_from_pcc, pcc_from_lengths
from pccbullet.urdf_gen.spec_loader import robots_dir
from pccbullet.urdf_gen.three_actuator import (
    Shape,
    layout,
    lengths_from_shape,
    load_bundled_three_actuator,
    load_three_actuator,
    sample_workspace,
    serial_frames,
    serial_jacobian,
    shape_from_lengths,
    tip_jacobian,
    tip_transform,
    urdf_joint_positions,
    write_three_actuator_urdf,
)

SPEC = load_bundled_three_actuator("seed004_spatial")
D = SPEC.distance_m


def _random_lengths(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(SPEC.length_min_m, SPEC.length_max_m, size=(n, 3))


def _random_shapes(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [rng.uniform(0.05, 3.0, n), rng.uniform(-math.pi, math.pi, n), rng.uniform(0.1, 0.3, n)]
    )  # (bend, plane, length)


def test_bundled_spec_matches_paper() -> None:
    assert SPEC.initial_length_m == pytest.approx(0.2)
    assert (SPEC.length_min_m, SPEC.length_max_m) == pytest.approx((0.1, 0.3))  # eq. (34)
    assert D / SPEC.initial_length_m == pytest.approx(0.12)  # Fig. 9b


def test_forward_then_inverse_returns_lengths() -> None:
    worst = 0.0
    for lengths in _random_lengths(seed=4, n=500):
        back = lengths_from_shape(shape_from_lengths(lengths, D), D)
        worst = max(worst, float(np.max(np.abs(back - lengths))))
    assert worst <= 1e-9


def test_inverse_then_forward_returns_shape() -> None:
    for bend, plane, length in _random_shapes(seed=5, n=200):
        shape = shape_from_lengths(lengths_from_shape(Shape(length, plane, bend / length), D), D)
        assert shape.bend == pytest.approx(bend, abs=1e-9)
        assert shape.length == pytest.approx(length, abs=1e-12)
        assert math.remainder(shape.plane - plane, 2 * math.pi) == pytest.approx(0.0, abs=1e-9)


def test_eq16_literal_form_agrees() -> None:
    for l1, l2, l3 in _random_lengths(seed=6, n=50):
        literal = 2 * math.sqrt(l1**2 + l2**2 + l3**2 - l1 * l2 - l1 * l3 - l2 * l3) / (D * (l1 + l2 + l3))
        assert shape_from_lengths(np.array([l1, l2, l3]), D).curvature == pytest.approx(literal, rel=1e-12)


def test_equal_lengths_give_zero_curvature_without_nan() -> None:
    shape = shape_from_lengths(np.full(3, 0.2), D)
    assert (shape.curvature, shape.plane, shape.length) == (0.0, 0.0, pytest.approx(0.2))
    assert shape.radius == math.inf
    T = tip_transform(shape.bend, shape.plane, shape.length)
    np.testing.assert_allclose(
        T, np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.2], [0, 0, 0, 1.0]]), atol=1e-15
    )
    np.testing.assert_allclose(lengths_from_shape(shape, D), 0.2, atol=1e-15)


def test_agrees_with_general_actuator_layer() -> None:
    lay = layout(SPEC)
    for lengths in _random_lengths(seed=7, n=200):
        shape = shape_from_lengths(lengths, D)
        general = pcc_from_lengths(lay, lengths)
        assert general.bend == pytest.approx(shape.bend, abs=1e-10)
        assert general.length == pytest.approx(shape.length, abs=1e-12)
        assert math.remainder(general.plane - shape.plane, 2 * math.pi) == pytest.approx(0.0, abs=1e-9)
        np.testing.assert_allclose(
            lengths_from_pcc(lay, shape.bend, shape.plane, shape.length),
            lengths_from_shape(shape, D),
            atol=1e-12,
        )


def test_single_actuator_pressurised_bends_away_from_it() -> None:
    # Only actuator 1 (at 90 deg) longer: the robot bends towards -y, i.e. plane = -90 deg.
    shape = shape_from_lengths(np.array([0.25, 0.2, 0.2]), D)
    assert shape.plane == pytest.approx(-math.pi / 2)
    assert tip_transform(shape.bend, shape.plane, shape.length)[1, 3] < 0


def test_serial_equivalent_reproduces_eq17() -> None:
    for bend, plane, length in _random_shapes(seed=8, n=100):
        radius = length / bend
        np.testing.assert_allclose(
            serial_frames(plane, bend, radius)[-1], tip_transform(bend, plane, length), atol=1e-12
        )


def _tip_from_paper_params(q: np.ndarray) -> np.ndarray:
    plane, bend, radius = q
    return tip_transform(bend, plane, radius * bend)


def test_tip_jacobian_matches_central_differences() -> None:
    h = 1e-6
    for bend, plane, length in _random_shapes(seed=9, n=100):
        q = np.array([plane, bend, length / bend])  # the paper's (phi, theta, r)
        J = tip_jacobian(*q)
        J_fd = np.zeros((6, 3))
        for j in range(3):
            step = np.zeros(3)
            step[j] = h
            Tp, Tm = _tip_from_paper_params(q + step), _tip_from_paper_params(q - step)
            J_fd[:3, j] = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
            W = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h) @ _tip_from_paper_params(q)[:3, :3].T  # skew(omega)
            J_fd[3:, j] = [W[2, 1], W[0, 2], W[1, 0]]
        assert np.linalg.norm(J - J_fd) <= 1e-6 * np.linalg.norm(J)


def test_serial_jacobian_eq31_equals_eq30() -> None:
    for bend, plane, length in _random_shapes(seed=10, n=100):
        radius = length / bend
        np.testing.assert_allclose(
            serial_jacobian(plane, bend, radius), tip_jacobian(plane, bend, radius), atol=1e-12
        )


def test_workspace_is_seeded_and_respects_limits() -> None:
    a = sample_workspace(SPEC, 2000, seed=42)
    b = sample_workspace(SPEC, 2000, seed=42)
    np.testing.assert_array_equal(a.tips, b.tips)
    assert np.all((a.lengths >= SPEC.length_min_m) & (a.lengths < SPEC.length_max_m))
    np.testing.assert_allclose(a.length, a.lengths.mean(axis=1))
    assert np.all(np.isfinite(a.tips))
    # d/l = 0.12: the robot can curl below its base plane z = 0 (paper, Section 5)
    assert a.tips[:, 2].min() < 0.0
    assert a.bend.max() <= 2 * (SPEC.length_max_m - SPEC.length_min_m) / (3 * D)


# ------------------------------------------------------------------------------------------- URDF


@pytest.fixture(scope="module")
def urdf_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_three_actuator_urdf(SPEC, tmp_path_factory.mktemp("seed004"))


def test_urdf_loads_in_pybullet_and_matches_pcc(urdf_path: Path) -> None:
    client = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(str(urdf_path), useFixedBase=True, physicsClientId=client)
        index = {
            pb.getJointInfo(body, j, physicsClientId=client)[1].decode(): j
            for j in range(pb.getNumJoints(body, physicsClientId=client))
        }
        for bend, plane, length in _random_shapes(seed=11, n=20):
            for name, value in urdf_joint_positions(SPEC, bend, plane, length).items():
                pb.resetJointState(body, index[name], value, physicsClientId=client)
            state = pb.getLinkState(
                body, index["tip_bend"], computeForwardKinematics=True, physicsClientId=client
            )
            T = tip_transform(bend, plane, length)
            np.testing.assert_allclose(state[4], T[:3, 3], atol=1e-6)
            np.testing.assert_allclose(
                np.reshape(pb.getMatrixFromQuaternion(state[5]), (3, 3)), T[:3, :3], atol=1e-6
            )
    finally:
        pb.disconnect(client)


def test_urdf_loads_in_yourdfpy_and_matches_pcc(urdf_path: Path) -> None:
    robot = yourdfpy.URDF.load(str(urdf_path))
    assert robot.num_actuated_joints == 2 * SPEC.n_sections + 2
    bend, plane, length = 2.5, -2.0, 0.27
    robot.update_cfg(urdf_joint_positions(SPEC, bend, plane, length))
    np.testing.assert_allclose(
        robot.get_transform("tip", "base_link"), tip_transform(bend, plane, length), atol=1e-12
    )
    assert all(link.inertial.mass > 0 for link in robot.robot.links)


def test_urdf_loads_in_mujoco(urdf_path: Path) -> None:
    model = mujoco.MjModel.from_xml_path(str(urdf_path))
    assert model.njnt == 2 * SPEC.n_sections + 2
    assert np.all(model.body_mass[1:] > 0)


# ------------------------------------------------------------------------------------------- bad TOML

GOOD = (robots_dir() / "seed004_spatial.toml").read_text()


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        (
            "mass_g = 300.0",
            "mass_g = 300.0\ncolour = 'red'",
            r"field 'colour' = 'red' is invalid; allowed: a known key",
        ),
        (
            "body_radius_mm = 35.0",
            "",
            r"field 'body_radius_mm' = None is invalid; allowed: a value \(the field is required\)",
        ),
        (
            "actuator_distance_mm = 24.0",
            "actuator_distance_mm = -24.0",
            r"field 'actuator_distance_mm' = -24\.0 is invalid; allowed: a number in \[0\.001, 100000\]",
        ),
        (
            "initial_length_mm = 200.0",
            'initial_length_mm = "200"',
            r"field 'initial_length_mm' = '200' is invalid; allowed: a number",
        ),
        (
            "length_min_mm = 100.0",
            "length_min_mm = 250.0",
            r"field 'length_min_mm' = 250\.0 is invalid; allowed: a number in \[0\.001, 200\]",
        ),
        (
            'kind = "three_actuator"',
            'kind = "pneunet"',
            r"field 'kind' = 'pneunet' is invalid; allowed: 'three_actuator'",
        ),
        (
            "n_sections = 8",
            "n_sections = 2.5",
            r"field 'n_sections' = 2\.5 is invalid; allowed: an integer in \[1, 100\]",
        ),
        (  # the name becomes the file name: a path in it was a FileNotFoundError traceback
            'name = "seed004_spatial"',
            'name = "../x"',
            r"field 'name' = '\.\./x' is invalid; allowed: letters, digits and '_'",
        ),
    ],
    ids=[
        "unknown_key",
        "missing_field",
        "negative_distance",
        "non_numeric",
        "min_above_l0",
        "wrong_kind",
        "float_sections",
        "path_in_name",
    ],
)
def test_bad_toml_raises_spec_error(tmp_path: Path, old: str, new: str, match: str) -> None:
    assert old in GOOD
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(SpecError, match=r"bad\.toml: " + match):
        load_three_actuator(path)


def test_unknown_bundled_name_raises() -> None:
    with pytest.raises(SpecError, match=r"field 'name' = 'octopus' is invalid"):
        load_bundled_three_actuator("octopus")
