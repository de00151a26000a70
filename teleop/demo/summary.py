"""The demo's ``summary.json``: written first, kept up to date, never lost to a Ctrl-C.

:class:`SummaryFile` writes ``summary.json`` as soon as the demo starts (``"status": "starting"``), again
with the session's figures the moment the loop ends (``"complete"``), and after every further file
(plots, camera image, GIF) with the list of files written. Each write is atomic
(:func:`~pccbullet.core.atomic.write_atomic`) and holds Ctrl-C (and SIGTERM, SIGHUP, which are Ctrl-C:
:mod:`pccbullet.teleop.interrupts`) back until it is done
(:func:`~pccbullet.teleop.interrupts.sigint_deferred`): a signal at any moment leaves a whole
``summary.json``, and one that stops the demo before or after its session says so (``"status":
"interrupted"``, ``interrupted_in``, ``interrupted_by``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pccbullet.core import strict_json
from pccbullet.core.atomic import write_atomic
from pccbullet.teleop.interrupts import sigint_deferred


class SummaryFile:
    """``out_dir / "summary.json"``, rewritten atomically on every :meth:`update`.

    Args:
        out_dir: the folder (created). first: the entries written at once, with ``"status":
            "starting"``.

    Attributes:
        data: the summary as last written. path: the file.
    """

    def __init__(self, out_dir: Path, first: dict[str, object]) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.path = out_dir / "summary.json"
        self.data: dict[str, object] = {"status": "starting", **first, "files": [str(self.path)]}
        self.update()

    def update(self, **entries: object) -> None:
        """Add or replace ``entries`` and write the file (Ctrl-C held back meanwhile)."""
        with sigint_deferred():
            self.data.update(entries)
            write_atomic(self.path, strict_json.dumps(self.data, indent=2) + "\n")

    def add_file(self, path: str | Path) -> None:
        """Record a file written (and rewrite the summary)."""
        files = list(self.data["files"])  # type: ignore[call-overload]
        if str(path) not in files:
            files.append(str(path))
        self.update(files=files)


def session_status(stats: Mapping[str, object]) -> dict[str, object]:
    """The summary's status once the session has ended (``stats``: the loop's): ``"complete"``, and where a
    signal ended the session early (Ctrl-C, SIGTERM, SIGHUP: the loop's ``interrupted``),
    ``interrupted_in: "session"`` and the signal in ``interrupted_by``; the outputs are written all the same
    (the exit status stays 0)."""
    if not stats.get("interrupted"):
        return {"status": "complete"}
    return {"status": "complete", "interrupted_in": "session", "interrupted_by": stats.get("interrupted_by")}
