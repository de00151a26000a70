"""Compatibility name: the C-API joint I/O lives in :mod:`sim.bullet_internals.capi` (the one home of
PyBullet's private internals); this module re-exports the names :mod:`sim.dynamics` used."""

from sim.bullet_internals.capi import (
    ENV_SWITCH,
    ERRORS,
    OK,
    OUT_SLOTS,
    PINNED_VERSIONS,
    c_api,
    limb_step,
    pybullet_version,
    read_joint_state,
    send_joint_torques,
)

__all__ = [
    "ENV_SWITCH",
    "ERRORS",
    "OK",
    "OUT_SLOTS",
    "PINNED_VERSIONS",
    "c_api",
    "limb_step",
    "pybullet_version",
    "read_joint_state",
    "send_joint_torques",
]
