"""The scene every viewer draws: a world's bodies, captured once, and the frames that move them.

A :class:`SceneBody` is one body as a viewer needs it: its visual shapes (:class:`Visual`: primitives or
mesh files, their local frames and colours, as PyBullet's ``getVisualShapeData`` gives them), its base pose
and, for a body loaded from a URDF, the file and its movable joints in vector order. A limb loaded in parts
(:mod:`pccbullet.sim.limb.parts`) is one body a part, ``{limb}`` then ``{limb}.part2`` ..., each hung on the
part before. A :class:`SceneFrame` is a world's state at one time: every limb's joint vector (the user's,
:mod:`pccbullet.sim.limb.joints`: a rod chain's node as three x-y-z Euler angles) by the name of its first
body, and the base poses of the bodies that move, by name (:func:`world_frame`).

The GUI viewer (:mod:`pccbullet.sim.views.gui`) and the web view (:mod:`pccbullet.sim.views.web`) load the
bodies into PyBullet clients of their own and pose them from the frames there
(:class:`~pccbullet.sim.views.mirror.Mirror`): the loop that publishes only reads joint states. The demo's
renders record frames and put a world back into them (:func:`show_frame`). Everything here is plain data:
it is pickled to the viewers' processes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray

Pose = tuple[tuple[float, float, float], tuple[float, float, float, float]]  # position (m), quaternion xyzw
Rgb = tuple[float, float, float]  # a colour, 0..1 each
GEOM_KINDS = {2: "sphere", 3: "box", 4: "cylinder", 5: "mesh", 6: "plane", 7: "capsule"}  # PyBullet's GEOM_*


@dataclass(frozen=True, slots=True)
class Visual:
    """One visual shape of a body: PyBullet's ``geom`` type (``GEOM_BOX`` ..., one of
    :data:`GEOM_KINDS`), ``dims`` as ``getVisualShapeData`` gives them (box: edge lengths; sphere: radius
    first; cylinder, capsule: length, radius; mesh: scale; m), the ``mesh`` file (``GEOM_MESH``), the
    ``frame`` relative to link ``link`` (-1: the base) and the ``rgba`` colour."""

    link: int
    geom: int
    dims: tuple[float, float, float]
    mesh: str
    frame: Pose
    rgba: tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class SceneBody:
    """A body to show: its visual shapes; ``urdf``, ``joints`` (indices in vector order) and their values
    ``q`` when captured, when frames move its links by joint vectors (``spherical``: per joint, whether it
    is a spherical joint, three entries of ``q``, x-y-z Euler angles); its base ``pose`` (m, world: the
    base's inertial frame, as ``getBasePositionAndOrientation``) and the base's ``inertial`` frame relative
    to its link frame; ``attach``: a limb part's (body name, link index) of the part it hangs on.

    Raises:
        ConfigurationError: a visual whose ``geom`` is not one of :data:`GEOM_KINDS`.
    """

    name: str
    visuals: tuple[Visual, ...]
    pose: Pose
    inertial: Pose = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    urdf: str | None = None
    joints: tuple[int, ...] = ()
    q: tuple[float, ...] = ()
    spherical: tuple[bool, ...] = ()
    attach: tuple[str, int] | None = None

    def __post_init__(self) -> None:
        for v in self.visuals:
            if v.geom not in GEOM_KINDS:
                allowed = ", ".join(f"{g} ({kind})" for g, kind in GEOM_KINDS.items())
                raise ConfigurationError(
                    f"scene body {self.name!r}: geom = {v.geom!r} is invalid; allowed: {allowed}"
                )

    @property
    def width(self) -> int:
        """Entries of the body's joint vector."""
        return sum(3 if s else 1 for s in self.spherical) if self.spherical else len(self.joints)


@dataclass(frozen=True, slots=True)
class SceneFrame:
    """A world's state at time ``t`` (s, simulated): ``joints``, every limb's joint vector by the name of
    its first body (a limb's parts take their stretches of it), and ``bases``, base poses (m, world: the
    base's inertial frame) by body name."""

    t: float
    joints: Mapping[str, FloatArray] = field(default_factory=dict)
    bases: Mapping[str, Pose] = field(default_factory=dict)


def capture_body(
    client: int,
    body: int,
    name: str,
    *,
    urdf: str | None = None,
    joints: Sequence[int] = (),
    attach: tuple[str, int] | None = None,
) -> SceneBody:
    """The :class:`SceneBody` of PyBullet body ``body`` in client ``client`` now (visual shapes of a kind
    not in :data:`GEOM_KINDS`, which no viewer draws, left out)."""
    from pccbullet.sim.bullet import pb
    from pccbullet.urdf_gen.rod import node_angles_from_quaternions

    visuals = tuple(
        Visual(
            int(v[1]),
            int(v[2]),
            tuple(float(d) for d in v[3]),  # type: ignore[arg-type]
            v[4].decode(errors="replace") if isinstance(v[4], bytes) else str(v[4]),
            (tuple(v[5]), tuple(v[6])),
            tuple(float(c) for c in v[7]),  # type: ignore[arg-type]
        )
        for v in pb.getVisualShapeData(body, physicsClientId=client)
        if int(v[2]) in GEOM_KINDS
    )
    pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=client)
    info = pb.getDynamicsInfo(body, -1, physicsClientId=client)
    joints = [int(j) for j in joints]
    states = pb.getJointStatesMultiDof(body, joints, physicsClientId=client) if joints else []
    spherical = tuple(len(s[0]) == 4 for s in states)
    q: list[float] = []
    for s in states:
        q += node_angles_from_quaternions(s[0]).tolist() if len(s[0]) == 4 else [float(s[0][0])]
    return SceneBody(
        name,
        visuals,
        (tuple(pos), tuple(orn)),
        (tuple(info[3]), tuple(info[4])),
        urdf,
        tuple(joints),
        tuple(q),
        spherical if any(spherical) else (),
        attach,
    )


