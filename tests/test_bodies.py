"""Robots' bodies fixed, free or moved (:mod:`pccbullet.sim.body`): a free body in water against its analytic
buoyancy-drag fall, a limb on a body carried on a circle against the beam under the centrifugal load it
feels, a free robot in space keeping its momentum while its arm swings; the body's shapes in the robot file.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_bvp

from pccbullet.core.errors import ConfigurationError, SpecError
from pccbullet.sim.body.trajectory import Trajectory, circle
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.fluid import SPHERE_DRAG
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.spec_loader import load_robot

SPHERE = Path(__file__).parent / "data" / "body_sphere.toml"
G = 9.80665


def test_a_free_body_in_water_falls_as_buoyancy_and_drag_say() -> None:
    """A 100 mm sphere of 2000 kg/m^3 released at rest in water: ``(m + m_a) v' = (m - rho V) g - 1/2 rho
    C_d A v^2``, so ``v(t) = v_t tanh(g' t / v_t)`` with ``v_t = sqrt(2 (m - rho V) g / (rho C_d A))``
    (1.668 m/s) and ``g' = (m - rho V) g / (m + m_a)``, ``m_a = rho V / 2``. Measured against it at 0.2 s
    (mid-transient) and 2 s (terminal): within 0.3 %, the 1 ms step's error."""
    rho, r = 1000.0, 0.05
    V = 4.0 / 3.0 * math.pi * r**3
    m = 2000.0 * V
    net = (m - rho * V) * G
    v_t = math.sqrt(2 * net / (rho * SPHERE_DRAG * math.pi * r * r))
    g_eff = net / (m + 0.5 * rho * V)
    with World(medium="water") as world:
        robot = world.load_robot(SPHERE, limbs=[], position=(0, 0, 5))
        assert robot.body.added_mass == pytest.approx(0.5 * rho * V, rel=1e-9)
        world.step(200)
        v_early = -robot.body.velocity()[0][2]
        world.step(1800)
        v_late = -robot.body.velocity()[0][2]
    assert v_early == pytest.approx(v_t * math.tanh(g_eff * 0.2 / v_t), rel=3e-3)
    assert v_late == pytest.approx(v_t, rel=3e-3)
    assert v_t == pytest.approx(1.668, abs=1e-3)


def test_a_whole_free_robot_sinks_at_the_speed_its_weight_buoyancy_and_drag_balance() -> None:
    """The sphere with its arm (1070 kg/m^3) standing up, sinking in water: the arm trails straight above it,
    so at the terminal velocity ``(m_body + m_arm - rho (V_body + V_arm)) g = 1/2 rho C_d A v^2 + sum_i
    c_a,i v^2`` (``c_a,i`` the slices' axial skin-friction coefficients). The arm's buoyancy and drag reach
    the body only through the resultant on its flange (:mod:`pccbullet.sim.limb.moving`): without it the
    robot would sink 4 % faster. Measured within 0.5 %."""
    rho, r = 1000.0, 0.05
    with World(medium="water") as world:
        robot = world.load_robot(SPHERE, position=(0, 0, 10), sections=5)
        arm = robot.compliant["arm"]
        chain = arm.chain
        V_body = 4.0 / 3.0 * math.pi * r**3
        m_arm = robot.spec.limbs[0].mass
        V_arm = m_arm / 1070.0
        net = (2000.0 * V_body + m_arm - rho * (V_body + V_arm)) * G
        axial = float(chain.params[:, 30].sum())
        v_t = math.sqrt(net / (0.5 * rho * SPHERE_DRAG * math.pi * r * r + axial))
        world.step(3000)
        v = -robot.body.velocity()[0][2]
        tilt = robot.tip_pose("arm")[:3, 3] - robot.head_pose()[:3, 3]
    assert abs(tilt[0]) < 1e-3 and abs(tilt[1]) < 1e-3  # straight up
    assert v == pytest.approx(v_t, rel=5e-3)


def _centrifugal_tip(R: float, omega: float) -> float:
    """Tip deflection (m) of the uniform arm of ``body_sphere.toml`` (E 2.5 MPa, 30 mm, 300 mm, 1070
    kg/m^3) standing on a body carried on a circle of radius ``R`` at ``omega``: ``E I w'''' = rho A omega^2
    (R + w)`` (the centrifugal load at the deflected radius), clamped at the base, free at the tip, plus
    Timoshenko's shear ``int V / (kappa G A)``."""
    E, nu, d, L, rho = 2.5e6, 0.49, 0.03, 0.3, 1070.0
    A, EI = math.pi * d * d / 4, E * math.pi * d**4 / 64
    k = rho * A * omega**2

    def ode(s, y):
        return np.vstack([y[1], y[2], y[3], k * (R + y[0]) / EI])

    def bc(a, b):
        return np.array([a[0], a[1], b[2], b[3]])

    s = np.linspace(0.0, L, 201)
    sol = solve_bvp(ode, bc, s, np.zeros((4, s.size)), tol=1e-10)
    assert sol.success
    q = k * (R + sol.sol(s)[0])
    shear = np.array([np.trapezoid(q[i:], s[i:]) for i in range(s.size)])  # V(s)
    kappa_G_A = 6 * (1 + nu) / (7 + 6 * nu) * E / (2 * (1 + nu)) * A
    return float(sol.sol(L)[0] + np.trapezoid(shear, s) / kappa_G_A)


def test_a_limb_on_a_body_moved_on_a_circle_bends_out_under_the_centrifugal_load() -> None:
    """A body carried on a 0.5 m circle once every pi s (omega 2 rad/s, turning with it), no gravity: in the
    turning frame the upright arm feels ``rho A omega^2 R`` outward and settles bent (15.9 mm at the
    tip, :func:`_centrifugal_tip`; Coriolis and Euler forces vanish at rest in that frame). The moving-base
    step gives it within 2.5 % (ten sections: the rod chain's discretization, +0.25 % at twenty, and the
    1 ms feed of the base's accelerations), tangentially < 0.3 mm (the air's drag)."""
    R, period = 0.5, math.pi
    with World(medium="air", gravity=(0, 0, 0)) as world:
        robot = world.load_robot(SPHERE, base="moved", trajectory=circle(R, period))
        world.step(4000)
        T_base = robot.T_world_limbbase("arm")
        tip = np.linalg.solve(T_base, robot.tip_pose("arm")[:, 3])[:3]
        head = robot.head_pose()
        expected_head = circle(R, period)(world.time)
    assert np.allclose(head, expected_head, atol=1e-4)  # the body went where it was told
    reference = _centrifugal_tip(R, 2 * math.pi / period)
    assert reference == pytest.approx(0.0159, abs=2e-4)
    assert tip[0] == pytest.approx(reference, rel=0.025)
    assert abs(tip[1]) < 3e-4


def _momentum(client: int, bodies: list[int]) -> tuple[np.ndarray, np.ndarray, float]:
    """Total linear momentum ``(3,)``, angular momentum about the world origin ``(3,)`` and mass of
    ``bodies`` (every link's ``m v`` and ``I w + x x m v``)."""
    P, Lm, M = np.zeros(3), np.zeros(3), 0.0
    for body in bodies:
        n = pb.getNumJoints(body, physicsClientId=client)
        for link in range(-1, n):
            info = pb.getDynamicsInfo(body, link, physicsClientId=client)
            m, inertia = info[0], np.asarray(info[2])
            if link == -1:
                x, orn = pb.getBasePositionAndOrientation(body, physicsClientId=client)
                v, w = pb.getBaseVelocity(body, physicsClientId=client)
            else:
                state = pb.getLinkState(body, link, computeLinkVelocity=1, physicsClientId=client)
                x, orn, v, w = state[0], state[1], state[6], state[7]
            Rm = np.asarray(pb.getMatrixFromQuaternion(orn)).reshape(3, 3)
            p = m * np.asarray(v)
            P += p
            Lm += Rm @ (inertia * (Rm.T @ np.asarray(w))) + np.cross(x, p)
            M += m
    return P, Lm, M


def _leak(dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The arm's peak linear and angular momentum ``(2,)`` and the robot's largest ``(2,)`` over the swing
    of :func:`test_a_free_robot_in_space_keeps_its_momentum_while_its_arm_swings`, sampled every 5 ms,
    with physics step ``dt`` (s)."""
    with World(medium="air", gravity=(0, 0, 0), dt=dt) as world:
        robot = world.load_robot(SPHERE, sections=5)
        bodies = [robot.head, *robot.limb_joints("arm").bodies]
        peak, worst = np.zeros(2), np.zeros(2)
        for bend in (math.pi / 2, 0.0):
            robot.set_pcc("arm", [PccConfig(bend, 0.3, 0.3)], mode="target")
            for _ in range(120):
                world.step(round(5e-3 / dt))
                P, Lm, _ = _momentum(world.client, bodies)
                arm_P, arm_L, _ = _momentum(world.client, bodies[1:])
                peak = np.maximum(peak, [np.linalg.norm(arm_P), np.linalg.norm(arm_L)])
                worst = np.maximum(worst, [np.linalg.norm(P), np.linalg.norm(Lm)])
        settled = _momentum(world.client, bodies)[0]
        world.step(200)
        assert np.linalg.norm(_momentum(world.client, bodies)[0] - settled) < 1e-6  # constant when still
    return peak, worst


def test_a_free_robot_in_space_keeps_its_momentum_while_its_arm_swings() -> None:
    """No gravity, the robot free and at rest; the arm is commanded to bend 90 degrees and back. Only the
    robot's own forces act (joint torques, welds; the air's drag is ~1e-4 of them), so its linear and
    angular momentum stay zero while the arm's own peak at 0.066 kg m/s and 0.0066 kg m^2/s. They do to
    first order in the step: at 1 ms the robot's reach 0.84 % and 1.32 % of the arm's, at 0.5 ms 0.41 % and
    0.59 % (0.25 ms: 0.20 %, 0.22 %), PyBullet's integration of the floating bodies (joint torques and welds
    are internal whatever their values); constant once the arm is still."""
    peak, worst = _leak(1e-3)
    assert peak[0] == pytest.approx(0.066, rel=0.05)  # the arm did swing (kg m/s)
    assert worst[0] < 0.01 * peak[0] and worst[1] < 0.015 * peak[1]
    half_peak, half_worst = _leak(5e-4)
    ratio = (worst / peak) / (half_worst / half_peak)
    assert 1.7 < ratio[0] < 2.5 and 1.7 < ratio[1] < 2.5  # first order in dt


@pytest.mark.parametrize(
    ("table", "volume"),
    [
        ('shape = "sphere"\ndiameter_mm = 100\nmass_kg = 1.0', math.pi / 6 * 1e-3),
        ('shape = "box"\nsize_mm = [100, 200, 50]\ndensity_kg_m3 = 1000', 1e-3),
        ("diameter_mm = 100\nlength_mm = 200\nmass_kg = 1.0", math.pi * 0.0025 * 0.2),
        ('shape = "none"\nmass_kg = 0.5', 0.0),
    ],
    ids=["sphere", "box", "cylinder", "none"],
)
def test_a_body_of_any_shape_loads_with_its_volume(tmp_path: Path, table: str, volume: float) -> None:
    text = SPHERE.read_text().split("[head]")
    rest = text[1].split("[[limbs]]", 1)[1]
    path = tmp_path / "shaped.toml"
    path.write_text(text[0] + "[head]\n" + table + "\n\n[[limbs]]" + rest)
    spec = load_robot(path)
    assert spec.head.volume == pytest.approx(volume, rel=1e-12)
    with World() as world:
        robot = world.load_robot(spec, base="free", position=(0, 0, 1))
        world.step(10)
        mass = pb.getDynamicsInfo(robot.head, -1, physicsClientId=world.client)[0]
        total = mass - robot.body.added_mass + robot.body.flange_mass  # the added mass rides in PyBullet's
        assert total == pytest.approx(spec.head.mass, rel=1e-9)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('shape = "cone"\nmass_kg = 1', r"head\.shape.*one of 'cylinder', 'box'"),
        ('shape = "sphere"\ndiameter_mm = 100', r"head\.mass_kg.*exactly one of mass_kg and density_kg_m3"),
        ('shape = "box"\nsize_mm = [1, 2]\nmass_kg = 1', r"head\.size_mm.*3 finite numbers"),
        ('shape = "mesh"\nmesh = "nothing.stl"\nmass_kg = 1', r"head\.mesh.*an existing mesh file"),
        ('shape = "sphere"\ndiameter_mm = 100\nmass_kg = 1\nbase = "moved"', r"head\.base.*'fixed', 'free'"),
    ],
    ids=["shape", "mass", "size", "mesh", "base"],
)
def test_a_bad_body_is_refused_naming_its_field(tmp_path: Path, table: str, message: str) -> None:
    text = SPHERE.read_text().split("[head]")
    rest = text[1].split("[[limbs]]", 1)[1]
    path = tmp_path / "bad.toml"
    path.write_text(text[0] + "[head]\n" + table + "\n\n[[limbs]]" + rest)
    with pytest.raises(SpecError, match=message):
        load_robot(path)


def test_bad_bases_and_trajectories_are_refused() -> None:
    with World() as world:
        with pytest.raises(ConfigurationError, match=r"base = 'flying' is invalid; allowed: 'fixed'"):
            world.load_robot(SPHERE, base="flying")
        with pytest.raises(ConfigurationError, match=r"trajectory = None is invalid with base = 'moved'"):
            world.load_robot(SPHERE, base="moved")
        with pytest.raises(ConfigurationError, match=r"base = 'free' needs compliant limbs"):
            world.load_robot(SPHERE, base="free", compliant=False)
    with pytest.raises(ConfigurationError, match=r"times = .* is invalid; allowed: increasing"):
        Trajectory(times=[0.0, 0.0], positions=[[0, 0, 0], [1, 0, 0]])


def test_waypoints_interpolate_position_and_orientation() -> None:
    quarter = [0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)]
    path = Trajectory(
        times=[0.0, 2.0], positions=[[0, 0, 0], [2, 0, 0]], orientations=[[0, 0, 0, 1], quarter]
    )
    T = path(1.0)
    assert T[:3, 3] == pytest.approx([1.0, 0.0, 0.0])
    assert math.atan2(T[1, 0], T[0, 0]) == pytest.approx(math.pi / 4)
    v, w = path.velocity(1.0)
    assert v == pytest.approx([1.0, 0.0, 0.0]) and w == pytest.approx([0.0, 0.0, math.pi / 4])
    assert path(5.0)[:3, 3] == pytest.approx([2.0, 0.0, 0.0])  # held after the last


@pytest.mark.parametrize("shape", ["sphere", "box", "cylinder"])
def test_the_body_is_drawn_and_written_with_its_volume(tmp_path: Path, shape: str) -> None:
    """``pccbullet export --render`` draws the body with the limbs (:func:`pccbullet.sim.export.rigid.body_mesh`):
    its mesh encloses the spec's volume (the sphere's icosphere 0.6 % less, the cylinder's 32-gon 0.6 %
    less); the MJCF of a free body has a free joint and MuJoCo reads the body's mass."""
    import mujoco

    from pccbullet.sim.export.rigid import body_mesh
    from pccbullet.sim.mjcf.writer import write_mjcf

    tables = {
        "sphere": 'shape = "sphere"\ndiameter_mm = 100\nmass_kg = 1.0\nbase = "free"',
        "box": 'shape = "box"\nsize_mm = [100, 200, 50]\nmass_kg = 1.0\nbase = "free"',
        "cylinder": 'diameter_mm = 100\nlength_mm = 200\nmass_kg = 1.0\nbase = "free"',
    }
    text = SPHERE.read_text().split("[head]")
    path = tmp_path / "shaped.toml"
    path.write_text(text[0] + "[head]\n" + tables[shape] + "\n\n[[limbs]]" + text[1].split("[[limbs]]", 1)[1])
    spec = load_robot(path, sections=3)
    mesh = body_mesh(spec.head)
    assert mesh is not None and mesh.is_volume
    assert mesh.volume == pytest.approx(spec.head.volume, rel=0.01)
    model = mujoco.MjModel.from_xml_path(str(write_mjcf(spec, tmp_path / "mjcf").path))
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert model.body_mass[model.body("head").id] == pytest.approx(1.0, rel=1e-9)


