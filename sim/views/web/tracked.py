"""The view process's side of a page: its geometry once, then the tracked links' poses of every frame.

:class:`TrackedLinks` loads every panel's bodies into a PyBullet client of its own (DIRECT), one
:class:`~pccbullet.sim.views.mirror.Mirror` a panel, so that a frame's joint vectors become link poses here,
in the view's process, and never in the loop that publishes. :meth:`TrackedLinks.scene_message` describes
every visual shape for the page (boxes, spheres, cylinders, capsules, planes and meshes, read once with
trimesh and sent as little-endian float32 / uint32 arrays in base64), each attached to a *tracked link*;
:meth:`TrackedLinks.poses` gives the world pose of every tracked link, in order, as ``(n, 7) float32`` rows
``x y z qx qy qz qw`` (m).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pccbullet.sim.views.mirror import Mirror
from pccbullet.sim.views.scene import GEOM_KINDS, SceneFrame
from pccbullet.sim.views.web.layout import WebPage


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


class TrackedLinks:
    """The page ``page`` in a PyBullet client of the view process (module docstring)."""

    def __init__(self, page: WebPage) -> None:
        from pccbullet.sim.bullet import pb

        self.pb = pb
        self.page = page
        self.cid = pb.connect(pb.DIRECT)
        self.mirrors = {group.name: Mirror(self.cid, group.bodies) for group in page.groups}
        """Each panel's bodies, posed, by group name."""
        self.links: list[tuple[str, str, int]] = []  # tracked links: (group, body, link index)
        for group in page.groups:
            for body in group.bodies:
                links = {v.link for v in body.visuals}
                if group.lamp is not None and group.lamp[0] == body.name:
                    links.add(group.lamp[1])
                self.links.extend((group.name, body.name, link) for link in sorted(links))
        self._index = {link: i for i, link in enumerate(self.links)}
        self._poses = np.zeros((len(self.links), 7), dtype=np.float32)
        self._poses[:, 6] = 1.0

    def scene_message(self) -> dict[str, Any]:
        """The page's scene: groups, items (geometry, local frame, colour, tracked link), shared meshes."""
        meshes: dict[str, dict[str, Any] | None] = {}
        groups = []
        for group in self.page.groups:
            items = []
            for body in group.bodies:
                for v in body.visuals:
                    kind = GEOM_KINDS[v.geom]
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
            "title": self.page.title,
            "groups": groups,
            "meshes": {k: m for k, m in meshes.items() if m is not None},
            "links": len(self.links),
            "help": list(self.page.help),
            "keys": list(self.page.keys),
            "camera": [list(map(float, self.page.camera[0])), list(map(float, self.page.camera[1]))],
            "force_bar": self.page.force_bar,
        }

    def update(self, frames: Mapping[str, SceneFrame]) -> None:
        """Take a frame of each panel, by group name; unknown groups and names are ignored."""
        for group, frame in frames.items():
            mirror = self.mirrors.get(group)
            if mirror is not None:
                mirror.apply(frame)

    def poses(self) -> np.ndarray:
        """World poses of the tracked links, ``(n, 7) float32`` (module docstring)."""
        pb, cid = self.pb, self.cid
        moved = {(group, name) for group, mirror in self.mirrors.items() for name in mirror.moved}
        for mirror in self.mirrors.values():
            mirror.moved.clear()
        by_body: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for i, (group, name, link) in enumerate(self.links):
            if (group, name) in moved:
                by_body.setdefault((group, name), []).append((i, link))
        for (group, name), rows in by_body.items():
            mirror = self.mirrors[group]
            base = mirror.bases[name]
            children = [link for _, link in rows if link >= 0]
            states = {}
            if children and name in mirror.ids:
                got = pb.getLinkStates(
                    mirror.ids[name], children, computeForwardKinematics=1, physicsClientId=cid
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
