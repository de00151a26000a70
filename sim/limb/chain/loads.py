"""Point loads on a compliant limb: a force and a moment at any slice or frame, inside the implicit step.

A :class:`PointLoad` is a force ``f`` (N) at a point of one link and a moment ``m`` (N m), in the world's
axes (a dead load: its direction stays) or the link's own (``frame="body"``: a follower load, turning with
the link). Every step the limb turns its loads into generalized forces ``J^T [m + p x f; f]`` at the
current configuration (:func:`load_torques`) and adds them to its ``offset``, which enters the right-hand
side of the one implicit solve (:mod:`pccbullet.sim.limb.chain.solve`) with the springs, the fluid and the
tendons: the springs hold exactly ``J^T f``, where a force PyBullet applies itself (``applyExternalForce``)
is held as ``(1 + (dt C + dt^2 K) M^-1) J^T f`` unless the limb estimates it from the last step.

Loads are objects the step reads: change :attr:`PointLoad.force` and :attr:`PointLoad.moment` between
steps for a load that varies in time, give ``steps`` for one that lasts that many steps, or keep it until
it is removed (:meth:`pccbullet.sim.robot.Robot.remove_load`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import Choice, FloatArray
from pccbullet.sim.limb.chain.kernels import _kinematics, _transmit, joint_axes
from pccbullet.sim.limb.chain.rigid import ChainModel
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.specs import LimbSpec

MAX_FORCE = 1e6  # N, and N m for a moment: the bound of a load's components (a typo guard)
MAX_OFFSET = 10.0  # m, the bound of a load's point from its link's origin


class LoadFrame(Choice):
    """The axes a load's force and moment are given in: the world's, or the loaded link's (it turns with
    the link: a follower load)."""

    WORLD = "world"
    BODY = "body"

    @classmethod
    def field(cls) -> str:
        return "frame"


@dataclass(eq=False, slots=True)
class PointLoad:
    """A force and a moment on one link of a compliant limb, read by every step.

    Attributes:
        limb: the limb's name.
        link: the loaded link (a slice body, or the limb's tip frame).
        force: ``(3,) float`` (N), in :attr:`frame`'s axes, acting at :attr:`point`.
        moment: ``(3,) float`` (N m), in :attr:`frame`'s axes.
        frame: :class:`LoadFrame` of :attr:`force` and :attr:`moment`.
        point: where the force acts, in the link's frame ``(3,) float`` (m; its origin by default).
        steps: steps left before the load is dropped (``None``: until removed).
    """

    limb: str
    link: str
    force: FloatArray
    moment: FloatArray
    frame: LoadFrame = LoadFrame.WORLD
    point: FloatArray = field(default_factory=lambda: np.zeros(3))
    steps: int | None = None
    index: int = -1
    """The link's index in the limb's chain model."""


def _vector(name: str, value: Sequence[float], bound: float, unit: str) -> FloatArray:
    out = np.array(value, dtype=float).reshape(-1) if np.ndim(value) == 1 else np.full(0, np.nan)
    if out.shape != (3,) or not all(math.isfinite(v) and abs(v) <= bound for v in out):
        raise ConfigurationError(
            f"{name} = {value!r} is invalid; allowed: 3 finite numbers of at most {bound:g} {unit}"
        )
    return out


def make_load(
    spec: LimbSpec,
    chain: ChainModel,
    at: int | str,
    *,
    force: Sequence[float] = (0.0, 0.0, 0.0),
    moment: Sequence[float] = (0.0, 0.0, 0.0),
    frame: LoadFrame | str = LoadFrame.WORLD,
    point: Sequence[float] = (0.0, 0.0, 0.0),
    steps: int | None = None,
) -> PointLoad:
    """A checked :class:`PointLoad` on ``spec``'s limb (its chain model ``chain``): ``at`` a slice (its index
    base to tip, 0 to N_total - 1, negative from the tip: -1 the last slice; the load acts at its link frame,
    ``Robot.section_poses``: on the rod chain the slice's end towards the tip, ``(k + 1) L / N`` along a
    segment) or ``"tip"`` (the limb's tip frame). Bad input: :class:`ConfigurationError` naming it."""
    slices = naming.section_body_links(spec)
    if isinstance(at, str) and at == "tip":
        link = naming.tip_link(spec.name)
    elif isinstance(at, int | np.integer) and not isinstance(at, bool) and -len(slices) <= at < len(slices):
        link = slices[int(at)]
    else:
        raise ConfigurationError(
            f"at = {at!r} is invalid (limb {spec.name!r}); allowed: 'tip' or a slice index in "
            f"[{-len(slices)}, {len(slices) - 1}]"
        )
    if link not in chain.links:
        raise ConfigurationError(f"at = {at!r}: limb {spec.name!r} has no link {link!r} in its chain")
    if steps is not None and not (isinstance(steps, int) and not isinstance(steps, bool) and steps >= 1):
        raise ConfigurationError(f"steps = {steps!r} is invalid; allowed: None or an integer >= 1")
    return PointLoad(
        spec.name,
        link,
        _vector("force", force, MAX_FORCE, "N"),
        _vector("moment", moment, MAX_FORCE, "N m"),
        LoadFrame.of(frame),
        _vector("point", point, MAX_OFFSET, "m"),
        steps,
        chain.links.index(link),
    )


def load_torques(
    chain: ChainModel, q: FloatArray, loads: Sequence[PointLoad], R_world_base: FloatArray
) -> FloatArray:
    """The generalized forces ``J^T [m + p x f; f]`` ``(n_dof,)`` of ``loads`` at the position vector ``q``
    ``(n_q,)``; ``R_world_base`` ``(3, 3)`` turns world axes into the limb base's (the chain's)."""
    n = len(chain.links)
    R, p = np.zeros((n, 3, 3)), np.zeros((n, 3))
    _kinematics(chain.parent, chain.jtype, chain.qpos, chain.params, q, R, p)
    F = np.zeros((n, 6))  # per link: [moment about the base origin; force], base axes
    for load in loads:
        i = load.index
        turn = R[i] if load.frame is LoadFrame.BODY else R_world_base.T
        f, m = turn @ load.force, turn @ load.moment
        at = p[i] + R[i] @ load.point
        F[i, :3] += m + np.cross(at, f)
        F[i, 3:] += f
    S = np.zeros((chain.n_dof, 6))
    joint_axes(chain.jtype, chain.dof, chain.params, R, p, S)
    out = np.zeros(chain.n_dof)
    _transmit(chain.parent, chain.jtype, chain.dof, S, F, out)
    return out


def count_down(loads: list[PointLoad]) -> None:
    """After a step: one step fewer for loads that last a number of steps; those at 0 are dropped."""
    for load in list(loads):
        if load.steps is not None:
            load.steps -= 1
            if load.steps <= 0:
                loads.remove(load)
