"""Mesh files: STL, OBJ, PLY, GLB (trimesh) and VTK time series (``.vtp`` frames plus a ParaView ``.pvd``).

:func:`write_series` writes ``{stem}_{i:04d}.{ext}`` per frame; for ``vtk`` it also writes ``{stem}.pvd``,
a ParaView collection that maps each frame file to its time (s). :func:`load_mesh` reads any of them back.
trimesh and pyvista are imported when a mesh is read or written, so that the command line can list
:data:`FORMATS` without them.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from pccbullet.core.atomic import atomic_path, write_atomic
from pccbullet.core.errors import ConfigurationError

if TYPE_CHECKING:
    import trimesh

SUFFIX = {"stl": ".stl", "obj": ".obj", "ply": ".ply", "glb": ".glb", "vtk": ".vtp"}  # format -> file suffix
FORMATS = tuple(SUFFIX)  # the mesh formats, as the ``export`` command's --format takes them


def to_polydata(mesh: trimesh.Trimesh):  # -> pyvista.PolyData (imported lazily)
    """A triangle mesh as a pyvista ``PolyData`` with the same vertices and faces."""
    import pyvista as pv

    faces = np.hstack([np.full((len(mesh.faces), 1), 3), mesh.faces]).astype(np.int64).ravel()
    return pv.PolyData(np.asarray(mesh.vertices, dtype=float), faces)


def write_mesh(mesh: trimesh.Trimesh, path: str | Path) -> Path:
    """Write one mesh; the format follows the suffix (``.stl .obj .ply .glb .vtp``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".vtp", ".stl", ".obj", ".ply", ".glb"):
        raise ConfigurationError(
            f"mesh file {str(path)!r}: suffix {suffix!r} is invalid; allowed: .stl .obj .ply .glb .vtp"
        )
    if suffix == ".vtp":  # VTK's file writer aborts the process on a full disk: write its bytes ourselves
        write_atomic(path, _vtp_bytes(to_polydata(mesh)))
        return path
    with atomic_path(path) as tmp:  # a full disk leaves no truncated mesh
        mesh.export(tmp, file_type=suffix[1:])
    return path


def _vtp_bytes(poly: Any) -> bytes:
    """A pyvista ``PolyData`` as the bytes of a binary ``.vtp`` file (VTK's XML writer, in memory)."""
    from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter

    writer = vtkXMLPolyDataWriter()
    writer.SetInputData(poly)
    writer.SetDataModeToBinary()
    writer.SetWriteToOutputString(True)
    writer.Write()
    return str(writer.GetOutputString()).encode("ascii")  # binary mode is base64 inside the XML


def load_mesh(path: str | Path) -> trimesh.Trimesh:
    """Read a mesh written by :func:`write_mesh` back as one ``trimesh.Trimesh``."""
    import trimesh

    path = Path(path)
    if path.suffix.lower() == ".vtp":
        import pyvista as pv

        poly = pv.read(str(path)).triangulate()
        return trimesh.Trimesh(np.asarray(poly.points), poly.faces.reshape(-1, 4)[:, 1:], process=False)
    loaded = trimesh.load(path, process=path.suffix.lower() == ".stl")
    if isinstance(loaded, trimesh.Scene):
        loaded = loaded.to_geometry()
    return cast(trimesh.Trimesh, loaded)


def write_series(
    frames: Sequence[trimesh.Trimesh],
    out_dir: str | Path,
    stem: str,
    fmt: str,
    times: Sequence[float] | None = None,
) -> list[Path]:
    """Write one file per frame (and a ``.pvd`` index for ``vtk``); returns the paths written.

    Args:
        frames: meshes, one per frame. out_dir: folder (created). stem: file name prefix.
        fmt: one of :data:`FORMATS`. times: frame times (s) for the ``.pvd`` (default: 0, 1, 2, ...).
    """
    if fmt not in FORMATS:
        raise ConfigurationError(f"format = {fmt!r} is invalid; allowed: " + ", ".join(FORMATS))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_mesh(m, out / f"{stem}_{i:04d}{SUFFIX[fmt]}") for i, m in enumerate(frames)]
    if fmt == "vtk":
        times = list(range(len(frames))) if times is None else list(times)
        paths.append(write_pvd(paths, times, out / f"{stem}.pvd"))
    return paths


def write_pvd(files: Sequence[Path], times: Sequence[float], path: Path) -> Path:
    """A ParaView collection (``.pvd``) listing ``files`` (relative to ``path``) at ``times`` (s)."""
    if len(files) != len(times):
        raise ConfigurationError(f"{len(files)} files but {len(times)} times for {path.name}")
    root = ET.Element("VTKFile", type="Collection", version="0.1", byte_order="LittleEndian")
    coll = ET.SubElement(root, "Collection")
    for f, t in zip(files, times, strict=True):
        ET.SubElement(coll, "DataSet", timestep=f"{float(t):.9g}", group="", part="0", file=Path(f).name)
    tree = ET.ElementTree(root)
    ET.indent(tree)
    buf = io.BytesIO()
    tree.write(buf, xml_declaration=True, encoding="utf-8")
    write_atomic(path, buf.getvalue())
    return path


def read_pvd(path: str | Path) -> list[tuple[float, Path]]:
    """``(time, file)`` entries of a ``.pvd`` collection, files resolved next to it."""
    path = Path(path)
    root = ET.parse(path).getroot()
    return [(float(d.get("timestep", 0)), path.parent / d.get("file", "")) for d in root.iter("DataSet")]
