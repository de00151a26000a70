"""The one URDF builder: element helpers over :mod:`xml.etree.ElementTree` and one writer.

Every robot kind builds its ``<robot>`` tree with these functions (:mod:`pccbullet.urdf_gen.urdf_writer` for
PCC robots, :mod:`pccbullet.urdf_gen.rolling_snake.urdf`, and
:class:`pccbullet.urdf_gen.simple_urdf.UrdfRobot` for the PneuNet and three-actuator robots) and saves it with
:func:`write_tree`. Numbers are written with ``digits`` significant digits (``%.{digits}g``): 12 for PCC and
rolling-joint robots, 9 for the simple robots.

Conventions:

* an ``<origin>`` always carries both ``xyz`` and ``rpy``;
* a diagonal inertia (3 values) writes ``"0"`` off the diagonal, a full ``(3, 3)`` matrix writes all six;
* a ``<joint>`` lists ``origin, parent, child`` (``origin_first=True``) or ``parent, child, origin``
  (simple robots), then ``axis``, ``limit``, ``dynamics``, ``mimic``;
* :func:`mujoco_hint` adds the ``<mujoco><compiler .../></mujoco>`` element that tells MuJoCo's URDF
  importer where meshes are (PyBullet and yourdfpy ignore it).
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pccbullet.core.atomic import write_atomic

__all__ = [
    "fmt",
    "num",
    "robot",
    "mujoco_hint",
    "material",
    "origin",
    "link",
    "inertial",
    "shape",
    "box",
    "cylinder",
    "sphere",
    "mesh",
    "joint",
    "to_text",
    "write_tree",
]

Vec = Sequence[float] | np.ndarray


def fmt(values: Any, digits: int = 12) -> str:
    """Space-separated ``%.{digits}g`` of a number or sequence of numbers (flattened)."""
    return " ".join(f"{float(v):.{digits}g}" for v in np.atleast_1d(np.asarray(values, dtype=float)).ravel())


def num(value: float | str, digits: int = 12) -> str:
    """``%.{digits}g`` of one number; a string is written as it is."""
    return value if isinstance(value, str) else f"{float(value):.{digits}g}"


def robot(name: str) -> ET.Element:
    """A new ``<robot name=...>`` root element."""
    return ET.Element("robot", name=name)


def mujoco_hint(root: ET.Element, meshdir: str, *, fusestatic: bool = True) -> ET.Element:
    """Add ``<mujoco><compiler meshdir=... strippath="true" discardvisual="true"/></mujoco>`` to ``root``;
    ``fusestatic=False`` also keeps fixed links as MuJoCo bodies. Returns the compiler element."""
    hint = ET.SubElement(root, "mujoco")
    compiler = ET.SubElement(hint, "compiler", meshdir=meshdir, strippath="true", discardvisual="true")
    if not fusestatic:
        compiler.set("fusestatic", "false")
    return compiler


def material(parent: ET.Element, name: str, rgba: Vec | str | None = None, digits: int = 12) -> ET.Element:
    """A ``<material name=...>`` under ``parent``, with a ``<color rgba=...>`` when ``rgba`` (in [0, 1]) is
    given (a string is written as it is); without ``rgba`` it refers to a material declared elsewhere."""
    mat = ET.SubElement(parent, "material", name=name)
    if rgba is not None:
        ET.SubElement(mat, "color", rgba=rgba if isinstance(rgba, str) else fmt(rgba, digits))
    return mat


def origin(parent: ET.Element, xyz: Vec = (0, 0, 0), rpy: Vec = (0, 0, 0), digits: int = 12) -> None:
    """An ``<origin xyz=... rpy=...>`` under ``parent``: position (m) and roll, pitch, yaw (rad)."""
    ET.SubElement(parent, "origin", xyz=fmt(xyz, digits), rpy=fmt(rpy, digits))


def link(root: ET.Element, name: str) -> ET.Element:
    """A new ``<link name=...>`` under ``root``."""
    return ET.SubElement(root, "link", name=name)


def inertial(
    parent: ET.Element,
    mass: float,
    inertia: Vec,
    xyz: Vec = (0, 0, 0),
    rpy: Vec = (0, 0, 0),
    digits: int = 12,
) -> None:
    """An ``<inertial>`` under the link ``parent``.

    Args:
        mass: kg.
        inertia: about the centre of mass (kg m^2): ``(3,)`` principal values (off-diagonal written as
            ``"0"``) or a full ``(3, 3)`` matrix.
        xyz, rpy: centre of mass (m) and inertia axes (rad) in the link frame.
    """
    el = ET.SubElement(parent, "inertial")
    origin(el, xyz, rpy, digits)
    ET.SubElement(el, "mass", value=num(mass, digits))
    arr = np.asarray(inertia, dtype=float)
    if arr.shape == (3, 3):
        off = (num(arr[0, 1], digits), num(arr[0, 2], digits), num(arr[1, 2], digits))
        diag = (arr[0, 0], arr[1, 1], arr[2, 2])
    else:
        off, diag = ("0", "0", "0"), (arr[0], arr[1], arr[2])
    ET.SubElement(
        el,
        "inertia",
        ixx=num(diag[0], digits),
        ixy=off[0],
        ixz=off[1],
        iyy=num(diag[1], digits),
        iyz=off[2],
        izz=num(diag[2], digits),
    )


def box(size: Vec, digits: int = 12) -> ET.Element:
    """``<box size="x y z">`` (m), centred on its origin."""
    return ET.Element("box", size=fmt(size, digits))


def cylinder(radius: float | str, length: float | str, digits: int = 12) -> ET.Element:
    """``<cylinder radius=... length=...>`` (m) along the local z axis."""
    return ET.Element("cylinder", radius=num(radius, digits), length=num(length, digits))


def sphere(radius: float | str, digits: int = 12) -> ET.Element:
    """``<sphere radius=...>`` (m)."""
    return ET.Element("sphere", radius=num(radius, digits))


def mesh(filename: str) -> ET.Element:
    """``<mesh filename=...>`` (a path relative to the URDF file)."""
    return ET.Element("mesh", filename=filename)


def shape(
    parent: ET.Element,
    tag: str,
    geometry: ET.Element,
    xyz: Vec = (0, 0, 0),
    rpy: Vec = (0, 0, 0),
    *,
    material_name: str | None = None,
    rgba: Vec | str | None = None,
    digits: int = 12,
) -> ET.Element:
    """A ``<visual>`` or ``<collision>`` (``tag``) under the link ``parent``: origin, geometry (from
    :func:`box`, :func:`cylinder`, :func:`sphere` or :func:`mesh`) and optionally a material (declared
    inline when ``rgba`` is given, else a reference by name)."""
    el = ET.SubElement(parent, tag)
    origin(el, xyz, rpy, digits)
    ET.SubElement(el, "geometry").append(geometry)
    if material_name is not None:
        material(el, material_name, rgba, digits)
    return el


def joint(
    root: ET.Element,
    name: str,
    kind: str,
    parent: str,
    child: str,
    *,
    xyz: Vec = (0, 0, 0),
    rpy: Vec = (0, 0, 0),
    axis: Vec | None = None,
    limit: tuple[float, float, float | str, float | str] | None = None,
    damping: float | None = None,
    mimic: str | None = None,
    origin_first: bool = True,
    digits: int = 12,
) -> ET.Element:
    """A ``<joint name=... type=kind>`` under ``root``: ``child`` at ``xyz``/``rpy`` (m, rad) in ``parent``.

    Args:
        axis: unit axis in the joint frame, written when given.
        limit: ``(lower, upper, effort, velocity)`` in rad or m, N m or N, rad/s or m/s (a string is
            written as it is).
        damping: N m s/rad or N s/m, written as ``<dynamics damping=... friction="0">``.
        mimic: name of the joint this one copies (multiplier 1, offset 0).
        origin_first: ``<origin>`` before ``<parent>``/``<child>`` (else after them).
    """
    el = ET.SubElement(root, "joint", name=name, type=kind)
    if origin_first:
        origin(el, xyz, rpy, digits)
    ET.SubElement(el, "parent", link=parent)
    ET.SubElement(el, "child", link=child)
    if not origin_first:
        origin(el, xyz, rpy, digits)
    if axis is not None:
        ET.SubElement(el, "axis", xyz=fmt(axis, digits))
    if limit is not None:
        lower, upper, effort, velocity = limit
        ET.SubElement(
            el,
            "limit",
            lower=num(lower, digits),
            upper=num(upper, digits),
            effort=num(effort, digits),
            velocity=num(velocity, digits),
        )
    if damping is not None:
        ET.SubElement(el, "dynamics", damping=num(damping, digits), friction="0")
    if mimic is not None:
        ET.SubElement(el, "mimic", joint=mimic, multiplier="1", offset="0")
    return el


def to_text(root: ET.Element | ET.ElementTree, *, short_declaration: bool = False) -> str:
    """The indented document (two spaces) with its XML declaration.

    ``short_declaration`` writes ``<?xml version="1.0"?>`` and a final newline (the PneuNet and
    three-actuator files); otherwise ``<?xml version='1.0' encoding='utf-8'?>`` and no final newline
    (what :meth:`xml.etree.ElementTree.ElementTree.write` gives; PCC and rolling-joint files).
    """
    tree = root if isinstance(root, ET.ElementTree) else ET.ElementTree(root)
    ET.indent(tree, space="  ")
    buffer = io.StringIO()
    tree.write(buffer, encoding="unicode")
    body = buffer.getvalue()
    if short_declaration:
        return '<?xml version="1.0"?>\n' + body + "\n"
    return "<?xml version='1.0' encoding='utf-8'?>\n" + body


def write_tree(
    root: ET.Element | ET.ElementTree, path: str | Path, *, short_declaration: bool = False
) -> Path:
    """Write the document of :func:`to_text` (of an element or tree) to ``path`` as UTF-8, atomically
    (:func:`~pccbullet.core.atomic.write_atomic`); the folder is created if missing."""
    return write_atomic(path, to_text(root, short_declaration=short_declaration))
