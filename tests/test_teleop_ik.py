"""Damped least-squares IK on the PCC model: reachable targets within 1 mm, the boundary otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.teleop.ik import solve_ik, tip_position
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot

SPEC = load_robot("ursula")


def _within_limits(limb, configs) -> bool:
    return all(
        abs(c.bend) <= s.bend_max + 1e-12
        and abs(c.plane) <= s.plane_max + 1e-12
        and s.length_min - 1e-12 <= c.length <= s.length_max + 1e-12
        for c, s in zip(configs, limb.segments, strict=True)
    )


def _random_configs(limb, rng):
    return [
        PccConfig(rng.uniform(-2.5, 2.5), rng.uniform(-3.0, 3.0), rng.uniform(s.length_min, s.length_max))
        for s in limb.segments
    ]


@pytest.mark.parametrize("limb_name", ["palpation", "camera"], ids=["two-segment", "one-segment"])
def test_reachable_targets_within_1mm(limb_name) -> None:
    limb = SPEC.limb(limb_name)
    rng = np.random.default_rng(1)
    straight = [PccConfig(0.0, 0.0, s.length) for s in limb.segments]
    errors = []
    for _ in range(25):
        target = tip_position(_random_configs(limb, rng))
        res = solve_ik(limb, target, straight, max_iter=300, restarts=8)
        assert _within_limits(limb, res.configs)
        errors.append(np.linalg.norm(tip_position(res.configs) - target))
    assert max(errors) < 1e-3


def test_unreachable_target_stops_at_the_workspace_boundary() -> None:
    limb = SPEC.limb("palpation")
    straight = [PccConfig(0.0, 0.0, s.length) for s in limb.segments]
    res = solve_ik(limb, [0.0, 0.0, 1.0], straight)  # 1 m straight ahead; the arm is at most 0.6 m long
    assert not res.converged
    np.testing.assert_allclose(tip_position(res.configs), [0.0, 0.0, 0.6], atol=1e-6)
    assert res.error == pytest.approx(0.4, abs=1e-6)


def test_unreachable_sideways_target_is_no_worse_than_sampled_workspace() -> None:
    limb = SPEC.limb("palpation")
    rng = np.random.default_rng(2)
    target = np.array([0.9, 0.3, 0.2])
    res = solve_ik(limb, target, [PccConfig(0.0, 0.0, 0.3)] * 2, max_iter=300, restarts=8)
    assert _within_limits(limb, res.configs) and np.isfinite(res.error)
    sampled = min(np.linalg.norm(tip_position(_random_configs(limb, rng)) - target) for _ in range(3000))
    assert res.error <= sampled + 1e-3  # on the boundary nearest the target, not short of it


def test_compiled_tip_equals_limb_transform() -> None:
    """The solver's written-out tip position is pccbullet.urdf_gen.pcc.limb_transform's, also near bend = 0 (the
    series branch of sinc) and at full bend."""
    from pccbullet.teleop.ik import _tip

    rng = np.random.default_rng(3)
    out = np.empty(3)
    bends = [0.0, 1e-9, -5e-5, 1.5e-4, np.pi, -2.9]
    for k in range(200):
        segments = 1 + k % 3
        x = np.column_stack(
            [
                [bends[(k + i) % len(bends)] if k < 60 else rng.uniform(-3.0, 3.0) for i in range(segments)],
                rng.uniform(-3.0, 3.0, segments),
                rng.uniform(0.1, 0.4, segments),
            ]
        ).ravel()
        _tip(x, out)
        expected = tip_position([PccConfig(*row) for row in x.reshape(-1, 3)])
        np.testing.assert_allclose(out, expected, rtol=0.0, atol=1e-15)


def test_one_iteration_moves_towards_the_target_and_reports_it() -> None:
    limb = SPEC.limb("palpation")
    start = [PccConfig(0.3, 0.2, 0.3), PccConfig(-0.2, 0.1, 0.3)]
    target = np.array([0.1, 0.05, 0.5])
    before = float(np.linalg.norm(tip_position(start) - target))
    res = solve_ik(limb, target, start, max_iter=1)
    assert res.iterations == 1 and not res.converged
    assert res.error == pytest.approx(float(np.linalg.norm(tip_position(res.configs) - target)), abs=1e-12)
    assert res.error < before


def test_bad_target_shape_and_segment_count_are_named() -> None:
    limb = SPEC.limb("palpation")
    straight = [PccConfig(0.0, 0.0, s.length) for s in limb.segments]
    with pytest.raises(ValueError, match=r"target of shape \(2,\)"):
        solve_ik(limb, [0.1, 0.2], straight)
    with pytest.raises(ValueError, match="1 initial configurations for a limb of 2 segments"):
        solve_ik(limb, [0.1, 0.2, 0.3], straight[:1])
    with pytest.raises(ValueError, match=r"damping = 0\.0 m, max_step = 0\.2 are invalid; allowed: both > 0"):
        solve_ik(limb, [0.1, 0.2, 0.3], straight, damping=0.0)


def _reference_command(limb, command, offset, target, iters, max_step, max_turn):
    """What OperatorMapping.update did on configurations before the compiled command step."""
    from pccbullet.teleop.ik import clamp_config
    from pccbullet.teleop.mapping import apply_offset
    from pccbullet.urdf_gen.pcc_fit import add_offset, canonical_limb, continue_limb

    model = apply_offset(command, offset)
    res = solve_ik(limb, target, model, max_iter=iters, max_step=max_step)
    o = np.zeros((len(limb.segments), 3)) if offset is None else np.asarray(offset)
    wanted = [add_offset(c, -d) for c, d in zip(canonical_limb(res.configs), o, strict=True)]
    written = continue_limb(wanted, command, max_turn)
    return [clamp_config(c, s) for c, s in zip(written, limb.segments, strict=True)], res.error


@pytest.mark.parametrize("limb_name", ["grasper", "camera"])
def test_the_compiled_command_step_is_the_configuration_path(limb_name) -> None:
    """Seeded, bounded: 400 ticks of random commands (negative bends, planes near +-pi and 0 bends
    among them), offsets (or none), targets, iterations, step and turn limits: the compiled step
    (pccbullet.teleop.ik_command) gives the configurations and IK error of the Python path."""
    from pccbullet.teleop.ik import DAMPING, TOL, limits
    from pccbullet.teleop.ik_command import command_step

    limb = SPEC.limb(limb_name)
    lo, hi = limits(limb)
    rng = np.random.default_rng(21)
    worst = 0.0
    for k in range(400):
        command = _random_configs(limb, rng)
        if k % 7 == 0:
            command[0] = PccConfig(0.0, command[0].plane, command[0].length)  # straight: plane undefined
        if k % 5 == 0:
            command[-1] = PccConfig(command[-1].bend, np.pi * (1 if k % 2 else -1), command[-1].length)
        command = [
            PccConfig(*np.clip([c.bend, c.plane, c.length], lo[3 * i : 3 * i + 3], hi[3 * i : 3 * i + 3]))
            for i, c in enumerate(command)
        ]
        offset = None if k % 4 == 0 else rng.normal(0, 0.3, (len(limb.segments), 3)) * [1, 1, 0.02]
        target = tip_position(_random_configs(limb, rng)) + rng.normal(0, 0.05, 3)
        iters, max_step, max_turn = int(rng.integers(1, 4)), float(rng.choice([1e-3, 0.2])), 1e-3
        expected, error = _reference_command(limb, command, offset, target, iters, max_step, max_turn)
        now = np.array([(c.bend, c.plane, c.length) for c in command])
        off = np.zeros_like(now) if offset is None else np.ascontiguousarray(offset)
        out = np.empty_like(now)
        e = command_step(
            now, off, offset is not None, target, lo, hi, iters, TOL, DAMPING, max_step, max_turn, out
        )
        worst = max(worst, abs(e - error))
        worst = max(
            worst, float(np.abs(np.array([(c.bend, c.plane, c.length) for c in expected]) - out).max())
        )
    # compiled sin, cos, atan2 and hypot differ from libm's in the last bit at times, which up to three
    # IK iterations carry to ~3e-10 here
    assert worst < 1e-8
