"""The demo's robot (:data:`ROBOT`) and scene (:func:`demo_config`): the rock, the bar to retrieve, the
limbs' drives and their start pose.

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

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.experiments.spec import experiments_dir
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.objects.spec import ObjectSpec
from pccbullet.teleop.channel import link_named
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.objects import load_objects

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


def demo_config(link: str, drive: str, objects: Sequence[ObjectSpec] | None = None) -> MmtConfig:
    """The demo's setup: ``link`` both ways, ``drive`` one of :data:`DRIVES`, ``objects`` (``None``: the
    scene's, :func:`scene_objects`), the tentacles folded (:data:`FOLDED`)."""
    if drive not in DRIVES:
        raise ConfigurationError(f"drive = {drive!r} is invalid; allowed: {', '.join(DRIVES)}")
    mixed = drive == MIXED  # the grasper on its tendons, the other limbs on their joints
    limbs = Drive.JOINTS if mixed else Drive.of(drive)
    grasper_tendons = mixed or limbs is Drive.TENDONS
    return MmtConfig(
        downlink=link_named(link),
        uplink=link_named(link),
        drive=limbs,
        tendon_limbs=(GRASPER,) if mixed else (),
        estimate_contacts=(GRASPER,) if grasper_tendons else (),
        objects=scene_objects() if objects is None else tuple(objects),
        start=FOLDED,
    )
