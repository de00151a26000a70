"""PCC fitted through segment end points, and offsets on the bend vector (pccbullet.urdf_gen.pcc_fit)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.urdf_gen.pcc import PccConfig, arc_transform, limb_transform
from pccbullet.urdf_gen.pcc_fit import add_offset, arc_through, config_offset, pcc_from_points


def _ends(configs: list[PccConfig]) -> np.ndarray:
    T, out = np.eye(4), []
    for c in configs:
        T = T @ arc_transform(c.bend, c.plane, c.length)
        out.append(T[:3, 3])
    return np.array(out)


def test_fit_recovers_pcc_limbs_exactly() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        configs = [
            PccConfig(rng.uniform(1e-3, 3.0), rng.uniform(-math.pi + 1e-3, math.pi), rng.uniform(0.1, 0.4))
            for _ in range(rng.integers(1, 4))
        ]
        fit = pcc_from_points(_ends(configs))
        for c, f in zip(configs, fit, strict=True):
            assert f.bend == pytest.approx(c.bend, abs=1e-9)
            assert f.length == pytest.approx(c.length, abs=1e-12)
            assert math.remainder(f.plane - c.plane, 2 * math.pi) == pytest.approx(0.0, abs=1e-9)


def test_fit_passes_through_every_measured_end_point() -> None:
    """A shape that is not PCC (random points ahead of the base): each arc ends on its point."""
    rng = np.random.default_rng(7)
    for _ in range(100):
        ends = np.cumsum(rng.normal([0, 0, 0.25], 0.08, size=(3, 3)), axis=0)
        fit = pcc_from_points(ends)
        np.testing.assert_allclose(_ends(fit), ends, atol=1e-12)
        np.testing.assert_allclose(limb_transform(fit)[:3, 3], ends[-1], atol=1e-12)


def test_straight_and_hairpin_arcs() -> None:
    assert arc_through(np.array([0.0, 0.0, 0.3])) == PccConfig(0.0, 0.0, 0.3)
    # end point beside the base, straight back: a half circle of diameter 0.2 (bend pi, length pi/10)
    half = arc_through(np.array([0.2, 0.0, 0.0]))
    assert half.bend == pytest.approx(math.pi)
    assert half.length == pytest.approx(0.1 * math.pi)


def test_offsets_on_the_bend_vector_add_back_to_the_same_arc() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        a = PccConfig(rng.uniform(-3, 3), rng.uniform(-6, 6), rng.uniform(0.2, 0.3))
        b = PccConfig(rng.uniform(-3, 3), rng.uniform(-6, 6), rng.uniform(0.2, 0.3))
        c = add_offset(b, config_offset([a], [b])[0])
        Tc, Ta = arc_transform(c.bend, c.plane, c.length), arc_transform(a.bend, a.plane, a.length)
        # same end point and tangent; (-b, phi) and (b, phi + pi) differ by a half turn about the tangent
        np.testing.assert_allclose(Tc[:3, 2:], Ta[:3, 2:], atol=1e-12)
        if (a.bend < 0) == (b.bend < 0):
            np.testing.assert_allclose(Tc, Ta, atol=1e-12)
        assert (c.bend < 0) == (b.bend < 0) or c.bend == 0.0


def test_offset_is_continuous_through_straight() -> None:
    """Near bend = 0 the plane is undefined: a small bend-vector offset gives a small change of shape,
    where a component-wise (bend, plane) offset would turn the arc by pi."""
    tiny_pos, tiny_neg = PccConfig(1e-6, 0.0, 0.3), PccConfig(-1e-6, 0.0, 0.3)
    off = config_offset([tiny_neg], [tiny_pos])[0]
    np.testing.assert_allclose(off, [-2e-6, 0.0, 0.0], atol=1e-18)
    moved = add_offset(PccConfig(0.5, 1.0, 0.3), off)
    assert moved.bend == pytest.approx(0.5, abs=3e-6)
    assert moved.plane == pytest.approx(1.0, abs=1e-5)
    # a negative bend keeps its sign and plane branch
    neg = add_offset(PccConfig(-0.4, 0.2, 0.3), [0.0, 0.0, 0.0])
    assert neg.bend == pytest.approx(-0.4) and neg.plane == pytest.approx(0.2)


def test_canonical_limb_keeps_every_segment_end_and_has_no_negative_bend() -> None:
    from pccbullet.urdf_gen.pcc_fit import canonical_limb

    rng = np.random.default_rng(5)
    for _ in range(300):
        configs = [PccConfig(rng.uniform(-3, 3), rng.uniform(-7, 7), rng.uniform(0.1, 0.3)) for _ in range(3)]
        canon = canonical_limb(configs)
        assert all(c.bend >= 0 and -math.pi <= c.plane <= math.pi for c in canon)
        for k in range(1, 4):  # every segment end in place with its tangent (frames may differ by a
            # half turn about the tangent after the last flipped segment: no later plane takes it up)
            np.testing.assert_allclose(
                limb_transform(canon[:k])[:3, 2:], limb_transform(configs[:k])[:3, 2:], atol=1e-12
            )


def test_continue_limb_turns_planes_at_a_bounded_rate_and_keeps_the_shape_when_it_can() -> None:
    """A bend vector passing through zero: the written plane never jumps; the bend changes sign."""
    from pccbullet.urdf_gen.pcc_fit import canonical_limb, continue_limb

    prev = [PccConfig(0.3, 0.0, 0.3), PccConfig(0.2, 0.1, 0.3)]
    for u in np.linspace(0.3, -0.3, 61):  # segment 1's bend vector moves through zero along x
        wanted = canonical_limb([PccConfig(float(u), 0.0, 0.3), PccConfig(0.2, 0.1, 0.3)])
        out = continue_limb(wanted, prev, max_turn=0.01)
        assert abs(out[0].plane - prev[0].plane) <= 0.01 + 1e-12
        assert abs(out[1].plane - prev[1].plane) <= 0.01 + 1e-12
        # in the plane it stays, the written limb is the wanted one exactly
        np.testing.assert_allclose(limb_transform(out), limb_transform(wanted), atol=1e-12)
        prev = out
    assert prev[0].bend == pytest.approx(-0.3) and prev[0].plane == pytest.approx(0.0)
