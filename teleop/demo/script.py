"""The headless demo's scripted operator (:func:`scripted_operator`): what it does, when.

A :class:`~pccbullet.teleop.devices.scripted.ScriptedDevice`: stylus waypoints (world metres) and one-shot
presses, among them the grasp (``grasp``, ``grasp:close[:<limb>]``, ``grasp:open[:<limb>]``:
:mod:`pccbullet.teleop.mapping`), which a tendon-driven robot holds (:mod:`pccbullet.teleop.slave`).
"""

from __future__ import annotations

from pccbullet.teleop.devices.scripted import ScriptedDevice


def scripted_operator() -> ScriptedDevice:
    """The headless operator. The light follows the camera; the stylus first turns the camera (and with
    it the lamp) towards the rock, which lies out of every limb's resting bending plane; then drives the
    grasper beside the rock; then the palpation arm, which turns its bending plane about 16 deg, above
    the rock and down onto it, pressing into the modelled surface; and holds still for the last seconds
    (steady contact: the force the operator feels and the robot's sensor agree)."""
    return ScriptedDevice(
        waypoints=[  # gaps with no position around each selection change: no stray target
            (0.0, None),
            (0.01, (0.42, -0.06, -0.39)),
            (1.5, (0.40, 0.02, -0.36)),
            (2.0, (0.40, 0.02, -0.36)),
            (2.0, None),
            (2.02, (0.55, -0.06, -0.40)),
            (3.5, (0.40, 0.05, -0.50)),
            (5.0, (0.40, 0.05, -0.50)),
            (5.0, None),
            (5.02, (0.475, 0.12, -0.41)),
            (6.5, (0.40, 0.18, -0.45)),  # above the rock
            (8.5, (0.40, 0.18, -0.52)),
        ],
        presses=[
            (0.0, "follow"),
            (0.0, "select:camera"),
            (2.01, "select:grasper"),
            (5.01, "select:palpation"),
        ],
    )
