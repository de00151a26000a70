"""Actuation of a :class:`~pccbullet.sim.models.newton_euler.model.LimbModel`: tendons and fluid chambers.

Each segment carries its own ``count`` actuators (``ActuatorSpec``) at distance ``r`` (offset) from the
backbone, at angles ``phi_j`` about the segment's base z axis (plus an optional per-segment rotation),
anchored at the segment's base and tip. In piece i (strains eps, kx, ky) a fibre at
``r (cos phi, sin phi, 0)`` has length ``l0 (1 + eps + r (kx sin phi - ky cos phi))``; virtual work gives
constant generalized forces (seed 000 eqs. 12–13: force ``A_d P`` along the unit, moment ``r_d x f``):

* tendon of tension ``T >= 0`` (it pulls, shortening its fibre): ``tau_i = -T dL/dq_i``,
  bending the limb towards the tendon; negative commands are clamped to 0 (a tendon never pushes);
* chamber of gauge pressure ``P`` and effective area ``A_d``: ``tau_i = +P A_d dL/dq_i``, extending the
  limb and bending it away from the chamber; pressures below -101325 Pa (vacuum) are clamped.

So ``tau = B u`` with a constant ``B`` ``(4n, n_segments * count)``; column ``s * count + j`` is actuator j
of segment s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import FloatArray
from pccbullet.sim.models.newton_euler.model import LimbModel

VACUUM_GAUGE = -101325.0  # Pa, lowest gauge pressure


def fibre_length_matrix(model: LimbModel, segment_rotation: Sequence[float] | None = None) -> FloatArray:
    """``dL/dq`` of every actuator fibre, ``(4n, n_segments * count)`` (m per unit strain).

    Args:
        model: the limb model (its spec must have actuators).
        segment_rotation: extra angle (rad) of each segment's actuator pattern; default zeros.
    """
    act = model.limb.actuators
    if act is None:
        raise ConfigurationError(f"limb '{model.limb.name}' has no actuators")
    n_seg = len(model.limb.segments)
    rot = np.zeros(n_seg) if segment_rotation is None else np.asarray(segment_rotation, dtype=float)
    if rot.shape != (n_seg,):
        raise ConfigurationError(f"segment_rotation has shape {rot.shape}; allowed: ({n_seg},)")
    angles = np.asarray(act.angles)
    L = np.zeros((model.dof, n_seg * act.count))
    for i in range(model.n):
        s = model.segment[i]
        phi = angles + rot[s]
        cols = slice(s * act.count, (s + 1) * act.count)
        L[4 * i, cols] = model.l0[i]
        L[4 * i + 1, cols] = model.l0[i] * act.offset * np.sin(phi)
        L[4 * i + 2, cols] = -model.l0[i] * act.offset * np.cos(phi)
    return L


class TendonActuation:
    """Tension-only tendons: ``tau = -dL/dq max(T, 0)``; ``T`` ``(n_segments * count,)`` in N."""

    def __init__(self, model: LimbModel, segment_rotation: Sequence[float] | None = None) -> None:
        self.B = -fibre_length_matrix(model, segment_rotation)

    def tau(self, tensions: FloatArray) -> FloatArray:
        """Generalized forces ``(4n,)`` for the commanded tensions (negative values act as 0)."""
        return self.B @ np.maximum(np.asarray(tensions, dtype=float), 0.0)


class ChamberActuation:
    """Fluid chambers: ``tau = A_d dL/dq P``; ``P`` ``(n_segments * count,)`` gauge pressures in Pa."""

    def __init__(self, model: LimbModel, segment_rotation: Sequence[float] | None = None) -> None:
        act = model.limb.actuators
        if act is None or act.area <= 0.0:
            raise ConfigurationError(f"limb '{model.limb.name}' has no chambers with an area > 0")
        self.B = act.area * fibre_length_matrix(model, segment_rotation)

    def tau(self, pressures: FloatArray) -> FloatArray:
        """Generalized forces ``(4n,)`` for the chamber pressures (clamped at vacuum)."""
        return self.B @ np.maximum(np.asarray(pressures, dtype=float), VACUUM_GAUGE)


def actuation_for(model: LimbModel, segment_rotation: Sequence[float] | None = None):
    """The :class:`TendonActuation` or :class:`ChamberActuation` matching the limb's ``actuators.kind``."""
    act = model.limb.actuators
    if act is None:
        raise ConfigurationError(f"limb '{model.limb.name}' has no actuators")
    if act.kind == "tendon":
        return TendonActuation(model, segment_rotation)
    return ChamberActuation(model, segment_rotation)
