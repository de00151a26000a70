"""Haptic rendering at 1 kHz: virtual coupling to the local model's contact, safety limits, faults.

Every value that reaches the device is finite and bounded. Force pipeline, one call of
:meth:`HapticRenderer.tick` per servo tick of ``dt`` (1 ms):

1. **Input check**: a penetration that is not finite or longer than ``max_penetration`` (1 m, more than any
   contact in a 0.6 m limb's workspace: a broken model, not contact) latches a fault.
2. **Virtual coupling** (god-object / proxy): the local model's contacts give the penetration vector
   ``d`` ``(3,)`` (m) that would push the tool out of the environment; ``F = K d + B d_dot`` with
   ``d_dot`` a backward difference low-passed at ``velocity_cutoff`` Hz. The coupling is unilateral:
   it never pulls the handle into a surface (``F . d >= 0``).
3. **Peak clamp**: ``|F| <= peak_force`` (3.0 N for a 3D Systems Touch).
4. **Ramp-in**, after the clamp: the clamped force is scaled by ``min(1, t_enabled / ramp_time)`` after
   (re)enabling, so no more than ``peak_force * dt / ramp_time`` is added per tick by the ramp.
5. **Thermal governor** (soft): a running mean square ``E' = (|F|^2 - E) / thermal_tau`` slides the
   allowed magnitude smoothly from ``peak_force`` (``E <= (F_s/2)^2``) down to ``sustained_force`` F_s
   (``E >= F_s^2``, 0.8 N): under sustained load the force settles at F_s without a step.
6. **RMS window limit** (hard): the mean of ``|F|^2`` over ANY ``rms_window`` (1 s, every run of 1000
   consecutive ticks) is at most ``continuous_force^2`` (0.88 N RMS). A ring buffer holds each tick's
   excess ``max(0, |F|^2 - F_b^2)`` above the always-available level ``F_b = continuous_force / 2``;
   a tick may only spend what leaves the window's budget ``(F_c^2 - F_b^2) * window`` enough for a
   ramp-down to F_b at ``max_step`` per tick, so the limit never has to step the force down.
7. **Step limit**: ``|F_k - F_(k-1)| <= max_step`` (0.1 N per 1 ms tick, 100 N/s: a full-scale 3 N
   needs >= 30 ms). At K = 400 N/m it acts only above ~0.25 m/s of contact speed, and the force left after
   a lost contact decays to zero within ``|F| / max_step`` ticks.

Faults (the output is 0 N at once while one is active; the only exception to the step limit):

* **Latched** until :meth:`HapticRenderer.reset`: a bad penetration (step 1) and missed deadlines. Each
  missed deadline adds 1 to a leaky counter, each met one takes ``miss_leak`` (0.25) off (floor 0); the
  fault latches at ``max_missed`` (3): three consecutive misses, or any sustained miss pattern above
  ``miss_leak / (1 + miss_leak)`` = 20 % of the ticks (1 of every 3 latches after ~6 cycles).
* **Transient**: ``device_ok = False`` (a device error or a stale stream) gives 0 N while it lasts and
  clears by itself when the device is back; the force then ramps in again over ``ramp_time``.

:meth:`HapticRenderer.reset` clears latched faults and restarts the ramp; it keeps the RMS window and the
thermal state (the motor does not cool down by a reset).

Passivity (Colgate & Schenkel 1997): a sampled spring ``K`` with a backward-difference damper ``B``,
held by a zero-order hold of period ``T``, is passive when the device's own physical damping
``b > K T / 2 + |B|``. With K = 400 N/m, T = 1 ms, B = 2 N s/m that needs b > 2.2 N s/m.
:func:`passivity_margin` returns ``b - K T / 2 - |B|``; :class:`HapticParams` refuses parameters
with a negative margin for the ``device_damping`` it is given (set it to the hardware's value; the
default 2.5 N s/m is an assumption standing in for the scripted device). The stiffness of the
environment is passed to :meth:`HapticRenderer.tick` as a stiffness, never folded into the penetration:
the renderer renders at most ``params.stiffness``, with ``B`` scaled by ``K / params.stiffness``, so the
margin of every coupling rendered is at least that of the checked one (it only grows as ``K`` falls), and
``max_penetration`` is tested on the true penetration.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from pccbullet.core.errors import ConfigurationError


def passivity_margin(stiffness: float, damping: float, device_damping: float, dt: float) -> float:
    """Colgate's margin ``b - K T / 2 - |B|`` (N s/m); passive when > 0."""
    return device_damping - stiffness * dt / 2.0 - abs(damping)


