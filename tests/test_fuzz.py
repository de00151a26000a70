"""Seeded, bounded fuzz of the robot and experiment loaders (mutator in tests/fuzz_support.py).

600 mutated ``ursula.toml`` files, 600 mutated bundled experiments and 600 mutated bundled robots of the other
kinds (PneuNet, three-actuator, rolling snake; URDF written) per run, each loaded in this process
under a 5 s wall-clock budget: every case is accepted (and then meets the invariants) or refused with a
:class:`~pccbullet.core.errors.PccBulletError`; no other exception, no case over budget. Loaders only (no
simulation): measured 6.8 s (robots, URDF trees built), 3.3 s (experiments) and 2.6 s (other kinds) on the
2-core VM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz_support import run_fuzz

CASES = 600
SEED = 16


@pytest.mark.parametrize("kind", ["robot", "experiment", "other_robot"])
def test_fuzz_loaders(tmp_path: Path, kind: str) -> None:
    report = run_fuzz(kind, CASES, SEED, tmp_path, case_budget=5.0)
    assert report.cases == CASES
    assert report.failures == []
    assert report.counts["traceback"] == 0 and report.counts["hang"] == 0
    assert report.counts["accepted"] >= 10 and report.counts["clean"] >= CASES // 2  # both paths exercised
