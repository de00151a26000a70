"""A seeded mutator of TOML files and a budgeted in-process runner for the loader fuzz (tests/test_fuzz.py).

Each case takes a bundled file, applies 1-3 random mutations at the text or byte level (delete, rename or
duplicate keys, replace values with extreme numbers, NaN/inf, huge ints and strings, deep nesting, long
lists of duplicates, wrong types, special files; duplicate blocks; insert non-UTF-8 bytes; truncate),
writes it to a temporary folder and loads it with the real loader under a wall-clock budget (SIGALRM).
Outcomes: ``accepted`` (then invariants are checked), ``clean`` (a :class:`PccBulletError`), ``traceback``
(any other exception, or a broken invariant) and ``hang`` (over budget).

Run by hand with more cases: ``python tests/fuzz_support.py --robots 5000 --experiments 5000``.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ROBOT_FILE = ROOT / "assets" / "robots" / "ursula.toml"
EXPERIMENT_FILES = sorted(
    p for p in (ROOT / "assets" / "experiments").glob("*.toml") if "sweep" not in p.name
)

_KEY_LINE = re.compile(rb"^(\s*)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)(.*?)(\s*(#.*)?)$")


def _nested(depth: int) -> bytes:
    return b"{a = " * depth + b"1" + b"}" * depth


def _values(csv_dir: Path) -> list[bytes]:
    """Replacement values: extreme numbers, wrong types, huge and special values."""
    c = csv_dir
    return [
        b"nan", b"+nan", b"inf", b"-inf", b"1e308", b"-1e308", b"1e-300", b"-1e-300", b"0", b"-1", b"0.0",
        b"1" + b"0" * 400, b"-1" + b"0" * 30, b"9223372036854775807", b"-9223372036854775808",
        b"true", b"false", b'""', b'"x"', b'" "', b'"' + b"a" * 300 + b'"', b'"' + b"b" * 200_000 + b'"',
        b"[]", b"[1, 2, 3]", b"[1e308, -1e308, 1e308]", b"[nan, 0, 0]", b"[0, 0, -1e300]", b"[0, 0, 1e300]",
        b"[" + b", ".join([b"1"] * 20_000) + b"]", b"{}", b"{a = 1}", _nested(500), _nested(40), _nested(5),
        b'"\\u0000"', b'"a\\u0000b.toml"', b"1979-05-27T07:32:00Z", b"07:32:00", b"0x7fffffff", b"[[1]]",
        b'"camera"', b'["camera", "camera"]', b"[" + b", ".join([b'"camera"'] * 20_000) + b"]",
        b'["grasper"]', b'["light"]', b'["camera", "grasper", "palpation", "light"]', b"3600", b"1000", b"20",
        b"200", b"1e-9", b"-1e300", b'"/dev/zero"', b'"/"', b'"/etc/passwd"', b'"nope.csv"',
        f'"{c}/good.csv"'.encode(), f'"{c}/latin1.csv"'.encode(), f'"{c}/nul.csv"'.encode(),
        f'"{c}/nan.csv"'.encode(), f'"{c}/huge_field.csv"'.encode(), f'"{c}/one_row.csv"'.encode(),
        b'"recorded"', b'"waypoints"', b'"sine"', b'"step"', b'"ramp"', b'"constant"', b'"model"',
        b'"dynamic"', b'"water"', b'"../robots/ursula.toml"', b'"ursula.toml"', b'"hydraulic_arm"',
        b'"' + b"x" * 5000 + b'.toml"', b'"camera.s1.bend_deg"', b'"grasper.s2.length_mm"',
        b'"light.s1.bend"', b'"camera.s9.bend"', b'"camera.s99999999999999999999.bend"', b'"nosuch.s1.bend"',
        b'"tendon"', b'"chamber"', b'"force_sensor"', b"1.5", b"1e5", b"-1e5", b"360", b"0.49", b"0.5",
    ]  # fmt: skip


def make_csvs(csv_dir: Path) -> None:
    """Recorded-input CSV files the mutated experiments may point at (good and bad ones)."""
    csv_dir.mkdir(parents=True, exist_ok=True)
    (csv_dir / "good.csv").write_text("time_s,value\n0,0\n0.5,10\n1,20\n")
    (csv_dir / "latin1.csv").write_bytes("time_s,val\xe9\n0,0\n1,1\n".encode("latin-1"))
    (csv_dir / "nul.csv").write_bytes(b"time_s,value\n0,0\x00\n1,1\n")
    (csv_dir / "nan.csv").write_text("time_s,value\n0,nan\n1,1\n")
    (csv_dir / "huge_field.csv").write_text("time_s,value\n0," + "1" * 200_000 + "\n1,1\n")
    (csv_dir / "one_row.csv").write_text("time_s,value\n0,0\n")


def _typo(key: bytes, rng: random.Random) -> bytes:
    k = bytearray(key)
    op = rng.randrange(4)
    i = rng.randrange(len(k))
    if op == 0 and len(k) > 1:
        j = min(i + 1, len(k) - 1)
        k[i], k[j] = k[j], k[i]
    elif op == 1 and len(k) > 1:
        del k[i]
    elif op == 2:
        k.insert(i, rng.choice(b"abcdefghijklmnopqrstuvwxyz_"))
    else:
        k = bytearray(key.upper() if rng.random() < 0.5 else key + b"_x")
    return bytes(k)


def mutate(text: bytes, rng: random.Random, values: list[bytes]) -> bytes:
    """Apply 1-3 random mutations to a TOML file's bytes."""
    lines = text.split(b"\n")
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        keyed = [i for i, ln in enumerate(lines) if _KEY_LINE.match(ln)]
        op = rng.randrange(16)
        if op >= 12:  # a plausible number: the old one scaled by a random factor, often accepted
            nums = [i for i in keyed if re.match(rb"^-?[0-9.]+$", _KEY_LINE.match(lines[i]).group(4))]  # type: ignore[union-attr]
            if nums:
                i = rng.choice(nums)
                m = _KEY_LINE.match(lines[i])
                assert m is not None
                x = float(m.group(4)) * rng.uniform(0.5, 1.5)
                new = str(round(x)) if rng.random() < 0.5 else repr(x)
                lines[i] = m.group(1) + m.group(2) + m.group(3) + new.encode()
        elif op <= 3 and keyed:  # replace a value (most frequent)
            i = rng.choice(keyed)
            m = _KEY_LINE.match(lines[i])
            assert m is not None
            lines[i] = m.group(1) + m.group(2) + m.group(3) + rng.choice(values)
        elif op == 4 and keyed:  # delete a key
            del lines[rng.choice(keyed)]
        elif op == 5 and keyed:  # misspell a key
            i = rng.choice(keyed)
            m = _KEY_LINE.match(lines[i])
            assert m is not None
            lines[i] = m.group(1) + _typo(m.group(2), rng) + m.group(3) + m.group(4)
        elif op == 6 and lines:  # duplicate a line (a duplicate key, or a repeated header)
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
        elif op == 7:  # duplicate a block from a header to the next header of the same kind
            heads = [i for i, ln in enumerate(lines) if ln.startswith(b"[")]
            if heads:
                a = rng.choice(heads)
                nxt = [i for i in heads if i > a and lines[i] == lines[a]]
                b = nxt[0] if nxt else len(lines)
                lines[b:b] = lines[a:b] * rng.choice((1, 1, 40))
        elif op == 8:  # add an unknown or known key at a random place
            key = rng.choice([b"extra", b"lenght_mm", b"sections", b"limbs", b"noise", b"column", b"seed"])
            lines.insert(rng.randrange(len(lines) + 1), key + b" = " + rng.choice(values))
        elif op == 9:  # delete a table header
            heads = [i for i, ln in enumerate(lines) if ln.startswith(b"[")]
            if heads:
                del lines[rng.choice(heads)]
        elif op == 10:  # numeric perturbation of a number value
            nums = [i for i in keyed if re.match(rb"^-?[0-9.]+$", _KEY_LINE.match(lines[i]).group(4))]  # type: ignore[union-attr]
            if nums:
                i = rng.choice(nums)
                m = _KEY_LINE.match(lines[i])
                assert m is not None
                factor = rng.choice((-1.0, 0.0, 1e-6, 1e3, 1e6, 1e300, 0.999, 1.001))
                lines[i] = m.group(1) + m.group(2) + m.group(3) + repr(float(m.group(4)) * factor).encode()
        else:  # byte-level: non-UTF-8 bytes, truncation or random bytes
            blob = b"\n".join(lines)
            pos = rng.randrange(len(blob) + 1)
            kind = rng.randrange(3)
            if kind == 0:
                blob = blob[:pos] + rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00")) + blob[pos:]
            elif kind == 1:
                blob = blob[:pos]
            else:
                blob = blob[:pos] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8))) + blob[pos:]
            lines = blob.split(b"\n")
    return b"\n".join(lines)