def _shown(value: object) -> str:
    """``repr`` of a bad value, capped at 80 characters for error messages."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check(name: str, value: object, lo: float, hi: float, allowed: str, *, lo_open: bool = True) -> None:
    """Refuse ``value`` unless it is a real number in ``(lo, hi]`` (``[lo, hi]`` when not ``lo_open``).

    Written as ``not (...)`` so that NaN, which fails every comparison, is refused too."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok:
        v = float(value)  # type: ignore[arg-type]
        ok = (lo < v if lo_open else lo <= v) and v <= hi and math.isfinite(v)
    if not ok:
        raise ConfigurationError(f"HapticParams.{name} = {_shown(value)} is invalid; allowed: {allowed}")


@dataclass(frozen=True, slots=True)
class HapticParams:
    """Settings of :class:`HapticRenderer` (SI units); every field is checked on construction.

    Attributes:
        stiffness: coupling stiffness K (N/m), typically 300-500.
        damping: coupling damping B (N s/m), typically 1-3.
        device_damping: the device's physical viscous damping b (N s/m) used by the passivity check.
        dt: servo period T (s).
        peak_force: largest force magnitude (N).
        continuous_force: largest RMS force over any ``rms_window`` (N), a hard limit.
        sustained_force: level the thermal governor settles at under sustained load (N),
            at most ``continuous_force``.
        thermal_tau: time constant of the governor's running mean square (s).
        rms_window: window of the hard RMS limit (s), a whole number of ticks.
        ramp_time: ramp-in duration after (re)enabling (s).
        max_step: largest change of the force vector from one tick to the next (N per tick).
        max_missed: value of the leaky missed-deadline counter that latches a fault.
        miss_leak: what each met deadline takes off the counter, in (0, 1].
        max_penetration: longest penetration accepted as contact (m); beyond it a fault latches.
        velocity_cutoff: low-pass cutoff of the penetration rate (Hz).
    """

    stiffness: float = 400.0
    damping: float = 2.0
    device_damping: float = 2.5
    dt: float = 1e-3
    peak_force: float = 3.0
    continuous_force: float = 0.88
    sustained_force: float = 0.8
    thermal_tau: float = 0.5
    rms_window: float = 1.0
    ramp_time: float = 0.5
    max_step: float = 0.1
    max_missed: float = 3
    miss_leak: float = 0.25
    max_penetration: float = 1.0
    velocity_cutoff: float = 50.0

    def __post_init__(self) -> None:
        inf = math.inf
        for name in ("stiffness", "device_damping", "peak_force", "thermal_tau", "velocity_cutoff"):
            _check(name, getattr(self, name), 0.0, inf, "finite and > 0")
        _check("dt", self.dt, 0.0, 0.1, "0 < dt <= 0.1 s")
        _check("damping", self.damping, 0.0, inf, "finite and >= 0", lo_open=False)
        _check("ramp_time", self.ramp_time, 0.0, inf, "finite and >= 0 s", lo_open=False)
        _check(
            "continuous_force",
            self.continuous_force,
            0.0,
            self.peak_force,
            f"0 < F <= peak_force ({self.peak_force!r} N)",
        )
        _check(
            "sustained_force",
            self.sustained_force,
            0.0,
            self.continuous_force,
            f"0 < F <= continuous_force ({self.continuous_force!r} N)",
        )
        _check("rms_window", self.rms_window, 0.0, 60.0, "dt <= window <= 60 s")
        if round(self.rms_window / self.dt) < 1:
            raise ConfigurationError(
                f"HapticParams.rms_window = {self.rms_window!r} is invalid; allowed: dt <= window <= 60 s"
            )
        _check(
            "max_step",
            self.max_step,
            0.0,
            self.peak_force,
            f"0 < max_step <= peak_force ({self.peak_force!r} N)",
        )
        _check("max_missed", self.max_missed, 1.0, 1e6, "1 <= max_missed <= 1e6", lo_open=False)
        _check("miss_leak", self.miss_leak, 0.0, 1.0, "0 < miss_leak <= 1")
        _check("max_penetration", self.max_penetration, 0.0, 100.0, "0 < max_penetration <= 100 m")
        margin = passivity_margin(self.stiffness, self.damping, self.device_damping, self.dt)
        if margin <= 0.0:
            raise ConfigurationError(
                f"coupling K = {self.stiffness:g} N/m, B = {self.damping:g} N s/m at T = {self.dt:g} s is "
                f"not passive for device damping b = {self.device_damping:g} N s/m; allowed: b > K T/2 + "
                f"|B| = {self.stiffness * self.dt / 2 + abs(self.damping):g} N s/m"
            )


