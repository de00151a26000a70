"""No hidden masses: the mass PyBullet holds for a limb is its robot file's, exactly.

The robot file's mass of a limb is its elastomer (density times the frustums' volume, computed here from
the segments' radii and lengths) plus the payload it declares. Frames (the flange, the tip) carry none
(on a free or moved body a limb's flange is the body's, welded on: its mass comes out of the body's):
PyBullet's multibody folds a massless fixed-joint link into its parent, and a limb split into parts
(``tests/test_limb_parts.py``) splits its slices' masses, never adds one.
"""

from __future__ import annotations

import math

import pytest

from pccbullet.sim.bullet import pb
from pccbullet.sim.world import World
from pccbullet.urdf_gen.spec_loader import bundled_robots, load_robot

CASES = [(robot, chain, n) for robot in bundled_robots() for chain in ("rod", "rrp") for n in (4, 20)]


def _file_mass(limb) -> float:
    """Elastomer frustums (rho pi h / 3 (r0^2 + r0 r1 + r1^2) each) plus the payload (kg)."""
    rho = limb.material.density
    frustums = sum(
        rho * math.pi * s.length / 3.0 * (s.radius_base**2 + s.radius_base * s.radius_tip + s.radius_tip**2)
        for s in limb.segments
    )
    return frustums + (limb.payload.mass if limb.payload is not None else 0.0)


@pytest.mark.parametrize(("robot", "chain", "sections"), CASES, ids=[f"{r}-{c}-N{n}" for r, c, n in CASES])
def test_pybullet_holds_the_robot_files_mass(robot: str, chain: str, sections: int) -> None:
    spec = load_robot(robot, sections=sections)
    with World(chain=chain) as world:
        handle = world.load_robot(spec)
        for limb in spec.limbs:
            held = 0.0
            for body in handle.limb_joints(limb.name).bodies:
                for link in range(-1, pb.getNumJoints(body, physicsClientId=world.client)):
                    held += pb.getDynamicsInfo(body, link, physicsClientId=world.client)[0]
            # a limb on a free or moved body is welded to it by its flange, whose mass the body gives up
            flange = handle.body.flange_mass if handle.base.moves else 0.0
            assert held - flange == pytest.approx(_file_mass(limb), rel=1e-11, abs=1e-15), (
                limb.name
            )  # summation rounding
        if handle.base.moves:  # and the robot as a whole holds the file's mass: the head's and the limbs'
            head = pb.getDynamicsInfo(handle.head, -1, physicsClientId=world.client)[0]
            head -= handle.body.added_mass  # the medium's added mass rides in the head's PyBullet mass
            flanges = len(spec.limbs) * handle.body.flange_mass
            assert head + flanges == pytest.approx(spec.head.mass, rel=1e-12)
