"""Every file we write appears whole or not at all; a full disk leaves no truncated file and no temporary
(pccbullet.core.atomic)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pccbullet.core.atomic import atomic_path, is_temporary, removed_on_failure, temporaries, write_atomic

CLI = "import sys; from pccbullet.teleop.cli import main; sys.exit(main(sys.argv[1:]))"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "robot.urdf"
    write_atomic(target, "old")
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # as open() makes it
    with pytest.raises(OSError, match="No space left on device") as err:
        with atomic_path(target) as tmp:
            tmp.write_text("half of the new fil")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert err.value.filename == str(target)  # the message names the file, not its temporary
    assert target.read_text() == "old" and temporaries(target) == []
    assert [p.name for p in tmp_path.iterdir()] == ["robot.urdf"]


def test_temporaries_keep_the_suffix_and_are_unique(tmp_path: Path) -> None:
    target = tmp_path / "mesh.stl"
    with atomic_path(target) as a, atomic_path(target) as b:  # two writers of one file never collide
        assert a != b and a.suffix == b.suffix == ".stl" and is_temporary(a.name)
        a.write_bytes(b"a")
        b.write_bytes(b"b")
        assert set(temporaries(target)) == {a, b}
    assert target.read_bytes() == b"a" and temporaries(target) == []


def test_a_failed_command_removes_what_it_created_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep")
    with pytest.raises(OSError):
        with removed_on_failure(tmp_path):
            write_atomic(tmp_path / "meshes" / "a.stl", "x")
            write_atomic(tmp_path / "mine.txt", "overwritten")  # existed: kept
            raise OSError(errno.ENOSPC, "No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _tiny_filesystem(tmp_path: Path, size: str) -> Path:
    """A tmpfs of ``size`` mounted in ``tmp_path`` (root only; skipped otherwise)."""
    mnt = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    return mnt


@pytest.mark.parametrize(
    "command",
    [["urdf", "ursula"], ["export", "ursula"], ["export", "ursula", "--format", "vtk"]],
    ids=["urdf", "export-stl", "export-vtk"],
)
def test_a_full_disk_exits_2_and_leaves_the_folder_clean(tmp_path: Path, command: list[str]) -> None:
    mnt = _tiny_filesystem(tmp_path, "48k")
    try:
        out = mnt / "out"
        done = subprocess.run([sys.executable, "-c", CLI, *command, "--out", str(out)], capture_output=True)
        err = done.stderr.decode()
        assert done.returncode == 2 and "No space left on device" in err and str(out) in err
        assert list(mnt.iterdir()) == []  # no truncated file, no temporary, not even the folder
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
