"""Compiled (numba) conversion of a joint vector to a chain's position vector.

A user's joint vector has one entry per velocity entry: the rod chain's spherical nodes appear in it as
three x-y-z Euler angles (:mod:`pccbullet.urdf_gen.rod`); PyBullet and the kernels keep a node's rotation as
a quaternion (four entries). :func:`positions_from_vector` turns the first into the second.
"""

from __future__ import annotations

import numba

from pccbullet.sim.chain.kernels import FIXED, SPHERICAL
from pccbullet.sim.chain.rotation import euler_xyz_quat


@numba.njit(cache=True)
def positions_from_vector(jtype, dof, qpos, vector, out) -> None:  # type: ignore[no-untyped-def]
    """Write the position vector ``out (n_q,)`` of the joint vector ``vector (n_dof,)``."""
    for i in range(jtype.shape[0]):
        kind = jtype[i]
        if kind == FIXED:
            continue
        d, k = dof[i], qpos[i]
        if kind == SPHERICAL:
            out[k], out[k + 1], out[k + 2], out[k + 3] = euler_xyz_quat(
                vector[d], vector[d + 1], vector[d + 2]
            )
        else:
            out[k] = vector[d]
