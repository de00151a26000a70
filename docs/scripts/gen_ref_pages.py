"""mkdocs-gen-files script: one API reference page per module of the installed ``pccbullet`` package.

Walks the package folder that Python finds, which the hook ``installed_layout.py`` (run first, at
``on_config``) makes the installed layout, and writes
``reference/<dotted/path>.md`` holding ``::: pccbullet.<module>`` for every module and package, plus
``reference/SUMMARY.md``, the section's navigation for mkdocs-literate-nav. The page of ``pccbullet``
itself is the public API: its docstring, then every name of ``pccbullet.__all__`` (signature, docstring,
a link to its home module's page). A new, moved or renamed module or public name needs no edit here.
"""

from __future__ import annotations

import os
from importlib.machinery import PathFinder
from pathlib import Path

import griffe
import mkdocs_gen_files

PACKAGE = "pccbullet"
spec = PathFinder.find_spec(PACKAGE)  # a folder on sys.path, as griffe looks (not the editable import hook)
if spec is None or not spec.submodule_search_locations:
    raise RuntimeError(f"no {PACKAGE}/ folder on sys.path: is it installed, is the installed_layout hook on?")
package_dir = Path(next(iter(spec.submodule_search_locations)))
nav = mkdocs_gen_files.Nav()

modules: list[tuple[str, ...]] = []
for folder, dirs, files in os.walk(package_dir, followlinks=True):
    dirs[:] = sorted(d for d in dirs if (Path(folder) / d / "__init__.py").is_file())
    rel = Path(folder).relative_to(package_dir.parent).parts
    for name in sorted(files):
        if not name.endswith(".py") or name == "__main__.py":
            continue
        stem = name[: -len(".py")]
        modules.append(rel if stem == "__init__" else (*rel, stem))

for parts in sorted(modules):
    if any(part.startswith("_") for part in parts):
        continue  # private modules are not part of any documented surface
    doc_path = Path(*parts).with_suffix(".md")
    if (package_dir.parent / Path(*parts) / "__init__.py").is_file():
        doc_path = Path(*parts, "index.md")  # a package's page sits above its modules' pages
    nav[parts] = doc_path.as_posix()
    if parts == (PACKAGE,):
        continue  # the public API page, written below
    with mkdocs_gen_files.open(Path("reference", doc_path), "w") as page:
        page.write(f"# `{'.'.join(parts)}`\n\n::: {'.'.join(parts)}\n")


def public_api_page() -> str:
    """Markdown of the ``pccbullet`` page: its docstring, then each public name in ``__all__`` order."""
    import pccbullet  # cheap by design: the public names load lazily, none is touched here

    package = griffe.load(PACKAGE, search_paths=[str(package_dir.parent)], resolve_aliases=False)
    lines = [
        "# Public API: `pccbullet`\n",
        "`import pccbullet as pcb` gives these names, each loaded from its home module on first use.",
        "Everything else is reachable by its full module path (see the pages below this one).\n",
        f"::: {PACKAGE}\n    options:\n      members: false\n      show_root_heading: false\n",
    ]
    for name in pccbullet.__all__:
        member = package.members.get(name)
        if name.startswith("__") or member is None:
            continue
        home = member.target_path.rsplit(".", 1)[0] if member.is_alias else PACKAGE
        lines += [
            f"::: {PACKAGE}.{name}",
            "    options:",
            "      show_root_heading: true",
            "      show_root_full_path: true",
            "      members: false",
            "      heading_level: 2\n",
            f"Home: [`{home}`][{home}].\n",
        ]
    return "\n".join(lines)


with mkdocs_gen_files.open(Path("reference", PACKAGE, "index.md"), "w") as page:
    page.write(public_api_page())

with mkdocs_gen_files.open("reference/SUMMARY.md", "w") as summary:
    summary.writelines(nav.build_literate_nav())
