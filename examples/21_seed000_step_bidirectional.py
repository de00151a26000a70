"""Seed 000 sec. 3.2 virtual experiment (profile step_bi). Usage: python THIS --out DIR"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location(
        "seed000", Path(__file__).with_name("20_seed000_step_unidirectional.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    raise SystemExit(mod.main(sys.argv[1:], default_profile="step_bi"))
