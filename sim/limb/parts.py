"""Limbs larger than a PyBullet body holds, loaded as several bodies (*parts*) joined by fixed constraints.

PyBullet's state holds 127 links, 121 joint positions and 122 velocities per body
(:mod:`pccbullet.sim.limb.joints`): a two-segment rod limb fits up to N = 11, an RRP one up to N = 19.
Beyond that the limb is cut inside slice bodies, as few cuts as fit: the cut slice is split into two
halves with the same frame and centre of mass, half its mass and half its inertia each, the first (with
the slice's shape) closing its part, the second (``{slice}_b``, no shape) the next part's floating base. A
fixed constraint (``JOINT_FIXED``, frames at the halves' centres of mass) holds them together, and no
pair of links of one limb collides, as within one body (PyBullet's default). Why inside a slice: the
joints on either side of a cut load its halves with large, opposite torques that the constraint solver
must cancel; a slice's mass keeps that well conditioned, where the nearly massless links inside the
joints would not (a limb cut at its segment's end link diverged within a step).

The dynamics kernels still see one tree, the whole-limb URDF (:mod:`pccbullet.sim.limb.dynamics`): what
PyBullet's constraint solver does at a cut is what the whole tree's rigid slice does, up to its
tolerance (a cut limb follows an uncut one at a size that fits: tests).
"""

from __future__ import annotations

import copy
import weakref
import xml.etree.ElementTree as ET
from pathlib import Path

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.limb.joints import MAX_LINKS, MAX_POSITIONS, MAX_VELOCITIES, Attachment, LimbJoints
from pccbullet.sim.objects.friction import LIMB_FRICTION
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.specs import LimbSpec
from pccbullet.urdf_gen.topology import Topology

CONSTRAINT_FORCE = 1e6  # N, the most a part's fixed constraint may pass on (never reached: not a limit)
# Bullet clamps every velocity coordinate of a multibody (its base's and its joints') to 100 units in the
# constraint solver's velocity updates. A part's floating base is half a slice: in water, where the joint
# torques carry the buoyancy of everything beyond, the step before the constraint acts spins it faster than
# that, and the clamp then breaks the constraint's impulse (two-segment limbs diverged in their first step
# at N >= 17 in water; 300 rad/s was enough at N = 20). No physical limb moves at these rates.
MAX_COORDINATE_VELOCITY = 1e6  # rad/s, m/s: Bullet's clamp, out of the way
_SIZE = {"fixed": (0, 0), "revolute": (1, 1), "continuous": (1, 1), "prismatic": (1, 1), "spherical": (4, 3)}


def _chain(root: ET.Element) -> tuple[list[str], dict[str, ET.Element], dict[str, str]]:
    """The links of a limb URDF in depth-first order (root first), each link's joint, each link's parent."""
    joint_of = {j.find("child").get("link", ""): j for j in root.findall("joint")}  # type: ignore[union-attr]
    parent = {c: j.find("parent").get("link", "") for c, j in joint_of.items()}  # type: ignore[union-attr]
    children: dict[str, list[str]] = {}
    for c, pa in parent.items():
        children.setdefault(pa, []).append(c)
    top = next(link.get("name", "") for link in root.findall("link") if link.get("name") not in parent)
    order, stack = [], [top]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(reversed(children.get(name, [])))
    return order, joint_of, parent


def plan_cuts(urdf: Path, limb: LimbSpec) -> list[str]:
    """The slice links at which ``limb``'s URDF is cut so that every part fits one PyBullet body (none if
    the whole limb fits): greedy, each part as long as it fits.

    Raises:
        ConfigurationError: a part cannot fit between two slices.
    """
    order, joint_of, _ = _chain(ET.parse(urdf).getroot())
    slices = set(naming.section_body_links(limb))
    cuts: list[str] = []
    size = [0, 0, 0]  # links besides the root, positions, velocities of the part so far
    last_slice: tuple[str, list[int]] | None = None  # the latest slice in this part and the size up to it
    for name in order[1:]:
        q, u = _SIZE[joint_of[name].get("type", "fixed")]
        size = [size[0] + 1, size[1] + q, size[2] + u]
        if size[0] > MAX_LINKS or size[1] > MAX_POSITIONS or size[2] > MAX_VELOCITIES:
            if last_slice is None:
                raise ConfigurationError(
                    f"limb '{limb.name}' cannot be cut into parts PyBullet holds (at most {MAX_LINKS} links, "
                    f"{MAX_POSITIONS} joint positions and {MAX_VELOCITIES} velocities per body, bullet3 "
                    f"#4621) between two of its slices; allowed: fewer joints between two slices"
                )
            cut, at = last_slice
            cuts.append(cut)
            size = [size[0] - at[0], size[1] - at[1], size[2] - at[2]]  # the new part's base: the cut's half
            last_slice = None
        if name in slices:
            last_slice = (name, list(size))
    return cuts


