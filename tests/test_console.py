"""The operator's console: one key table, keys applied in the order typed, the HUD, quitting."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from pccbullet.sim.bullet import pb
from pccbullet.teleop.demo.hud import force_bar, hud_lines, status_line
from pccbullet.teleop.devices.keyboard import TAP_HOLD_S, KeyboardDevice, TerminalKeyboard
from pccbullet.teleop.devices.keys import PRESS_KEYS, RATE_KEYS, key_table
from pccbullet.teleop.mapping import OperatorMapping
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.urdf_gen.spec_loader import load_robot

LIMBS = ["grasper", "palpation", "camera", "light"]


def _typed(keys: bytes) -> TerminalKeyboard:
    read, write = os.pipe()
    os.write(write, keys)
    os.close(write)
    return TerminalKeyboard(LIMBS, stream=os.fdopen(read))


def test_keys_typed_faster_than_a_tick_act_in_the_order_typed() -> None:
    """``1 w w w 2 a`` typed at once: the grasper bends three presses' worth, then the palpation arm's
    plane turns one press' worth (merged in one tick, the palpation arm would move and the grasper not)."""
    spec = load_robot("ursula", sections=3)
    mapping = OperatorMapping(spec)
    device = _typed(b"1www2a")
    dt = 1e-3
    for k in range(1500):
        mapping.update(device.read(k * dt), dt)
    device.close()
    press = device.hold
    grasper, palpation = mapping.command["grasper"][0], mapping.command["palpation"][0]
    assert grasper.bend == pytest.approx(3 * press * mapping.rates.bend, rel=0.02)
    assert grasper.plane == 0.0
    assert palpation.plane == pytest.approx(press * mapping.rates.plane, rel=0.02)
    assert palpation.bend == 0.0


def test_one_key_table_for_the_gui_and_the_terminal(capsys) -> None:
    from pccbullet.teleop.cli import main

    assert main(["demo", "--help-keys"]) == 0
    printed = capsys.readouterr().out
    assert printed.strip().splitlines() == key_table()
    gui = KeyboardDevice(0, LIMBS, events=lambda: {})
    terminal = _typed(b"")
    terminal.close()
    assert {chr(k): a for k, a in gui._held_map.items()} == RATE_KEYS
    assert {chr(k): a for k, a in gui._pressed_map.items()} == terminal._pressed_map
    assert {**PRESS_KEYS}.items() <= terminal._pressed_map.items()
    for key in (*RATE_KEYS, *PRESS_KEYS):  # every key is in the printed table
        assert f"{key}:" in printed or f"/{key}:" in printed or f"{key}/" in printed
    down = {ord("w"): pb.KEY_IS_DOWN, ord("2"): pb.KEY_WAS_TRIGGERED}
    sample = KeyboardDevice(0, LIMBS, events=lambda: down).read(0.0)
    assert sample.held == {"bend+"} and sample.pressed == ("select:palpation",)


def test_a_tapped_rate_key_acts_for_the_tap_hold() -> None:
    """A key pressed and released between two reads (a quick tap, xdotool's ``key w``) arrives as
    triggered and released without ``KEY_IS_DOWN``: it still bends for ``TAP_HOLD_S`` of simulated time."""
    tap = {ord("s"): pb.KEY_WAS_TRIGGERED | pb.KEY_WAS_RELEASED}
    queue = [tap, {}, {}, {}]
    device = KeyboardDevice(0, LIMBS, events=lambda: queue.pop(0))
    held = [device.read(t).held for t in (1.0, 1.0 + TAP_HOLD_S / 2, 1.0 + TAP_HOLD_S, 1.0 + 2 * TAP_HOLD_S)]
    assert held == [{"bend-"}, {"bend-"}, set(), set()]
    # a key held longer than the tap hold acts as long as it is down, and stops when released
    states = [{ord("w"): pb.KEY_WAS_TRIGGERED | pb.KEY_IS_DOWN}, {ord("w"): pb.KEY_IS_DOWN}]
    states += [{ord("w"): pb.KEY_WAS_RELEASED}]
    device = KeyboardDevice(0, LIMBS, events=lambda: states.pop(0))
    assert [device.read(t).held for t in (0.0, 1.0, 1.001)] == [{"bend+"}, {"bend+"}, set()]


@pytest.mark.slow
def test_the_hud_tells_time_limb_command_force_link_faults_and_tip_error() -> None:
    assert force_bar(0.0, 3.0, 10) == "[..........]" and force_bar(1.5, 3.0, 10) == "[#####.....]"
    assert force_bar(9.0, 3.0, 4) == "[####]" and force_bar(float("nan"), 0.0, 2) == "[..]"
    with MmtSession(load_robot("ursula", sections=3)) as s:
        from pccbullet.teleop.demo.script import scripted_operator

        s.run(scripted_operator(), 2.5)
        lines, line = hud_lines(s), status_line(s)
    assert lines[0].startswith("t    2.50 s") and "grasper segment 1/2" in lines[0]
    assert "bend" in lines[1] and "plane" in lines[1] and "length" in lines[1]
    assert "(limit 3 N)" in lines[2] and "[" in lines[2]
    assert lines[3].startswith("link acoustic 1.0") and "s one way   robot ok, last report" in lines[3]
    assert lines[4] == "faults: none"
    err = float(lines[5].split(":")[1].split()[0])
    assert math.isfinite(err) and lines[5].endswith("mm")
    assert "| robot ok |" in line and "tip err" in line and "FAULT" not in line


@pytest.mark.slow
def test_an_interactive_session_runs_until_the_operator_quits(tmp_path, monkeypatch) -> None:
    """No duration: a terminal session ends on ``x`` (here typed at once), writes its outputs and says
    it was not interrupted."""
    from pccbullet.teleop.demo.run import run_demo

    monkeypatch.delenv("DISPLAY", raising=False)
    read, write = os.pipe()
    os.write(write, b"1wwx")
    os.close(write)
    with os.fdopen(read) as stream:
        monkeypatch.setattr("sys.stdin", stream)
        summary = run_demo(tmp_path / "out", device="terminal", gif=False)
    loop = summary["loop"]
    assert summary["status"] == "complete" and loop["interrupted"] is False  # type: ignore[index]
    assert 0 < loop["physics_steps"] < 60_000  # type: ignore[index]
    tip = np.array(summary["final_tip_positions_m"]["grasper"])  # type: ignore[index]
    assert np.isfinite(tip).all()