def part_names(limb: str, parts: int) -> list[str]:
    """The body names of a limb's parts: ``limb``, then ``limb.part2`` ..."""
    return [limb if p == 0 else f"{limb}.part{p + 1}" for p in range(parts)]


def body_name(body: int) -> str:
    """The name of a world's body that is not a robot's: ``body<id>``."""
    return f"body{body}"


def robot_bodies(robot: Any, prefix: str = "") -> tuple[SceneBody, ...]:
    """The head and limbs of a loaded :class:`~pccbullet.sim.robot.Robot`, named ``prefix + "head"`` and
    ``prefix + limb`` (a limb in parts: :func:`part_names`)."""
    cid = robot.world.client
    out = [capture_body(cid, robot.head, prefix + "head", urdf=str(robot.urdfs.head))]
    for limb in robot.bodies:
        joints = robot.limb_joints(limb)
        names = part_names(prefix + limb, len(joints.parts))
        for p, ((body, idx), urdf) in enumerate(zip(joints.parts, joints.files, strict=True)):
            at = joints.attachments[p - 1] if p else None
            attach = None if at is None else (names[p - 1], at.link)
            out.append(capture_body(cid, body, names[p], urdf=urdf, joints=idx, attach=attach))
    return tuple(out)


def robot_prefixes(world: Any) -> list[str]:
    """The name prefix of each robot of ``world``'s bodies: none for one robot, ``robot<i>/`` for several."""
    return [""] if len(world.robots) == 1 else [f"robot{i}/" for i in range(len(world.robots))]


def other_bodies(world: Any) -> list[int]:
    """The ids of ``world``'s bodies with a visual shape that are not its robots' (seabeds, rocks, placed
    objects, markers)."""
    from pccbullet.sim.bullet import pb

    cid = world.client
    taken = {
        body
        for robot in world.robots
        for body in (robot.head, *(b for limb in robot.bodies for b in robot.limb_joints(limb).bodies))
    }
    bodies = (pb.getBodyUniqueId(i, physicsClientId=cid) for i in range(pb.getNumBodies(physicsClientId=cid)))
    return [b for b in bodies if b not in taken and pb.getVisualShapeData(b, physicsClientId=cid)]


def world_bodies(world: Any) -> tuple[SceneBody, ...]:
    """Every body with a visual shape in a :class:`~pccbullet.sim.world.World`: its robots' heads and limbs
    (:func:`robot_bodies`; prefixed ``robot<i>/`` when there are several) and every other body
    (:func:`other_bodies`), named by :func:`body_name` (frames move them by their base pose)."""
    out: list[SceneBody] = []
    for robot, prefix in zip(world.robots, robot_prefixes(world), strict=True):
        out.extend(robot_bodies(robot, prefix))
    out.extend(capture_body(world.client, body, body_name(body)) for body in other_bodies(world))
    return tuple(out)


def world_limbs(world: Any) -> dict[str, tuple[Any, str]]:
    """Every limb of ``world``'s robots as (robot, limb name), by the name of its first body."""
    return {
        prefix + limb: (robot, limb)
        for robot, prefix in zip(world.robots, robot_prefixes(world), strict=True)
        for limb in robot.bodies
    }


def moving_robot_bodies(world: Any) -> dict[str, int]:
    """The heads and limb parts of ``world``'s robots whose body is free or moved, by their scene names
    (:func:`robot_bodies`): their base poses go into every frame."""
    out = {}
    for robot, prefix in zip(world.robots, robot_prefixes(world), strict=True):
        base = getattr(robot, "base", None)
        if base is None or not base.moves:
            continue
        out[prefix + "head"] = robot.head
        for limb in robot.bodies:
            parts = robot.limb_joints(limb).bodies
            out.update(zip(part_names(prefix + limb, len(parts)), parts, strict=True))
    return out


def world_frame(world: Any, bodies: Sequence[int] = ()) -> SceneFrame:
    """``world``'s state now: its limbs' joint vectors (read back exactly as PyBullet holds them), the
    base poses of ``bodies`` (ids, named by :func:`body_name`) and of the heads and limbs of robots whose
    body is free or moved (:func:`moving_robot_bodies`)."""
    from pccbullet.sim.bullet import pb

    cid = world.client
    joints = {name: robot.joints(limb) for name, (robot, limb) in world_limbs(world).items()}
    bases: dict[str, Pose] = {}
    named = [(body_name(body), body) for body in bodies] + list(moving_robot_bodies(world).items())
    for name, body in named:
        pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=cid)
        bases[name] = (tuple(pos), tuple(orn))
    return SceneFrame(world.time, joints, bases)


def show_frame(world: Any, frame: SceneFrame, bodies: Sequence[int] = ()) -> None:
    """Put ``world`` into ``frame``: its limbs' joints reset to the frame's vectors, ``bodies`` (ids, named
    by :func:`body_name`) moved to their base poses in it."""
    from pccbullet.sim.bullet import pb

    limbs = world_limbs(world)
    for name, q in frame.joints.items():
        robot, limb = limbs[name]
        robot.set_joints(limb, q)
    for body in bodies:
        pb.resetBasePositionAndOrientation(body, *frame.bases[body_name(body)], physicsClientId=world.client)
    for name, body in moving_robot_bodies(world).items():  # free and moved robots
        if name in frame.bases:
            pb.resetBasePositionAndOrientation(body, *frame.bases[name], physicsClientId=world.client)
    world.mark_moved()
