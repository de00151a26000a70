"""The headless demo's scripted operator (:func:`scripted_operator`): what it does, when.

A :class:`~pccbullet.teleop.devices.scripted.ScriptedDevice`: stylus waypoints (world metres), held rate
keys and one-shot presses, among them the grasp (``grasp``, ``grasp:close[:<limb>]``,
``grasp:open[:<limb>]``: :mod:`pccbullet.teleop.mapping`), which a tendon-driven grasper holds
(:mod:`pccbullet.teleop.slave`). The scene: :mod:`pccbullet.teleop.demo.scene`.
"""

from __future__ import annotations

from pccbullet.teleop.devices.scripted import ScriptedDevice

SESSION_S = 20.0
"""How long the scripted session lasts (s): the grasp and the lift, then the rock touched and held."""
LIFT = (6.0, 7.75)
"""When the operator holds ``bend-`` on the grasper's first segment (s): 0.875 rad up at 0.5 rad/s."""


def scripted_operator() -> ScriptedDevice:
    """The headless operator. The grasper first: its first segment a little up (3 deg), the grasp closed
    at 0.5 s (the distal segment coils round the bar below it), and from 6 s its first segment bent 50 deg
    up, which lifts the bar off its posts and brings it towards the head (about 1 s later on the robot,
    behind the acoustic link). Then the stylus drives the palpation arm, which turns its bending plane
    towards the rock (out of every limb's resting bending plane), above it and down onto it, pressing
    into the modelled surface; and holds still to the end (steady contact: the force the operator feels
    and the robot's sensor agree) while the grasper holds the bar."""
    return ScriptedDevice(
        waypoints=[  # no position while the grasper is worked with keys: no stray target
            (0.0, None),
            (8.0, None),
            (8.02, (0.475, 0.12, -0.41)),
            (11.5, (0.40, 0.18, -0.45)),  # above the rock
            (13.5, (0.40, 0.18, -0.52)),
        ],
        presses=[
            (0.0, "select:grasper"),  # and its first segment
            (0.5, "grasp:close:grasper"),
            (8.01, "select:palpation"),
        ],
        holds=[(0.0, 0.1, "bend-"), (*LIFT, "bend-")],
    )
