"""pccbullet: soft robot arms in PyBullet, piecewise-constant-curvature segments as chains of rigid sections.

The public API is the list below, and only it: each name is imported from its one home module on first
use (PEP 562), so ``import pccbullet`` stays cheap (no PyBullet, numba or matplotlib until a name needs
them). The code lives in four subpackages, one per layer, plus the bundled files:

- :mod:`pccbullet.urdf_gen`: robot descriptions (TOML) -> PCC discretization -> URDF + meshes.
- :mod:`pccbullet.sim`: the PyBullet world, the 1 kHz loop, soft-arm models, experiments, export.
- :mod:`pccbullet.teleop`: devices, model-mediated teleoperation, the squid demo, the ``pccbullet`` command.
- ``pccbullet.assets``: the bundled robot, experiment and pose TOML files.

Example::

    import math
    import pccbullet as pcb

    with pcb.World(mode="kinematic") as world:
        robot = world.load_robot("ursula")
        robot.set_pcc("camera", [pcb.PccConfig(bend=math.pi / 2, plane=0.5, length=0.6)])
        T_world_tip = robot.tip_pose("camera")  # (4, 4) float
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# The version is written here only: the package metadata reads it (pyproject.toml, [tool.setuptools.dynamic]).
__version__ = "0.1.0"

# public name -> its home module (the one place each name is listed)
_API: dict[str, str] = {
    # errors
    "PccBulletError": "pccbullet.core.errors",
    "SpecError": "pccbullet.core.errors",
    "ConfigurationError": "pccbullet.core.errors",
    "RobotNotFoundError": "pccbullet.core.errors",
    "WorldClosedError": "pccbullet.core.errors",
    "SimulationDivergedError": "pccbullet.core.errors",
    # robot descriptions, PCC geometry, URDF
    "RobotSpec": "pccbullet.urdf_gen.specs",
    "load_robot": "pccbullet.urdf_gen.spec_loader",
    "PccConfig": "pccbullet.urdf_gen.pcc",
    "arc_transform": "pccbullet.urdf_gen.pcc",
    "limb_transform": "pccbullet.urdf_gen.pcc",
    "write_urdf": "pccbullet.urdf_gen.urdf_writer",
    "rod": "pccbullet.urdf_gen.rod_spec",
    "pcc_from_points": "pccbullet.urdf_gen.pcc_fit",
    "load_pose_file": "pccbullet.urdf_gen.pose_file",
    # the simulator
    "World": "pccbullet.sim.world",
    "Robot": "pccbullet.sim.robot",
    "BaseMode": "pccbullet.sim.body.mode",
    "Trajectory": "pccbullet.sim.body.trajectory",
    "CrawlGait": "pccbullet.sim.body.gait",
    "Medium": "pccbullet.sim.medium",
    "medium": "pccbullet.sim.medium",
    "AIR": "pccbullet.sim.medium",
    "WATER": "pccbullet.sim.medium",
    "SEAWATER": "pccbullet.sim.medium",
    "VACUUM": "pccbullet.sim.medium",
    "PointLoad": "pccbullet.sim.limb.chain.loads",
    "LoadFrame": "pccbullet.sim.limb.chain.loads",
    "Loop": "pccbullet.sim.loop",
    "add_seabed": "pccbullet.sim.objects.environment",
    "add_sphere": "pccbullet.sim.objects.environment",
    "add_object": "pccbullet.sim.objects.environment",
    "force_sensor": "pccbullet.sim.objects.environment",
    "place_sphere": "pccbullet.sim.objects.place",
    "place_cylinder": "pccbullet.sim.objects.place",
    "place_box": "pccbullet.sim.objects.place",
    "PlacedObject": "pccbullet.sim.objects.placed",
    "Material": "pccbullet.sim.objects.friction",
    "MATERIALS": "pccbullet.sim.objects.friction",
    "WebView": "pccbullet.sim.views.web.view",
    # our material elsewhere: on a body of your own PyBullet scene, in MuJoCo
    "attach": "pccbullet.sim.attach",
    "Attached": "pccbullet.sim.attach",
    "write_mjcf": "pccbullet.sim.mjcf.writer",
    "MujocoRobot": "pccbullet.sim.mjcf.peer",
    # models
    "LimbModel": "pccbullet.sim.models.newton_euler.model",
    "static_equilibrium": "pccbullet.sim.models.newton_euler.statics",
    # experiments and sweeps
    "load_experiment": "pccbullet.sim.experiments.spec",
    "experiment_from_table": "pccbullet.sim.experiments.spec",
    "run_experiment": "pccbullet.sim.experiments.runner",
    "run_sweep": "pccbullet.sim.experiments.sweep",
    "load_grasp": "pccbullet.sim.experiments.grasp",
    "run_grasp": "pccbullet.sim.experiments.grasp",
    # mesh export
    "skin_mesh": "pccbullet.sim.export.skin",
    "rigid_mesh": "pccbullet.sim.export.rigid",
    "write_mesh": "pccbullet.sim.export.formats",
    "write_series": "pccbullet.sim.export.formats",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    home = _API.get(name)
    if home is None:
        raise AttributeError(f"module 'pccbullet' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # the same names for type checkers and IDEs; never executed
    from pccbullet.core.errors import (
        ConfigurationError,
        PccBulletError,
        RobotNotFoundError,
        SimulationDivergedError,
        SpecError,
        WorldClosedError,
    )
    from pccbullet.sim.attach import Attached, attach
    from pccbullet.sim.body.gait import CrawlGait
    from pccbullet.sim.body.mode import BaseMode
    from pccbullet.sim.body.trajectory import Trajectory
    from pccbullet.sim.experiments.grasp import load_grasp, run_grasp
    from pccbullet.sim.experiments.runner import run_experiment
    from pccbullet.sim.experiments.spec import experiment_from_table, load_experiment
    from pccbullet.sim.experiments.sweep import run_sweep
    from pccbullet.sim.export.formats import write_mesh, write_series
    from pccbullet.sim.export.rigid import rigid_mesh
    from pccbullet.sim.export.skin import skin_mesh
    from pccbullet.sim.limb.chain.loads import LoadFrame, PointLoad
    from pccbullet.sim.loop import Loop
    from pccbullet.sim.medium import AIR, SEAWATER, VACUUM, WATER, Medium, medium
    from pccbullet.sim.mjcf.peer import MujocoRobot
    from pccbullet.sim.mjcf.writer import write_mjcf
    from pccbullet.sim.models.newton_euler.model import LimbModel
    from pccbullet.sim.models.newton_euler.statics import static_equilibrium
    from pccbullet.sim.objects.environment import add_object, add_seabed, add_sphere, force_sensor
    from pccbullet.sim.objects.friction import MATERIALS, Material
    from pccbullet.sim.objects.place import place_box, place_cylinder, place_sphere
    from pccbullet.sim.objects.placed import PlacedObject
    from pccbullet.sim.robot import Robot
    from pccbullet.sim.views.web.view import WebView
    from pccbullet.sim.world import World
    from pccbullet.urdf_gen.pcc import PccConfig, arc_transform, limb_transform
    from pccbullet.urdf_gen.pcc_fit import pcc_from_points
    from pccbullet.urdf_gen.pose_file import load_pose_file
    from pccbullet.urdf_gen.rod_spec import rod
    from pccbullet.urdf_gen.spec_loader import load_robot
    from pccbullet.urdf_gen.specs import RobotSpec
    from pccbullet.urdf_gen.urdf_writer import write_urdf
