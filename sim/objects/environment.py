"""The world around the robot: seabed, objects, contact forces per link, the palpation force sensor.

Contact forces come from PyBullet's contact points: the force on body A at a point is
``normalForce * normalOnB + lateralFriction1 * dir1 + lateralFriction2 * dir2`` (world frame).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.bullet import pb
from pccbullet.urdf_gen.specs import LimbSpec

SAND_RGBA = (0.76, 0.70, 0.50, 1.0)
ROCK_RGBA = (0.45, 0.45, 0.50, 1.0)
MESH_SUFFIXES = (".obj", ".stl")


class SceneWorld(Protocol):
    """What these functions use of a world (:class:`pccbullet.sim.world.World`)."""

    @property
    def client(self) -> int:
        """PyBullet physics client id."""
        ...

    def mark_moved(self) -> None:
        """Tell a kinematic world that a body moved, so that its next step refreshes contacts."""
        ...


class SensorRobot(Protocol):
    """What :func:`force_sensor` uses of a robot (:class:`pccbullet.sim.robot.Robot`)."""

    @property
    def world(self) -> SceneWorld:
        """The world the robot is loaded in."""
        ...

    def limb(self, name: str) -> LimbSpec:
        """The spec of limb ``name``."""
        ...

    def link_index(self, link: str) -> tuple[int, int]:
        """The body and PyBullet link index of a URDF link."""
        ...

    def link_pose(self, link: str) -> Transform:
        """World pose ``(4, 4)`` of a URDF link frame."""
        ...


def add_seabed(world: SceneWorld, z: float = -0.6, *, half_extent: float = 5.0) -> int:
    """A horizontal seabed at height ``z`` (m): an infinite collision plane, a sand-coloured visual."""
    cid = world.client
    plane = pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=cid)
    visual = pb.createVisualShape(
        pb.GEOM_BOX, halfExtents=[half_extent, half_extent, 0.001], rgbaColor=SAND_RGBA, physicsClientId=cid
    )
    body = pb.createMultiBody(0.0, plane, visual, [0.0, 0.0, z], physicsClientId=cid)
    world.mark_moved()
    return body


def add_sphere(
    world: SceneWorld,
    centre: Sequence[float],
    radius: float,
    *,
    mass: float = 0.0,
    rgba: Sequence[float] = ROCK_RGBA,
) -> int:
    """A sphere (m, kg; static if ``mass == 0``), e.g. a rock."""
    if not radius > 0.0:
        raise ConfigurationError(f"radius = {radius!r} is invalid; allowed: a number > 0 m")
    cid = world.client
    col = pb.createCollisionShape(pb.GEOM_SPHERE, radius=radius, physicsClientId=cid)
    vis = pb.createVisualShape(pb.GEOM_SPHERE, radius=radius, rgbaColor=list(rgba), physicsClientId=cid)
    body = pb.createMultiBody(mass, col, vis, list(centre), physicsClientId=cid)
    world.mark_moved()
    return body


def add_plane(world: SceneWorld, point: Sequence[float], normal: Sequence[float]) -> int:
    """A static infinite plane through ``point`` (m) with outward ``normal`` (e.g. a wall)."""
    n = np.asarray(normal, dtype=float)
    if not np.isfinite(n).all() or np.linalg.norm(n) < 1e-12:
        raise ConfigurationError(f"normal = {list(normal)!r} is invalid; allowed: a non-zero finite vector")
    n /= np.linalg.norm(n)
    cid = world.client
    plane = pb.createCollisionShape(pb.GEOM_PLANE, planeNormal=n.tolist(), physicsClientId=cid)
    body = pb.createMultiBody(0.0, plane, -1, list(point), physicsClientId=cid)
    world.mark_moved()
    return body


def add_object(
    world: SceneWorld,
    source: str | Path,
    position: Sequence[float],
    *,
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
    mass: float = 0.0,
    scale: float = 1.0,
) -> int:
    """Load an object from a URDF, or an OBJ/STL mesh (convex hull collision); static if ``mass == 0``.

    Args:
        source: file path (``.urdf``, ``.obj``, ``.stl``).
        position: (m); orientation: quaternion (x, y, z, w); mass: (kg); scale: mesh scale (-).
    """
    path = Path(source)
    if not path.is_file():
        raise ConfigurationError(f"object file {str(path)!r} does not exist")
    cid = world.client
    if path.suffix == ".urdf":
        body = pb.loadURDF(
            str(path),
            list(position),
            list(orientation),
            useFixedBase=mass == 0.0,
            globalScaling=scale,
            physicsClientId=cid,
        )
    elif path.suffix.lower() in MESH_SUFFIXES:
        col = pb.createCollisionShape(
            pb.GEOM_MESH, fileName=str(path), meshScale=[scale] * 3, physicsClientId=cid
        )
        vis = pb.createVisualShape(
            pb.GEOM_MESH, fileName=str(path), meshScale=[scale] * 3, rgbaColor=ROCK_RGBA, physicsClientId=cid
        )
        body = pb.createMultiBody(mass, col, vis, list(position), list(orientation), physicsClientId=cid)
    else:
        raise ConfigurationError(f"object file {str(path)!r} has an unknown type; allowed: .urdf, .obj, .stl")
    if body < 0:
        raise ConfigurationError(f"PyBullet could not load object file {str(path)!r}")
    world.mark_moved()
    return body


def contact_point_force(c: Sequence[Any]) -> FloatArray:
    """The force on body A at one of PyBullet's contact points ``c`` (a ``getContactPoints`` row), world
    frame, ``(3,) float`` (N). Exact for rows as Bullet holds them (an unfiltered query, or ``bodyA`` the
    first body of Bullet's pair): where a ``bodyA`` filter turns a point round, PyBullet flips its normal
    but not its friction directions, so the friction part then has the wrong sign."""
    return c[9] * np.asarray(c[7]) + c[10] * np.asarray(c[11]) + c[12] * np.asarray(c[13])


def contact_forces(world: SceneWorld, body: int) -> dict[int, FloatArray]:
    """Total contact force on each link of ``body`` from other bodies, world frame, ``{link: (3,)}`` (N)."""
    out: dict[int, FloatArray] = {}
    for c in pb.getContactPoints(bodyA=body, physicsClientId=world.client):
        if c[2] == body:
            continue  # self-contact is internal
        out[c[3]] = out.get(c[3], np.zeros(3)) + contact_point_force(c)
    return out


def deepest_penetration(world: SceneWorld, body: int) -> float:
    """Largest penetration depth (m, >= 0) of ``body`` into any other body at the last contact update."""
    points = pb.getContactPoints(bodyA=body, physicsClientId=world.client)
    depths = [-c[8] for c in points if c[2] != body]
    return max([0.0, *depths])


def force_sensor(robot: SensorRobot, limb: str) -> FloatArray:
    """Force the world exerts on ``limb``'s force-sensor payload, in the sensor frame, ``(3,)`` (N).

    Raises:
        ConfigurationError: the limb carries no force sensor.
    """
    spec = robot.limb(limb)
    if spec.payload is None or spec.payload.kind != "force_sensor":
        raise ConfigurationError(f"limb '{limb}' has no force sensor payload")
    body, link = robot.link_index(spec.payload.frame)
    f_world = contact_forces(robot.world, body).get(link, np.zeros(3))
    R = robot.link_pose(spec.payload.frame)[:3, :3]
    return R.T @ f_world
