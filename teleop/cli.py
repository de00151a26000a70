"""The ``pccbullet`` command. Units at this edge: degrees and metres (as each flag says); SI inside.

Subcommands:
    robots   list bundled robots and their kinds
    urdf     write URDFs (and meshes) of a robot to a folder; --combined: the whole robot in one file
    mjcf     write the robot's dynamic chain with its material as MJCF (MuJoCo)
    pose     section joint values and tip pose of a limb for a PCC configuration
    demo     the squid demo (GUI with a display, headless animation + summary without)
    run      run an experiment file; sweep: a parameter sweep; export: meshes, renders
    bench    speed table: robot x mode x N -> steps/s, real-time factor, p99 step time

``demo`` and ``bench`` are handled here; the others are registered with their handlers by their own
modules: ``robots``, ``urdf``, ``pose`` by :mod:`pccbullet.teleop.robot_commands`, ``run`` and ``sweep`` by
:mod:`pccbullet.sim.experiments.cli`, ``export`` by :mod:`pccbullet.sim.export.register`, ``mjcf`` by
:mod:`pccbullet.sim.mjcf.cli`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pccbullet import __version__
from pccbullet.core import strict_json
from pccbullet.core.cli_args import OneLineParser, integer, out_dir, port, real, udp_port_free
from pccbullet.core.errors import PccBulletError, SimulationDivergedError, UsageError, clip
from pccbullet.sim.experiments.cli import register_run, register_sweep
from pccbullet.sim.export.register import register_export
from pccbullet.sim.mjcf.cli import register_mjcf
from pccbullet.sim.views.web.cli import add_web_args, start_web_view
from pccbullet.teleop.channel import LINKS
from pccbullet.teleop.demo.args import add_scene_args
from pccbullet.teleop.demo.script import SESSION_S
from pccbullet.teleop.devices.registry import DEMO_DEVICES
from pccbullet.teleop.interrupts import Deferral, ctrl_c_guarded, exit_on_interrupt, sigint_deferred
from pccbullet.teleop.robot_commands import SECTIONS, register_pose, register_robots, register_urdf
from pccbullet.urdf_gen.topology import Topology

log = logging.getLogger("pccbullet.cli")
MAX_DEMO_S = 86400.0  # s, longest demo (--duration)
DEMO_DRIVES = ("mixed", "joints", "tendons")  # teleop.demo.scene.DRIVES (slow to import)
MAX_FLOOD = 100_000_000  # junk datagrams of bench --demo --flood at most

# Loggers of this project: -v sets them to INFO, -vv to DEBUG. Third-party loggers (matplotlib, trimesh,
# numba, PIL, ...) are left alone, at the root's WARNING.
OUR_LOGGERS = ("pccbullet",)
# Commands that may compile numba kernels (cache=True: first run only).
COMPILING_COMMANDS = ("pose", "bench", "demo", "run", "sweep", "mjcf")
COMPILE_NOTICE = "pccbullet: compiling kernels, first run only (~30 s) ..."


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="pccbullet",
        description="Soft robot arms in PyBullet: PCC segments as chains of rigid RRP sections.",
        epilog="Units: angles in degrees (--bend, --plane), lengths in metres (--length). "
        "bend is the total arc angle of a segment (seed 001's theta is bend/2).",
    )
    p.add_argument("--version", action="version", version=f"pccbullet {__version__}")
    p.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = p.add_subparsers(dest="command", required=True)
    register_run(sub)
    register_sweep(sub)
    register_export(sub)

    register_robots(sub)
    register_urdf(sub)
    register_mjcf(sub)
    register_pose(sub)

    b = sub.add_parser("bench", help="physics steps/s, real-time factor, p99 step time; model step costs")
    b.add_argument("--robot", nargs="+", default=["ursula"], help="robots to bench (default: ursula)")
    b.add_argument(
        "--sections", nargs="+", type=SECTIONS, default=None, help="N per segment (default 5 10 20)"
    )
    b.add_argument("--mode", nargs="+", default=["kinematic", "dynamic"], choices=["kinematic", "dynamic"])
    b.add_argument(
        "--medium", default="water", choices=["air", "water", "seawater"], help="dynamic-mode medium"
    )
    chains = sorted(t.value for t in Topology)
    b.add_argument("--chain", default=Topology.ROD, choices=chains, help="dynamic-mode chain (default rod)")
    b.add_argument(
        "--drive",
        default="joints",
        choices=["joints", "tendons"],
        help="dynamic-mode actuation: spring targets every tick, or the tendons with a goal at 50 Hz",
    )
    b.add_argument(
        "--seconds",
        type=real(0.0, 3600.0, lo_open=True),
        default=None,
        help="simulated seconds per run (default 1; 15 with --demo: the scripted session)",
    )
    b.add_argument("--peer", choices=["mujoco"], default=None, help="also step the same URDFs in MuJoCo")
    b.add_argument("--no-models", action="store_true", help="skip the model step-cost benchmarks")
    b.add_argument("--json", action="store_true", help="print JSON instead of a table")
    b.add_argument(
        "--demo",
        action="store_true",
        help="bench the teleoperation demo in real time instead: master and slave (its own process) "
        "real-time factors and the master tick p99 (--seconds, default 14; first of --sections, default 10)",
    )
    b.add_argument(
        "--flood",
        type=integer(0, MAX_FLOOD),
        default=None,
        metavar="N",
        help="with --demo: the operator over the UDP bridge from a process of its own, and N junk datagrams "
        "to the bridge's port 6 s into the session (0: no flood); reports the master tick and the poses "
        "accepted during the flood",
    )
    b.add_argument(
        "--normal-priority",
        action="store_true",
        help="with --demo: the master's and the robot's loops at normal priority, as any user has (default: "
        "real-time scheduling where the system allows it)",
    )

    add_web_args(
        b,
        "with --demo: web: serve the demo's web view, wait for a page to open it, then run",
        ("none", "web"),
    )
    b.set_defaults(handler=_bench)

    d = sub.add_parser("demo", help="the URSULA squid demo (or your robot's: --robot FILE)")
    add_scene_args(d)  # --robot, --objects
    d.add_argument(
        "--out", type=out_dir, default=Path("pccbullet_demo"), help="folder for the headless outputs"
    )
    d.add_argument("--headless", action="store_true", help="no GUI even if a display is available")
    d.add_argument(
        "--duration",
        type=real(0.0, MAX_DEMO_S, lo_open=True),
        default=None,
        help=f"simulated seconds, in (0, {MAX_DEMO_S:g}] (default: {SESSION_S:g} for the scripted "
        "operator; with any other device the session runs until you quit: x or Ctrl-C)",
    )
    d.add_argument(
        "--help-keys", action="store_true", help="print the key table of the keyboard devices and exit"
    )
    d.add_argument(
        "--device",
        default="auto",
        choices=DEMO_DEVICES,
        help="operator input (default auto: the GUI keyboard with a display, the scripted operator without)",
    )
    d.add_argument(
        "--udp-port", type=port, default=0, help="port of the UDP bridge (--device udp; 0: any free)"
    )
    d.add_argument(
        "--udp-key-file",
        type=Path,
        default=None,
        help="HMAC key file of the UDP bridge (default: $PCCBULLET_UDP_KEY_FILE, else "
        "~/.config/pccbullet/udp.key, created on first use)",
    )
    d.add_argument(
        "--link",
        choices=LINKS,
        default="acoustic",
        help="the link to the robot, both ways: acoustic (9 kbit/s over 1500 m, 1 s) or optical (URSULA's "
        "visible-light dorsal fin: 1.2 Mbit/s over 30 m)",
    )
    d.add_argument(
        "--drive",
        default="mixed",
        choices=DEMO_DRIVES,
        help="what moves the robot's limbs: mixed (default: the grasper on its tendons, for the grasp key g; "
        "the others on spring targets), joints (spring targets only: no grasp) or tendons (every limb)",
    )
    d.add_argument(
        "--no-gif",
        action="store_true",
        help="headless: skip demo.gif (the summary, plots and camera image are written first anyway)",
    )
    add_web_args(
        d,
        "auto: the GUI window with a display, else headless; web: a page in the browser (drive it there)",
        ("auto", "web"),
    )
    d.set_defaults(handler=_demo)
    return p


class _OurFormatter(logging.Formatter):
    """``pccbullet: message``, or with ``with_name`` ``pccbullet: sim.world: message`` (the logger's name
    below the ``pccbullet`` namespace)."""

    def __init__(self, *, with_name: bool) -> None:
        super().__init__()
        self.with_name = with_name

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if not self.with_name:
            return f"pccbullet: {text}"
        return f"pccbullet: {record.name.removeprefix('pccbullet.')}: {text}"


@contextlib.contextmanager
def _verbosity(level: int) -> Iterator[None]:
    """Log our own loggers at ``level`` to stderr for the duration; restore them afterwards."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OurFormatter(with_name=level <= logging.DEBUG))
    saved = []
    for name in OUR_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level, logger.propagate))
        logger.setLevel(level)
        logger.addHandler(handler)
        logger.propagate = False  # no second copy through a root handler someone else installed
    try:
        yield
    finally:
        for logger, old_level, old_propagate in saved:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
            logger.propagate = old_propagate


