"""The contact the haptic renderer couples to: penetration vectors of a body, or of a ball, into the
environment (m, world). :func:`penetration` asks PyBullet; :func:`ball_penetration` is the closed form the
model-mediated master uses every tick (:mod:`pccbullet.teleop.mmt.contact`)."""

from __future__ import annotations

import math

import numpy as np

from pccbullet.sim.bullet import pb


def penetration(client: int, body: int, others: list[int]) -> np.ndarray:
    """Deepest contact of ``body`` with each of ``others``, summed: the vector ``(3,)`` (m) that would
    push ``body`` out (contact normal on the other body times the penetration depth).

    Computed for the bodies' poses now (``getClosestPoints`` at distance 0), so no world-wide contact
    refresh is needed: the teleoperation tick steps its worlds with ``contacts=False``. The same
    vectors as the contact points after a refresh (the demo's 6 s: equal to 1.3e-14 N of force).
    """
    d = np.zeros(3)
    for other in others:
        deepest = None
        for c in pb.getClosestPoints(body, other, 0.0, physicsClientId=client):
            if c[8] < 0 and (deepest is None or c[8] < deepest[8]):
                deepest = c
        if deepest is not None:
            d += -deepest[8] * np.asarray(deepest[7])
    return d


def ball_penetration(
    p: np.ndarray, r: float, rock: np.ndarray, rock_radius: float, seabed_z: float
) -> np.ndarray:
    """:func:`penetration` of a ball (centre ``p`` ``(3,)``, radius ``r``, m) into a sphere (centre ``rock``,
    radius ``rock_radius``) and the horizontal plane ``z = seabed_z``, summed: the vector ``(3,)`` (m)
    that would push the ball out, from the geometry alone (no body posed in PyBullet, a few
    microseconds; Bullet's sphere-sphere and sphere-plane contacts are these exact formulas)."""
    d = np.zeros(3)
    v = p - rock
    dist = math.sqrt(float(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]))
    depth = rock_radius + r - dist
    if depth > 0.0 and dist > 0.0:
        d += v * (depth / dist)
    depth = seabed_z + r - float(p[2])
    if depth > 0.0:
        d[2] += depth
    return d
