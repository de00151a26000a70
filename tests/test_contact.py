"""Environment and contact: the seabed stops a limb; the palpation sensor reads the applied load."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.objects.environment import (
    add_object,
    add_plane,
    add_seabed,
    add_sphere,
    contact_forces,
    deepest_penetration,
    force_sensor,
)
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig


def test_limb_pressed_onto_seabed_stops_at_it() -> None:
    with World(medium="water") as world:
        robot = world.load_robot("ursula", sections=10)
        add_seabed(world, z=-0.45)
        # the target pose would put the tip about 50 mm below the seabed
        configs = [PccConfig(math.radians(60), 0.0, 0.3), PccConfig(math.radians(60), 0.0, 0.3)]
        robot.set_pcc("palpation", configs, mode="target")
        world.step(2500)
        body = robot.bodies["palpation"]
        assert deepest_penetration(world, body) < 2e-3
        assert robot.tip_pose("palpation")[2, 3] > -0.45 - 2e-3
        assert sum(np.linalg.norm(f) for f in contact_forces(world, body).values()) > 0.01  # it is pressing


def test_palpation_sensor_reads_the_applied_load_in_its_frame() -> None:
    with World(gravity=(0.0, 0.0, 0.0)) as world:
        robot = world.load_robot("ursula", sections=5)
        T = robot.link_pose("force_sensor_frame")
        axis, p = T[:3, 2], T[:3, 3]
        r_tip = robot.limb("palpation").segments[-1].radius_tip
        add_plane(world, (p + axis * r_tip).tolist(), (-axis).tolist())  # a wall touching the sensor
        body, link = robot._links["force_sensor_frame"]
        load = 1.5  # N, pushing the sensor into the wall
        for _ in range(1500):
            pb.applyExternalForce(
                body, link, (load * axis).tolist(), p.tolist(), pb.WORLD_FRAME, physicsClientId=world.client
            )
            world.step()
        reading = force_sensor(robot, "palpation")
    assert reading[2] == pytest.approx(-load, rel=0.05)  # the wall pushes back along -z of the sensor
    assert np.hypot(reading[0], reading[1]) < 0.05 * load


def test_objects_and_bad_inputs(tmp_path) -> None:
    import trimesh

    mesh = tmp_path / "rock.stl"
    trimesh.creation.icosphere(radius=0.05).export(mesh)
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        assert add_object(world, mesh, (0.8, 0.0, 0.0)) >= 0
        with pytest.raises(ConfigurationError, match=r"object file '.*missing\.obj' does not exist"):
            add_object(world, tmp_path / "missing.obj", (0, 0, 0))
        bad = tmp_path / "rock.xyz"
        bad.write_text("x")
        with pytest.raises(ConfigurationError, match=r"unknown type; allowed: \.urdf, \.obj, \.stl"):
            add_object(world, bad, (0, 0, 0))
        with pytest.raises(ConfigurationError, match=r"limb 'camera' has no force sensor payload"):
            force_sensor(robot, "camera")
        with pytest.raises(ConfigurationError, match=r"radius = -0.1 is invalid; allowed: a number > 0 m"):
            add_sphere(world, (0, 0, 0), -0.1)
        rock = add_sphere(world, (1.0, 0.0, 0.0), 0.05)
        assert pb.getCollisionShapeData(rock, -1, physicsClientId=world.client)[0][3][0] == pytest.approx(
            0.05
        )
        with pytest.raises(ConfigurationError, match=r"normal = \[0, 0, 0\] is invalid"):
            add_plane(world, (0, 0, 0), [0, 0, 0])