@contextlib.contextmanager
def _compile_notice(gap: float = 2.0) -> Iterator[None]:
    """Print :data:`COMPILE_NOTICE` to stderr when numba starts compiling a kernel that was not in its
    disk cache (numba's ``"numba:compile"`` event fires on cache misses only): at the first compile, and
    again at a compile that starts more than ``gap`` seconds (s) after the last one ended. Written with
    ``tqdm.write`` so that a progress bar on stderr stays intact."""
    from numba.core import event
    from tqdm import tqdm

    class Notice(event.Listener):
        def __init__(self) -> None:
            self.depth = 0
            self.shown = 0
            self.last_end = -math.inf
            self.total = 0.0

        def on_start(self, ev: event.Event) -> None:
            if self.depth == 0:  # nested compiles (callees) belong to their caller's
                self.t0 = time.perf_counter()
                if self.t0 - self.last_end > gap:
                    self.shown += 1
                    tqdm.write(COMPILE_NOTICE, file=sys.stderr)
            self.depth += 1

        def on_end(self, ev: event.Event) -> None:
            self.depth -= 1
            if self.depth == 0:
                self.last_end = time.perf_counter()
                self.total += self.last_end - self.t0

    notice = Notice()
    with event.install_listener("numba:compile", notice):
        yield
    if notice.shown:
        log.info("compiled and cached numba kernels in %.1f s", notice.total)


