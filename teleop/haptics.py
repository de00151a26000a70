"""Haptic rendering at 1 kHz: virtual coupling to the local model's contact, safety limits, faults.

Force pipeline, one call of :meth:`HapticRenderer.tick` per 1 ms tick:

1. **Virtual coupling** (god-object / proxy): the local model's contacts give the penetration vector
   ``d`` ``(3,)`` (m) that would push the tool out of the environment; ``F = K d + B d_dot`` with
   ``d_dot`` a backward difference low-passed at ``velocity_cutoff`` Hz. The coupling is unilateral:
   it never pulls the handle into a surface (``F . d >= 0``).
2. **Ramp-in**: the output is scaled by ``min(1, t_enabled / ramp_time)`` after (re)enabling.
3. **Peak clamp**: ``|F| <= peak_force`` (3.0 N for a 3D Systems Touch).
4. **Continuous (thermal) clamp**: a first-order thermal model ``E' = (|F|^2 - E) / thermal_tau`` is a
   running mean square. The allowed magnitude slides smoothly from ``peak_force`` (``E <= (F_c/2)^2``)
   down to ``continuous_force`` (``E >= F_c^2``), so the RMS stays at or below ``F_c`` (0.88 N) without
   a force step.
5. **Faults**: ``max_missed`` (3) consecutive missed deadlines or any device error latch a fault and
   the output is zero until :meth:`HapticRenderer.reset` (which restarts the ramp).

Passivity (Colgate & Schenkel 1997): a sampled spring ``K`` with a backward-difference damper ``B``,
held by a zero-order hold of period ``T``, is passive when the device's own physical damping
``b > K T / 2 + |B|``. With K = 400 N/m, T = 1 ms, B = 2 N s/m that needs b > 2.2 N s/m.
:func:`passivity_margin` returns ``b - K T / 2 - |B|``; :class:`HapticParams` refuses parameters
with a negative margin for the ``device_damping`` it is given (set it to the hardware's value; the
default 2.5 N s/m is an assumption standing in for the scripted device).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.bullet import pb
from urdf_gen.errors import ConfigurationError


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


def passivity_margin(stiffness: float, damping: float, device_damping: float, dt: float) -> float:
    """Colgate's margin ``b - K T / 2 - |B|`` (N s/m); passive when > 0."""
    return device_damping - stiffness * dt / 2.0 - abs(damping)


@dataclass(frozen=True, slots=True)
class HapticParams:
    """Settings of :class:`HapticRenderer` (SI units).

    Attributes:
        stiffness: coupling stiffness K (N/m), typically 300-500.
        damping: coupling damping B (N s/m), typically 1-3.
        device_damping: the device's physical viscous damping b (N s/m) used by the passivity check.
        dt: servo period T (s).
        peak_force: largest force magnitude (N).
        continuous_force: largest RMS force (N).
        thermal_tau: time constant of the running mean square (s).
        ramp_time: ramp-in duration (s).
        max_missed: consecutive missed deadlines that latch a fault.
        velocity_cutoff: low-pass cutoff of the penetration rate (Hz).
    """

    stiffness: float = 400.0
    damping: float = 2.0
    device_damping: float = 2.5
    dt: float = 1e-3
    peak_force: float = 3.0
    continuous_force: float = 0.88
    thermal_tau: float = 1.0
    ramp_time: float = 0.5
    max_missed: int = 3
    velocity_cutoff: float = 50.0

    def __post_init__(self) -> None:
        positive = ("stiffness", "dt", "peak_force", "continuous_force", "thermal_tau", "velocity_cutoff")
        for name in positive:
            if not getattr(self, name) > 0.0:
                raise ConfigurationError(f"{name} = {getattr(self, name)!r} is invalid; allowed: > 0")
        if self.continuous_force > self.peak_force:
            raise ConfigurationError(
                f"continuous_force = {self.continuous_force!r} N is invalid; allowed: <= peak_force "
                f"({self.peak_force!r} N)"
            )
        if self.ramp_time < 0 or self.damping < 0 or self.max_missed < 1:
            raise ConfigurationError(
                f"ramp_time = {self.ramp_time!r}, damping = {self.damping!r}, max_missed = "
                f"{self.max_missed!r} are invalid; allowed: ramp_time >= 0, damping >= 0, max_missed >= 1"
            )
        margin = passivity_margin(self.stiffness, self.damping, self.device_damping, self.dt)
        if margin <= 0.0:
            raise ConfigurationError(
                f"coupling K = {self.stiffness:g} N/m, B = {self.damping:g} N s/m at T = {self.dt:g} s is "
                f"not passive for device damping b = {self.device_damping:g} N s/m; allowed: b > K T/2 + "
                f"|B| = {self.stiffness * self.dt / 2 + abs(self.damping):g} N s/m"
            )


class HapticRenderer:
    """Turns the local model's penetration into a safe device force (see the module docstring)."""

    def __init__(self, params: HapticParams | None = None) -> None:
        self.params = params or HapticParams()
        self.reset()

    def reset(self) -> None:
        """Clear faults and the coupling's memory; the force ramps in again from zero."""
        self.fault: str | None = None
        self.missed = 0
        self.enabled_time = 0.0
        self.thermal = 0.0  # running mean square of |F| (N^2)
        self._d_prev: np.ndarray | None = None
        self._v = np.zeros(3)
        self.last_force = np.zeros(3)

    @property
    def rms(self) -> float:
        """Running RMS force of the thermal model (N)."""
        return math.sqrt(self.thermal)

    def coupling(self, penetration: np.ndarray) -> np.ndarray:
        """Unilateral spring-damper force ``(3,)`` (N) for penetration ``(3,)`` (m); updates the filter."""
        p = self.params
        d = np.asarray(penetration, dtype=float)
        if self._d_prev is not None:
            alpha = 1.0 - math.exp(-2.0 * math.pi * p.velocity_cutoff * p.dt)
            self._v += alpha * ((d - self._d_prev) / p.dt - self._v)
        self._d_prev = d
        f = p.stiffness * d + p.damping * self._v
        if not d.any() or float(f @ d) < 0.0:
            return np.zeros(3)
        return f

    def tick(
        self, penetration: np.ndarray, *, deadline_met: bool = True, device_ok: bool = True
    ) -> np.ndarray:
        """One servo tick: the force ``(3,)`` (N) to send to the device."""
        p = self.params
        f = self.coupling(penetration)
        if not device_ok:
            self.fault = self.fault or "device error"
        self.missed = 0 if deadline_met else self.missed + 1
        if self.missed >= p.max_missed:
            self.fault = self.fault or f"{self.missed} missed deadlines"
        if self.fault is not None:
            self.last_force = np.zeros(3)
            self.thermal += (0.0 - self.thermal) * p.dt / p.thermal_tau
            return self.last_force
        self.enabled_time += p.dt
        gain = 1.0 if p.ramp_time == 0 else min(1.0, self.enabled_time / p.ramp_time)
        f = gain * f
        fc2 = p.continuous_force**2
        s = min(1.0, max(0.0, (fc2 - self.thermal) / (0.75 * fc2)))
        allowed = p.continuous_force + (p.peak_force - p.continuous_force) * s
        mag = float(np.linalg.norm(f))
        if mag > allowed:
            f = f * (allowed / mag)
            mag = allowed
        self.thermal += (mag * mag - self.thermal) * p.dt / p.thermal_tau
        self.last_force = f
        return f
