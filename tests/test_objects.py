"""Placed objects: buoyancy, added mass and drag against analytic references, Coulomb friction on an incline with
the silicone's coefficients, rolling resistance, contact forces per limb, and the errors bad input gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError, WorldClosedError
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.environment import add_plane
from pccbullet.sim.objects.friction import LIMB_FRICTION, MATERIALS, ROLLING_RESISTANCE
from pccbullet.sim.objects.place import place_box, place_cylinder, place_sphere
from pccbullet.sim.world import STANDARD_GRAVITY, World

G = STANDARD_GRAVITY


def _fall(medium: str, density: float, seconds: float, radius: float = 0.02) -> tuple[object, np.ndarray]:
    """A sphere of ``density`` released at rest in ``medium``: the handle and its vertical velocity every step."""
    with World(medium=medium) as world:
        ball = place_sphere(world, radius, density=density, position=(0.0, 0.0, 10.0), material="steel")
        vz = np.empty(round(seconds / world.dt))
        for k in range(len(vz)):
            world.step()
            vz[k] = ball.linear_velocity()[2]
        return ball, vz


@pytest.mark.parametrize("medium, rho", [("water", 1000.0), ("seawater", 1025.0)])
def test_sphere_reaches_terminal_velocity_in_water(medium: str, rho: float) -> None:
    ball, vz = _fall(medium, 1500.0, 2.0)
    m, V, r = ball.mass, ball.volume, ball.size[0]
    v_t = math.sqrt(2.0 * (m - rho * V) * G / (rho * 0.47 * math.pi * r * r))
    assert abs(-vz[-1] / v_t - 1.0) < 0.02
    # on the way: v_t tanh(g' t / v_t) with g' = (m - rho V) g / (m + m_a), m_a = rho V / 2 for a sphere;
    # without the added mass g' would be 33 % larger and v(0.2 s) 18 % off
    assert ball.added_mass == pytest.approx(0.5 * rho * V, rel=1e-12)
    g_eff = (m - rho * V) * G / (m + 0.5 * rho * V)
    t = 0.2
    assert abs(-vz[round(t / 1e-3) - 1] / (v_t * math.tanh(g_eff * t / v_t)) - 1.0) < 0.02


def test_sphere_falls_freely_in_air() -> None:
    _, vz = _fall("air", 7850.0, 0.3)
    t = np.arange(1, len(vz) + 1) * 1e-3
    acceleration = -np.polyfit(t, vz, 1)[0]
    assert abs(acceleration / G - 1.0) < 0.005


@pytest.mark.parametrize("medium, rho", [("water", 1000.0), ("seawater", 1025.0)])
def test_neutrally_buoyant_cylinder_stays_put(medium: str, rho: float) -> None:
    tilted = (0.2, 0.3, 0.1, 0.927)  # any orientation: buoyancy acts at the centre
    with World(medium=medium) as world:
        neutral = place_cylinder(world, 0.03, 0.12, density=rho, position=(0.0, 0.0, 0.0), orientation=tilted)
        heavier = place_cylinder(world, 0.03, 0.12, density=1.05 * rho, position=(1.0, 0.0, 0.0))
        world.step(2000)
        assert np.linalg.norm(neutral.position()) < 1e-3
        assert heavier.position()[2] < -0.05  # the same cylinder 5 % denser sinks: the test can fail


def _incline_box(
    material: str, medium: str, angle: float, seconds: float = 1.0
) -> tuple[float, float, np.ndarray]:
    """A flat box released on a plane tilted by ``angle`` (rad): its travel (m), final speed (m/s) and the
    contact force on it after 0.1 s (N)."""
    with World(medium=medium) as world:
        normal = (math.sin(angle), 0.0, math.cos(angle))
        add_plane(world, (0.0, 0.0, 0.0), normal)  # PyBullet's default friction, as the seabed's
        half = 0.01
        box = place_box(
            world,
            (0.1, 0.1, 2 * half),
            density=2700.0,
            position=(np.asarray(normal) * (half + 1e-4)).tolist(),
            orientation=pb.getQuaternionFromEuler((0.0, angle, 0.0)),
            material=material,
        )
        world.step(100)
        settled_force = box.contact_force()
        start = box.position()
        world.step(round(seconds / world.dt) - 100)
        return (
            float(np.linalg.norm(box.position() - start)),
            float(np.linalg.norm(box.linear_velocity())),
            settled_force,
        )


@pytest.mark.parametrize("material, medium", [("steel", "air"), ("rock", "water")])
def test_box_on_incline_slides_iff_tan_exceeds_mu(material: str, medium: str) -> None:
    mu = MATERIALS[material].dry if medium == "air" else MATERIALS[material].wet
    threshold = math.atan(mu)
    travel, speed, force = _incline_box(material, medium, threshold - math.radians(2))
    assert travel < 1e-3 and speed < 1e-3
    with World(medium=medium) as world:  # the box's weight in the medium, for the contact force
        probe = place_box(world, (0.1, 0.1, 0.02), density=2700.0, material=material)
        net_weight = (probe.mass - world.medium.density * probe.volume) * G
    # at rest the plane holds the box's weight in the medium: normal force and friction together
    np.testing.assert_allclose(force, [0.0, 0.0, net_weight], atol=0.01 * net_weight)
    travel, speed, _ = _incline_box(material, medium, threshold + math.radians(2))
    assert travel > 0.02
    if medium == "air":  # Coulomb sliding: a = g (sin - mu cos); drag in air is 1e-4 of it here
        angle = threshold + math.radians(2)
        expected = G * (math.sin(angle) - mu * math.cos(angle)) * 1.0  # sliding from release, for 1 s
        assert abs(speed / expected - 1.0) < 0.05


def test_sphere_rolls_to_a_stop() -> None:
    with World(medium="air") as world:
        add_plane(world, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
        r, v0 = 0.02, 0.1  # 5 rad/s (at 15 rad/s PyBullet stops it 7 % short)
        ball = place_sphere(world, r, density=1250.0, position=(0.0, 0.0, r), material="pla")
        pb.resetBaseVelocity(ball.body, [v0, 0.0, 0.0], [0.0, v0 / r, 0.0], physicsClientId=world.client)
        world.step(1500)
        # rolling lever arm b = 0.01 R: a = 5 b g / (7 R), the stop after v0^2 / (2 a)
        b = ROLLING_RESISTANCE * r
        assert ball.rolling_friction == pytest.approx(b)
        stop = v0**2 / (2.0 * 5.0 * b * G / (7.0 * r))
        assert abs(ball.position()[0] / stop - 1.0) < 0.03
        assert np.linalg.norm(ball.linear_velocity()) < 1e-3


def _force_on(body: int, c) -> np.ndarray:
    """The force on ``body`` at an unfiltered contact row ``c`` (Bullet's own order: A first)."""
    f = c[9] * np.asarray(c[7]) + c[10] * np.asarray(c[11]) + c[12] * np.asarray(c[13])
    return f if c[1] == body else -f


def test_limb_forces_sum_the_contact_points() -> None:
    with World(medium="water") as world:
        robot = world.load_robot("ursula", limbs=["grasper", "palpation"])
        # a static steel block under the grasper's second segment, clear of the palpation limb
        block = place_box(world, (0.2, 0.06, 0.04), mass=0.0, position=(0.6, -0.06, -0.11), material="steel")
        world.step(1000)
        forces = block.limb_forces(robot)
        grasper = robot.bodies["grasper"]
        points = [
            c
            for c in pb.getContactPoints(physicsClientId=world.client)
            if {c[1], c[2]} == {block.body, grasper}
        ]
        assert len(points) > 0
        expected = sum((_force_on(block.body, c) for c in points), np.zeros(3))
        np.testing.assert_allclose(forces["grasper"], expected, rtol=0, atol=1e-12)
        assert forces["grasper"][2] < -0.01  # the sagging limb weighs on the block
        np.testing.assert_array_equal(forces["palpation"], np.zeros(3))
        np.testing.assert_allclose(
            block.contact_force(), forces["grasper"], atol=1e-12
        )  # nothing else touches
        np.testing.assert_allclose(block.contact_force(grasper), forces["grasper"], atol=1e-12)
        assert np.linalg.norm(block.position() - [0.6, -0.06, -0.11]) < 1e-12  # static


@pytest.mark.parametrize("ramp_first", [True, False])
def test_contact_force_holds_the_weight_whichever_body_came_first(ramp_first: bool) -> None:
    """At rest on a tilted block the contact force is the weight, friction included: PyBullet reports a
    point's friction for the first body of Bullet's pair, which is the creation order here."""
    angle = math.radians(10)
    normal = np.array([math.sin(angle), 0.0, math.cos(angle)])
    tilt = pb.getQuaternionFromEuler((0.0, angle, 0.0))
    with World(medium="air") as world:

        def ramp() -> None:
            place_box(world, (1.0, 1.0, 0.1), mass=0.0, position=(-0.05 * normal).tolist(), orientation=tilt)

        if ramp_first:
            ramp()
        box = place_box(
            world, (0.1, 0.1, 0.02), mass=1.0, position=(0.0101 * normal).tolist(), orientation=tilt
        )
        if not ramp_first:
            ramp()
        world.step(300)
        np.testing.assert_allclose(box.contact_force(), [0.0, 0.0, G], atol=1e-3 * G)


def test_friction_convention_gives_the_pair_coefficient() -> None:
    for medium, key in (("air", "dry"), ("water", "wet")):
        with World(medium=medium) as world:
            robot = world.load_robot("ursula", limbs=["camera"])
            body = robot.bodies["camera"]
            limb_mu = {
                pb.getDynamicsInfo(body, j, physicsClientId=world.client)[1]
                for j in range(-1, pb.getNumJoints(body, physicsClientId=world.client))
                if pb.getCollisionShapeData(body, j, physicsClientId=world.client)
            }
            assert limb_mu == {LIMB_FRICTION}
            ball = place_sphere(world, 0.03, density=1240.0, position=(2.0, 0.0, 0.0))
            own = pb.getDynamicsInfo(ball.body, -1, physicsClientId=world.client)[1]
            assert ball.material == "pla" and ball.friction == getattr(MATERIALS["pla"], key)
            assert own * LIMB_FRICTION == pytest.approx(ball.friction)
            chosen = place_box(world, (0.05, 0.05, 0.05), mass=0.1, friction=0.3, position=(3.0, 0.0, 0.0))
            assert chosen.friction == 0.3


def test_static_objects_do_not_move_and_report_their_mass() -> None:
    with World(medium="water") as world:
        rock = place_sphere(world, 0.1, mass=0.0, material="rock")
        anchored = place_box(world, (0.1, 0.2, 0.3), density=2000.0, fixed=True, position=(1.0, 0.0, 0.0))
        world.step(200)
        assert rock.fixed and rock.mass == 0.0
        assert anchored.fixed and anchored.mass == pytest.approx(2000.0 * 0.006)
        assert anchored.added_mass == 0.0
        np.testing.assert_allclose(anchored.position(), [1.0, 0.0, 0.0], atol=1e-12)
        assert pb.getDynamicsInfo(anchored.body, -1, physicsClientId=world.client)[0] == 0.0


def test_kinematic_world_leaves_objects_where_placed_and_remove() -> None:
    with World(mode="kinematic", medium="water") as world:
        ball = place_sphere(world, 0.05, density=3000.0, position=(0.0, 0.0, 1.0))
        world.step(100)
        np.testing.assert_allclose(ball.position(), [0.0, 0.0, 1.0])
        ball.remove()
        assert world.objects == []
        with pytest.raises(ConfigurationError, match="^the sphere of body 0 was removed from its world$"):
            ball.pose()
    with pytest.raises(WorldClosedError):
        ball.position()


@pytest.mark.parametrize(
    "make, match",
    [
        (
            lambda w: place_sphere(w, -0.1, mass=1.0),
            r"^radius = -0\.1 is invalid; allowed: a number in \[0\.005, 10\] m$",
        ),
        (
            lambda w: place_sphere(w, 0.1, mass=1.0, density=1000.0),
            r"^mass = 1\.0 and density = 1000\.0 .*exactly one",
        ),
        (lambda w: place_sphere(w, 0.1), r"^mass = None and density = None .*exactly one of mass \(kg\)"),
        (
            lambda w: place_sphere(w, 0.1, mass=1.0, material="wood"),
            r"^material = 'wood' is invalid; allowed: 'pla'",
        ),
        (
            lambda w: place_box(w, (0.1, 0.1, 0.1), density=-5.0),
            r"^density = -5\.0 is invalid; allowed: .*\(0, 25000\]",
        ),
        (
            lambda w: place_box(w, (0.1, 0.1), mass=1.0),
            r"^size = \(0\.1, 0\.1\) is invalid; allowed: 3 finite",
        ),
        (lambda w: place_box(w, (0.1, 0.0, 0.1), mass=1.0), r"^size\[1\] = 0\.0 is invalid"),
        (lambda w: place_cylinder(w, 0.1, math.inf, mass=1.0), r"^length = inf is invalid"),
        (
            lambda w: place_cylinder(w, 0.1, 0.2, mass=1.0, position=(0, 0, math.nan)),
            r"^position = .* 3 finite",
        ),
        (
            lambda w: place_cylinder(w, 0.1, 0.2, mass=1.0, orientation=(0, 0, 0, 0)),
            r"^orientation = .*non-zero",
        ),
        (
            lambda w: place_sphere(w, 0.1, mass=1.0, friction=11.0),
            r"^friction = 11\.0 is invalid; allowed: .*\[0, 10\]",
        ),
        (lambda w: place_sphere(w, 0.1, mass=1.0, rgba=(1, 0, 0, 2)), r"^rgba = \(1, 0, 0, 2\) is invalid"),
        (lambda w: place_sphere(w, 0.1, mass=True), r"^mass = True is invalid"),
    ],
)
def test_bad_input_names_field_value_and_range(make, match: str) -> None:
    with World() as world:
        with pytest.raises(ConfigurationError, match=match) as info:
            make(world)
        assert "\n" not in str(info.value)
        assert world.objects == []