def _demo(args: argparse.Namespace, start_up: Deferral | None = None) -> int:
    """``demo``; ``start_up`` (the signals held so far) is ended by ``run_demo`` once summary.json exists."""
    if args.help_keys:
        from pccbullet.teleop.devices.keys import key_table
        from pccbullet.urdf_gen.spec_loader import load_robot

        limbs = [limb.name for limb in load_robot(args.robot).limbs] if args.robot else None
        print("\n".join(key_table(limbs) if limbs else key_table()))  # the digit keys select its limbs
        return 0

    from pccbullet.teleop.udp.keys import load_key_file

    if args.udp_key_file is not None:  # a bad key file fails before the worlds are built
        load_key_file(args.udp_key_file)

    if args.device == "udp":
        udp_port_free(args.udp_port)

    viewer: Any = start_web_view(args)  # the page (--view web) or the window comes up before the demo's
    if viewer is None and not args.headless and os.environ.get("DISPLAY"):  # modules are even imported
        from pccbullet.sim.views.gui import ViewerProcess

        viewer = ViewerProcess(None, gui=True)
    try:
        from pccbullet.teleop.demo.run import run_demo

        summary = run_demo(
            out_dir=args.out,
            headless=args.headless,
            duration=args.duration,
            device=args.device,
            udp_port=args.udp_port,
            udp_key_file=args.udp_key_file,
            viewer=viewer,
            gif=not args.no_gif,
            link=args.link,
            view=args.view,
            drive=args.drive,
            objects=args.objects,
            start_up=start_up,
            robot=args.robot,
        )
    finally:
        if viewer is not None:
            viewer.close()
    print(strict_json.dumps(summary, indent=2))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from pccbullet.sim.bench import format_table, run_bench

    if args.view == "web" and not args.demo:
        raise UsageError("argument --view: web shows the demo's bench; allowed: with --demo only")
    if (args.flood is not None or args.normal_priority) and not args.demo:
        raise UsageError(
            "--flood and --normal-priority need --demo; allowed: pccbullet bench --demo --flood N"
        )
    if args.flood is not None and args.view == "web":
        raise UsageError("argument --flood: a flood run has no web view; allowed: --view none with --flood")
    if args.demo:
        from pccbullet.teleop.demo.bench import bench_demo, format_demo

        sections = 10 if args.sections is None else args.sections[0]
        view = start_web_view(args)
        seconds = args.seconds or SESSION_S
        demo = bench_demo(seconds, sections, flood_n=args.flood, priority=not args.normal_priority, view=view)
        print(strict_json.dumps(demo, indent=2) if args.json else format_demo(demo))
        return 0

    result = run_bench(
        args.robot,
        args.mode,
        [5, 10, 20] if args.sections is None else args.sections,
        medium=args.medium,
        seconds=1.0 if args.seconds is None else args.seconds,
        peer=args.peer,
        models=not args.no_models,
        chain=args.chain,
        drive=args.drive,
    )
    print(strict_json.dumps(result, indent=2) if args.json else format_table(result))
    return 0