class HapticRenderer:
    """Turns the local model's penetration into a safe device force (see the module docstring).

    Attributes:
        fault: the latched fault (a one-line reason) or ``None``; cleared only by :meth:`reset`.
        device_fault: ``True`` while the device reports ``ok = False`` (transient, clears by itself).
        missed: the leaky missed-deadline counter.
        last_force: the force ``(3,)`` (N) returned by the last tick.
        stiffness, damping: the coupling rendered in the last tick (N/m, N s/m): the stiffness asked for,
            at most ``params.stiffness``, and ``params.damping`` scaled by the same factor.
        link_gain: the factor of the lost-robot fade, 1 with the robot heard, 0 after ``ramp_time`` without.
    """

    def __init__(self, params: HapticParams | None = None) -> None:
        self.params = p = params or HapticParams()
        self._n = int(round(p.rms_window / p.dt))  # ticks per RMS window
        self._base2 = (p.continuous_force / 2.0) ** 2  # F_b^2: always-available level (N^2)
        # the window's budget of excess above F_b (N^2 ticks), a hair under the limit for rounding
        self._budget = (p.continuous_force**2 - self._base2) * self._n * (1.0 - 1e-9)
        self._excess = [0.0] * self._n  # max(0, |F|^2 - F_b^2) of the last n ticks
        self._square = [0.0] * self._n  # |F|^2 of the last n ticks
        self._excess_sum = 0.0
        self._square_sum = 0.0
        self._i = 0  # ring index of the oldest sample (overwritten this tick)
        self.thermal = 0.0  # governor's running mean square of |F| (N^2)
        self.ticks = 0
        self.faults_latched = 0
        self._alpha = 1.0 - math.exp(-2.0 * math.pi * p.velocity_cutoff * p.dt)  # rate filter gain
        self._last = (0.0, 0.0, 0.0)  # kept by reset(): the output slides from there
        self.last_force = np.zeros(3)
        self.stiffness = p.stiffness  # rendered in the last tick (N/m)
        self.damping = p.damping  # rendered in the last tick (N s/m)
        self.link_gain = 1.0
        self.reset()

    def reset(self) -> None:
        """Clear latched faults and the coupling's memory; the ramp-in starts again (the output moves
        from where it is at ``max_step`` per tick at most).

        The RMS window and the thermal state are kept: a reset does not cool the motor."""
        self.fault: str | None = None
        self.device_fault = False
        self.missed = 0.0
        self.enabled_time = 0.0
        self._d_prev: tuple[float, float, float] | None = None
        self._v = (0.0, 0.0, 0.0)

    @property
    def rms(self) -> float:
        """RMS force over the last ``rms_window`` (N), zero-padded before the first full window."""
        return math.sqrt(max(0.0, self._square_sum) / self._n)

    @property
    def active(self) -> bool:
        """``True`` when no fault (latched or transient) holds the output at zero."""
        return self.fault is None and not self.device_fault

    def _couple(self, x: float, y: float, z: float) -> tuple[float, float, float]:
        p, v = self.params, self._v
        if self._d_prev is not None:
            px, py, pz = self._d_prev
            a, inv = self._alpha, 1.0 / p.dt
            v = (
                v[0] + a * ((x - px) * inv - v[0]),
                v[1] + a * ((y - py) * inv - v[1]),
                v[2] + a * ((z - pz) * inv - v[2]),
            )
            self._v = v
        self._d_prev = (x, y, z)
        k, c = self.stiffness, self.damping
        f = (k * x + c * v[0], k * y + c * v[1], k * z + c * v[2])
        if (x == 0.0 and y == 0.0 and z == 0.0) or f[0] * x + f[1] * y + f[2] * z < 0.0:
            return (0.0, 0.0, 0.0)
        return f

    def _allowed(self, headroom: float) -> float:
        """Largest magnitude ``m`` (N) whose excess plus that of a ``max_step`` ramp-down to F_b fits
        ``headroom`` (N^2 ticks): ``sum_(j=0..n) ((m - j s)^2 - F_b^2) <= headroom`` over the terms
        with ``m - j s > F_b`` (increasing in ``m``; solved exactly, piece by piece)."""
        p = self.params
        s, b2 = p.max_step, self._base2
        fb = math.sqrt(b2)
        h = max(0.0, headroom)
        n = 0  # number of whole steps above F_b at the solution

        def left(k: int) -> float:  # the sum at m = F_b + k s
            return fb * s * k * (k + 1) + s * s * k * (k + 1) * (2 * k + 1) / 6.0

        top = max(0, math.floor((p.peak_force + s - fb) / s))  # beyond it the peak clamp binds anyway
        while n < top:  # bisection: the largest k <= top with left(k) <= h (left increases with k)
            mid = (n + top + 1) // 2
            if left(mid) <= h:
                n = mid
            else:
                top = mid - 1
        a = n + 1.0
        bq = -s * n * (n + 1)
        c = s * s * n * (n + 1) * (2 * n + 1) / 6.0 - a * b2 - h
        m = (-bq + math.sqrt(max(0.0, bq * bq - 4.0 * a * c))) / (2.0 * a)
        return min(max(m, fb + n * s), fb + (n + 1) * s)

    def _spent(self, m: float) -> float:
        """Excess (N^2 ticks) of magnitude ``m`` (N) now plus that of a ``max_step`` ramp-down to F_b."""
        s, b2 = self.params.max_step, self._base2
        over = m - math.sqrt(b2)
        if over <= 0.0:
            return 0.0
        n = math.ceil(over / s) - 1  # further ramp-down terms above F_b
        return (n + 1) * (m * m - b2) - s * n * (n + 1) * m + s * s * n * (n + 1) * (2 * n + 1) / 6.0

    def _zero(self) -> np.ndarray:
        """Output 0 N now (a fault): restart the ramp and the coupling's memory."""
        self.enabled_time = 0.0
        self._d_prev = None
        self._v = (0.0, 0.0, 0.0)
        self._record(0.0)
        self._last = (0.0, 0.0, 0.0)
        self.last_force = np.zeros(3)
        return self.last_force

    def _record(self, mag2: float) -> None:
        p, i = self.params, self._i
        x = max(0.0, mag2 - self._base2)
        self._excess_sum += x - self._excess[i]
        self._square_sum += mag2 - self._square[i]
        self._excess[i], self._square[i] = x, mag2
        self._i = (i + 1) % self._n
        if self._i == 0:  # re-sum once per window: no drift of the running sums
            self._excess_sum = math.fsum(self._excess)
            self._square_sum = math.fsum(self._square)
        self.thermal += (mag2 - self.thermal) * p.dt / p.thermal_tau
        self.ticks += 1

    def tick(
        self,
        penetration: np.ndarray,
        *,
        stiffness: float | None = None,
        deadline_met: bool = True,
        device_ok: bool = True,
        link_ok: bool = True,
    ) -> np.ndarray:
        """One servo tick: the force ``(3,)`` (N) to send to the device, finite and bounded.

        Args:
            penetration: ``(3,)`` (m), the vector that pushes the tool out of the environment.
            stiffness: the environment's stiffness to render this tick (N/m); ``None``: ``params.stiffness``.
                Rendered at most at ``params.stiffness`` (the stiffness whose passivity was checked),
                with the damping scaled alike (:attr:`stiffness`, :attr:`damping`); NaN or negative
                latches a fault.
            deadline_met: ``False`` when the previous tick ended after its deadline.
            device_ok: ``False`` while the device reports an error or a stale stream.
            link_ok: ``False`` while the robot behind the model is lost: the force fades to 0 over
                ``ramp_time`` (:attr:`link_gain`) and fades back in when it is ``True`` again.
        """
        p = self.params
        k = p.stiffness if stiffness is None else float(stiffness)
        if not (k >= 0.0 and math.isfinite(k)) and self.fault is None:  # NaN fails too
            self.fault = f"stiffness {_shown(stiffness)} N/m is not finite or negative"
            self.faults_latched += 1
        self.stiffness = min(k, p.stiffness) if k >= 0.0 else 0.0  # inf: a fault above, NaN: 0
        self.damping = p.damping * self.stiffness / p.stiffness
        fade = p.dt / p.ramp_time if p.ramp_time > 0 else 1.0
        gain = self.link_gain + fade if link_ok else self.link_gain - fade
        self.link_gain = min(1.0, max(0.0, gain))
        self.missed = self.missed + 1.0 if not deadline_met else max(0.0, self.missed - p.miss_leak)
        if self.missed >= p.max_missed and self.fault is None:
            self.fault = f"missed deadlines (leaky count {self.missed:g} >= {p.max_missed:g})"
            self.faults_latched += 1
        x, y, z = np.asarray(penetration, dtype=float).reshape(3).tolist()
        if self.fault is None and not x * x + y * y + z * z <= p.max_penetration**2:  # NaN fails too
            self.fault = (
                f"penetration {_shown([x, y, z])} m is not finite or longer than {p.max_penetration:g} m"
            )
            self.faults_latched += 1
        self.device_fault = not device_ok
        if self.fault is not None or self.device_fault:
            return self._zero()
        fx, fy, fz = self._couple(x, y, z)
        mag = math.sqrt(fx * fx + fy * fy + fz * fz)
        scale = self.link_gain  # a lost robot fades the force out (and back in)
        if mag > p.peak_force:  # 3. peak clamp
            scale = p.peak_force / mag
        self.enabled_time += p.dt
        if p.ramp_time > 0 and self.enabled_time < p.ramp_time:  # 4. ramp, after the clamp
            scale *= self.enabled_time / p.ramp_time
        fs2 = p.sustained_force**2  # 5. thermal governor (soft)
        share = min(1.0, max(0.0, (fs2 - self.thermal) / (0.75 * fs2)))
        soft = p.sustained_force + (p.peak_force - p.sustained_force) * share
        if mag * scale > soft:
            scale = soft / mag
        fx, fy, fz = fx * scale, fy * scale, fz * scale
        qx, qy, qz = self._last  # 6-7. step limit and hard RMS window
        pm = math.sqrt(qx * qx + qy * qy + qz * qz)
        ux, uy, uz = fx - qx, fy - qy, fz - qz
        sm = math.sqrt(ux * ux + uy * uy + uz * uz)
        if sm > p.max_step:
            r = p.max_step / sm
            fx, fy, fz = qx + ux * r, qy + uy * r, qz + uz * r
        om = math.sqrt(fx * fx + fy * fy + fz * fz)
        headroom = self._budget - (self._excess_sum - self._excess[self._i])
        if om > pm - p.max_step and self._spent(om) > headroom:
            hi = max(self._allowed(headroom), pm - p.max_step, 0.0)
            if om > hi and pm >= hi:  # shrink radially: a step of pm - hi <= max_step
                r = hi / pm if pm > 0.0 else 0.0
                fx, fy, fz = qx * r, qy * r, qz * r
            elif om > hi:  # where the segment prev -> out crosses |F| = hi
                ux, uy, uz = fx - qx, fy - qy, fz - qz
                a = ux * ux + uy * uy + uz * uz
                b = 2.0 * (qx * ux + qy * uy + qz * uz)
                c = pm * pm - hi * hi
                k = min(1.0, max(0.0, (-b + math.sqrt(max(0.0, b * b - 4.0 * a * c))) / (2.0 * a)))
                fx, fy, fz = qx + ux * k, qy + uy * k, qz + uz * k
            om = math.sqrt(fx * fx + fy * fy + fz * fz)
        self._record(om * om)
        self._last = (fx, fy, fz)
        self.last_force = np.array(self._last)
        return self.last_force
