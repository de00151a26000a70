"""A robot's MJCF export loaded in MuJoCo and driven like a dynamic :class:`~pccbullet.sim.robot.Robot`:
spring targets from PCC configurations, tip poses, steps. The bench's MuJoCo peer (``pccbullet bench --peer
mujoco``) and the export's checks against a :class:`~pccbullet.sim.world.World` run on it.

Example::

    with MujocoRobot(load_robot("ursula"), medium="water") as robot:
        robot.set_pcc("camera", [PccConfig(bend=1.0, plane=0.0, length=0.6)])
        robot.step(1000)
        T_world_tip = robot.tip_pose("camera")
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import Transform
from pccbullet.sim.limb.topology import limb_topology
from pccbullet.sim.medium import Medium
from pccbullet.sim.mjcf.writer import (
    PHYSICS_DT,
    STANDARD_GRAVITY,
    joint_vector_names,
    qpos_addresses,
    write_mjcf,
)
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.pcc import PccConfig
from pccbullet.urdf_gen.specs import RobotSpec
from pccbullet.urdf_gen.topology import Topology


class MujocoRobot:
    """``spec`` written by :func:`~pccbullet.sim.mjcf.writer.write_mjcf` into a temporary folder (or
    ``folder``) and loaded as ``model`` / ``data`` (``mujoco.MjModel``, ``mujoco.MjData``); the other
    arguments are :func:`~pccbullet.sim.mjcf.writer.write_mjcf`'s. Close it (or use it as a context
    manager) to remove the temporary folder."""

    def __init__(
        self,
        spec: RobotSpec,
        *,
        chain: Topology | str = Topology.ROD,
        medium: str | Medium = "air",
        dt: float = PHYSICS_DT,
        gravity: Sequence[float] = (0.0, 0.0, -STANDARD_GRAVITY),
        shear: bool = True,
        tendons: bool = True,
        folder: str | Path | None = None,
    ) -> None:
        import mujoco

        self.spec = spec
        self.chain: Topology = Topology.of(chain)
        """The limbs' topology."""
        target = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="pccbullet_mujoco_"))
        self._tmp: Path | None = None if folder is not None else target
        out = write_mjcf(
            spec, target, chain=chain, medium=medium, dt=dt, gravity=gravity, shear=shear,
            tendons=tendons,
        )  # fmt: skip
        self.path: Path = out.path
        """The MJCF file."""
        self.model: Any = mujoco.MjModel.from_xml_path(str(out.path))
        self.data: Any = mujoco.MjData(self.model)
        self._step = mujoco.mj_step
        self.addresses = {
            limb.name: qpos_addresses(self.model, joint_vector_names(limb, chain)) for limb in spec.limbs
        }
        """Per limb: the ``qpos`` / ``qpos_spring`` addresses of its joint vector's entries."""
        self._bodies = {
            name: mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, name) for name in self._frames()
        }
        mujoco.mj_forward(self.model, self.data)

    def _frames(self) -> list[str]:
        return [
            name
            for limb in self.spec.limbs
            for name in (naming.base_link(limb.name), naming.tip_link(limb.name))
        ]

    def pcc_joints(self, limb: str, configs: Sequence[PccConfig]) -> np.ndarray:
        """Joint vector of ``limb`` for per-segment PCC ``configs`` (:meth:`Robot.pcc_joints`, unchecked)."""
        segments = self.spec.limb(limb).segments
        if len(configs) != len(segments):
            raise ConfigurationError(f"limb '{limb}' has {len(segments)} segment(s); {len(configs)} given")
        return limb_topology(self.chain).joint_vector(self.spec.limb(limb), configs)

    def set_pcc(self, limb: str, configs: Sequence[PccConfig], *, mode: str = "target") -> None:
        """Move ``limb``'s spring targets to the PCC ``configs`` (``"target"``), or also put its joints there
        at rest (``"reset"``)."""
        self.set_joints(limb, self.pcc_joints(limb, configs), mode=mode)

    def set_joints(self, limb: str, q: np.ndarray, *, mode: str = "target") -> None:
        """Spring targets (``"target"``), or targets and pose at rest (``"reset"``), of ``limb``'s joint
        vector ``q``."""
        import mujoco

        if mode not in ("target", "reset"):
            raise ConfigurationError(f"mode = {mode!r} is invalid; allowed: 'target', 'reset'")
        at = self.addresses[limb]
        self.model.qpos_spring[at] = q
        if mode == "reset":
            self.data.qpos[at] = q
            self.data.qvel[:] = 0.0
            mujoco.mj_forward(self.model, self.data)

    def step(self, n: int = 1) -> None:
        """``n`` MuJoCo steps."""
        self._step(self.model, self.data, nstep=n)

    def _pose(self, body: str) -> Transform:
        i = self._bodies[body]
        T = np.eye(4)
        T[:3, :3] = self.data.xmat[i].reshape(3, 3)
        T[:3, 3] = self.data.xpos[i]
        return T

    def tip_pose(self, limb: str) -> Transform:
        """World pose of ``limb``'s tip frame (its material frame on a rod chain), ``(4, 4) float``."""
        return self._pose(naming.tip_link(limb))

    def T_world_limbbase(self, limb: str) -> Transform:
        """World pose of ``limb``'s base frame, ``(4, 4) float``."""
        return self._pose(naming.base_link(limb))

    @property
    def time(self) -> float:
        """Simulated time (s)."""
        return float(self.data.time)

    def close(self) -> None:
        """Remove the temporary folder (again: nothing)."""
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> MujocoRobot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