class Hang(BaseException):
    """Raised by the SIGALRM handler when a case runs over its budget."""


@contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in this (main) thread after ``seconds`` of wall time; restores the old handler."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Report:
    """Counts of a fuzz run and the worst case time (s); ``failures`` holds (case, outcome, detail)."""

    counts: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[int, str, str]] = field(default_factory=list)
    slowest: float = 0.0

    @property
    def cases(self) -> int:
        """Number of cases run."""
        return sum(self.counts.values())


def robot_invariants(spec: Any, *, urdf: bool = False) -> None:
    """An accepted robot: distinct limb names, a finite rest pose of every limb tip in the head frame and a
    finite mass; with ``urdf``, its URDF trees build (or refuse with a :class:`PccBulletError`)."""
    from pccbullet.urdf_gen.pcc import limb_transform, rest_configs
    from pccbullet.urdf_gen.urdf_writer import build_head_urdf, build_limb_urdf

    names = [limb.name for limb in spec.limbs]
    if len(set(names)) != len(names):
        raise AssertionError(f"duplicate limb names {names}")
    for limb in spec.limbs:
        T = limb.T_head_base() @ limb_transform(rest_configs(limb.segments))
        if not np.all(np.isfinite(T)) or not 0.0 < limb.mass < math.inf:
            raise AssertionError(f"limb {limb.name}: non-finite tip pose or mass")
    if urdf:
        build_head_urdf(spec)
        for limb in spec.limbs:
            build_limb_urdf(spec, limb)