def test_a_mesh_body_has_its_solids_volume_and_inertia(tmp_path: Path) -> None:
    """A body from a mesh file (a 100 x 200 x 50 mm box written in millimetres, ``mesh_scale = 0.001``):
    trimesh's volume integrals give the box's volume and inertia ``m (b^2 + c^2) / 12`` ... exactly; it loads
    free into a world (the URDF pointing at the file) and into MuJoCo (the MJCF's mesh folder gets a copy, its
    asset the scale)."""
    import trimesh

    from pccbullet.urdf_gen.body_shape import body_inertia

    trimesh.creation.box((100.0, 200.0, 50.0)).export(tmp_path / "body.stl")
    text = SPHERE.read_text().split("[head]")
    table = 'shape = "mesh"\nmesh = "body.stl"\nmesh_scale = 0.001\nmass_kg = 2.0'
    path = tmp_path / "meshed.toml"
    path.write_text(text[0] + "[head]\n" + table + "\n\n[[limbs]]" + text[1].split("[[limbs]]", 1)[1])
    spec = load_robot(path, sections=3)
    assert spec.head.volume == pytest.approx(1e-3, rel=1e-9)
    com, inertia = body_inertia(spec.head)
    x, y, z = 0.1, 0.2, 0.05
    expected = np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) * 2.0 / 12.0
    assert np.allclose(com, 0.0, atol=1e-12) and np.allclose(inertia, expected, rtol=1e-9, atol=1e-12)
    with World(medium="water") as world:
        robot = world.load_robot(spec, base="free", position=(0, 0, 1))
        world.step(100)
        assert robot.head_pose()[2, 3] < 1.0  # 2 kg in 1 l: it sinks
    import mujoco

    from pccbullet.sim.mjcf.writer import write_mjcf

    model = mujoco.MjModel.from_xml_path(str(write_mjcf(spec, tmp_path / "mjcf").path))
    head = model.body("head").id
    assert model.body_mass[head] == pytest.approx(2.0, rel=1e-9)
    size = model.geom_aabb[model.body_geomadr[head]][3:] * 2  # the box's edges, as MuJoCo read them
    assert sorted(size) == pytest.approx([0.05, 0.1, 0.2], rel=1e-6)


