"""The terminal device's status line, on a captured stream read as a terminal shows it: it fits the width
it is given (the fields least needed give way first), and an alert logged meanwhile gets a line of its
own instead of being glued onto it ("tip err 0 mmpccbullet: robot LOST")."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator

import pytest

from pccbullet.teleop.demo.console import status_printer
from pccbullet.teleop.demo.hud import fit, status_line
from pccbullet.teleop.devices.keys import key_table
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.urdf_gen.spec_loader import load_robot

LIMBS = ["grasper", "palpation", "camera", "light"]
FIELDS = [  # as hud.status_fields makes them, a fault included
    ("", "t  14.16 s", 0),
    (" | ", "grasper segment 1", 0),
    (" | ", "bend   12.00 deg", 1),
    (" ", "plane    0.00 deg", 3),
    (" ", "length  100.0 mm", 4),
    (" | ", "force [##........] 0.61 N", 1),
    (" | ", "robot LOST", 0),
    (" | ", "tip err 0 mm", 2),
    (" | ", "grip CLOSED", 2),
    (" | ", "FAULT ROBOT LOST (force faded out)", 0),
]


def screen(text: str, width: int) -> list[str]:
    """The rows a terminal ``width`` columns wide shows for ``text``: it wraps at the last column, ``\\r``
    goes back to the start of the cursor's row, ``\\n`` to the next one, ``ESC [ K`` erases to its end."""
    rows: list[list[str]] = [[]]
    col = 0
    i = 0
    while i < len(text):
        if text.startswith("\x1b[K", i):
            del rows[-1][col:]
            i += 3
            continue
        c = text[i]
        if c == "\r":
            col = 0
        elif c == "\n":
            rows.append([])
            col = 0
        else:
            if col == width:  # wrapped onto a new row
                rows.append([])
                col = 0
            row = rows[-1]
            row[col : col + 1] = [c]
            col += 1
        i += 1
    return ["".join(r) for r in rows]


def test_the_fields_least_needed_give_way_first_then_the_line_is_cut() -> None:
    full = fit(FIELDS, None)
    assert full.startswith("t  14.16 s | grasper segment 1 | bend   12.00 deg plane    0.00 deg length")
    assert fit(FIELDS, len(full)) == full
    assert fit(FIELDS, 159) == (  # the plane and the length gave way
        "t  14.16 s | grasper segment 1 | bend   12.00 deg | force [##........] 0.61 N | robot LOST"
        " | tip err 0 mm | grip CLOSED | FAULT ROBOT LOST (force faded out)"
    )
    assert (
        fit(FIELDS, 79) == "t  14.16 s | grasper segment 1 | robot LOST | FAULT ROBOT LOST (force faded ..."
    )
    assert fit(FIELDS, 40) == "t  14.16 s | grasper segment 1 | robo..."
    for width in range(1, 240):
        assert len(fit(FIELDS, width)) <= width


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    """A stream the command line's log handler writes to (``pccbullet: message``)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("pccbullet: %(message)s"))
    logger = logging.getLogger("pccbullet")
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


def test_an_alert_gets_a_line_of_its_own_and_the_status_fits_the_terminal(log_stream, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stderr", log_stream)  # the terminal: stderr, 120 columns
    monkeypatch.setenv("COLUMNS", "120")
    with MmtSession(load_robot("ursula", sections=3)) as session:
        show = status_printer(session)
        show()
        show()
        logging.getLogger("pccbullet.teleop.mmt.watchdog").warning("robot LOST at t = %.3f s", 14.161)
        show()
        line = status_line(session, 119)
        assert len(status_line(session)) > 120  # the whole line would wrap
        table = [*key_table(LIMBS), "Ctrl-C also ends the session (the outputs are written)"]
        assert screen(log_stream.getvalue(), 120) == [*table, "pccbullet: robot LOST at t = 14.161 s", line]
        show.close()
    assert line == (  # the plane and the length gave way
        "t   0.00 s | grasper segment 1 | bend    0.00 deg | force [..........] 0.00 N | robot waiting"
        " | tip err n/a"
    )
    assert log_stream.getvalue().endswith("\n")  # the line ended with the session
    assert all(handler.filters == [] for handler in logging.getLogger("pccbullet").handlers)
