"""The view process's side of a scene: the page's geometry once, then the link poses of every frame.

:class:`Mirror` loads the scene's URDF bodies into a PyBullet client of its own (DIRECT), so that a frame
of joint vectors becomes link poses here, in the view's process, and never in the loop that publishes.
:meth:`Mirror.scene_message` describes every visual shape for the page (boxes, spheres, cylinders, capsules,
planes and meshes, read once with trimesh and sent as little-endian float32 / uint32 arrays in base64),
each attached to a *tracked link*; :meth:`Mirror.poses` gives the world pose of every tracked link, in
order, as ``(n, 7) float32`` rows ``x y z qx qy qz qw`` (m).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pccbullet.sim.views.web.scene import Pose, WebBody, WebScene

GEOM_KINDS = {2: "sphere", 3: "box", 4: "cylinder", 5: "mesh", 6: "plane", 7: "capsule"}  # PyBullet's GEOM_*


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(
        np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    ).decode()


def _mesh(path: str, scale: Sequence[float]) -> dict[str, Any] | None:
    """``{"v": float32 xyz, "f": uint32 triangles}`` in base64 of a mesh file scaled by ``scale``; ``None``
    if it cannot be read."""
    import trimesh

    try:
        mesh: Any = trimesh.load(path, force="mesh", process=False)
    except (OSError, ValueError):
        return None
    vertices = np.asarray(mesh.vertices, dtype=np.float32) * np.asarray(scale, dtype=np.float32)
    return {"v": _b64(vertices.astype(np.float32)), "f": _b64(np.asarray(mesh.faces, dtype=np.uint32))}


def _compose(a: Pose, b: Pose) -> Pose:
    """Pose ``a * b``."""
    from pccbullet.sim.bullet import pb

    pos, orn = pb.multiplyTransforms(a[0], a[1], b[0], b[1])
    return tuple(pos), tuple(orn)  # type: ignore[return-value]


def _inverse(a: Pose) -> Pose:
    from pccbullet.sim.bullet import pb

    pos, orn = pb.invertTransform(a[0], a[1])
    return tuple(pos), tuple(orn)  # type: ignore[return-value]


def _positions(body: WebBody, q: Sequence[float]) -> list[list[float]]:
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


class Mirror:
    """The scene ``scene`` in a PyBullet client of the view process (module docstring)."""

    def __init__(self, scene: WebScene) -> None:
        from pccbullet.sim.bullet import pb

        self.pb = pb
        self.scene = scene
        self.cid = pb.connect(pb.DIRECT)
        self.ids: dict[tuple[str, str], int] = {}  # (group, body) -> body id here (URDF bodies)
        self.bodies: dict[tuple[str, str], WebBody] = {}
        self.bases: dict[tuple[str, str], Pose] = {}  # (group, body) -> base link frame (m, world)
        self.links: list[tuple[str, str, int]] = []  # tracked links: (group, body, link index)
        for group in scene.groups:
            for body in group.bodies:
                key = (group.name, body.name)
                self.bodies[key] = body
                self.bases[key] = _compose(body.pose, _inverse(body.inertial))
                if body.urdf is not None:
                    self.ids[key] = pb.loadURDF(body.urdf, useFixedBase=True, physicsClientId=self.cid)
                    pb.resetBasePositionAndOrientation(self.ids[key], *body.pose, physicsClientId=self.cid)
                links = {v.link for v in body.visuals}
                if group.lamp is not None and group.lamp[0] == body.name:
                    links.add(group.lamp[1])
                self.links.extend((group.name, body.name, link) for link in sorted(links))
        self._index = {link: i for i, link in enumerate(self.links)}
        self._poses = np.zeros((len(self.links), 7), dtype=np.float32)
        self._poses[:, 6] = 1.0
        self._moved = set(self.bodies)  # bodies whose tracked links need computing
        # every body as it was when captured, until a frame moves it
        self.update({g.name: {b.name: b.q for b in g.bodies if b.q} for g in scene.groups})

    def scene_message(self) -> dict[str, Any]:
        """The page's scene: groups, items (geometry, local frame, colour, tracked link), shared meshes."""
        meshes: dict[str, dict[str, Any] | None] = {}
        groups = []
        for group in self.scene.groups:
            items = []
            for body in group.bodies:
                for v in body.visuals:
                    kind = GEOM_KINDS.get(v.geom)
                    if kind is None:
                        continue
                    item: dict[str, Any] = {
                        "link": self._index[(group.name, body.name, v.link)],
                        "kind": kind,
                        "dims": list(v.dims),
                        "pos": list(v.frame[0]),
                        "quat": list(v.frame[1]),
                        "rgba": list(v.rgba),
                    }
                    if kind == "mesh":
                        key = f"{v.mesh}|{v.dims}"
                        if key not in meshes:
                            meshes[key] = _mesh(v.mesh, v.dims)
                        if meshes[key] is None:
                            continue
                        item["mesh"] = key
                    items.append(item)
            lamp = None
            if group.lamp is not None:
                lamp = self._index[(group.name, *group.lamp)]
            groups.append(
                {
                    "name": group.name,
                    "title": group.title,
                    "items": items,
                    "lamp": lamp,
                    "background": list(group.background),
                }
            )
        return {
            "type": "scene",
            "title": self.scene.title,
            "groups": groups,
            "meshes": {k: m for k, m in meshes.items() if m is not None},
            "links": len(self.links),
            "help": list(self.scene.help),
            "keys": list(self.scene.keys),
            "camera": [list(map(float, self.scene.camera[0])), list(map(float, self.scene.camera[1]))],
            "force_bar": self.scene.force_bar,
        }

    def update(
        self,
        joints: Mapping[str, Mapping[str, Sequence[float]]],
        bases: Mapping[str, Mapping[str, Pose]] | None = None,
    ) -> None:
        """Take a frame's joint vectors and base poses (by group, then body); unknown names are ignored."""
        pb, cid = self.pb, self.cid
        for group, vectors in joints.items():
            for name, q in vectors.items():
                key = (group, name)
                body = self.bodies.get(key)
                if body is None or key not in self.ids or len(q) != body.width:
                    continue
                pb.resetJointStatesMultiDof(
                    self.ids[key], list(body.joints), _positions(body, q), physicsClientId=cid
                )
                self._moved.add(key)
        for key, body in self.bodies.items():  # limb parts hang on the part before
            if body.attach is not None and (key[0], body.attach[0]) in self._moved:
                parent = self.ids[(key[0], body.attach[0])]
                state = pb.getLinkState(
                    parent, body.attach[1], computeForwardKinematics=1, physicsClientId=cid
                )
                self.bases[key] = (tuple(state[4]), tuple(state[5]))  # type: ignore[assignment]
                pose = _compose(self.bases[key], body.inertial)
                pb.resetBasePositionAndOrientation(self.ids[key], *pose, physicsClientId=cid)
                self._moved.add(key)
        for group, poses in (bases or {}).items():
            for name, pose in poses.items():
                key = (group, name)
                if key in self.bodies:
                    self.bases[key] = _compose(pose, _inverse(self.bodies[key].inertial))
                    if key in self.ids:
                        pb.resetBasePositionAndOrientation(self.ids[key], *pose, physicsClientId=cid)
                    self._moved.add(key)

    def poses(self) -> np.ndarray:
        """World poses of the tracked links, ``(n, 7) float32`` (module docstring)."""
        pb, cid = self.pb, self.cid
        moved, self._moved = self._moved, set()
        by_body: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for i, (group, name, link) in enumerate(self.links):
            if (group, name) in moved:
                by_body.setdefault((group, name), []).append((i, link))
        for key, rows in by_body.items():
            base = self.bases[key]
            children = [link for _, link in rows if link >= 0]
            states = {}
            if children and key in self.ids:
                got = pb.getLinkStates(
                    self.ids[key], children, computeForwardKinematics=1, physicsClientId=cid
                )
                states = {link: (s[4], s[5]) for link, s in zip(children, got, strict=True)}
            for i, link in rows:
                pose = base if link < 0 else states.get(link)
                if pose is not None:
                    self._poses[i, :3] = pose[0]
                    self._poses[i, 3:] = pose[1]
        return self._poses

    def close(self) -> None:
        """Disconnect the client."""
        if self.pb.isConnected(self.cid):
            self.pb.disconnect(self.cid)
