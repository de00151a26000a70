"""What a web view shows: groups of bodies captured from PyBullet worlds, and the frames that move them.

A :class:`WebScene` holds one or more :class:`WebGroup` (shown side by side, or one at a time), each a set
of :class:`WebBody`: the visual shapes of one PyBullet body (primitives or mesh files, their local frames
and colours, as ``getVisualShapeData`` gives them) and, for a body loaded from a URDF, the file and the
joint indices in vector order. A frame then carries joint vectors (the view's own process computes the
link poses from the URDF: the publishing loop only reads joint states) and the base poses of free bodies.
A limb's joint vector is the user's (:mod:`pccbullet.sim.limb.joints`: a rod chain's node as three
x-y-z Euler angles, which the view turns into its spherical joint's quaternion); a limb loaded in parts
(:mod:`pccbullet.sim.limb.parts`) is one body a part, ``{limb}`` then ``{limb}.part2`` ..., each taking its
stretch of the limb's vector, the later ones hung on the part before in the view's own process.
Everything here is plain data: it is pickled to the view's process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pccbullet.core.errors import ConfigurationError

Pose = tuple[tuple[float, float, float], tuple[float, float, float, float]]  # position (m), quaternion xyzw
Rgb = tuple[float, float, float]  # a colour, 0..1 each


@dataclass(frozen=True, slots=True)
class WebVisual:
    """One visual shape of a body: PyBullet's ``geom`` type (``GEOM_BOX`` ...), ``dims`` as
    ``getVisualShapeData`` gives them, the ``mesh`` file (``GEOM_MESH``), the ``frame`` relative to
    link ``link`` (-1: the base) and the ``rgba`` colour."""

    link: int
    geom: int
    dims: tuple[float, float, float]
    mesh: str
    frame: Pose
    rgba: tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class WebBody:
    """A body to show: its visual shapes; ``urdf``, ``joints`` (indices in vector order) and their values
    ``q`` when captured, when frames move its links by joint vectors (``spherical``: per joint, whether it
    is a spherical joint, three entries of ``q``, x-y-z Euler angles); its base ``pose`` (m, world: the
    base's inertial frame, as ``getBasePositionAndOrientation``) and the base's ``inertial`` frame relative
    to its link frame; ``attach``: a limb part's (body name, link index) of the part it hangs on."""

    name: str
    visuals: tuple[WebVisual, ...]
    pose: Pose
    inertial: Pose = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    urdf: str | None = None
    joints: tuple[int, ...] = ()
    q: tuple[float, ...] = ()
    spherical: tuple[bool, ...] = ()
    attach: tuple[str, int] | None = None

    @property
    def width(self) -> int:
        """Entries of the body's joint vector."""
        return sum(3 if s else 1 for s in self.spherical) if self.spherical else len(self.joints)


@dataclass(frozen=True, slots=True)
class WebGroup:
    """One panel of the page: ``bodies`` under a ``title``; ``lamp`` = (body name, link index) carries a
    spot light (the squid's lamp: the panel is then dark water lit by it); ``background`` rgb."""

    name: str
    title: str
    bodies: tuple[WebBody, ...]
    lamp: tuple[str, int] | None = None
    background: Rgb = (0.80, 0.86, 0.90)


@dataclass(frozen=True, slots=True)
class WebScene:
    """The page's scene: its ``groups``, the ``help`` lines shown under them, the ``keys`` whose presses
    and releases the page sends back (single characters: an operator's key table), the ``camera``'s eye and
    target (m, world), and the group whose force arrow fills the page's force bar (``force_bar``; ``None``:
    the first group with a force)."""

    groups: tuple[WebGroup, ...]
    title: str = "pccbullet"
    help: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    camera: tuple[Sequence[float], Sequence[float]] = ((1.25, -1.05, 0.15), (0.45, 0.0, -0.42))
    force_bar: str | None = None

    def __post_init__(self) -> None:
        names = [g.name for g in self.groups]
        if not names or len(set(names)) != len(names):
            raise ConfigurationError(
                f"web scene groups = {names!r} are invalid; allowed: distinct names, >= 1"
            )
        for key in self.keys:
            if len(key) != 1 or not key.isprintable():
                raise ConfigurationError(
                    f"web scene key {key!r} is invalid; allowed: one printable character"
                )


def capture_body(
    client: int,
    body: int,
    name: str,
    *,
    urdf: str | None = None,
    joints: Sequence[int] = (),
    attach: tuple[str, int] | None = None,
) -> WebBody:
    """The :class:`WebBody` of PyBullet body ``body`` in client ``client`` now."""
    from pccbullet.sim.bullet import pb
    from pccbullet.urdf_gen.rod import node_angles_from_quaternions

    visuals = tuple(
        WebVisual(
            int(v[1]),
            int(v[2]),
            tuple(float(d) for d in v[3]),  # type: ignore[arg-type]
            v[4].decode(errors="replace") if isinstance(v[4], bytes) else str(v[4]),
            (tuple(v[5]), tuple(v[6])),  # type: ignore[arg-type]
            tuple(float(c) for c in v[7]),  # type: ignore[arg-type]
        )
        for v in pb.getVisualShapeData(body, physicsClientId=client)
    )
    pos, orn = pb.getBasePositionAndOrientation(body, physicsClientId=client)
    info = pb.getDynamicsInfo(body, -1, physicsClientId=client)
    joints = [int(j) for j in joints]
    states = pb.getJointStatesMultiDof(body, joints, physicsClientId=client) if joints else []
    spherical = tuple(len(s[0]) == 4 for s in states)
    q: list[float] = []
    for s in states:
        q += node_angles_from_quaternions(s[0]).tolist() if len(s[0]) == 4 else [float(s[0][0])]
    return WebBody(
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


def robot_bodies(robot: Any, prefix: str = "") -> tuple[WebBody, ...]:
    """The head and limbs of a loaded :class:`~pccbullet.sim.robot.Robot`, named ``prefix + "head"`` and
    ``prefix + limb``."""
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


def part_names(limb: str, parts: int) -> list[str]:
    """The body names of a limb's parts: ``limb``, then ``limb.part2`` ..."""
    return [limb if p == 0 else f"{limb}.part{p + 1}" for p in range(parts)]


def split_vectors(
    bodies: Sequence[WebBody], vectors: Mapping[str, Sequence[float] | Any]
) -> dict[str, list[float]]:
    """Limbs' joint vectors by limb name cut into their parts' stretches by body name (:func:`part_names`),
    as the captured ``bodies`` hold them."""
    widths = {b.name: b.width for b in bodies}
    out: dict[str, list[float]] = {}
    for limb, q in vectors.items():
        values = [float(v) for v in q]
        names = [limb, *(n for n in widths if n.startswith(f"{limb}.part"))] if limb in widths else []
        if sum(widths[n] for n in names) != len(values):
            continue
        i = 0
        for n in names:
            out[n] = values[i : i + widths[n]]
            i += widths[n]
    return out


def robot_prefixes(world: Any) -> list[str]:
    """The name prefix of each robot of ``world``'s bodies: none for one robot, ``robot<i>/`` for several."""
    return [""] if len(world.robots) == 1 else [f"robot{i}/" for i in range(len(world.robots))]


def world_bodies(world: Any) -> tuple[WebBody, ...]:
    """Every body with a visual shape in a :class:`~pccbullet.sim.world.World`: its robots' heads and limbs
    (:func:`robot_bodies`; prefixed ``robot<i>/`` when there are several) and every other body, named
    ``body<id>`` (seabeds, rocks, markers: frames move them by their base pose)."""
    from pccbullet.sim.bullet import pb

    cid = world.client
    out: list[WebBody] = []
    taken: set[int] = set()
    for robot, prefix in zip(world.robots, robot_prefixes(world), strict=True):
        out.extend(robot_bodies(robot, prefix))
        taken.update([robot.head, *(b for limb in robot.bodies for b in robot.limb_joints(limb).bodies)])
    for i in range(pb.getNumBodies(physicsClientId=cid)):
        body = pb.getBodyUniqueId(i, physicsClientId=cid)
        if body not in taken and pb.getVisualShapeData(body, physicsClientId=cid):
            out.append(capture_body(cid, body, f"body{body}"))
    return tuple(out)
