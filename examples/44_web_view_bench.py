"""The master tick with the demo's web view open in a browser, against the same bench without it.

Runs ``pccbullet bench --demo --json`` and ``pccbullet bench --demo --view web --json`` in turn (``--runs``
rounds, interleaved, so that a change of the machine's load shows in all), opening the second one's page in
headless Chromium (Debian's ``chromium`` and ``chromium-driver``, through Selenium: the tests' helper
``tests/browser.py``, so run it from a checkout) as soon as the bench prints its address; the page stays
open for the whole timed run. ``--browser-nice 0 10`` runs the web bench twice a round, the browser at
normal priority and 10 steps below (as the view's process runs): the browser on the simulation's own
machine competes for its cores, one on the operator's machine does not. Prints one line a run: the
master's tick p50 / p99 and late ticks, the machine probe (constant 0.5 ms of work) measured just before,
and with the view the frames published, dropped, sent to the page, and the rate the page drew at.

Usage: ``python examples/44_web_view_bench.py [--runs 2] [--seconds 14] [--browser-nice 0 10]``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' browser helper
from browser import browser_missing, headless_chromium, wait_for

CLI = "import sys; from pccbullet.teleop.cli import main; sys.exit(main(sys.argv[1:]))"


def bench(seconds: float, web: bool, nice: int = 0) -> dict:
    """One bench run (with the page open in headless Chromium when ``web``, ``nice`` steps below normal
    priority; ``nice = -1``: the browser quits once the page has connected, as if it were on another
    machine: the view's process alone runs beside the loops); its JSON."""
    cmd = [sys.executable, "-c", CLI, "bench", "--demo", "--json", "--seconds", str(seconds)]
    proc = subprocess.Popen(
        cmd + (["--view", "web"] if web else []), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if not web:
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(err[-2000:])
        return json.loads(out)
    url: list[str] = []
    found = threading.Event()

    def read() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            m = re.search(r"web view at (\S+)", line)
            if m:
                url.append(m.group(1))
                found.set()

    threading.Thread(target=read, daemon=True).start()
    if not found.wait(600):
        proc.kill()
        raise RuntimeError("the bench printed no web view address")
    with headless_chromium((1280, 720), nice=max(nice, 0)) as driver:
        driver.get(url[0])
        wait_for(driver, "window.pccbullet && window.pccbullet.scene", 600)
        if nice >= 0:
            out, _ = proc.communicate()
    if nice < 0:
        out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"bench exited {proc.returncode}")
    return json.loads(out)


def line(result: dict, web: bool, nice: int) -> str:
    m, p = result["master"], result["machine_probe"]
    name = "no view" + " " * 20
    if web:
        name = f"web view, browser at nice {nice:<2}" if nice >= 0 else "web view, no browser here  "
    text = (
        f"{name}  master tick p50 {m['tick_p50_ms']:.3f} ms"
        f"  p99 {m['tick_p99_ms']:.3f} ms"
        f"  late {m['late_ticks']}/{m['ticks']}  | probe p50 {p['p50_ms']:.3f} ms p99 {p['p99_ms']:.3f} ms"
    )
    if web:
        w = result["web_view"]
        page = w.get("page") or {}
        text += (
            f"  | frames published {w['published']}, dropped {w['dropped']}, sent {w['sent']}, "
            f"skipped {w['skipped']}, page drew {page.get('mean_fps', float('nan')):.1f}/s"
        )
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="pairs of runs (default 2)")
    parser.add_argument("--seconds", type=float, default=14.0, help="simulated seconds a run (default 14)")
    parser.add_argument(
        "--browser-nice",
        type=int,
        nargs="+",
        default=[0],
        help="priorities of the browser to bench, each a web run a round (default 0; e.g. 0 10; -1: the "
        "browser quits once the page has connected, as one on another machine would leave the cores)",
    )
    args = parser.parse_args()
    missing = browser_missing()
    if missing is not None:
        print(f"no headless Chromium: {missing}")
        return 1
    for _ in range(args.runs):
        print(line(bench(args.seconds, False), False, 0), flush=True)
        for nice in args.browser_nice:
            print(line(bench(args.seconds, True, nice), True, nice), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
