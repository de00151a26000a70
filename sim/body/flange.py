"""A limb's mounting flange where the limb's base floats: the disk its chain is welded on by, on a user's
body (:func:`pccbullet.sim.attach.attach`) or on a free or moved robot body
(:class:`pccbullet.sim.body.carrier.Body`). Its rotational inertia is at least :data:`FLANGE_INERTIA_RATE`
times the step: on a lighter base the weld does not hold the chain (docs/guide/mujoco-and-attach.md).
"""

from __future__ import annotations

from pccbullet.sim.bullet import pb

FLANGE_MASS = 0.068  # kg: an aluminium disk (2700 kg/m^3) of FLANGE_DIAMETER, FLANGE_THICKNESS
FLANGE_DIAMETER = 0.08  # m, URSULA's mounting flanges
FLANGE_THICKNESS = 0.005  # m
FLANGE_INERTIA_RATE = 0.05  # kg m^2 per s of step: a flange's least rotational inertia (3-4x the limit)


def flange_dynamics(client: int, body: int, mass: float, dt: float) -> None:
    """Make ``body``'s base link its mounting flange: ``mass`` (kg) as a disk of :data:`FLANGE_DIAMETER` and
    :data:`FLANGE_THICKNESS` about the link origin, its inertia at least ``FLANGE_INERTIA_RATE dt``."""
    r, t = 0.5 * FLANGE_DIAMETER, FLANGE_THICKNESS
    least = FLANGE_INERTIA_RATE * dt
    axial, transverse = max(0.5 * mass * r * r, least), max(mass * (3.0 * r * r + t * t) / 12.0, least)
    pb.changeDynamics(
        body, -1, mass=mass, localInertiaDiagonal=[transverse, transverse, axial], physicsClientId=client
    )