def test_a_free_robots_frames_carry_its_body_to_a_mirror() -> None:
    """A viewer's mirror (:class:`pccbullet.sim.views.mirror.Mirror`, the web view's and the GUI's) posed by
    a frame of a sinking free robot shows its head and arm where the world has them (to 1e-9 m)."""
    from pccbullet.sim.views.mirror import Mirror
    from pccbullet.sim.views.scene import world_bodies, world_frame

    with World(medium="water") as world:
        robot = world.load_robot(SPHERE, sections=3, position=(0, 0, 1))
        captured = world_bodies(world)
        world.step(300)
        frame = world_frame(world)
        head, tip = robot.head_pose()[:3, 3], robot.tip_pose("arm")[:3, 3]
        assert head[2] < 0.95  # it sank
        client = pb.connect(pb.DIRECT)
        try:
            mirror = Mirror(client, captured)
            mirror.apply(frame)
            seen_head = pb.getBasePositionAndOrientation(mirror.ids["head"], physicsClientId=client)[0]
            arm = mirror.ids["arm"]
            tip_index = pb.getNumJoints(arm, physicsClientId=client) - 1
            seen_tip = pb.getLinkState(arm, tip_index, computeForwardKinematics=1, physicsClientId=client)[4]
        finally:
            pb.disconnect(client)
    assert np.allclose(seen_head, head, atol=1e-9)
    assert np.allclose(seen_tip, tip, atol=1e-9)


