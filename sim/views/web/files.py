"""A page's files, copied for the view process: it must not depend on the world's own folders.

A world removes its temporary URDF folder when it closes, which can be before the view process has read
the page (a short experiment). :meth:`SceneFiles.page` copies, synchronously, every URDF of a page's bodies
with the files it references (``filename=`` attributes, relative to the URDF) and every visual mesh file
into a folder of the view's own, and returns the page with its paths pointing there. Files already copied
(same source path, size and modification time) are not copied again.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

from pccbullet.sim.views.scene import SceneBody
from pccbullet.sim.views.web.layout import WebPage


class SceneFiles:
    """Copies of scene files under ``root`` (a folder the caller owns and removes)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._copied: dict[tuple[str, int, int], Path] = {}  # (source, size, mtime ns) -> copy

    def _copy(self, source: Path, target: Path) -> Path:
        """``source`` copied to ``target``, or its earlier copy."""
        stat = source.stat()
        key = (str(source.resolve()), stat.st_size, stat.st_mtime_ns)
        if key not in self._copied:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            if target.suffix == ".urdf":  # with the files it references, relative paths kept
                for element in ElementTree.parse(source).iter():
                    name = element.get("filename")
                    if name and not Path(name).is_absolute() and "://" not in name:
                        if (source.parent / name).is_file():
                            (target.parent / name).parent.mkdir(parents=True, exist_ok=True)
                            shutil.copyfile(source.parent / name, target.parent / name)
            self._copied[key] = target
        return self._copied[key]

    def body(self, body: SceneBody) -> SceneBody:
        """``body`` with its URDF and visual mesh files copied under :attr:`root`."""
        index = len(self._copied)
        visuals = tuple(
            replace(
                v,
                mesh=str(
                    self._copy(Path(v.mesh), self.root / "meshes" / f"{index}_{i}{Path(v.mesh).suffix}")
                ),
            )
            if v.mesh and Path(v.mesh).is_file()
            else v
            for i, v in enumerate(body.visuals)
        )
        urdf = body.urdf
        if urdf is not None and Path(urdf).is_file():
            urdf = str(self._copy(Path(urdf), self.root / f"urdf{len(self._copied)}" / Path(urdf).name))
        return replace(body, visuals=visuals, urdf=urdf)

    def page(self, page: WebPage) -> WebPage:
        """``page`` with every body's files copied (:meth:`body`)."""
        groups = tuple(replace(g, bodies=tuple(self.body(b) for b in g.bodies)) for g in page.groups)
        return replace(page, groups=groups)
