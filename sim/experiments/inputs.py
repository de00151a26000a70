"""Input profiles of virtual experiments: step, ramp, sine, waypoints, recorded operator input, constant.

A profile maps time (s) to a value in the units of its target (rad, m, or an actuator channel's own unit);
:func:`parse_profile` reads one from an experiment TOML table. Every profile is vectorized:
``profile.value(t)`` takes ``(n,) float`` times and returns ``(n,) float`` values.

TOML fields per ``kind`` (times in seconds, values in the target's units, e.g. degrees for ``*_deg``)::

    constant   value
    step       t0_s (default 0), before (default 0), after
    ramp       t0_s (default 0), t1_s, start, end (held outside [t0, t1])
    sine       amplitude, frequency_hz, phase_deg (default 0), offset (default 0)
    waypoints  times_s = [...], values = [...]   (linear interpolation, held at the ends)
    recorded   file (CSV of time + values, relative to the experiment file), column (default: 2nd)

Any profile may add ``noise`` (standard deviation, target units): seeded Gaussian noise per physics step.

Ranges, so that every sampled value stays finite: values, amplitudes, offsets and noise within
+-:data:`MAX_VALUE` (target units, before the unit scale), times in [0, :data:`MAX_TIME_S`] s, frequencies
in [0, 500] Hz (the Nyquist rate of the 1 kHz physics). A recorded-input CSV is a regular UTF-8 file of at
most :data:`MAX_CSV_BYTES` (64 MB) and :data:`MAX_CSV_ROWS` rows.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pccbullet.core.errors import SpecError
from pccbullet.core.fields import Fields, as_finite, read_limited
from pccbullet.core.types import FloatArray

PROFILE_KINDS = ("constant", "step", "ramp", "sine", "waypoints", "recorded")
MAX_VALUE = 1e9  # largest |value| of a profile, in the target's units
MAX_TIME_S = 1e6  # s, latest time of a profile breakpoint
MAX_FREQUENCY_HZ = 500.0  # Hz, Nyquist rate of the 1 kHz physics
MAX_CSV_BYTES = 64_000_000  # bytes, largest recorded-input CSV
MAX_CSV_ROWS = 4_000_000  # data rows of a recorded-input CSV (an hour at 1 kHz fits)
MAX_WAYPOINTS = 100_000  # breakpoints of a waypoints profile


@dataclass(frozen=True, slots=True)
class Profile:
    """A scalar time profile sampled by linear interpolation or a closed form.

    Attributes:
        kind: one of :data:`PROFILE_KINDS`.
        params: closed-form parameters (SI times, values in target units).
        times: breakpoints ``(m,) float`` (s) for ``waypoints`` and ``recorded``, else empty.
        values: values at ``times``, ``(m,) float``.
        noise: standard deviation of additive Gaussian noise (target units), 0 for none.
    """

    kind: str
    params: tuple[tuple[str, float], ...] = ()
    times: tuple[float, ...] = ()
    values: tuple[float, ...] = ()
    noise: float = 0.0

    def value(self, t: FloatArray) -> FloatArray:
        """Noise-free values at times ``t`` ``(n,) float`` (s) -> ``(n,) float``."""
        t = np.asarray(t, dtype=float)
        p = dict(self.params)
        if self.kind == "constant":
            return np.full_like(t, p["value"])
        if self.kind == "step":
            return np.where(t >= p["t0"], p["after"], p["before"])
        if self.kind == "ramp":
            t0, t1 = p["t0"], p["t1"]
            frac = np.clip((t - t0) / (t1 - t0), 0.0, 1.0) if t1 > t0 else (t >= t0).astype(float)
            return p["start"] + (p["end"] - p["start"]) * frac
        if self.kind == "sine":
            return p["offset"] + p["amplitude"] * np.sin(2.0 * math.pi * p["frequency"] * t + p["phase"])
        return np.interp(t, np.asarray(self.times), np.asarray(self.values))

    def extremes(self, t_end: float) -> tuple[float, float]:
        """Smallest and largest noise-free value over ``[0, t_end]`` (s), in the profile's units.

        Piecewise-linear kinds take their extremes at ``0``, ``t_end`` or a breakpoint in between; a sine
        at those or at its crests and troughs in between (the whole swing once ``t_end`` spans a period).
        """
        p = dict(self.params)
        times = [0.0, t_end]
        if self.kind == "sine":
            w, phase = 2.0 * math.pi * p["frequency"], p["phase"]
            if p["frequency"] * t_end >= 1.0:
                return p["offset"] - abs(p["amplitude"]), p["offset"] + abs(p["amplitude"])
            if w > 0.0:  # crests and troughs: w t + phase = pi/2 + k pi, at most 3 of them in [0, t_end]
                k0 = math.floor((phase - 0.5 * math.pi) / math.pi)
                times += [(0.5 * math.pi + k * math.pi - phase) / w for k in range(k0, k0 + 4)]
        else:
            times += [p[k] for k in ("t0", "t1") if k in p] + list(self.times)
        v = self.value(np.array([t for t in times if 0.0 <= t <= t_end]))
        return float(v.min()), float(v.max())

    def sample(self, t: FloatArray, rng: np.random.Generator | None = None) -> FloatArray:
        """Values at ``t`` plus seeded noise (if ``noise > 0`` and ``rng`` given), ``(n,) float``."""
        v = self.value(t)
        if self.noise > 0.0 and rng is not None:
            v = v + rng.normal(0.0, self.noise, size=v.shape)
        return v


def read_recorded(path: Path, column: str | None, source: Path, field: str) -> tuple[FloatArray, FloatArray]:
    """Read a recorded operator input: CSV with a header, time (s) first -> ``(m,)`` times and values.

    The file must be a regular UTF-8 file of at most :data:`MAX_CSV_BYTES` and :data:`MAX_CSV_ROWS` rows
    with finite values within +-:data:`MAX_VALUE` and strictly increasing times in [0, :data:`MAX_TIME_S`].
    """
    raw = read_limited(path, MAX_CSV_BYTES, "CSV file", source=source, field=field)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(source, field, path, f"a UTF-8 CSV file (bad byte at offset {exc.start})") from exc
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:  # NUL bytes, a field over the csv module's size limit
        raise SpecError(source, field, path, f"a plain CSV file ({exc})") from exc
    if len(rows) > MAX_CSV_ROWS + 1:
        raise SpecError(source, field, path, f"a CSV of at most {MAX_CSV_ROWS} rows ({len(rows) - 1})")
    if len(rows) < 3 or len(rows[0]) < 2:
        raise SpecError(source, field, path, "a CSV with a header and at least 2 rows of time + value")
    header = [h.strip() for h in rows[0]]
    col = 1 if column is None else (header.index(column) if column in header else -1)
    if col < 1:
        raise SpecError(source, field.replace(".file", ".column"), column, "one of " + ", ".join(header[1:]))
    try:
        data = np.array([[float(r[0]), float(r[col])] for r in rows[1:] if r], dtype=float)
    except (ValueError, IndexError) as exc:
        raise SpecError(source, field, path, "numeric CSV rows") from exc
    if len(data) < 2:
        raise SpecError(source, field, path, "a CSV with a header and at least 2 rows of time + value")
    finite = np.all(np.isfinite(data)) and np.all(np.abs(data[:, 1]) <= MAX_VALUE)
    in_time = np.all((data[:, 0] >= 0.0) & (data[:, 0] <= MAX_TIME_S))
    if not (finite and in_time) or np.any(np.diff(data[:, 0]) <= 0.0):
        raise SpecError(
            source,
            field,
            path,
            f"values within +-{MAX_VALUE:g} and strictly increasing times in [0, {MAX_TIME_S:g}] s",
        )
    return data[:, 0], data[:, 1]


def parse_profile(f: Fields, base_dir: Path, scale: float = 1.0) -> Profile:
    """Read a profile table (see module docstring); values are multiplied by ``scale`` (e.g. deg -> rad).

    Does not call :meth:`Fields.finish`; the caller reads its own keys (``target``) and finishes.
    """
    kind = f.string("kind", choices=PROFILE_KINDS)
    noise = f.number("noise", 0.0, MAX_VALUE, default=0.0) * scale

    def num(key: str, lo: float = -MAX_VALUE, hi: float = MAX_VALUE, **kw: Any) -> float:
        return f.number(key, lo, hi, **kw)

    def time(key: str, lo: float = 0.0, **kw: Any) -> float:
        return f.number(key, lo, MAX_TIME_S, **kw)

    if kind == "constant":
        params = {"value": num("value") * scale}
    elif kind == "step":
        params = {
            "t0": time("t0_s", default=0.0),
            "before": num("before", default=0.0) * scale,
            "after": num("after") * scale,
        }
    elif kind == "ramp":
        t0 = time("t0_s", default=0.0)
        t1 = time("t1_s", t0)
        params = {"t0": t0, "t1": t1, "start": num("start") * scale, "end": num("end") * scale}
    elif kind == "sine":
        params = {
            "amplitude": num("amplitude") * scale,
            "frequency": num("frequency_hz", 0.0, MAX_FREQUENCY_HZ),
            "phase": math.radians(num("phase_deg", -360.0, 360.0, default=0.0)),
            "offset": num("offset", default=0.0) * scale,
        }
    else:
        if kind == "waypoints":
            times = _numbers(f, "times_s", 0.0, MAX_TIME_S)
            values = _numbers(f, "values", -MAX_VALUE, MAX_VALUE)
            if len(times) != len(values) or len(times) < 1:
                raise f.error("values", f.table["values"], f"a list of {len(times)} numbers (one per time)")
            if np.any(np.diff(times) <= 0.0):
                raise f.error("times_s", f.table["times_s"], "strictly increasing times")
        else:
            name = f.string("file")
            column = f.string("column", default=None) if f.has("column") else None
            try:
                path = (base_dir / name).resolve()
            except (OSError, ValueError, RuntimeError) as exc:  # NUL byte, symlink loop
                raise f.error("file", name, "a CSV file path") from exc
            times, values = read_recorded(path, column, f.source, f.path("file"))
        return Profile(kind, (), tuple(map(float, times)), tuple(float(v) * scale for v in values), noise)
    return Profile(kind, tuple(params.items()), noise=noise)


def _numbers(f: Fields, key: str, lo: float, hi: float) -> FloatArray:
    """A non-empty list of at most :data:`MAX_WAYPOINTS` finite numbers in ``[lo, hi]``."""
    value = f.raw(key)
    allowed = f"a list of 1 to {MAX_WAYPOINTS} numbers in [{lo:g}, {hi:g}]"
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_WAYPOINTS:
        raise f.error(key, value, allowed)
    out = [as_finite(v) for v in value]
    if any(x is None or not lo <= x <= hi for x in out):
        raise f.error(key, value, allowed)
    return np.asarray(out, dtype=float)