def test_a_body_held_still_in_any_orientation_holds_its_arm_as_a_fixed_one() -> None:
    """The body turned 90 degrees about x (the arm horizontal), in water: carried on a constant trajectory
    (``"moved"``: floating bodies, welds, the moving-base step fed the flange's measured motion) its arm
    sags 5.0 mm as on a fixed body loaded in that orientation (the fixed-base step): the same to 2 um in the
    flange's frame. In the body's frame the moved arm sags 0.13 mm more: its flange's weld (a PyBullet
    constraint, not rigid) gives 0.4 mrad under the arm's moment."""
    half = math.pi / 4
    orientation = (math.sin(half), 0.0, 0.0, math.cos(half))
    T = np.eye(4)
    T[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]
    T[:3, 3] = (0.0, 0.0, 1.0)
    in_flange, in_body = {}, {}
    for base in ("fixed", "moved"):
        with World(medium="water") as world:
            options = {"trajectory": Trajectory(lambda t: T)} if base == "moved" else {}
            robot = world.load_robot(
                SPHERE, base=base, position=(0, 0, 1), orientation=orientation, **options
            )
            world.step(2000)
            tip = robot.tip_pose("arm")[:, 3]
            in_flange[base] = np.linalg.solve(robot.T_world_limbbase("arm"), tip)[:3]
            in_body[base] = np.linalg.solve(robot.head_pose(), tip)[:3]
    assert in_flange["fixed"][1] == pytest.approx(-0.0050, abs=2e-4)  # sags towards the world's -z
    assert np.allclose(in_flange["moved"], in_flange["fixed"], atol=2e-6)
    assert np.allclose(in_body["moved"], in_body["fixed"], atol=2e-4)