def _halve(link: ET.Element) -> None:
    """Halve a link's mass and inertia in place (its centre of mass stays)."""
    inertial = link.find("inertial")
    if inertial is None:
        return
    mass = inertial.find("mass")
    if mass is not None:
        mass.set("value", repr(0.5 * float(mass.get("value", "0"))))
    inertia = inertial.find("inertia")
    if inertia is not None:
        for key, value in inertia.attrib.items():
            inertia.set(key, repr(0.5 * float(value)))


def part_base_link(cut: str) -> str:
    """The floating base of the part that starts at slice ``cut``: its second half."""
    return f"{cut}_b"


def split_urdf(urdf: Path, cuts: list[str], folder: Path) -> list[Path]:
    """Write one URDF per part of the limb file ``urdf`` cut at the slice links ``cuts`` into ``folder``
    (mesh paths made absolute); ``[urdf]`` without cuts."""
    if not cuts:
        return [urdf]
    root = ET.parse(urdf).getroot()
    for mesh in root.iter("mesh"):
        name = mesh.get("filename", "")
        if name and not Path(name).is_absolute() and "://" not in name:
            mesh.set("filename", str((urdf.parent / name).resolve()))
    links = {link.get("name", ""): link for link in root.findall("link")}
    order, joint_of, parent = _chain(root)
    bounds = [order[0], *cuts]
    out: list[Path] = []
    for p, start in enumerate(bounds):
        stop = cuts[p] if p < len(cuts) else None
        robot = ET.Element("robot", name=f"{root.get('name', 'limb')}_part{p + 1}")
        for other in root:  # materials and other file-wide elements
            if other.tag not in ("link", "joint"):
                robot.append(copy.deepcopy(other))
        base = copy.deepcopy(links[start])
        if p > 0:  # the second half of the cut slice, without its shape
            base.set("name", part_base_link(start))
            for tag in ("visual", "collision"):
                for el in base.findall(tag):
                    base.remove(el)
            _halve(base)
        robot.append(base)
        inside = {start}
        for name in order[order.index(start) + 1 :]:
            if parent[name] not in inside or parent[name] == stop:
                continue
            inside.add(name)
            link = copy.deepcopy(links[name])
            if name == stop:
                _halve(link)
            joint = copy.deepcopy(joint_of[name])
            if p > 0 and parent[name] == start:
                joint.find("parent").set("link", base.get("name", ""))  # type: ignore[union-attr]
            robot.append(link)
            robot.append(joint)
        path = folder / f"{urdf.stem}_part{p + 1}.urdf"
        ET.ElementTree(robot).write(path, encoding="unicode")
        out.append(path)
    return out


def attach(client: int, parent: int, link: int, child: int) -> Attachment:
    """Join part body ``child``'s base to link ``link`` of body ``parent`` (both halves of one segment end
    link: equal link frames and centres of mass) with a fixed constraint."""
    p_info = pb.getDynamicsInfo(parent, link, physicsClientId=client)
    c_info = pb.getDynamicsInfo(child, -1, physicsClientId=client)
    # the constraint's frames are given in each link's inertial frame: the link origin seen from there
    p_pos, p_orn = pb.invertTransform(p_info[3], p_info[4])
    c_pos, c_orn = pb.invertTransform(c_info[3], c_info[4])
    constraint = pb.createConstraint(
        parent,
        link,
        child,
        -1,
        pb.JOINT_FIXED,
        [0.0, 0.0, 0.0],
        p_pos,
        c_pos,
        p_orn,
        c_orn,
        physicsClientId=client,
    )
    pb.changeConstraint(constraint, maxForce=CONSTRAINT_FORCE, physicsClientId=client)
    inertial = (tuple(c_info[3]), tuple(c_info[4]))
    return Attachment(parent, link, child, constraint, inertial)


PART_GROUP_BITS = 30  # collision-filter bits 1..30 tell the limbs in parts apart (bit 0: everything else)
_bits_used: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()


def next_part_bit(world: object) -> int:
    """The next collision-filter bit for a limb in parts in ``world`` (1, 2, ...)."""
    _bits_used[world] = _bits_used.get(world, 0) + 1
    return _bits_used[world]


