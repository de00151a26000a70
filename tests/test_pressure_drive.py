"""The pressure drive in dynamic mode (pccbullet.sim.limb.chambers, ``drive = "chambers"``): seed 000's
water-hydraulic arm in PyBullet against closed forms, the paper (Micromachines 13:130) and the project's
Newton–Euler model (pccbullet.sim.models.newton_euler, chamber_statics, hydraulics).

Figures and the commands behind them: docs/guide/pressure.md."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet_internals import capi
from pccbullet.sim.world import World
from pccbullet.urdf_gen.spec_loader import load_robot, robots_dir

MPA = 1e6
AREA = 3.14e-4  # m^2, A_d (Table 1)
OFFSET = 0.01732  # m, r_d (hydraulic_arm.toml)
WALLS = 3 * 1.2e6 * 3.93e-4  # N, count E A_s: the chamber walls' axial rigidity (eq. 10)


def _arm_in_space(robot: str | Path, pressures: list[float], steps: int = 3000, sections: int = 10):
    """Bends (rad) and lengths (m) of the segments' arcs through their end points, and the pressures, after
    ``steps`` steps without gravity at the commanded ``pressures``."""
    with World(mode="dynamic", gravity=(0.0, 0.0, 0.0)) as world:
        handle = world.load_robot(robot, drive="chambers", sections=sections)
        chambers = handle.compliant["arm"].chambers
        assert chambers is not None
        chambers.set_pressures(pressures)
        world.step(steps)
        arcs = handle.measured_pcc("arm")
        return [a.bend for a in arcs], [a.length for a in arcs], chambers.pressures


def _bending_stiffness() -> float:
    limb = load_robot("hydraulic_arm").limbs[0]
    return limb.material.youngs_modulus * math.pi * limb.segments[0].radius_base ** 4 / 4.0


def test_a_limb_without_chambers_or_on_the_rrp_chain_is_refused() -> None:
    with World(mode="dynamic") as world, pytest.raises(ConfigurationError, match="declares no chambers"):
        world.load_robot("ursula", sections=3, drive="chambers", limbs=["grasper"])
    with World(mode="dynamic", chain="rrp") as world, pytest.raises(ConfigurationError, match="rrp chain"):
        world.load_robot("hydraulic_arm", sections=3, drive="chambers")
    with World(mode="dynamic") as world:
        chambers = world.load_robot("hydraulic_arm", sections=3, drive="chambers").compliant["arm"].chambers
        assert chambers is not None
        with pytest.raises(ConfigurationError, match=r"pressures = \[1.0\] is invalid; allowed: 6 finite"):
            chambers.set_pressures([1.0])
        with pytest.raises(ConfigurationError, match="gauge pressures >= -101325 Pa"):
            chambers.set_pressures([-2e5, 0, 0, 0, 0, 0])


def test_one_chamber_bends_its_segment_by_the_closed_form_and_stretches_it_by_the_walls() -> None:
    """Without gravity a chamber's moment ``p A r`` is constant along its segment: the arc bends by ``p A r
    L / (E I)`` and stretches by ``p A L / (count E A_s)`` (the walls' linear law, eq. 10); the other segment
    stays straight. Discretization error of the rod chain: 0.1 % in the bend."""
    p = 0.5 * MPA
    bends, lengths, pressures = _arm_in_space("hydraulic_arm", [0, 0, 0, p, 0, 0])
    assert pressures[3] == pytest.approx(p, rel=1e-4)  # the hydraulic line settled at its static map
    bend = p * AREA * OFFSET * 0.25 / _bending_stiffness()
    assert bends[1] == pytest.approx(bend, rel=0.005)
    assert lengths[1] == pytest.approx(0.25 * (1.0 + p * AREA / WALLS), rel=0.005)
    assert bends[0] < 1e-3 and lengths[0] == pytest.approx(0.25, abs=1e-3)


def test_two_chambers_at_1_mpa_bend_a_section_the_papers_165_7_degrees() -> None:
    """Seed 000 sec. 3.1: P2 = P3 = 1 MPa, P1 = 0 bend section 1 by 165.7 deg (the section's diameter was
    chosen in hydraulic_arm.toml for it); its arc, with the paper's linear wall law, 0.361 m (the paper's
    0.401 m needs a softer law, see hydraulic_arm.toml). Measured: 165.95 deg and 0.365 m, 1.1 % above the
    closed form (the arc through the end points of 10 chords at 16.5 deg a node: 0.35 % of it)."""
    bends, lengths, _ = _arm_in_space("hydraulic_arm", [0, MPA, MPA, 0, 0, 0])
    assert math.degrees(bends[0]) == pytest.approx(165.7, abs=1.0)
    assert lengths[0] == pytest.approx(0.25 * (1.0 + 2 * MPA * AREA / WALLS), rel=0.02)


def test_a_line_without_a_model_is_a_first_order_lag_within_its_limits(tmp_path: Path) -> None:
    """A robot file without ``[hydraulic_drive]`` gets the lag of its ``[pressure_drive]`` table: after
    ``t`` the pressure is ``p* (1 - exp(-t / tau))``, clipped at ``max_pressure_kpa``."""
    text = (robots_dir() / "hydraulic_arm.toml").read_text()
    text = text[: text.index("\n[hydraulic_drive]") + 1]
    text += "[pressure_drive]\ntime_constant_ms = 100\nmax_pressure_kpa = 400\n"
    path = tmp_path / "lag_arm.toml"
    path.write_text(text)
    with World(mode="dynamic", gravity=(0.0, 0.0, 0.0)) as world:
        handle = world.load_robot(path, drive="chambers", sections=4)
        chambers = handle.compliant["arm"].chambers
        assert chambers is not None and chambers.hydraulic is None
        chambers.set_pressures([3e5, 0, 0, 0, 0, 9e5])
        world.step(100)
        expected = (1.0 - math.exp(-0.1 / 0.1)) * np.array([3e5, 0, 0, 0, 0, 4e5])
        assert np.allclose(chambers.pressures, expected, rtol=1e-12, atol=1e-9)
        assert chambers.commanded[5] == 9e5


@pytest.mark.skipif(not sys.platform.startswith("linux") or capi.c_api() is None, reason="no C API")
def test_the_c_api_and_the_python_functions_give_the_same_trajectory(monkeypatch: pytest.MonkeyPatch) -> None:
    def run() -> tuple[bool, np.ndarray]:
        with World(mode="dynamic", medium="water") as world:
            handle = world.load_robot("hydraulic_arm", sections=4, drive="chambers")
            limb = handle.compliant["arm"]
            assert limb.chambers is not None
            limb.chambers.set_motor_torques([0, 1.5, 0, 0, 0.5, 1.0])
            world.step(300)
            q, qd = limb.read_state()
            return limb.direct_io, np.concatenate([q, qd])

    direct, fast = run()
    monkeypatch.setenv(capi.ENV_SWITCH, "0")
    python, slow = run()
    assert direct and not python
    assert np.abs(fast).max() > 0.1 and np.array_equal(fast, slow)


FIG11_TORQUES = (0.5, 1.0, 1.5, 2.0)  # N m, seed 000 sec. 4.2


@pytest.mark.parametrize(
    ("motor", "sections", "tolerance"),
    [(3, 10, 4e-3), (0, 20, 5e-3)],
    ids=["fig11a_section2", "fig11b_section1"],
)
def test_fig11_steady_poses_match_the_newton_euler_statics(
    motor: int, sections: int, tolerance: float
) -> None:
    """Seed 000 Fig. 11: actuator 4 (a) or 1 (b) at 0.5 ... 2 N m, the arm hanging in air; the segments'
    end points in PyBullet (each torque held 4 s) against the Newton–Euler statics of the same arm with the
    walls' linear law and 20 pieces a section. Measured largest distance: 2.6 mm (a, 10 sections), 3.0 mm
    (b, 20 sections; 16 mm with 10, where section 1 curls to 225 deg at 2 N m: the rod's discretization)."""
    from pccbullet.sim.models.chamber_statics import steady_poses
    from pccbullet.sim.models.hydraulic_world import bullet_steady_tips

    torques = np.zeros((len(FIG11_TORQUES), 6))
    torques[:, motor] = FIG11_TORQUES
    tips = bullet_steady_tips(torques, sections=sections)
    statics = np.array([s.segment_tips for s in steady_poses(torques, pieces=20, law="linear")])
    error = np.linalg.norm(tips - statics, axis=2)
    assert np.abs(tips[-1] - tips[0]).max() > 0.05  # the torques moved the arm
    assert error.max() < tolerance


@pytest.mark.parametrize(("profile", "bound"), [("step_uni", 1.0), ("step_bi", 1.5)])
def test_step_responses_settle_within_the_papers_bounds(profile: str, bound: float) -> None:
    """Seed 000 sec. 3.2.1-3.2.2: 1.5 N m steps (t = 2 s, 6 s) settle within 1 s (same direction) and 1.5 s
    (opposite directions), the 5 % band of the section tips (measured, 20 sections: 0.61 / 0.85 s uni,
    0.59 / 0.76 s bi); the steady tips after each step match the
    Newton–Euler statics (linear walls, 20 pieces a section), 20 sections a segment: 4.2 mm apart at most
    (31 mm with 10 sections: section 1 bends by 149 deg, section 2 by 175 deg). The Newton–Euler run
    (:func:`~pccbullet.sim.models.hydraulics.simulate_hydraulic_arm`, planar walls) settles in 0.96 / 0.84 s
    (uni), 0.55 / 0.76 s (bi)."""
    from pccbullet.sim.models.chamber_statics import steady_poses
    from pccbullet.sim.models.hydraulic_world import bullet_hydraulic_arm
    from pccbullet.sim.models.hydraulics import motor_torque_profile, settling_time

    run = bullet_hydraulic_arm(profile, 10.0, sections=20)
    times = [settling_time(run["t"], run["tips"], t0, t0 + 4.0) for t0 in (2.0, 6.0)]
    statics = steady_poses([motor_torque_profile(profile, t) for t in (5.0, 9.0)], pieces=20, law="linear")
    ends = [run["tips"][np.argmin(np.abs(run["t"] - t))] for t in (6.0, 10.0)]
    error = max(
        float(np.linalg.norm(e - s.segment_tips, axis=1).max()) for e, s in zip(ends, statics, strict=True)
    )
    assert 0.2 < min(times) and max(times) <= bound
    assert error < 6e-3


def test_an_experiments_channels_drive_the_chambers_in_dynamic_mode(tmp_path: Path) -> None:
    """``hydraulic_step_dynamic`` (drive = "chambers"): the channels' motor torques reach the chambers
    through the same hydraulic line model as the model mode (pressures equal to the line's own run, to
    rounding), and the arm comes to the Newton–Euler statics' pose (section 2 at 1.5 N m: 0.9 mm)."""
    import tomllib

    from pccbullet.sim.experiments.runner import run_experiment
    from pccbullet.sim.experiments.spec import experiment_from_table, experiments_dir
    from pccbullet.sim.export.rigid import limb_base_pose
    from pccbullet.sim.models.chamber_statics import steady_poses
    from pccbullet.sim.models.hydraulics import HydraulicDrive, load_hydraulic_drive

    path = experiments_dir() / "hydraulic_step_dynamic.toml"
    table = tomllib.loads(path.read_text())
    table["duration_s"] = 4.0
    run = run_experiment(experiment_from_table(table, path, base_dir=path.parent), tmp_path, progress=False)
    cols = run.columns
    line = HydraulicDrive(load_hydraulic_drive(load_robot("hydraulic_arm")), 6)
    expected = []
    for k in range(4000):
        if k % 10 == 0:
            expected.append(line.chamber_pressure[3])
        line.step(np.array([0, 0, 0, 1.5 if (k + 1) * 1e-3 >= 2.0 else 0.0, 0, 0]), 1e-3)  # as the runner
    expected.append(line.chamber_pressure[3])
    assert np.allclose(cols["arm_s2_c0_pressure_pa"], expected, rtol=1e-9, atol=1e-6)
    assert cols["arm_s1_c0_pressure_pa"].max() == 0.0
    torques = np.zeros(6)
    torques[3] = 1.5
    tips = steady_poses([torques], pieces=20, law="linear")[0].segment_tips
    world_tip = np.array([cols[f"arm_s2_{a}_m"][-1] for a in "xyz"])
    T = limb_base_pose(load_robot("hydraulic_arm"), "arm")
    assert np.linalg.norm(T[:3, :3] @ tips[1] + T[:3, 3] - world_tip) < 3e-3


def test_an_experiment_with_drive_chambers_is_checked_when_it_is_read() -> None:
    from pccbullet.core.errors import SpecError
    from pccbullet.sim.experiments.spec import experiment_from_table

    base = {"robot": "hydraulic_arm", "mode": "dynamic", "drive": "chambers", "duration_s": 1.0}
    step = {"kind": "step", "t0_s": 0.5, "after": 1.0}
    spec = experiment_from_table({**base, "channels": {"motor_6": step}}, "x.toml", base_dir=Path("."))
    assert spec.drive == "chambers"
    with pytest.raises(SpecError, match=r"channels.pressure_1.*a channel out of motor_1 \.\.\. motor_6"):
        experiment_from_table({**base, "channels": {"pressure_1": step}}, "x.toml", base_dir=Path("."))
    with pytest.raises(SpecError, match="'joints' unless mode = 'dynamic'"):
        experiment_from_table({**base, "mode": "kinematic"}, "x.toml", base_dir=Path("."))
    with pytest.raises(SpecError, match="limbs declare chambers"):
        experiment_from_table({**base, "robot": "ursula"}, "x.toml", base_dir=Path("."))


def test_the_mjcf_export_writes_the_chambers_as_actuators_that_bend_by_the_closed_form(
    tmp_path: Path,
) -> None:
    """``pccbullet mjcf hydraulic_arm``: six chamber actuators (``nu = 6``, the summary counts them); in
    MuJoCo, without gravity, 0.5 MPa in section 2's chamber 0 bends section 2 by ``p A r L / (E I)``.
    Measured: 82.15 deg against 82.86 deg (0.9 %: the fibre is a polygon through the slice ends' sites)."""
    mujoco = pytest.importorskip("mujoco")
    from pccbullet.sim.mjcf.cli import mjcf_command
    from pccbullet.sim.mjcf.writer import write_mjcf
    from pccbullet.urdf_gen import naming

    out = write_mjcf(load_robot("hydraulic_arm"), tmp_path, gravity=(0.0, 0.0, 0.0))
    model = mujoco.MjModel.from_xml_path(str(out.path))
    names = [model.actuator(i).name for i in range(model.nu)]
    assert names == [f"arm_s{s}_c{j}" for s in (1, 2) for j in range(3)]
    data = mujoco.MjData(model)
    p = 0.5 * MPA
    data.ctrl[3] = p
    mujoco.mj_step(model, data, nstep=3000)
    z1, z2 = (data.body(naming.segment_end_link("arm", s)).xmat.reshape(3, 3)[:, 2] for s in (1, 2))
    bend = math.acos(float(np.clip(z1 @ z2, -1.0, 1.0)))
    assert bend == pytest.approx(p * AREA * OFFSET * 0.25 / _bending_stiffness(), rel=0.02)
    assert data.body(naming.segment_end_link("arm", 2)).xpos[0] > 0.1  # away from the chamber at 180 deg

    import argparse
    import contextlib
    import io

    args = argparse.Namespace(
        robot="hydraulic_arm", out=tmp_path / "cli", sections=3, chain="rod", medium="air", no_shear=False,
        no_tendons=False,
    )  # fmt: skip
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert mjcf_command(args) == 0
    assert "chamber actuators: arm (6)" in text.getvalue() and "not written" not in text.getvalue()


def _lag_robot(tmp_path: Path, table: str) -> Path:
    """hydraulic_arm.toml without its ``[hydraulic_drive]``, plus ``table``."""
    text = (robots_dir() / "hydraulic_arm.toml").read_text()
    path = tmp_path / "lag_arm.toml"
    path.write_text(text[: text.index("\n[hydraulic_drive]") + 1] + table)
    return path


def test_the_lags_defaults_its_bad_values_and_its_mjcf_filter(tmp_path: Path) -> None:
    from pccbullet.core.errors import SpecError
    from pccbullet.sim.limb.chambers import pressure_line
    from pccbullet.sim.mjcf.writer import build_mjcf

    line = pressure_line(load_robot(_lag_robot(tmp_path, "")), 6)
    assert (line.time_constant, line.lo, line.hi) == (0.05, -101325.0, math.inf)
    bad = load_robot(_lag_robot(tmp_path, "[pressure_drive]\ntime_constant_ms = -1\n"))
    with pytest.raises(SpecError, match=r"lag_arm.toml: field 'pressure_drive.time_constant_ms' = -1"):
        pressure_line(bad, 6)
    spec = load_robot(
        _lag_robot(tmp_path, "[pressure_drive]\ntime_constant_ms = 20\nmax_pressure_kpa = 300\n")
    )
    root, _ = build_mjcf(spec)
    general = root.findall("actuator/general")
    assert len(general) == 6 and general[0].get("dyntype") == "filter"
    assert float(general[0].get("dynprm", "nan")) == pytest.approx(0.02)
    assert [float(v) for v in general[0].get("ctrlrange", "").split()] == [-101325.0, 3e5]


# Seed 004 Tables 5 and 6 (mm): pressure (bar) -> (y_meas, z_meas, y_cc, z_cc); examples/13_seed004_tables.py
SEED004_TABLES = {
    (1, 1, 1): {0.4: (3.0, 184.2, 0.0, 185.9), 0.6: (3.0, 191.7, 0.0, 194.9), 0.8: (3.0, 201.8, 0.0, 204.9)},
    (0, 1, 1): {
        0.4: (20.9, 178.2, 23.2, 179.4),
        0.6: (33.6, 179.9, 37.2, 182.2),
        0.8: (47.0, 184.0, 53.9, 183.0),
    },
}


def test_seed004_pressures_give_the_laws_tips_and_the_papers_within_its_own_cc_error() -> None:
    """Seed 004's experimental robot (seed004_chambers.toml) driven by its three chambers without gravity:
    the chambers' law forces (pccbullet.sim.limb.chamber_law) hold the tips that the pressure law and the
    constant-curvature map give (pccbullet.urdf_gen.pressure_law.tip_from_pressures) to 0.03 mm; against
    the paper's measured tips (Tables 5, 6) they are as far as that law is: at most 4.6 mm (Table 6, 0.6 bar),
    where the paper's own constant-curvature column is up to 7.0 mm off (Table 6, 0.8 bar)."""
    from pccbullet.urdf_gen import naming
    from pccbullet.urdf_gen.pressure_law import BAR, load_pressure_law, tip_from_pressures
    from pccbullet.urdf_gen.three_actuator import load_three_actuator

    path = robots_dir() / "seed004_experimental.toml"
    spec = load_three_actuator(path)
    law = load_pressure_law(path, spec)
    worst = 0.0
    with World(mode="dynamic", gravity=(0.0, 0.0, 0.0)) as world:
        handle = world.load_robot("seed004_chambers", drive="chambers")
        chambers = handle.compliant["arm"].chambers
        assert chambers is not None and chambers.law is not None
        for driven, table in SEED004_TABLES.items():
            for bar, (ym, zm, _, _) in table.items():
                p = np.array(driven) * bar * BAR
                chambers.set_pressures(p)
                world.step(2000)
                T = np.linalg.inv(handle.T_world_limbbase("arm")) @ handle.link_pose(
                    naming.segment_end_link("arm", 1)
                )
                tip = T[:3, 3]
                assert np.linalg.norm(tip - tip_from_pressures(spec, law, p)) < 1e-4
                worst = max(worst, float(np.hypot(1e3 * tip[1] - ym, 1e3 * tip[2] - zm)))
    assert worst < 5.0


def test_seed002_pneunets_bend_by_the_papers_law_against_pressure() -> None:
    """Seed 002's six-chamber PneuNets (pneunet_chambers.toml) without gravity: the chamber's law moment
    (pccbullet.sim.limb.chamber_law.BendingLawForces) bends the segment by five joints' eq. (2),
    ``5 (0.6916 P - 0.0036 P^2)`` deg (P in kPa; pccbullet.urdf_gen.pneunet.bending_angle_rad), 0 ... 80
    kPa: measured within 0.001 deg; the strain-limiting layer keeps its length (0.3 mm at 80 kPa)."""
    from pccbullet.urdf_gen.pneunet import bending_angle_rad, load_bundled_pneunet

    paper = load_bundled_pneunet("pneunet_6")
    with World(mode="dynamic", gravity=(0.0, 0.0, 0.0)) as world:
        handle = world.load_robot("pneunet_chambers", drive="chambers")
        chambers = handle.compliant["actuator"].chambers
        assert chambers is not None
        for kpa in (20.0, 40.0, 60.0, 80.0):
            chambers.set_pressures([kpa * 1e3])
            world.step(2000)
            arc = handle.measured_pcc("actuator")[0]
            assert math.degrees(arc.bend) == pytest.approx(
                5 * math.degrees(bending_angle_rad(paper, kpa * 1e3)), abs=0.01
            )
            assert arc.length == pytest.approx(0.09, abs=5e-4)
        chambers.set_pressures([100e3])  # above the pump's 80 kPa: the line holds its limit
        world.step(500)
        assert chambers.pressures[0] == pytest.approx(80e3, rel=1e-3)


def test_a_pcc_command_sets_the_pressures_that_hold_it() -> None:
    """``Robot.set_pcc(..., mode="target")`` under drive ``"chambers"``: the least-squares pressures that hold
    the arcs at rest. Without gravity, section 2 at the closed form's shape for 0.5 MPa in its chamber 0
    (82.86 deg, 277.7 mm) gets that chamber at 0.497 MPa and the others at none, and bends by 82.4 deg."""
    from pccbullet.urdf_gen.pcc import PccConfig

    with World(mode="dynamic", gravity=(0.0, 0.0, 0.0)) as world:
        handle = world.load_robot("hydraulic_arm", drive="chambers")
        chambers = handle.compliant["arm"].chambers
        assert chambers is not None
        bend = 0.5 * MPA * AREA * OFFSET * 0.25 / _bending_stiffness()
        arcs = [PccConfig(0.0, 0.0, 0.25), PccConfig(bend, 0.0, 0.25 * (1.0 + 0.5 * MPA * AREA / WALLS))]
        handle.set_pcc("arm", arcs, mode="target")
        commanded = chambers.commanded
        assert commanded[3] == pytest.approx(0.5 * MPA, rel=0.01)
        assert np.abs(np.delete(commanded, 3)).max() < 1.0  # Pa
        world.step(3000)
        assert handle.measured_pcc("arm")[1].bend == pytest.approx(bend, rel=0.01)
