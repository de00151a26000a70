"""The demo's robot (:data:`ROBOT`, or a user's robot file: :func:`demo_robot`) and scene
(:func:`demo_config`): the rock, the bar to retrieve, the limbs' drives and their start pose.

Another robot gets the scene made for its haptic limb (:func:`fitted_scene`): the rock where that limb's tip
reaches with the limb bent a quarter turn down, resting on the seabed, and no bar (``objects`` places
any); a robot without a force sensor has one fitted at the tip of its first limb without a payload, whose
contacts the operator then feels.

The bar is the grasp experiment's (``assets/experiments/grasper_grasp.toml``): a PLA rod on two rock posts
below the grasper, beside the rock the palpation arm touches. The camera and light tentacles start folded
up and out to the sides (:data:`FOLDED`): a 600 mm Ecoflex 00-30 tentacle cannot hold itself level in
water (straight, the camera tentacle's tip sinks about 45 cm within 1.3 s, 30 cm even on its tendons), and
each hangs over one of the arms mounted 120 mm below it; folded, they hang outside the arms. The grasper
runs on its tendons (the grasp holds its distal set, :mod:`pccbullet.teleop.slave`) and estimates its
contacts (a pressing grip otherwise loses tension to its spools' inertia).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.experiments.spec import experiments_dir
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.objects.spec import ObjectSpec
from pccbullet.teleop.channel import link_named
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.objects import load_objects
from pccbullet.urdf_gen.pcc import PccConfig, limb_transform
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.specs import LimbSpec, Payload, RobotSpec

ROBOT = "ursula"
"""The demo's robot, a bundled name (:func:`~pccbullet.urdf_gen.spec_loader.load_robot`): read once, by
:func:`~pccbullet.teleop.demo.run.run_demo`, and handed down to the master and the slave."""

MIXED = "mixed"
"""The demo's drive that moves the grasper through its tendons and the other limbs by their joints."""
DRIVES = (MIXED, Drive.JOINTS.value, Drive.TENDONS.value)
"""The demo's drives: ``"mixed"`` (the default: the grasper on its tendons, the other limbs on spring
targets), ``"joints"`` (every limb on spring targets: no grasp) and ``"tendons"`` (every limb)."""
GRASPER = "grasper"
FOLDED: tuple[tuple[str, tuple[tuple[float, float, float], ...]], ...] = (
    ("camera", ((math.radians(140.0), math.radians(-150.0), 0.6),)),  # up and out to -y
    ("light", ((math.radians(140.0), math.radians(150.0), 0.6),)),  # up and out to +y
)
"""The tentacles' start pose (:attr:`MmtConfig.start`): bent 140 deg up and outwards, so that they hang
outside the arms (over the scripted session the camera tentacle comes no nearer the grasper than 16 mm;
it brushes the lifted bar, 0.007 N)."""


def scene_objects() -> tuple[ObjectSpec, ...]:
    """The bar on its two rock posts, as the bundled grasp experiment places them: its ``[[objects]]``
    tables (the rest of the experiment, its robot among it, is left unread)."""
    return load_objects(experiments_dir() / "grasper_grasp.toml", others=True)


FITTED_SENSOR_MASS = 1e-3  # kg, the force sensor the demo fits to a robot without one
ROCK_SHARE = 0.1  # the fitted rock's radius, a share of the haptic limb's rest length (URSULA: 60 mm of 600)
ROCK_MISS = (0.02 / 0.6, 0.0, -0.005 / 0.6)  # the modelled rock's error, shares of the limb's rest length


def demo_robot(spec: RobotSpec) -> RobotSpec:
    """The robot as the demo drives it: ``spec`` when a limb carries a force sensor; else ``spec`` with a
    force sensor (:data:`FITTED_SENSOR_MASS`) fitted at the tip of its first limb without a payload, so that
    the operator feels that limb's contacts. One line if every limb carries another payload."""
    if any(limb.payload and limb.payload.kind == "force_sensor" for limb in spec.limbs):
        return spec
    free = next((limb for limb in spec.limbs if limb.payload is None), None)
    if free is None:
        raise ConfigurationError(
            f"robot '{spec.name}' is invalid for the demo; allowed: a robot with a force sensor payload, or "
            "a limb without a payload to fit one to"
        )
    sensor = Payload("force_sensor", f"{free.name}_force_sensor", FITTED_SENSOR_MASS)
    limbs = tuple(replace(limb, payload=sensor) if limb is free else limb for limb in spec.limbs)
    return replace(spec, limbs=limbs)


