"""A viewer in its own process, mirroring the physics world's joint states.

PyBullet holds the GIL and its GUI renders in the calling process, so a GUI client in the physics
process stalls a 1 kHz loop. The physics runs in DIRECT mode; :class:`ViewerProcess` starts a second
process with its own PyBullet client (GUI when asked, DIRECT for tests) that loads the same URDFs and
applies the joint vectors :meth:`ViewerProcess.publish` sends at the visual rate. The queue holds two
frames: when the viewer falls behind, frames are dropped, never the physics slowed.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
from dataclasses import dataclass
from typing import Any

import numpy as np

QUEUE_FRAMES = 2


@dataclass(frozen=True, slots=True)
class ViewerBody:
    """One body to mirror: its URDF, base pose and (for limbs) the joint indices in vector order."""

    urdf: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    joints: tuple[int, ...] = ()


def bodies_of(robot: Any) -> dict[str, ViewerBody]:
    """The head and limb bodies of a loaded :class:`sim.world.Robot`, keyed by name (``"head"``, limbs)."""
    from sim.bullet import pb

    cid = robot.world.client
    out = {}
    for name, path, body in [("head", robot.urdfs.head, robot.head)] + [
        (limb, robot.urdfs.limbs[limb], robot.bodies[limb]) for limb in robot.bodies
    ]:
        pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=cid)
        joints = tuple(int(j) for j in robot.joint_indices(name)) if name != "head" else ()
        out[name] = ViewerBody(str(path), tuple(pos), tuple(orn), joints)
    return out


def _viewer_main(bodies: dict[str, ViewerBody], frames: mp.Queue, report: mp.Queue, gui: bool) -> None:
    from sim.bullet import pb

    cid = pb.connect(pb.GUI if gui else pb.DIRECT)
    ids = {
        name: pb.loadURDF(b.urdf, b.position, b.orientation, useFixedBase=True, physicsClientId=cid)
        for name, b in bodies.items()
    }
    applied = 0
    last: dict[str, list[float]] = {}
    while True:
        frame = frames.get()
        if frame is None:
            break
        for name, q in frame.items():
            idx = list(bodies[name].joints)
            pb.resetJointStatesMultiDof(ids[name], idx, [[v] for v in q], physicsClientId=cid)
            last[name] = [pb.getJointState(ids[name], j, physicsClientId=cid)[0] for j in idx[:3]]
        applied += 1
    report.put({"applied": applied, "first_joints": last})
    pb.disconnect(cid)


class ViewerProcess:
    """Start a mirror viewer for ``robot``; ``gui=False`` runs it headless (for tests)."""

    def __init__(self, robot: Any, *, gui: bool = True) -> None:
        ctx = mp.get_context("spawn")
        self._frames: mp.Queue = ctx.Queue(maxsize=QUEUE_FRAMES)
        self._report: mp.Queue = ctx.Queue()
        self.dropped = 0
        self.sent = 0
        self._robot = robot
        self._process = ctx.Process(
            target=_viewer_main, args=(bodies_of(robot), self._frames, self._report, gui), daemon=True
        )
        self._process.start()

    def publish(self) -> bool:
        """Send the robot's current joint vectors; returns False (and counts a drop) if the viewer lags."""
        frame = {limb: np.asarray(self._robot.joints(limb)).tolist() for limb in self._robot.bodies}
        try:
            self._frames.put_nowait(frame)
        except queue.Full:
            self.dropped += 1
            return False
        self.sent += 1
        return True

    def close(self, timeout: float = 10.0) -> dict[str, Any]:
        """Stop the viewer; returns its report (frames applied, first joints of each limb it last showed)."""
        self._frames.put(None, timeout=timeout)
        report = self._report.get(timeout=timeout)
        self._process.join(timeout=timeout)
        return report
