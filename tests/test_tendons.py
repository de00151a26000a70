"""Tendons on the rod chain: their forces against the rod's cross-section moment and against the Kirchhoff
rod, the implicit step against a dense solve, the motors' limits, the controller, reruns, bad input."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation, Slerp

import pccbullet as pcb
from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.sim.limb.chain.kernels import FIXED, SPHERICAL, _bias_and_fluid, _kinematics
from pccbullet.sim.limb.chain.solve import spring_torques
from pccbullet.sim.limb.chain.springs import joint_springs
from pccbullet.sim.limb.chain.tendons import tendon_geometry
from pccbullet.urdf_gen.spec_loader import load_robot


def kirchhoff_tip(limb, tensions, n: int = 4001) -> tuple[np.ndarray, np.ndarray]:
    """Tip position and frame (limb base frame) of a Kirchhoff rod (extensible, no gravity) under the tendons'
    tensions: at every cross-section the moment ``T r (z x e_phi)`` and the compression ``T`` of each
    tendon passing it, so curvature ``m / (E I)`` and strain ``-N / (E A)``; integrated with the midpoint
    rule on ``n`` points (4001: converged to 1e-6 m against 16001)."""
    L = limb.rest_length
    E = limb.material.youngs_modulus
    s = np.linspace(0.0, L, n)
    frac = s / L
    r = limb.segments[0].radius_base + (limb.segments[-1].radius_tip - limb.segments[0].radius_base) * frac
    ends = np.cumsum([seg.length for seg in limb.segments])
    m = np.zeros((n, 2))
    axial = np.zeros(n)
    for t, T in zip(limb.tendons, tensions, strict=True):
        inside = s <= ends[t.anchor_segment] + 1e-12
        rt = t.offset_base + (t.offset_tip - t.offset_base) * frac
        m[:, 0] -= inside * T * rt * math.sin(t.angle)
        m[:, 1] += inside * T * rt * math.cos(t.angle)
        axial += inside * T
    kappa = m / (E * math.pi * r**4 / 4)[:, None]
    eps = -axial / (E * math.pi * r**2)
    R, p, ds = np.eye(3), np.zeros(3), s[1] - s[0]
    for i in range(n - 1):
        k0, k1 = 0.5 * (kappa[i] + kappa[i + 1])
        K = np.array([[0.0, 0.0, k1], [0.0, 0.0, -k0], [-k1, k0, 0.0]]) * ds
        p = p + (R @ expm(K / 2))[:, 2] * (1.0 + 0.5 * (eps[i] + eps[i + 1])) * ds
        R = R @ expm(K)
    return p, R


def quick_limb(spec, name: str):
    """The robot with ``name`` only, its tendons' spools massless and its material heavily damped: the same
    statics, settled sooner."""
    limb = spec.limb(name)
    limb = replace(
        limb,
        material=replace(limb.material, damping_ratio=1.0),
        tendons=tuple(replace(t, spool_mass=0.0) for t in limb.tendons),
    )
    return replace(spec, limbs=(limb,))


@pytest.mark.parametrize("tensions", [(1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.5, 0.5)])
def test_tendon_bend_matches_the_kirchhoff_rod_in_every_direction(tensions) -> None:
    """Zero gravity, air: the camera tentacle pulled by one tendon (bends towards it, 0 deg) or two (towards
    225 deg) settles where the Kirchhoff rod puts its tip: within 0.6 % of the length at N = 10 (3.3 and
    2.2 mm measured; 0.8 mm at N = 20, examples/71_tendon_kirchhoff.py)."""
    spec = quick_limb(load_robot("ursula", sections=10), "camera")
    limb = spec.limb("camera")
    p_ref, R_ref = kirchhoff_tip(limb, tensions)
    with pcb.World(mode="dynamic", medium="air", gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot(spec)
        tendons = robot.compliant["camera"].tendons
        tendons.set_tensions(tensions)
        world.step(14000)
        T = np.linalg.inv(robot.T_world_limbbase("camera")) @ robot.tip_pose("camera")
        np.testing.assert_allclose(tendons.tensions, tensions, atol=1e-9)
    error = float(np.linalg.norm(T[:3, 3] - p_ref))
    assert error < 0.006 * limb.rest_length, error
    angle = math.degrees(math.acos(np.clip(T[:3, 2] @ R_ref[:, 2], -1.0, 1.0)))
    assert angle < 2.5, angle
    # the plane of the bend is the tendons' side
    assert math.atan2(T[1, 3], T[0, 3]) == pytest.approx(math.atan2(p_ref[1], p_ref[0]), abs=1e-6)


def test_tendon_forces_are_the_cross_sections_moment_on_a_pcc_arc() -> None:
    """On a two-segment arc in 3D, a tendon's generalized force at every node it passes equals the moment of
    its tension ``T`` crossing the node at its offset in the frame halfway through the node's turn (read
    from PyBullet's link frames, independently of the kernel) within 2 % of ``T r``; along every chord it
    passes, the compression ``T``; beyond its anchor, nothing."""
    configs = [pcb.PccConfig(math.radians(70), 0.4, 0.3), pcb.PccConfig(math.radians(110), -0.9, 0.3)]
    T = 2.0
    with pcb.World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", limbs=["grasper"])
        robot.set_pcc("grasper", configs)
        limb = robot.compliant["grasper"]
        spec, ch = limb.spec, limb.chain
        q, qd = limb.read_state()
        nt = len(spec.tendons)
        L, Ld, G = np.zeros(nt), np.zeros(nt), np.zeros((nt, ch.n_dof))
        tendon_geometry(q, qd, *limb.tendons.arrays[:6], L, Ld, G)
        # nodes in chain order: their segment and place along the limb
        nodes = sorted((int(ch.dof[i]), i) for i in range(len(ch.links)) if ch.jtype[i] == SPHERICAL)
        starts = np.cumsum([0.0] + [seg.length for seg in spec.segments])
        seg_of, frac = [], []
        for k, seg in enumerate(spec.segments):
            seg_of += [k] * (seg.sections + 1)
            frac += list(np.linspace(starts[k], starts[k + 1], seg.sections + 1) / spec.rest_length)
        frames = {}
        for _, i in nodes:
            child = robot.link_pose(ch.links[i])[:3, :3]
            # the joint's parent frame: the parent link's turned by the joint origin's rotation
            pa = int(ch.parent[i])
            above = robot.link_pose(ch.links[pa]) if pa >= 0 else robot.T_world_limbbase("grasper")
            parent = above[:3, :3] @ ch.params[i, 0:9].reshape(3, 3)
            mid = Slerp([0, 1], Rotation.from_matrix([parent, child]))(0.5).as_matrix()
            frames[i] = (child, mid)
    checked = 0
    for j, t in enumerate(spec.tendons):
        force = -T * G[j]
        for n, (d, i) in enumerate(nodes):
            if seg_of[n] > t.anchor_segment:
                assert np.abs(force[d : d + 3]).max() == 0.0
                continue
            child, mid = frames[i]
            r = t.offset_at(frac[n])
            e_phi = mid @ np.array([math.cos(t.angle), math.sin(t.angle), 0.0])
            expected = child.T @ np.cross(r * e_phi, -T * mid[:, 2])  # the cut tension's moment
            assert np.abs(force[d : d + 3] - expected).max() < 0.02 * T * r, (t.name, n)
            checked += 1
        chords = sorted(int(ch.dof[i]) for i in range(len(ch.links)) if ch.jtype[i] not in (SPHERICAL, FIXED))
        n_in = sum(spec.segments[s].sections for s in range(t.anchor_segment + 1))
        assert np.all(G[j, chords[:n_in]] == 1.0) and np.all(G[j, chords[n_in:]] == 0.0)
    assert checked == 4 * 11 + 4 * 22  # every node each tendon passes


def _dense_armature(ch, arm) -> np.ndarray:
    A = np.zeros((ch.n_dof, ch.n_dof))
    for i in range(len(ch.links)):
        if ch.jtype[i] == FIXED:
            continue
        d = int(ch.dof[i])
        if ch.jtype[i] == SPHERICAL:
            A[d : d + 3, d : d + 3] = arm[d : d + 3, :]
        else:
            A[d, d] = arm[d, 0]
    return A


def test_implicit_tendon_step_equals_the_dense_solve() -> None:
    """``spring_torques`` with tendons (a full, non-symmetric coupling ``S``) gives the accelerations of the
    dense ``(M + M_a + A + G^T S G) qdd = b - G^T T`` to 1e-10 (relative), the tensions ``T + S G qdd``,
    and torques with which PyBullet's ``M qdd = tau - h`` holds to 1e-9 N m; a tendon that would push goes
    slack, and the step stays consistent with PyBullet."""
    rng = np.random.default_rng(7)
    with pcb.World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", limbs=["grasper"])
        limb = robot.compliant["grasper"]
        ch = limb.chain
        q = ch.positions(
            robot.pcc_joints("grasper", [pcb.PccConfig(0.8, 0.3, 0.3), pcb.PccConfig(1.5, 2.0, 0.3)])
        )
    nd, n, nt = ch.n_dof, len(ch.links), 8
    qd = rng.normal(size=nd) * 0.05
    R, p = np.empty((n, 3, 3)), np.empty((n, 3))
    _kinematics(ch.parent, ch.jtype, ch.qpos, ch.params, q, R, p)
    h, tf, loads = np.zeros(nd), np.zeros(nd), np.empty((2, n, 3))
    _bias_and_fluid(ch.parent, ch.jtype, ch.dof, ch.params, qd, limb.gravity_base, R, p, h, tf, loads)
    ext, arm = np.empty(nd), np.zeros((nd, 3))
    joint_springs(
        ch.parent,
        ch.jtype,
        ch.dof,
        ch.qpos,
        ch.params,
        R,
        loads,
        q,
        qd,
        limb.target,
        limb.K,
        limb.C,
        1e-3,
        ext,
        arm,
    )
    M, Ma, A = ch.mass_matrix(q), ch.added_mass_matrix(q), _dense_armature(ch, arm)
    G = rng.normal(size=(nt, nd)) * 0.01
    for S, T0 in (
        (np.diag(np.full(nt, 1e-4)) + 1e-5, np.full(nt, 50.0)),
        (np.diag(np.full(nt, 10.0)), np.full(nt, 5.0)),
    ):
        T, tau, qdd = T0.copy(), np.empty(nd), np.zeros(nd)
        spring_torques(
            ch.parent, ch.jtype, ch.dof, ch.qpos, ch.params, q, qd, limb.gravity_base, limb.target,
            np.zeros(nd), limb.K, limb.C, 1e-3, tau, qdd, np.full((2, nd), np.nan), G, T, S,
        )  # fmt: skip
        np.testing.assert_allclose(M @ qdd, tau - h, atol=1e-9)
        assert (T >= 0.0).all()
        taut = T > 0.0
        if taut.all():
            dense = np.linalg.solve(M + Ma + A + G.T @ S @ G, ext + tf - h - G.T @ T0)
            assert np.abs(dense - qdd).max() < 1e-10 * np.abs(dense).max()
            np.testing.assert_allclose(T, T0 + S @ G @ dense, rtol=1e-9)
        else:  # the heavy spools: some tendons went slack; the others carry T0 + S G qdd
            assert taut.any()
            np.testing.assert_allclose(T[taut], (T0 + S @ G @ qdd)[taut], rtol=1e-9)


def test_motor_limits_hold_and_tendons_never_push() -> None:
    """Commanded far beyond the motors (80 N, a bend the tendons cannot hold in air): every motor's force
    stays within its stall tension and its torque-speed line, no tendon tension is negative, and no spool
    reels in faster than its motor's no-load speed (1 % for the step)."""
    with pcb.World(mode="dynamic", medium="air") as world:
        robot = world.load_robot("ursula", limbs=["palpation"], drive="tendons")
        tendons = robot.compliant["palpation"].tendons
        spec = robot.limb("palpation")
        limit = np.array([t.max_tension for t in spec.tendons])
        speed = np.array([t.max_speed for t in spec.tendons])
        robot.set_pcc(
            "palpation", [pcb.PccConfig(math.pi, 1.0, 0.29), pcb.PccConfig(math.pi, 0.0, 0.29)], mode="target"
        )
        worst_force, worst_speed, least = 0.0, 0.0, np.inf
        for _ in range(300):
            world.step(10)
            F = tendons.motor_forces
            worst_force = max(worst_force, float(np.max(F - limit)))
            worst_speed = max(worst_speed, float(np.max(tendons.spool_speeds / speed)))
            least = min(least, float(tendons.tensions.min()))
            assert np.all(F <= tendons.caps + 1e-12)
        assert worst_force <= 1e-12
        assert worst_speed <= 1.01
        assert least >= 0.0
        assert np.max(tendons.peak_tensions) > 0.5 * limit.max()  # it did pull hard
    with pytest.raises(ConfigurationError, match=r"tensions = .* allowed: 8 finite numbers >= 0"):
        tendons.set_tensions([1.0] * 7 + [-1.0])