def main(argv: Sequence[str] | None = None, *, start_up: Deferral | None = None) -> int:
    """Entry point of ``pccbullet``; returns the exit status (2 for bad input; 128 + the signal's number
    when Ctrl-C, SIGTERM or SIGHUP stopped it: 130, 143, 129).

    Bad arguments, bad files and failing writes print one line ``pccbullet: error: ...`` (the traceback
    only at ``-vv``); a signal one line too (:func:`~pccbullet.teleop.interrupts.exit_on_interrupt`). SIGTERM
    and SIGHUP are Ctrl-C (:func:`~pccbullet.teleop.interrupts.ctrl_c_guarded`), held until the command's
    work begins (the demo: until its ``summary.json`` exists); ``start_up``: a hold begun before this
    module was imported (:mod:`pccbullet.teleop.command`)."""
    with ctrl_c_guarded():
        held = start_up or sigint_deferred().hold()
        return exit_on_interrupt(lambda: _main(argv, held), held)


def _main(argv: Sequence[str] | None, start_up: Deferral) -> int:
    try:
        args = _parser().parse_args(argv)
    except PccBulletError as exc:
        print(f"pccbullet: error: {exc}", file=sys.stderr)
        return 2
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_verbosity(level))
            if args.command in COMPILING_COMMANDS:
                stack.enter_context(_compile_notice())
            if args.handler is _demo:  # the demo ends the start-up once its summary.json exists
                return _demo(args, start_up)
            start_up.end()
            return int(args.handler(args))
    except SimulationDivergedError as exc:  # not bad input: the run failed
        print(f"pccbullet: error: {exc}", file=sys.stderr)
        return 1
    except PccBulletError as exc:
        print(f"pccbullet: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder or file that could not be written or read, a port taken meanwhile
        log.debug("OSError", exc_info=True)
        where = f" {clip(str(exc.filename), 200)!r}" if exc.filename else ""
        print(f"pccbullet: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
