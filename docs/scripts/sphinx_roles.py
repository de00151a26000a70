"""Griffe extension: Sphinx roles in the code's docstrings (``:class:`World```) as mkdocstrings links.

The docstrings are Google style (``Args:``, ``Returns:``) with Sphinx cross-reference roles and ``::``
literal-block markers. For the reference pages each role becomes an optional autorefs link to the
object's full path (resolved in the docstring's scope; shown as code, linked where the object has a
page, plain code where it has none: an optional reference never fails the strict build), and a
paragraph ending in ``::`` ends in ``:`` (the indented block below it stays a code block).
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:mod|class|func|meth|data|attr|exc|obj|const):`(?P<target>[^`]+)`")
LITERAL_MARKER = re.compile(r"(?<=\S)::[ \t]*(?=\n[ \t]*\n)")


def _resolve(obj: griffe.Object, target: str) -> str:
    """Best full path for ``target`` as written in ``obj``'s docstring (``target`` itself if unresolved)."""
    if target.startswith("."):
        module = obj.module.path
        return module + target if not target.startswith("..") else target
    head, _, rest = target.partition(".")
    for scope in (obj, obj.parent):
        if scope is None:
            continue
        try:
            full = scope.resolve(head)
        except Exception:  # griffe raises NameResolutionError, and others on odd scopes
            continue
        return f"{full}.{rest}" if rest else full
    return target


def _link(obj: griffe.Object, match: re.Match[str]) -> str:
    target = match["target"].strip()
    if "<" in target and target.endswith(">"):  # :func:`title <target>`
        title, target = target[:-1].split("<", 1)
        title = title.strip()
    else:
        short = target.startswith("~")
        target = target.lstrip("~!")
        title = target.rsplit(".", 1)[-1] if short else target
    identifier = _resolve(obj, target.lstrip("~!"))
    return (
        f'<autoref identifier="{html.escape(identifier)}" optional>'
        f"<code>{html.escape(title)}</code></autoref>"
    )


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._walk(pkg, seen=set())

    on_package_loaded = on_package  # the same event's name before griffe 2 (the rewrite is idempotent)

    def _walk(self, obj: griffe.Object, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            text = ROLE.sub(lambda m: _link(obj, m), obj.docstring.value)
            obj.docstring.value = LITERAL_MARKER.sub(":", text)
        for member in obj.members.values():
            if not member.is_alias:
                self._walk(member, seen)
