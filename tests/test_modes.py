"""Modes are types: the chain topology, the drive and the world mode are compared as typed objects, never as
strings, outside the module that defines each; every member of a mode answers for itself; and collaborators
are typed, so that ``attr-defined`` ignores stay rare.

The string checks read every module of the packages with :mod:`ast` and fail on a comparison (``==``,
``!=``, ``in``, ``not in``, ``is``, a ``match`` case) against a mode's name, or an ``x if ... else y``
whose branches are such names, or a table (a dict display) keyed by two or more of a mode's names, outside
the mode's home module. A name is a string literal, or a module-level constant of the packages bound to
one or to a display of them (``CHAINS = ("rrp", "rod")``; ``chain in CHAINS``). A mode's names are its
type's members, so a new member is checked without editing this file.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from typing import Any

import layout
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.core.types import Choice
from pccbullet.sim.limb.drive import Drive
from pccbullet.sim.limb.topology import LIMB_TOPOLOGIES, limb_topology
from pccbullet.sim.world import WorldMode
from pccbullet.urdf_gen.pcc import rest_configs
from pccbullet.urdf_gen.spec_loader import load_robot
from pccbullet.urdf_gen.topology import _LAYOUTS, Topology

# Each mode: its type (its members' values are the names) and the modules that may compare its names.
MODES: dict[str, tuple[type[Choice], tuple[str, ...]]] = {
    "chain topology": (Topology, ("pccbullet.urdf_gen.topology",)),
    "world mode": (WorldMode, ("pccbullet.sim.world",)),
    "drive": (Drive, ("pccbullet.sim.limb.drive",)),
}
# The names each mode had as strings; its type must still cover them (the checks are not vacuous).
KNOWN = {
    "chain topology": {"rod", "rrp"},
    "world mode": {"kinematic", "dynamic"},
    "drive": {"joints", "tendons"},
}
PACKAGES = ("pccbullet.sim", "pccbullet.teleop", "pccbullet.urdf_gen", "pccbullet.core")  # at least these
MAX_ATTR_IGNORES = 5
# an ignore that names attr-defined, or a bare one (which hides attr-defined too)
ATTR_IGNORE = re.compile(r"type:\s*ignore(\[[^\]]*\battr-defined\b|(?!\[))")


def _names(mode: str) -> set[str]:
    """The names of ``mode``: its type's members' values."""
    return {member.value for member in MODES[mode][0]}


def _package_modules() -> dict[str, str]:
    """Installed name -> source of every module of the package (every home's, :mod:`layout`)."""
    return {name: path.read_text(encoding="utf-8") for name, path in layout.modules().items()}


def _literals(node: ast.AST, constants: dict[str, set[str]]) -> set[str]:
    """The strings ``node`` is or holds: a constant, a tuple, list or set display, or a name bound in
    ``constants`` (a bare name, or an attribute ``module.NAME``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(*(_literals(e, constants) for e in node.elts))
    if isinstance(node, ast.Name):
        return constants.get(node.id, set())
    if isinstance(node, ast.Attribute):
        return constants.get(node.attr, set())
    return set()


def module_constants(source: str) -> dict[str, set[str]]:
    """Module-level names that ``source`` binds to a string or to a tuple, list or set display of strings,
    and those strings (class bodies, such as an enum's members, are not module level)."""
    out: dict[str, set[str]] = {}
    for node in ast.parse(source).body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        held = _literals(value, {}) if value is not None else set()
        for target in targets:
            if isinstance(target, ast.Name) and held:
                out[target.id] = held
    return out


def compared_literals(source: str, constants: dict[str, set[str]] | None = None) -> list[tuple[int, str]]:
    """``(line, name)`` of every string that ``source`` compares against or picks as an ``if``/``else``
    expression's branch; ``constants``: names bound to strings (:func:`module_constants`)."""
    constants = constants or {}
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        found: set[str] = set()
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                found |= _literals(operand, constants)
        elif isinstance(node, ast.IfExp):
            found = _literals(node.body, constants) | _literals(node.orelse, constants)
        elif isinstance(node, ast.MatchValue):
            found = _literals(node.value, constants)
        out += [(getattr(node, "lineno", 0), value) for value in found]
    return sorted(out)


def table_keys(source: str) -> list[tuple[int, set[str]]]:
    """``(line, keys)`` of every dict display in ``source`` with string keys."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            out += [(node.lineno, keys)] if keys else []
    return out


def mode_comparisons(modules: dict[str, str], modes: Iterable[str] = MODES) -> list[str]:
    """``module:line: 'name' (mode)`` for every comparison of a mode's name outside the mode's homes, and
    every table keyed by two or more of one mode's names (a single key such as ``{"tendons": [...]}``
    names a field, not a mode)."""
    constants: dict[str, set[str]] = {}
    for source in modules.values():
        for constant, held in module_constants(source).items():
            constants[constant] = constants.get(constant, set()) | held
    found: list[tuple[str, int, str, str]] = []
    for name, source in modules.items():
        compared = compared_literals(source, constants)
        tables = table_keys(source)
        for mode in modes:
            if name in MODES[mode][1]:
                continue
            names = _names(mode)
            hits = [(line, lit) for line, lit in compared if lit in names]
            hits += [(line, lit) for line, keys in tables if len(keys & names) > 1 for lit in keys & names]
            found += [(name, line, lit, mode) for line, lit in hits]
    return [f"{name}:{line}: {lit!r} ({mode})" for name, line, lit, mode in sorted(found)]


def test_compared_literals_sees_every_form() -> None:
    source = (
        'a == "rod"\nb != "rrp"\nc in ("rod", "x")\n"rod" if d else "rrp"\n'
        'match e:\n    case "rod":\n        pass\nf(chain="rod")\nh in CHAINS\n'
    )
    assert compared_literals(source, {"CHAINS": {"rrp", "rod"}}) == [
        (1, "rod"),
        (2, "rrp"),
        (3, "rod"),
        (3, "x"),
        (4, "rod"),
        (4, "rrp"),
        (6, "rod"),
        (9, "rod"),
        (9, "rrp"),
    ]


def test_the_check_finds_what_it_looks_for() -> None:
    """The whole check on made-up modules: the comparisons it must catch, and what it must let pass."""
    modules = {
        "pccbullet.sim.caught": (
            'CHAINS = ("rrp", "rod")\nDYNAMIC = "dynamic"\n'
            'def f(chain, mode, drive):\n    if chain == "rod": pass\n    if mode is DYNAMIC: pass\n'
            "    if chain in CHAINS: pass\n"
            '    return {"joints": 1, "tendons": 2}[drive]\n'
        ),
        "pccbullet.teleop.caught": (
            "from pccbullet.sim.caught import CHAINS\ndef g(c):\n    return c not in CHAINS\n"
        ),
        "pccbullet.sim.passes": (
            'class M:\n    ROD = "rod"\n'
            'def f(chain, facts):\n    World(mode="dynamic", chain="rod")\n    if chain is M.ROD: pass\n'
            '    return {"tendons": facts}, facts["tendons"]\n'
        ),
        "pccbullet.urdf_gen.topology": 'def of(name):\n    return name == "rod"\n',
    }
    assert mode_comparisons(modules) == [
        "pccbullet.sim.caught:4: 'rod' (chain topology)",
        "pccbullet.sim.caught:5: 'dynamic' (world mode)",
        "pccbullet.sim.caught:6: 'rod' (chain topology)",
        "pccbullet.sim.caught:6: 'rrp' (chain topology)",
        "pccbullet.sim.caught:7: 'joints' (drive)",
        "pccbullet.sim.caught:7: 'tendons' (drive)",
        "pccbullet.teleop.caught:3: 'rod' (chain topology)",
        "pccbullet.teleop.caught:3: 'rrp' (chain topology)",
    ]


def test_the_scan_reads_every_module_and_every_home() -> None:
    modules = _package_modules()
    for package in PACKAGES:
        assert any(name.startswith(package + ".") for name in modules), package
    assert len(modules) == len(layout.source_files()) > 100, "every .py file of the homes is scanned"
    for mode, (_, homes) in MODES.items():
        assert set(homes) <= set(modules), f"{mode}: a home that is not a module"
        assert KNOWN[mode] <= _names(mode), f"{mode}: the type no longer has the names it replaced"


def test_no_mode_is_compared_as_a_string_outside_its_type() -> None:
    found = mode_comparisons(_package_modules())
    assert found == [], "string comparisons of a mode outside its type:\n" + "\n".join(found)


@pytest.mark.parametrize("mode", list(MODES), ids=str)
def test_a_mode_parses_its_names_once_and_prints_as_them(mode: str) -> None:
    kind: Any = MODES[mode][0]  # a mode's type, with its parser ``of``
    for member in kind:
        assert kind.of(member.value) is member and kind.of(member) is member
        assert f"{member}" == str(member) == member.value and json.dumps(member) == json.dumps(member.value)
    allowed = ", ".join(repr(m.value) for m in kind)
    for bad in ("nope", ["rod"], None, 3):
        with pytest.raises(
            ConfigurationError, match=f"^{kind.field()} = .* is invalid; allowed: {re.escape(allowed)}$"
        ):
            kind.of(bad)


def test_each_mode_names_the_field_users_write_it_in() -> None:
    """The one-line errors name the field as users write it (``chain = 'x' is invalid; ...``)."""
    assert [MODES[mode][0].field() for mode in MODES] == ["chain", "mode", "drive"]


@pytest.mark.parametrize("topology", list(Topology), ids=str)
def test_every_topology_has_its_layout_and_its_simulator_side(topology: Topology) -> None:
    assert topology in _LAYOUTS and topology in LIMB_TOPOLOGIES
    assert limb_topology(topology.value) is LIMB_TOPOLOGIES[topology]
    limb = load_robot("ursula", sections=3).limb("grasper")
    sections = [seg.sections for seg in limb.segments]
    n = sum(topology.joints_per_segment(s) for s in sections)
    rest = rest_configs(limb.segments)
    assert topology.joint_vector(rest, sections).shape == (n,)
    assert limb_topology(topology).joint_vector(limb, rest).shape == (n,)
    assert limb_topology(topology).stiffness(limb).shape == (n,)
    kinds = topology.joint_kinds(limb)
    assert len(kinds) == len(topology.joint_names(limb))
    assert sum(3 if k == "spherical" else 1 for k in kinds) == n


def test_at_most_five_attr_defined_ignores_in_the_packages() -> None:
    assert ATTR_IGNORE.search("x  # type: ignore[attr-defined]")
    assert ATTR_IGNORE.search("x  # type: ignore[union-attr, attr-defined]")
    assert ATTR_IGNORE.search("x  # type: ignore")
    assert not ATTR_IGNORE.search("x  # type: ignore[union-attr]")
    where = [
        f"{name}:{i}"
        for name, source in sorted(_package_modules().items())
        for i, line in enumerate(source.splitlines(), start=1)
        if ATTR_IGNORE.search(line)
    ]
    assert len(where) <= MAX_ATTR_IGNORES, (
        f"{len(where)} attr-defined ignores (at most {MAX_ATTR_IGNORES}):\n" + "\n".join(where)
    )