def _centre_of_mass(client: int, bodies: list[int]) -> np.ndarray:
    """The centre of mass ``(3,)`` (m, world) of ``bodies``, every link's."""
    total, moment = 0.0, np.zeros(3)
    for body in bodies:
        for link in range(-1, pb.getNumJoints(body, physicsClientId=client)):
            m = pb.getDynamicsInfo(body, link, physicsClientId=client)[0]
            if link == -1:
                x = pb.getBasePositionAndOrientation(body, physicsClientId=client)[0]
            else:
                x = pb.getLinkState(body, link, physicsClientId=client)[0]
            total += m
            moment += m * np.asarray(x)
    return moment / total


def test_a_free_robot_tipping_over_on_ice_keeps_its_centre_of_mass_over_the_spot() -> None:
    """The sphere with its arm standing up, tilted 10 degrees, released on a frictionless floor in air: it
    topples within 0.5 s, its arm's tip falling 0.38 m and landing 0.31 m aside, but no horizontal force acts
    (the floor pushes only up; the air's drag is ~1e-4 of the weight), so its centre of mass falls straight
    down: measured 0.21 mm aside (after, it slides on at 0.5 mm/s: the 0.3 % of the falling arm's momentum
    PyBullet's step of the welded bodies leaks, as in the test in space)."""
    from pccbullet.sim.objects.environment import add_seabed

    tilt = math.radians(10)
    with World(medium="air") as world:
        floor = add_seabed(world, z=0.0)
        pb.changeDynamics(floor, -1, lateralFriction=0.0, physicsClientId=world.client)
        robot = world.load_robot(
            SPHERE,
            sections=5,
            position=(0, 0, 0.0502),
            orientation=(math.sin(tilt / 2), 0, 0, math.cos(tilt / 2)),
        )
        bodies = [robot.head, *robot.limb_joints("arm").bodies]
        c0, tip0 = _centre_of_mass(world.client, bodies), robot.tip_pose("arm")[:3, 3]
        world.step(500)
        c1, tip1 = _centre_of_mass(world.client, bodies), robot.tip_pose("arm")[:3, 3]
    assert tip0[2] - tip1[2] > 0.35 and abs(tip1[1]) > 0.3  # it fell over
    assert np.linalg.norm((c1 - c0)[:2]) < 4e-4
