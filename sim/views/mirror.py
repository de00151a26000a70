"""A scene's bodies in a viewer's own PyBullet client, posed by frames.

:class:`Mirror` loads every URDF body of a scene (:class:`~pccbullet.sim.views.scene.SceneBody`) into a
client of the viewer's process and, with ``shapes``, builds every other body from its base's visual shapes
(no mass, no collision). :meth:`Mirror.apply` takes a :class:`~pccbullet.sim.views.scene.SceneFrame`: each
limb's joint vector cut into its parts' stretches and set (a rod node's x-y-z Euler angles as its spherical
joint's quaternion), each later part hung on the link of the part before, the named bodies moved to their
base poses. So a frame's link poses are computed in the viewer's process, never in the loop that
publishes. The GUI viewer draws its client (:mod:`pccbullet.sim.views.gui`); the web view reads the links'
poses from it (:mod:`pccbullet.sim.views.web.tracked`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pccbullet.sim.views.scene import Pose, SceneBody, SceneFrame, Visual

PLANE_SIZE = 20.0  # m, the edge of the square a plane visual is drawn as (as the web view's page does)


def _compose(a: Pose, b: Pose) -> Pose:
    """Pose ``a * b``."""
    from pccbullet.sim.bullet import pb

    pos, orn = pb.multiplyTransforms(a[0], a[1], b[0], b[1])
    return tuple(pos), tuple(orn)


def _inverse(a: Pose) -> Pose:
    """Pose ``a`` inverted."""
    from pccbullet.sim.bullet import pb

    pos, orn = pb.invertTransform(a[0], a[1])
    return tuple(pos), tuple(orn)


def _positions(body: SceneBody, q: Sequence[float]) -> list[list[float]]:
    """A body's joint vector as PyBullet's per-joint positions: a spherical joint's three x-y-z Euler
    angles as its quaternion."""
    from pccbullet.urdf_gen.rod import node_quaternions

    if not body.spherical:
        return [[float(v)] for v in q]
    out, i = [], 0
    for spherical in body.spherical:
        if spherical:
            out.append(node_quaternions(np.asarray(q[i : i + 3], dtype=float)).tolist())
            i += 3
        else:
            out.append([float(q[i])])
            i += 1
    return out


def _visual_shape(pb: Any, cid: int, v: Visual) -> int:
    """A visual shape of ``v``'s geometry, colour and local frame in client ``cid``."""
    c = {
        "rgbaColor": v.rgba,
        "visualFramePosition": v.frame[0],
        "visualFrameOrientation": v.frame[1],
        "physicsClientId": cid,
    }
    d = v.dims
    if v.geom == pb.GEOM_BOX:
        return pb.createVisualShape(pb.GEOM_BOX, halfExtents=[0.5 * e for e in d], **c)
    if v.geom in (pb.GEOM_CYLINDER, pb.GEOM_CAPSULE):
        return pb.createVisualShape(v.geom, radius=d[1], length=d[0], **c)
    if v.geom == pb.GEOM_MESH:
        return pb.createVisualShape(pb.GEOM_MESH, fileName=v.mesh, meshScale=list(d), **c)
    if v.geom == pb.GEOM_PLANE:  # PyBullet draws no plane visual: a thin square
        return pb.createVisualShape(pb.GEOM_BOX, halfExtents=[0.5 * PLANE_SIZE] * 2 + [0.001], **c)
    return pb.createVisualShape(pb.GEOM_SPHERE, radius=d[0], **c)


