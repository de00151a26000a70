"""What a viewer in another process needs to mirror a robot: its bodies (:class:`ViewerBody`, one per
limb part, :mod:`pccbullet.sim.limb.parts`) and, every frame, their joint positions and the parts' base
poses (:func:`limb_frames`). Used by :mod:`pccbullet.sim.views.gui`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ViewerBody:
    """One body to mirror: its URDF, base pose and (for limbs) the movable joints' indices, chain order.
    A limb loaded in parts (:mod:`pccbullet.sim.limb.parts`) is one body a part: ``{limb}`` the first,
    ``{limb}.part2`` ... the others, whose base poses come with every frame."""

    urdf: str
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float]
    joints: tuple[int, ...] = ()


def bodies_of(robot: Any) -> dict[str, ViewerBody]:
    """The head and limb bodies of a loaded :class:`~pccbullet.sim.robot.Robot`, by name (``"head"``,
    limbs; a limb in parts: a body each)."""
    from pccbullet.sim.bullet import pb

    cid = robot.world.client
    pos, orn = pb.getBasePositionAndOrientation(robot.head, physicsClientId=cid)
    out = {"head": ViewerBody(str(robot.urdfs.head), tuple(pos), tuple(orn))}
    for limb in robot.bodies:
        joints = robot.limb_joints(limb)
        for p, ((body, idx), path) in enumerate(zip(joints.parts, joints.files, strict=True)):
            pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=cid)
            out[_part_name(limb, p)] = ViewerBody(path, tuple(pos), tuple(orn), tuple(int(j) for j in idx))
    return out


def _part_name(limb: str, part: int) -> str:  # see ViewerBody
    return limb if part == 0 else f"{limb}.part{part + 1}"


def limb_frames(robot: Any) -> dict[str, Any]:
    """What a frame carries: the joint positions (PyBullet's, per joint) of every limb body of ``robot``
    and the base poses of the parts after a limb's first, by viewer body name."""
    out: dict[str, Any] = {}
    for limb in robot.bodies:
        for p, (base, positions) in enumerate(robot.limb_joints(limb).frame()):
            out[_part_name(limb, p)] = (base, positions)
    return out