@pytest.mark.xfail(
    strict=True,
    reason="known defect: on this 3D two-segment command in water the tendon controller does not settle; "
    "the distal set's tensions swap between opposite tendons and its bend error wanders by up to 0.1 rad "
    "from 5 s to 30 s of the run below; the 10 s reading passed only while the tip carried a 0.1 g "
    "marker mass",
)
def test_tendon_controller_reaches_the_commanded_tendon_lengths_in_water() -> None:
    """The grasper driven through its tendons towards a 3D two-segment command in water: after 10 s the
    sets' bend errors (from the tendon lengths, what encoders measure) are below 0.01 rad, the limb moved
    (its tendon lengths differ by > 20 mm across the set), the segments are no longer than commanded;
    a second run gives the same numbers bit for bit."""

    def run() -> tuple[np.ndarray, np.ndarray]:
        with pcb.World(mode="dynamic", medium="water") as world:
            robot = world.load_robot("ursula", limbs=["grasper"], drive="tendons")
            tendons = robot.compliant["grasper"].tendons
            robot.set_pcc(
                "grasper", [pcb.PccConfig(0.6, 0.5, 0.295), pcb.PccConfig(1.2, -1.0, 0.295)], mode="target"
            )
            world.step(10000)
            return tendons.lengths - tendons.commanded_lengths, robot.joints("grasper")

    e, q = run()
    P = np.linalg.pinv  # the sets' bend errors: the controller's own least squares
    with pcb.World(mode="dynamic", medium="water") as world:
        tendons = world.load_robot("ursula", limbs=["grasper"]).compliant["grasper"].tendons
        Pm = tendons.arrays[13]
    bend = np.array([Pm[:2, 0:4] @ e[0:4], Pm[:2, 4:8] @ e[4:8]])
    assert np.abs(bend).max() < 0.01, bend
    assert (Pm[2, 0:4] @ e[0:4]) < 1e-3 and (Pm[2, 4:8] @ e[4:8]) < 1e-3
    e2, q2 = run()
    assert e2.tolist() == e.tolist() and q2.tolist() == q.tolist()
    del P


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "anchor_segment = 2\n",
            "anchor_segment = 3\n",
            r"'limbs\[0\]\.tendons\[1\]\.anchor_segment' = 3 .*\[1, 2\]",
        ),
        (
            "max_tension_n = 10\n",
            "max_tension_n = -1\n",
            r"tendons\[1\]\.max_tension_n' = -1 .*\(0, 100000\]",
        ),
        ("offset_fraction = 0.7\n", "offset_mm = 40\n", r"tendons\[0\]\.offset_mm' = 40 .*\(0, 19"),
        (
            "offset_fraction = 0.7\n",
            "offset_fraction = 0.7\noffset_mm = 5\n",
            r"exactly one of offset_mm, offset_fraction",
        ),
        ("pretension_n = 0.2\n", "pretension_n = 50\n", r"pretension_n' = 50 .*\[0, 30\]"),
        ("spool_mass_kg = 10\n", "spool_mas_kg = 10\n", r"spool_mas_kg' = 10 .*did you mean 'spool_mass_kg'"),
    ],
)
def test_bad_tendon_fields_name_file_field_value_and_range(
    ursula_text, write_toml, old, new, message
) -> None:
    """A broken tendon table is one line naming the file, the field, its value and what is allowed."""
    path = write_toml(ursula_text.replace(old, new, 1))
    with pytest.raises(SpecError, match=message) as info:
        load_robot(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_the_bundled_squid_declares_four_tendons_a_segment() -> None:
    """URSULA: four tendons anchored at every segment's end disk (8 in a two-segment arm), each motor
    limited, its channel inside the limb."""
    spec = load_robot("ursula")
    for limb in spec.limbs:
        anchors = [t.anchor_segment for t in limb.tendons]
        assert anchors == sorted(anchors) and [anchors.count(s) for s in range(len(limb.segments))] == [
            4
        ] * len(limb.segments)
        for t in limb.tendons:
            assert (
                0.0 < t.offset_base < limb.segments[0].radius_base
                and 0.0 < t.offset_tip < limb.segments[-1].radius_tip
            )
            assert t.max_tension > 0.0 and t.max_speed > 0.0 and 0.0 <= t.pretension < t.max_tension


def test_tendon_drive_needs_tendons_on_the_rod_chain() -> None:
    """``drive="tendons"`` on the RRP chain or an unknown drive: one line saying what is allowed."""
    with pcb.World(mode="dynamic", chain="rrp") as world:
        with pytest.raises(
            ConfigurationError, match=r"limb 'camera' is on the rrp chain .*drive = 'tendons' is not allowed"
        ):
            world.load_robot("ursula", limbs=["camera"], drive="tendons")
    with pcb.World(mode="dynamic") as world:
        with pytest.raises(
            ConfigurationError, match=r"drive = 'cables' is invalid; allowed: 'joints', 'tendons'"
        ):
            world.load_robot("ursula", limbs=["camera"], drive="cables")


def test_the_tendon_goal_keeps_the_commanded_segment_frames() -> None:
    """The arcs the tendon controller pulls towards (its goal as bend vectors, written back as arcs) end in
    the commanded frames: a straight segment keeps its plane's turn of the next segment's base (PCC:
    ``Rz(plane) Ry(bend)``), a negative bend written as a positive one in the opposite plane turns the
    next segment's plane back (segment 1's end and the tip: positions and tangents exact). Failed while a straight segment's plane was dropped (segment 2 bent
    towards +y where the command put it at -y)."""
    from pccbullet.urdf_gen.pcc import arc_transform

    rng = np.random.default_rng(7)
    commands = [
        [pcb.PccConfig(0.0, math.pi, 0.295), pcb.PccConfig(1.0, math.pi / 2, 0.295)],
        [pcb.PccConfig(-0.5, 0.3, 0.295), pcb.PccConfig(0.8, -2.0, 0.29)],
        *[
            [pcb.PccConfig(rng.uniform(-1.5, 1.5), rng.uniform(-3.0, 3.0), 0.295) for _ in range(2)]
            for _ in range(6)
        ],
    ]
    with pcb.World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", limbs=["grasper"], drive="tendons")
        drive = robot.compliant["grasper"].tendons
        for configs in commands:
            drive.set_pcc(configs)
            got = [arc_transform(c.bend, c.plane, c.length) for c in drive._corrected()]
            want = [arc_transform(c.bend, c.plane, c.length) for c in configs]
            # segment 1's end and the tip: positions and tangents (a twist about a tangent is no shape)
            assert np.abs(got[0][:3, 2:] - want[0][:3, 2:]).max() < 1e-12, (configs, drive._corrected())
            tip, tip_want = got[0] @ got[1], want[0] @ want[1]
            assert np.abs(tip[:3, 2:] - tip_want[:3, 2:]).max() < 1e-12, (configs, drive._corrected())


def test_a_held_set_keeps_its_tensions_while_the_other_sets_follow_their_command() -> None:
    """``hold``: the grasper's segment-2 set held at 6 N on one tendon (a grip) while segment 1 follows a
    command through its own set in water: after 8 s the held tendon pulls 6 N (its motor's force; the
    others at 0), segment 1's bend error from its tendon lengths is below 0.01 rad (it made up for the
    held set's moment passing through it), segment 2 curls towards the held tendon; ``release`` hands
    the set back to the controller; bad holds are refused with one line."""
    with pcb.World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", limbs=["grasper"], drive="tendons")
        drive = robot.compliant["grasper"].tendons
        drive.slacken()
        with pytest.raises(ConfigurationError, match="segment = 1 cannot be held; hold needs mode 'pcc'"):
            drive.hold(1, [0.0, 0.0, 0.0, 6.0])
        robot.set_pcc("grasper", [pcb.PccConfig(0.5, 0.0, 0.295), pcb.PccConfig(0.0, 0.0, 0.295)])
        drive.hold(1, [0.0, 0.0, 0.0, 6.0])
        assert drive.held == (1,)
        with pytest.raises(ConfigurationError, match=r"segment = 2 cannot be held; allowed: \[0, 1\]"):
            drive.hold(2, [1.0] * 4)
        with pytest.raises(ConfigurationError, match=r"tensions = \[1.0, -1.0, 0.0, 0.0\] is invalid"):
            drive.hold(1, [1.0, -1.0, 0.0, 0.0])
        world.step(8000)
        assert drive.motor_forces[4:].tolist() == [0.0, 0.0, 0.0, 6.0]
        e = drive.lengths - drive.commanded_lengths
        assert np.abs(drive.arrays[13][:2, 0:4] @ e[0:4]).max() < 0.01
        seg2 = robot.measured_pcc("grasper")[1]
        angle = drive.specs[7].angle
        assert seg2.bend > 0.5 and abs(math.remainder(seg2.plane - angle, 2 * math.pi)) < 0.3, seg2
        drive.release(1)
        assert drive.held == ()
        world.step(20)
        assert drive.motor_forces[7] != 6.0


def test_a_hold_drops_the_shape_loops_correction() -> None:
    """The shape loop's correction, learned while the grasper sagged free in water (2 s of
    ``follow_shape``), is dropped by ``hold``: the controller pulls towards the commanded arcs' tendon
    lengths again (as right after ``set_pcc``). Failed while the correction stayed: the demo's gripping
    coil, steered by a correction learned on the free limb, dragged its bar off the posts."""
    with pcb.World(mode="dynamic", medium="water") as world:
        robot = world.load_robot("ursula", limbs=["grasper"], drive="tendons")
        drive = robot.compliant["grasper"].tendons
        robot.set_pcc("grasper", [pcb.PccConfig(0.0, 0.0, 0.3), pcb.PccConfig(0.0, 0.0, 0.3)])
        plain = drive.commanded_lengths.copy()
        for _ in range(100):
            world.step(20)
            drive.follow_shape(0.02)
        assert np.abs(drive.shape_correction).max() > 0.02
        assert np.abs(drive.commanded_lengths - plain).max() > 1e-4
        drive.hold(1, [6.0, 0.0, 0.0, 0.0])
        assert np.abs(drive.shape_correction).max() == 0.0
        assert np.abs(drive.commanded_lengths - plain).max() < 1e-12


def test_drive_and_contact_estimate_per_limb() -> None:
    """``load_robot(drive={...}, external_loads={...})``: the grasper through its tendons and estimating its
    contacts, the other limbs on spring targets without; a name the robot lacks is refused in one line."""
    with pcb.World(mode="dynamic", medium="water") as world:
        robot = world.load_robot(
            "ursula", sections=3, drive={"grasper": "tendons"}, external_loads={"grasper": True}
        )
        assert {n: c.drive for n, c in robot.compliant.items()} == {
            "grasper": "tendons", "palpation": "joints", "camera": "joints", "light": "joints"
        }  # fmt: skip
        assert [n for n, c in robot.compliant.items() if c.external_loads] == ["grasper"]
        with pytest.raises(
            ConfigurationError, match=r"drive = \{'arm': 'tendons'\} is invalid; allowed: limb"
        ):
            world.load_robot("ursula", sections=3, drive={"arm": "tendons"})
