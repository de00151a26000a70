"""The package's import graph: every module imports on its own, the graph has no cycle, imports point down
the layers, and no module is over 400 lines.

Modules are the ``.py`` files of the homes (``[tool.pccbullet.homes]``, :mod:`layout`) named as installed
(``sim/world.py`` is ``pccbullet.sim.world``, ``urdf_gen/core/errors.py`` is ``pccbullet.core.errors``). The static
checks read every import of a pccbullet module with :mod:`ast`: module level, inside functions and under
``TYPE_CHECKING`` alike, and ``import_module("pccbullet....")`` calls with a literal name.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import layout
import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400
# Layers (DESIGN.md): an import goes from a higher rank to a lower one, or stays in its home.
RANK = {"teleop": 3, "pccbullet": 2, "sim": 1, "urdf_gen": 0, "assets": -1, "core": -2}
# Packages of optional extras: a module that needs one may be skipped where it is not installed.
OPTIONAL = (
    "gymnasium",
    "ray",
    "pyspacemouse",
    "pygame",
    "pyOpenHaptics",
    "elastica",
    "mujoco",
    "imageio_ffmpeg",
)


def _resolve(name: str, node: ast.ImportFrom) -> str | None:
    """The absolute module of a ``from`` import in module ``name`` (``None``: not a pccbullet import)."""
    if node.level == 0:
        return node.module if node.module and node.module.split(".")[0] == "pccbullet" else None
    package = name.split(".")
    base = package[: len(package) - node.level + (1 if _is_package(name) else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def imported(name: str) -> set[str]:
    """The pccbullet modules that module ``name`` imports anywhere in its source."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "pccbullet"}
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(name, node)
            if module is not None:
                out.add(module)
                out |= {f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in MODULES}
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("pccbullet")
        ):
            out.add(str(node.args[0].value))
    out.discard(name)
    return out


MODULES = layout.modules()
GRAPH = {name: imported(name) for name in MODULES}


def home(name: str) -> str:
    """``sim``, ``teleop``, ``urdf_gen``, ``assets``, ``core`` or ``pccbullet`` (the public API)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "pccbullet"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) for every back edge met in a depth-first search of ``graph``."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_every_pccbullet_import_names_a_module_of_the_package() -> None:
    unknown = sorted(
        f"{name} imports {target}" for name, deps in GRAPH.items() for target in deps - set(MODULES)
    )
    assert unknown == []


def test_the_import_graph_has_no_cycle() -> None:
    found = [" -> ".join(c) for c in cycles(GRAPH)]
    assert found == [], "import cycles:\n" + "\n".join(found)


def test_imports_point_down_the_layers() -> None:
    up = sorted(
        f"{name} -> {target}"
        for name, deps in GRAPH.items()
        for target in deps & set(MODULES)
        if home(name) != home(target) and RANK[home(name)] <= RANK[home(target)]
    )
    assert up == [], "imports against the layers teleop -> sim -> urdf_gen -> core:\n" + "\n".join(up)


def test_no_module_is_over_400_lines() -> None:
    lines = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    long = {name: n for name, n in lines.items() if n > MAX_LINES}
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"


# Imports every module in the order of a seeded shuffle, in a fresh interpreter: a cycle that only bites
# from some entry point, or a module that imports only after another, fails under one of the seeds.
_IMPORT_ALL = """
import importlib, json, random, sys, traceback
names, seed, optional = json.loads(sys.argv[1]), int(sys.argv[2]), tuple(json.loads(sys.argv[3]))
random.Random(seed).shuffle(names)
skipped, failed = {}, {}
for name in names:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in optional:
            skipped[name] = exc.name
        else:
            failed[name] = traceback.format_exc()
    except Exception:
        failed[name] = traceback.format_exc()
print(json.dumps({"order": names, "skipped": skipped, "failed": failed}))
"""


@pytest.mark.slow
def test_every_module_imports_in_any_order(tmp_path: Path) -> None:
    names = sorted(MODULES)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _IMPORT_ALL, json.dumps(names), str(seed), json.dumps(OPTIONAL)],
            cwd=tmp_path,  # not the checkout: only the installed package is importable
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (0, 1, 2)
    ]
    for seed, proc in enumerate(procs):
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        report = json.loads(out.splitlines()[-1])
        assert report["failed"] == {}, f"seed {seed}, order {report['order']}:\n" + "\n".join(
            report["failed"].values()
        )
        if report["skipped"]:  # a module of an optional extra that is not installed here
            print(f"seed {seed}: skipped {report['skipped']}")  # noqa: T201


def test_the_sim_root_holds_at_most_eight_modules() -> None:
    """``sim/``'s root keeps the world, its robot, loop and medium, the PyBullet import, attach and bench;
    everything else lives in a folder named for its concept (ARCHITECTURE.md)."""
    root = sorted(p.name for p in (ROOT / "sim").glob("*.py"))
    assert len(root) <= 8, root
