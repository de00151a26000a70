"""A crawling gait for a free robot whose arms radiate from its body and each pull four tendons:
:class:`CrawlGait`.

Every arm runs one cycle per :attr:`CrawlGait.period`, neighbouring arms half a cycle apart (two groups,
as a walking animal's alternate legs): during the first half it presses its tip down and sweeps it back
(the stance, that pushes the body ahead), during the second it lifts and swings forward. The tendons that
do each are found from the arm's mount, not named in the robot file: of an arm's tendons, the one whose
pull points most down in the body frame presses, the most up lifts, and of the others the one most against
``heading`` sweeps back, the most along it forward (an arm along the heading does not sweep). The sweep's
phase can lead the press's (:attr:`CrawlGait.lead`); in phase (0, the default) the bundled octopus walks
on its arms' tips, its body off the ground (docs/guide/octopus.md); half a cycle ahead it walks backwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.urdf_gen.specs import RobotSpec

SWEEP_ALIGNMENT = 0.3  # -, least |cos| between an arm's sweep and the heading for it to sweep at all


@dataclass(frozen=True, slots=True)
class CrawlGait:
    """Tendon tensions of a crawl (see the module docstring).

    Attributes:
        period: one cycle (s).
        press: tension of the pressing tendon at the stance's middle (N).
        sweep: tension of the sweeping tendons at the ends of the cycle (N).
        lift: tension of the lifting tendon at the swing's middle (N).
        hold: the least tension every tendon keeps (N).
        heading: the direction to crawl in the body's horizontal plane (rad from its x axis).
        lead: how far the sweep's phase leads the press's (rad).
    """

    period: float = 2.0
    press: float = 8.0
    sweep: float = 8.0
    lift: float = 10.0
    hold: float = 0.05
    heading: float = 0.0
    lead: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.period) and self.period > 0.0):
            raise ConfigurationError(f"period = {self.period!r} is invalid; allowed: a time > 0 s")
        for name in ("press", "sweep", "lift", "hold"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ConfigurationError(f"{name} = {value!r} is invalid; allowed: a tension >= 0 N")

    def tensions(self, spec: RobotSpec, t: float) -> dict[str, FloatArray]:
        """Each arm's tendon tensions ``(n_tendons,)`` (N, the limb's tendon order) at time ``t`` (s);
        arms without tendons are left out."""
        h = np.array([math.cos(self.heading), math.sin(self.heading), 0.0])
        out = {}
        for i, limb in enumerate(spec.limbs):
            if not limb.tendons:
                continue
            R = limb.T_head_base()[:3, :3]
            pulls = np.array([R @ [math.cos(td.angle), math.sin(td.angle), 0.0] for td in limb.tendons])
            theta = 2.0 * math.pi * t / self.period + (math.pi if i % 2 else 0.0)
            s, c = math.sin(theta), math.sin(theta + self.lead)
            T = np.full(len(limb.tendons), self.hold)
            down, up = int(np.argmin(pulls[:, 2])), int(np.argmax(pulls[:, 2]))
            T[down] += self.press * max(0.0, s)
            T[up] += self.lift * max(0.0, -s)
            along = pulls @ h
            along[[down, up]] = 0.0  # the sweep is the other tendons' job
            if float(np.max(np.abs(along))) >= SWEEP_ALIGNMENT:
                T[int(np.argmin(along))] += self.sweep * max(0.0, c)
                T[int(np.argmax(along))] += self.sweep * max(0.0, -c)
            out[limb.name] = T
        return out
