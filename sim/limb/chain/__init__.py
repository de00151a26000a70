"""Compiled rigid-chain dynamics of a loaded limb URDF: recursive Newton–Euler and composite-rigid-body
kernels (:mod:`.kernels`), the implicit spring solve (:mod:`.solve`), the articulated-body solve
(:mod:`.articulated`), tendons (:mod:`.tendons`) and the chain read from the URDF (:mod:`.rigid`).

Compiled-code cache: numba keys each cached kernel to its own source file only, while a kernel compiles
the kernels it calls from other files into itself. So that a change to one file is not hidden behind an
old cache entry of another, importing this package drops the package's cache entries whenever the
digest of its sources, and of the modules in :data:`COMPILED_IN`, changes (:func:`drop_stale_cache`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

COMPILED_IN = ("pccbullet.urdf_gen.rod",)  # modules outside this package whose functions kernels compile in


def _source(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"{module} not found")
    return Path(spec.origin)


def drop_stale_cache(module_file: str, stems: tuple[str, ...] | None = None) -> None:
    """Remove the numba cache entries beside ``module_file`` (of the modules named ``stems``; all if
    ``None``) if the sources of this package or of :data:`COMPILED_IN` changed since they were written (a
    digest file beside the cache says), and record the current digest."""
    sources = sorted(Path(__file__).parent.glob("*.py")) + [_source(m) for m in COMPILED_IN]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    here = Path(module_file)
    cache_dir = here.parent / "__pycache__"
    if os.environ.get("NUMBA_CACHE_DIR"):  # numba mirrors the source tree there
        cache_dir = Path(os.environ["NUMBA_CACHE_DIR"]) / here.parent.resolve().relative_to(here.anchor)
    stamp = cache_dir / f"{here.stem}.chain-digest"
    try:
        if stamp.exists() and stamp.read_text() == digest:
            return
        patterns = [f"{s}.*.nb[ic]" for s in stems] if stems is not None else ["*.nb[ic]"]
        for pattern in patterns:
            for entry in cache_dir.glob(pattern):
                entry.unlink()
        cache_dir.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: its cache is as it was built
        log.debug("numba cache of %s not checked", here, exc_info=True)


drop_stale_cache(__file__)