def demo_spec(robot: str | Path | RobotSpec | None, device: str) -> RobotSpec:
    """The robot the demo runs (:func:`demo_robot` of ``robot``, a bundled name, a TOML path or a spec;
    ``None``: :data:`ROBOT`), read once; with the ``"scripted"`` device only URSULA, whose limbs its session
    moves by name (another robot is one line naming the devices allowed)."""
    spec = demo_robot(
        robot if isinstance(robot, RobotSpec) else load_robot(ROBOT if robot is None else robot)
    )
    if device == "scripted" and spec.name != ROBOT:
        raise ConfigurationError(
            f"robot '{spec.name}' with device = 'scripted' is invalid; the scripted session is URSULA's (it "
            "moves her grasper, palpation arm and camera by name): allowed with another robot: --device "
            "keyboard, terminal, udp or haptic"
        )
    return spec


def haptic_limb(spec: RobotSpec) -> LimbSpec:
    """The limb whose contacts the operator feels: the first with a force sensor (URSULA's palpation arm)."""
    for limb in spec.limbs:
        if limb.payload is not None and limb.payload.kind == "force_sensor":
            return limb
    raise ConfigurationError(f"robot '{spec.name}' has no limb with a force sensor payload")


def fitted_scene(limb: LimbSpec) -> dict[str, object]:
    """The rock and seabed for ``limb`` (head frame = world frame, as the demo places the head): the rock
    ahead of the tip with the limb bent a quarter turn down (plane 0, shared by its segments, each within
    its limit) at rest length, :data:`ROCK_SHARE` of the limb's length in radius, the seabed under it; the
    modelled rock off by :data:`ROCK_MISS`. The :class:`MmtConfig` fields."""
    length = limb.rest_length
    turn = 0.5 * math.pi / len(limb.segments)
    configs = [PccConfig(min(turn, seg.bend_max), 0.0, seg.length) for seg in limb.segments]
    T = limb.T_head_base() @ limb_transform(configs)
    radius = ROCK_SHARE * length
    centre = T[:3, 3] + (radius + 0.005) * T[:3, 2]
    estimate = centre + length * np.asarray(ROCK_MISS)
    return {
        "rock_true": tuple(float(v) for v in centre),
        "rock_estimate": tuple(float(v) for v in estimate),
        "rock_radius": radius,
        "seabed_z": float(centre[2] - radius),
        "haptic_limb": limb.name,
    }


def demo_config(
    link: str, drive: str, objects: Sequence[ObjectSpec] | None = None, spec: RobotSpec | None = None
) -> MmtConfig:
    """The demo's setup: ``link`` both ways, ``drive`` one of :data:`DRIVES`, ``objects`` (``None``: the
    scene's, :func:`scene_objects`, for URSULA; none for another robot), the tentacles folded
    (:data:`FOLDED`). ``spec``: the robot (as :func:`demo_robot` makes it; ``None``: URSULA); another
    robot than URSULA gets :func:`fitted_scene` for its haptic limb, and ``"mixed"`` moves a limb named
    ``grasper`` through its tendons if it has one and every other limb on spring targets."""
    if drive not in DRIVES:
        raise ConfigurationError(f"drive = {drive!r} is invalid; allowed: {', '.join(DRIVES)}")
    ursula = spec is None or spec.name == ROBOT
    names = {} if spec is None else {limb.name: limb for limb in spec.limbs}
    grasper = ursula if spec is None else GRASPER in names and bool(names[GRASPER].tendons)
    mixed = drive == MIXED  # the grasper on its tendons, the other limbs on their joints
    limbs = Drive.JOINTS if mixed else Drive.of(drive)
    grasper_tendons = grasper and (mixed or limbs is Drive.TENDONS)
    start = tuple(
        (name, rows)
        for name, rows in FOLDED
        if spec is None or len(getattr(names.get(name), "segments", ())) == len(rows)
    )
    scene: dict[str, object] = {} if ursula or spec is None else fitted_scene(haptic_limb(spec))
    default_objects = scene_objects() if ursula else ()
    return MmtConfig(
        downlink=link_named(link),
        uplink=link_named(link),
        drive=limbs,
        tendon_limbs=(GRASPER,) if mixed and grasper else (),
        estimate_contacts=(GRASPER,) if grasper_tendons else (),
        objects=default_objects if objects is None else tuple(objects),
        start=start,
        **scene,  # type: ignore[arg-type]
    )
