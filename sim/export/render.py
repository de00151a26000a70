"""Offscreen pyvista renders (PNG) and animations (GIF via imageio; MP4 needs imageio-ffmpeg).

pyvista is imported lazily and set to ``OFF_SCREEN``; nothing here needs a display. Frames of an
animation must share their topology (same limb and ring count), which lets one plotter update the points.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from pccbullet.core.atomic import atomic_path
from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.export.formats import to_polydata

MP4_HINT = "MP4 output needs imageio-ffmpeg: pip install imageio-ffmpeg (GIF works without it)"
SKIN_COLOR = "#e8a87c"
VIEWS = ("iso", "xy", "xz", "yz")  # isometric, or looking at the world plane named (pyvista's view_xy, ...)


def _plotter(window: tuple[int, int]):  # -> pyvista.Plotter
    import pyvista as pv

    pv.OFF_SCREEN = True
    p: Any = pv.Plotter(off_screen=True, window_size=list(window))
    p.set_background("white")
    return p


def _frame_camera(plotter, meshes: Sequence[trimesh.Trimesh], view: str = "iso") -> None:
    """Point the camera along ``view`` (one of :data:`VIEWS`) and frame every mesh."""
    if view not in VIEWS:
        raise ConfigurationError(f"view = {view!r} is invalid; allowed: one of {', '.join(VIEWS)}")
    lo = np.min([m.bounds[0] for m in meshes], axis=0)
    hi = np.max([m.bounds[1] for m in meshes], axis=0)
    getattr(plotter, "view_isometric" if view == "iso" else f"view_{view}")()
    plotter.reset_camera(bounds=[lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]])


def render_png(
    meshes: trimesh.Trimesh | Sequence[trimesh.Trimesh],
    path: str | Path,
    *,
    window: tuple[int, int] = (640, 480),
    view: str = "iso",
) -> Path:
    """Render one or more meshes offscreen to a PNG seen along ``view`` (:data:`VIEWS`); returns the path."""
    meshes = [meshes] if isinstance(meshes, trimesh.Trimesh) else list(meshes)
    p = _plotter(window)
    try:
        for m in meshes:
            p.add_mesh(to_polydata(m), color=SKIN_COLOR, smooth_shading=True)
        _frame_camera(p, meshes, view)
        path = Path(path)
        with atomic_path(path) as tmp:
            p.screenshot(str(tmp))
    finally:
        p.close()
    return path


def render_frames(
    frames: Sequence[trimesh.Trimesh], *, window: tuple[int, int] = (480, 360)
) -> list[np.ndarray]:
    """Images ``(H, W, 3) uint8`` of each frame, with one camera framing all frames."""
    if not frames:
        raise ConfigurationError("no frames to render; allowed: at least one mesh")
    n_verts = len(frames[0].vertices)
    if any(len(f.vertices) != n_verts for f in frames):
        raise ConfigurationError("animation frames must share their topology (same vertex count)")
    p = _plotter(window)
    try:
        poly = to_polydata(frames[0])
        p.add_mesh(poly, color=SKIN_COLOR, smooth_shading=True)
        _frame_camera(p, frames)
        images = []
        for f in frames:
            poly.points = np.asarray(f.vertices, dtype=float)
            p.render()
            images.append(np.asarray(p.screenshot(return_img=True)))
    finally:
        p.close()
    return images


def write_gif(frames: Sequence[trimesh.Trimesh], path: str | Path, *, fps: float = 10.0) -> Path:
    """Render frames to an animated GIF; returns the path."""
    import imageio.v2 as imageio

    path = Path(path)
    images: list[Any] = list(render_frames(frames))
    with atomic_path(path) as tmp:
        imageio.mimsave(tmp, images, duration=1.0 / fps, loop=0)
    return path


def write_mp4(frames: Sequence[trimesh.Trimesh], path: str | Path, *, fps: float = 10.0) -> Path:
    """Render frames to MP4; without imageio-ffmpeg raises :class:`ConfigurationError` (install hint)."""
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError(MP4_HINT) from exc
    import imageio.v2 as imageio

    path = Path(path)
    images: list[Any] = list(render_frames(frames))
    with atomic_path(path) as tmp:
        imageio.mimsave(tmp, images, fps=fps)
    return path