def experiment_invariants(spec: Any) -> None:
    """An accepted experiment: >= 1 step and record, distinct recorded limbs, inputs on recorded limbs,
    recorded size within budget, finite profile values over the run."""
    from pccbullet.sim.experiments.spec import MAX_RECORD_BYTES, record_bytes

    if spec.n_steps < 1 or spec.n_steps % spec.substeps or spec.duration <= 0.0:
        raise AssertionError(f"duration {spec.duration} s gives {spec.n_steps} steps")
    if len(set(spec.limbs)) != len(spec.limbs) or not spec.limbs:
        raise AssertionError(f"limbs {spec.limbs}")
    if any(inp.limb not in spec.limbs for inp in spec.inputs):
        raise AssertionError("an input drives a limb that is not recorded")
    if record_bytes(spec.robot, spec.limbs, spec.n_steps // spec.substeps + 1) > MAX_RECORD_BYTES:
        raise AssertionError("recorded samples over budget")
    t = np.linspace(0.0, spec.duration, 7)
    for prof in [inp.profile for inp in spec.inputs] + [p for _, p in spec.channels]:
        if not np.all(np.isfinite(prof.value(t))):
            raise AssertionError(f"non-finite profile {prof.kind}")
    robot_invariants(spec.robot)
    from pccbullet.sim.experiments.runner import command_schedule

    for cmd in command_schedule(spec, t, spec.seed).values():  # range-checked commands (SpecError if out)
        if not np.all(np.isfinite(cmd)):
            raise AssertionError("non-finite commanded PCC")


def run_fuzz(kind: str, n: int, seed: int, work: Path, *, case_budget: float = 5.0) -> Report:
    """Run ``n`` mutated cases of ``kind`` in this process: ``"robot"`` (``ursula.toml``, loaded and its URDF
    trees built), ``"experiment"`` (the bundled experiments) or ``"other_robot"`` (the bundled PneuNet,
    three-actuator and rolling-snake TOMLs, loaded and their URDF written).

    Args:
        kind: which loader to fuzz. n: number of cases. seed: the random seed (cases are reproducible).
        work: scratch folder (files are written there). case_budget: wall-clock limit of one case (s).
    """
    from pccbullet.core.errors import PccBulletError
    from pccbullet.sim.experiments.spec import load_experiment
    from pccbullet.urdf_gen.catalog import bundled, write_robot_urdf
    from pccbullet.urdf_gen.spec_loader import load_robot

    rng = random.Random(seed)
    csv_dir = work / "csv"
    make_csvs(csv_dir)
    values = _values(csv_dir)
    other_robots = [r.path for r in bundled() if r.kind != "pcc"]  # PneuNet, three-actuator, snakes
    sources = {"robot": [ROBOT_FILE], "other_robot": other_robots}.get(kind, EXPERIMENT_FILES)
    texts = [p.read_bytes() for p in sources]
    report = Report()
    robot_text = ROBOT_FILE.read_bytes()
    for case in range(n):
        i = rng.randrange(len(texts))
        text = texts[i]
        if kind == "experiment" and rng.random() < 0.2:  # a mutated robot next to the experiment
            (work / "robot_m.toml").write_bytes(mutate(robot_text, rng, values))
            text = text.replace(b'robot = "ursula"', b'robot = "robot_m.toml"')
        if kind == "experiment" and rng.random() < 0.2:  # a recorded input from one of the CSV files
            csv = rng.choice(["good", "good", "latin1", "nul", "nan", "huge_field", "one_row"])
            limb = re.search(rb'target = "([a-z]+)\.', text)
            target = (limb.group(1) if limb else b"camera") + b".s1.bend_deg"
            text += b'\n[inputs.recorded_m]\ntarget = "' + target + b'"\nkind = "recorded"\nfile = "'
            text += f"{csv_dir}/{csv}.csv".encode() + b'"\n'
        data = mutate(text, rng, values)
        path = work / f"{kind}_{case % 10}.toml"
        path.write_bytes(data)
        t0 = time.perf_counter()
        try:
            with budget(case_budget):
                if kind == "robot":
                    robot_invariants(load_robot(path), urdf=True)
                elif kind == "other_robot":
                    write_robot_urdf(path, work / "urdf")
                else:
                    experiment_invariants(load_experiment(path))
            outcome = "accepted"
        except PccBulletError:
            outcome = "clean"
        except Hang:
            outcome = "hang"
        except Exception:  # a traceback is what the fuzz looks for
            outcome = "traceback"
            report.failures.append((case, outcome, traceback.format_exc(limit=-3)[-1500:]))
        dt = time.perf_counter() - t0
        report.slowest = max(report.slowest, dt)
        report.counts[outcome] += 1
        if outcome == "hang":
            report.failures.append((case, outcome, f"{sources[i].name}: over {case_budget} s"))
    return report


def main(argv: list[str] | None = None) -> int:
    """By-hand run: counts per outcome for robots and experiments."""
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--robots", type=int, default=5000)
    ap.add_argument("--experiments", type=int, default=5000)
    ap.add_argument("--other-robots", type=int, default=5000, help="PneuNet, three-actuator, snake TOMLs")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--budget", type=float, default=5.0, help="per-case wall-clock budget (s)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        runs = (("robot", args.robots), ("experiment", args.experiments), ("other_robot", args.other_robots))
        for kind, n in runs:
            t0 = time.perf_counter()
            rep = run_fuzz(kind, n, args.seed, Path(tmp), case_budget=args.budget)
            c = rep.counts
            print(  # noqa: T201
                f"{kind}: cases {rep.cases}, clean errors {c['clean']}, accepted {c['accepted']}, "
                f"tracebacks {c['traceback']}, hangs {c['hang']}; slowest case {rep.slowest:.3f} s; "
                f"total {time.perf_counter() - t0:.1f} s"
            )
            for case, outcome, detail in rep.failures[:10]:
                print(f"  case {case} {outcome}: {detail}")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
