"""Output files of runs and sweeps: atomic writes and a manifest of what was written.

Every file is written atomically (:func:`pccbullet.core.atomic.write_atomic`: a temporary sibling
moved into place), so a kill mid-write leaves the previous file or none, never a truncated one. A
folder's ``manifest.json`` lists (by name, relative to the folder) every file a run or sweep wrote or
is about to write there; a name is added before its file is written. Cleaning a folder removes only
those names (and their temporary siblings), never a file that pccbullet did not write.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from pccbullet.core import strict_json
from pccbullet.core.atomic import temporaries, write_atomic

MANIFEST = "manifest.json"


def write_json(path: str | Path, value: object) -> None:
    """Write ``value`` as indented JSON (atomically)."""
    write_atomic(path, strict_json.dumps(value, indent=2, default=str) + "\n")


def save_npz(path: str | Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``np.savez_compressed(path, **arrays)``, atomically."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    write_atomic(path, buf.getvalue())


def save_csv(path: str | Path, header: Iterable[str], data: np.ndarray, fmt: str = "%.12g") -> None:
    """A header row and the rows of ``data`` ``(T, C) float``, comma separated, atomically."""
    buf = io.StringIO()
    np.savetxt(buf, data, delimiter=",", header=",".join(header), comments="", fmt=fmt)
    write_atomic(path, buf.getvalue())


def _plain(name: object) -> bool:
    """A bare file name (no folders, no ``..``): the only names a manifest may make us remove."""
    return isinstance(name, str) and name not in ("", ".", "..") and Path(name).name == name


def read_manifest(folder: str | Path) -> list[str]:
    """The names listed in ``folder``'s manifest; ``[]`` if it is missing, empty or corrupt."""
    try:
        names = json.loads((Path(folder) / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [n for n in names if _plain(n)] if isinstance(names, list) else []


class Manifest:
    """The manifest of one folder; :meth:`add` records names before their files are written."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.names: list[str] = read_manifest(self.folder)

    def add(self, *names: str) -> None:
        """Record ``names`` (bare file names in the folder) and rewrite the manifest atomically."""
        for name in names:
            if not _plain(name):
                raise ValueError(f"manifest name {name!r} is invalid; allowed: a bare file name")
            if name not in self.names:
                self.names.append(name)
        write_json(self.folder / MANIFEST, {"files": self.names})


def remove_recorded(folder: str | Path) -> list[str]:
    """Remove the files ``folder``'s manifest lists (and their temporary siblings), then the manifest.

    Nothing else in the folder is touched. Returns the names removed.
    """
    folder = Path(folder)
    removed = []
    for name in read_manifest(folder):
        path = folder / name
        for p in (path, *temporaries(path)):
            if p.is_file() or p.is_symlink():
                p.unlink()
                removed.append(p.name)
    manifest = folder / MANIFEST
    for p in (manifest, *temporaries(manifest)):
        if p.is_file():
            p.unlink()
    return removed


LOCK_NAME = ".pccbullet.lock"


@contextlib.contextmanager
def folder_lock(folder: str | Path, what: str = "sweep") -> Iterator[None]:
    """Hold ``folder``'s lock (``.pccbullet.lock``, an exclusive ``flock``) for the block: a second
    ``what`` into the same folder fails at once with :class:`~pccbullet.core.errors.ConfigurationError`
    naming the process that holds it. The kernel releases the lock when its holder dies (its workers
    hold it with it until they exit), so a killed sweep never leaves a stale lock. Without ``fcntl``
    (not POSIX) no lock is taken."""
    import fcntl

    from pccbullet.core.errors import ConfigurationError

    path = Path(folder) / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise ConfigurationError(
            f"folder {str(folder)[-80:]!r} is in use by another {what} (process {holder}); allowed: one "
            f"{what} a folder at a time (wait for it, or choose another --out)"
        ) from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race a waiting locker)
