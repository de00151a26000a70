"""Atomic file writes: a file appears whole or not at all, and a failed write leaves nothing behind.

Every file pccbullet writes (URDFs, meshes, exports, renders, run outputs, the demo's files) is written
to a temporary sibling with a unique name (``.NAME.tmp-XXXXXXXX.SUFFIX``: writers that race for one
file never share a temporary), flushed and fsynced, then moved into place with :func:`os.replace`. On
any error (a full disk, a kill of the writer's code by an exception, Ctrl-C) the temporary is removed
and the error propagates: the previous file, or none, stays; never a truncated one.

Writers that take a path (trimesh's ``export``, matplotlib's ``savefig``, pyvista's ``save``) write to
the path :func:`atomic_path` yields; the temporary keeps the target's suffix, so a writer that picks its
format from the suffix picks the same one.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

TEMP_MARK = ".tmp-"  # in every temporary's name: ``.NAME.tmp-XXXXXXXX.SUFFIX``


def is_temporary(name: str) -> bool:
    """Whether a file name is one of :func:`atomic_path`'s temporaries."""
    return name.startswith(".") and TEMP_MARK in name


def temporaries(path: str | os.PathLike[str]) -> list[Path]:
    """The temporaries of ``path`` that writers left (killed mid-write) or are writing now."""
    target = Path(path)
    pattern = f".{glob.escape(target.stem)}{TEMP_MARK}*{glob.escape(target.suffix)}"
    return sorted(target.parent.glob(pattern))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` to write; on a normal exit it is fsynced and moved to
    ``path``, on an exception removed. The folder is created if missing."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.stem}{TEMP_MARK}", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # as a plain open() would create it (mkstemp makes it 600)
        yield tmp
        _fsync(tmp)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.filename is None or str(exc.filename) == str(tmp):  # name the file, not its temporary
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` (``str``: UTF-8) to ``path`` atomically (:func:`atomic_path`); returns the path."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if not p.is_dir()} if folder.is_dir() else set()


@contextlib.contextmanager
def removed_on_failure(folder: str | os.PathLike[str]) -> Iterator[None]:
    """On an :class:`OSError` in the block (a full disk, a folder that vanished), remove the files and
    folders the block created under ``folder`` (what did not exist on entry), then re-raise: a command
    that fails half-way leaves the folder as it found it."""
    root = Path(folder)
    before = _files(root)
    dirs = {p for p in root.rglob("*") if p.is_dir()} if root.is_dir() else set()
    existed = root.exists()
    try:
        yield
    except OSError:
        for p in sorted(_files(root) - before, reverse=True):
            p.unlink(missing_ok=True)
        new_dirs = {p for p in root.rglob("*") if p.is_dir()} - dirs if root.is_dir() else set()
        for d in sorted(new_dirs, key=lambda d: len(d.parts), reverse=True) + ([] if existed else [root]):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