def no_collisions_within(client: int, bodies: tuple[int, ...], bit: int) -> None:
    """No pair of links of two parts of one limb collides (a body's own links do not, by PyBullet's
    default): every shaped link of the parts gets the collision group ``1 << bit`` and the mask of every
    group but it. Bodies of the default group (1) and mask (all) still touch them, and so do other limbs
    in parts (other bits). Links that already collide with nothing (group 0) keep it.

    Raises:
        ConfigurationError: ``bit`` is not in ``1..PART_GROUP_BITS`` (too many limbs in parts in a world).
    """
    if not 1 <= bit <= PART_GROUP_BITS:
        raise ConfigurationError(
            f"{bit} limbs in parts in one world are too many; allowed: at most {PART_GROUP_BITS}"
        )
    group = 1 << bit
    mask = ~group  # every bit but the group's (PyBullet's filters are C ints)
    for body in bodies:
        for link in range(-1, pb.getNumJoints(body, physicsClientId=client)):
            if pb.getCollisionShapeData(body, link, physicsClientId=client):
                pb.setCollisionFilterGroupMask(body, link, group, mask, physicsClientId=client)


def load_limb(
    client: int,
    limb: LimbSpec,
    urdf: Path,
    chain: Topology,
    pose: tuple[list[float], list[float]],
    links: dict[str, tuple[int, int]],
    *,
    folder: Path,
    owner: object,
    fixed_base: bool = True,
) -> LimbJoints:
    """Load ``limb``'s ``urdf`` (its ``chain``) into ``client`` at the world ``pose`` of its base link
    (position, quaternion ``x, y, z, w``), in as few parts as PyBullet holds (split files in ``folder``),
    the first part's base fixed or floating (``fixed_base``); record every link's ``(body, index)`` in
    ``links``; return the limb's joints. Bullet's default link damping off (the material and the fluid are
    the damping: a freely spinning limb lost 21 % of its kinetic energy per second with it) and Bullet's
    velocity clamp out of the way (:data:`MAX_COORDINATE_VELOCITY`); links without a shape out of every
    collision pair; the parts of one limb apart by a collision bit of ``owner``'s
    (:func:`next_part_bit`)."""
    flags = pb.URDF_USE_INERTIA_FROM_FILE | pb.URDF_USE_IMPLICIT_CYLINDER
    cuts = plan_cuts(urdf, limb)
    files = split_urdf(urdf, cuts, folder)
    parts: list[int] = []
    attachments, joints = [], {}
    for p, path in enumerate(files):
        body = pb.loadURDF(
            str(path),
            pose[0],
            pose[1],
            useFixedBase=fixed_base and p == 0,
            flags=flags,
            physicsClientId=client,
        )
        parts.append(body)
        pb.changeDynamics(
            body,
            -1,
            linearDamping=0.0,
            angularDamping=0.0,
            maxJointVelocity=MAX_COORDINATE_VELOCITY,
            physicsClientId=client,
        )
        links[part_base_link(cuts[p - 1]) if p else naming.base_link(limb.name)] = (body, -1)
        for j in range(pb.getNumJoints(body, physicsClientId=client)):
            info = pb.getJointInfo(body, j, physicsClientId=client)
            joints[info[1].decode()] = (body, j)
            links[info[12].decode()] = (body, j)
        if p > 0:  # on the first half of the cut slice
            cut = links[cuts[p - 1]]
            attachments.append(attach(client, cut[0], cut[1], body))
        # PyBullet gives every link a collider, an empty one where the URDF has no shape (the links inside a
        # section's joints, markers): those can never touch anything, yet their boxes pair with every
        # neighbour in the broadphase. They are left out of every pair (group and mask 0).
        for j in range(-1, pb.getNumJoints(body, physicsClientId=client)):
            if not pb.getCollisionShapeData(body, j, physicsClientId=client):
                pb.setCollisionFilterGroupMask(body, j, 0, 0, physicsClientId=client)
            else:  # the silicone's side of the friction convention (pccbullet.sim.objects.friction)
                pb.changeDynamics(body, j, lateralFriction=LIMB_FRICTION, physicsClientId=client)
    if len(parts) > 1:
        no_collisions_within(client, tuple(parts), next_part_bit(owner))
    names = chain.joint_names(limb)
    by_part = [tuple(joints[n][1] for n in names if joints[n][0] == body) for body in parts]
    return LimbJoints(
        client,
        tuple(zip(parts, by_part, strict=True)),
        tuple(k == "spherical" for k in chain.joint_kinds(limb)),
        tuple(attachments),
        tuple(str(f) for f in files),
    )