def _build_shape(pb: Any, cid: int, body: SceneBody) -> int:
    """A body of ``body``'s base visual shapes (no mass, no collision) at its pose, in client ``cid``: the
    first on the base, the others on links fixed to it."""
    shapes = [_visual_shape(pb, cid, v) for v in body.visuals if v.link == -1]
    origin, still = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)
    more = len(shapes[1:])
    return pb.createMultiBody(
        0,
        -1,
        shapes[0] if shapes else -1,
        body.pose[0],
        body.pose[1],
        baseInertialFramePosition=body.inertial[0],
        baseInertialFrameOrientation=body.inertial[1],
        linkMasses=[0.0] * more,
        linkCollisionShapeIndices=[-1] * more,
        linkVisualShapeIndices=shapes[1:],
        linkPositions=[origin] * more,
        linkOrientations=[still] * more,
        linkInertialFramePositions=[origin] * more,
        linkInertialFrameOrientations=[still] * more,
        linkParentIndices=[0] * more,
        linkJointTypes=[pb.JOINT_FIXED] * more,
        linkJointAxis=[(0.0, 0.0, 1.0)] * more,
        physicsClientId=cid,
    )


class Mirror:
    """``bodies`` in PyBullet client ``client`` (module docstring), posed as captured until a frame moves
    them.

    Attributes:
        bodies: the bodies by name. ids: their body ids in the client (URDF bodies; with ``shapes`` every
            body). bases: every body's base link frame (m, world). moved: the bodies moved since the
            caller last cleared it (all of them at first).
    """

    def __init__(self, client: int, bodies: Sequence[SceneBody], *, shapes: bool = False) -> None:
        from pccbullet.sim.bullet import pb

        self.pb, self.client = pb, client
        self.bodies: dict[str, SceneBody] = {b.name: b for b in bodies}
        self.ids: dict[str, int] = {}
        self.bases: dict[str, Pose] = {}
        for body in bodies:
            self.bases[body.name] = _compose(body.pose, _inverse(body.inertial))
            if body.urdf is not None:
                self.ids[body.name] = pb.loadURDF(body.urdf, useFixedBase=True, physicsClientId=client)
                pb.resetBasePositionAndOrientation(self.ids[body.name], *body.pose, physicsClientId=client)
            elif shapes:
                self.ids[body.name] = _build_shape(pb, client, body)
        self._parts = {  # a limb's first body -> its parts' bodies
            name: [name, *(n for n in self.bodies if n.startswith(f"{name}.part"))] for name in self.bodies
        }
        self.moved: set[str] = set(self.bodies)
        for body in bodies:  # every body as it was when captured, until a frame moves it
            if body.q:
                self._set_joints(body.name, body.q)
        self._hang()

    def _set_joints(self, name: str, q: Sequence[float]) -> None:
        body = self.bodies[name]
        if body.urdf is None or len(q) != body.width:
            return
        self.pb.resetJointStatesMultiDof(
            self.ids[name], list(body.joints), _positions(body, q), physicsClientId=self.client
        )
        self.moved.add(name)

    def _hang(self) -> None:
        """Hang every limb part whose parent part moved on its parent's link."""
        pb, cid = self.pb, self.client
        for name, body in self.bodies.items():
            if body.attach is not None and body.attach[0] in self.moved:
                parent = self.ids[body.attach[0]]
                state = pb.getLinkState(
                    parent, body.attach[1], computeForwardKinematics=1, physicsClientId=cid
                )
                self.bases[name] = (tuple(state[4]), tuple(state[5]))
                pose = _compose(self.bases[name], body.inertial)
                pb.resetBasePositionAndOrientation(self.ids[name], *pose, physicsClientId=cid)
                self.moved.add(name)

    def apply(self, frame: SceneFrame) -> None:
        """Pose the bodies as ``frame`` has them; names it does not know, and vectors of another length
        than the limb's, are ignored."""
        for limb, q in frame.joints.items():
            names = self._parts.get(limb, [])
            values = [float(v) for v in q]
            if sum(self.bodies[n].width for n in names) != len(values):
                continue
            i = 0
            for n in names:
                self._set_joints(n, values[i : i + self.bodies[n].width])
                i += self.bodies[n].width
        self._hang()
        for name, pose in frame.bases.items():
            if name in self.bodies:
                self.bases[name] = _compose(pose, _inverse(self.bodies[name].inertial))
                if name in self.ids:
                    self.pb.resetBasePositionAndOrientation(
                        self.ids[name], *pose, physicsClientId=self.client
                    )
                self.moved.add(name)
