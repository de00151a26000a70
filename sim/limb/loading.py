"""What holds and loads a robot's compliant limbs, by name: point loads and held ends.

:class:`LimbLoading` gives :class:`pccbullet.sim.robot.Robot` its :meth:`~LimbLoading.add_load`,
:meth:`~LimbLoading.remove_load`, :meth:`~LimbLoading.hold_end` and :meth:`~LimbLoading.release_end`; the
physics is the chain's (:mod:`pccbullet.sim.limb.chain.loads`, :mod:`pccbullet.sim.limb.chain.ends`),
inside each limb's implicit step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray, Transform
from pccbullet.sim.limb.chain.ends import EndHold, Hold
from pccbullet.sim.limb.chain.loads import PointLoad, make_load
from pccbullet.sim.limb.dynamics import CompliantLimb
from pccbullet.urdf_gen import naming
from pccbullet.urdf_gen.specs import LimbSpec

END_STIFFNESS = (1e3, 1e4)  # -, a held end's stiffness over the limb's own E A / L and E I / L at its tip
END_DAMPING_TIME = 1e-3  # s, a held end's damping over its stiffness (dt c = dt^2 k at 1 ms)


class LimbLoading:
    """Point loads and held ends on a robot's compliant limbs (mixed into
    :class:`~pccbullet.sim.robot.Robot`)."""

    compliant: dict[str, CompliantLimb]

    def limb(self, name: str) -> LimbSpec:  # pragma: no cover - the robot's
        raise NotImplementedError

    def tip_pose(self, limb: str) -> Transform:  # pragma: no cover - the robot's
        raise NotImplementedError

    def _compliant(self, limb: str, call: str) -> CompliantLimb:
        compliant = self.compliant.get(self.limb(limb).name)
        if compliant is None:
            raise ConfigurationError(
                f"limb = {limb!r} is invalid for {call}; allowed: a compliant limb (dynamic mode) out of "
                f"{sorted(self.compliant)}"
            )
        return compliant

    def add_load(
        self,
        limb: str,
        at: int | str = "tip",
        *,
        force: Sequence[float] = (0.0, 0.0, 0.0),
        moment: Sequence[float] = (0.0, 0.0, 0.0),
        frame: str = "world",
        point: Sequence[float] = (0.0, 0.0, 0.0),
        steps: int | None = None,
    ) -> PointLoad:
        """Put a force (N, at ``point``, m, in the loaded link's frame) and a moment (N m) on a compliant
        limb, inside its implicit step (:mod:`pccbullet.sim.limb.chain.loads`), until :meth:`remove_load`
        or for ``steps`` steps.

        Args:
            limb: the limb's name (loaded compliant: dynamic mode).
            at: ``"tip"`` (the tip frame, the last slice's end face) or a slice's index, base to tip (0 to
                N_total - 1; negative from the tip).
            force, moment: ``(3,)`` in the world's axes (``frame="world"``, a dead load) or the loaded link's
                (``frame="body"``, a follower load).
            steps: how many steps the load lasts (``None``: until removed).

        Returns:
            The load; set its ``force`` and ``moment`` between steps for a load that varies in time.
        """
        compliant = self._compliant(limb, "add_load")
        spec, chain = compliant.spec, compliant.chain
        load = make_load(spec, chain, at, force=force, moment=moment, frame=frame, point=point, steps=steps)
        compliant.loads.append(load)
        return load

    def remove_load(self, load: PointLoad) -> None:
        """Take ``load`` (from :meth:`add_load`) off its limb; a load already gone is ignored."""
        compliant = self.compliant.get(load.limb)
        if compliant is not None and load in compliant.loads:
            compliant.loads.remove(load)

    def hold_end(
        self,
        limb: str,
        hold: str = "pinned",
        *,
        anchor: FloatArray | Callable[[float], FloatArray] | None = None,
        stiffness: tuple[float, float] | None = None,
        damping: tuple[float, float] | None = None,
    ) -> EndHold:
        """Hold a compliant limb's tip inside its implicit step (:mod:`pccbullet.sim.limb.chain.ends`):
        ``"pinned"`` (its point) or ``"clamped"`` (point and orientation) to ``anchor``, a world pose ``(4,
        4)`` (default: where the tip is now) or a path ``t -> (4, 4)`` (t: s since now; a driven end).
        ``stiffness`` ``(N/m, N m/rad)`` defaults to 1e3 and 1e4 times the limb's ``E A / L`` and ``E I / L``
        at its tip (stiffer holds are stable on a limb in one PyBullet body, not across the parts of a
        larger one), ``damping`` ``(N s/m, N m s/rad)`` to 1 ms times the stiffness. Replaces a hold set
        before."""
        compliant = self._compliant(limb, "hold_end")
        spec, chain = compliant.spec, compliant.chain
        seg, link = spec.segments[-1], naming.tip_link(spec.name)
        area, length = np.pi * seg.radius_tip**2, spec.rest_length
        own = spec.material.youngs_modulus * area / length * np.array([1.0, seg.radius_tip**2 / 4])
        k = stiffness or (END_STIFFNESS[0] * own[0], END_STIFFNESS[1] * own[1])
        end = EndHold(
            spec.name, link, chain.links.index(link), Hold.of(hold),
            self.tip_pose(limb) if anchor is None else anchor,
            (float(k[0]), float(k[1])), damping or (END_DAMPING_TIME * k[0], END_DAMPING_TIME * k[1]),
        )  # fmt: skip
        compliant.hold_ends([end])
        return end

    def release_end(self, limb: str) -> None:
        """Let a limb's held tip go (:meth:`hold_end`)."""
        self._compliant(limb, "release_end").hold_ends([])

    def pin_base(self, limb: str) -> None:
        """Let a compliant limb turn freely about its base (a ball joint at the flange: the first node's
        springs and dampers off); rod chains only (the RRP chain has no joint that turns about every axis)."""
        compliant = self._compliant(limb, "pin_base")
        if not compliant.joints.spherical or not compliant.joints.spherical[0]:
            raise ConfigurationError(f"limb = {limb!r}: pin_base needs the rod chain (World(chain='rod'))")
        compliant.K[:3] = 0.0
        compliant.C[:3] = 0.0
