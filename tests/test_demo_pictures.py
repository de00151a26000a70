"""The demo's pictures a person reads: every label at least 14 px and outlined, and a view fitted to what
it must hold (:func:`pccbullet.teleop.demo.outputs.fit_view`)."""

from __future__ import annotations

import numpy as np
import pytest

from pccbullet.sim.bullet import pb
from pccbullet.teleop.demo.outputs import (
    EXTERNAL_VIEW,
    FRAME_MARGIN,
    IMAGE_SIZE,
    VIEW_ANGLE_DEG,
    caption,
    fit_view,
)


def _ndc(points: np.ndarray, view: tuple) -> np.ndarray:
    """The points' normalized device coordinates ``(n, 2)`` through PyBullet's own matrices."""
    V = np.asarray(pb.computeViewMatrix(*view)).reshape(4, 4).T
    P = np.asarray(pb.computeProjectionMatrixFOV(VIEW_ANGLE_DEG, IMAGE_SIZE[0] / IMAGE_SIZE[1], 0.01, 10.0))
    clip = (P.reshape(4, 4).T @ V @ np.c_[points, np.ones(len(points))].T).T
    assert (clip[:, 3] > 0).all()  # in front of the camera
    return clip[:, :2] / clip[:, 3:4]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("top", [0.0, 0.1])
def test_a_fitted_view_holds_every_point_inside_its_margin_and_is_tight(seed: int, top: float) -> None:
    rng = np.random.default_rng(seed)
    points = rng.normal([0.4, 0.0, -0.4], rng.uniform(0.05, 0.8, 3), size=(200, 3))
    view = fit_view(points, top=top)
    ndc = _ndc(points, view)
    edge = 1.0 - FRAME_MARGIN
    # inside, with the margin left, and below the band kept free at the top
    assert np.abs(ndc[:, 0]).max() <= edge + 1e-6 and ndc[:, 1].min() >= -edge - 1e-6
    assert ndc[:, 1].max() <= edge - 2 * top + 1e-6
    # not far off: the points fill the frame across or up
    assert (
        max(np.abs(ndc[:, 0]).max() / edge, (ndc[:, 1].max() - ndc[:, 1].min()) / (2 * edge - 2 * top)) > 0.9
    )
    # centred where they may be: as far from the edges on opposite sides, across and up
    assert abs(ndc[:, 0].max() + ndc[:, 0].min()) < 0.01
    assert abs(ndc[:, 1].max() - (edge - 2 * top) + ndc[:, 1].min() + edge) < 0.01
    # it looks the way the demo's view looks
    d0 = np.subtract(EXTERNAL_VIEW[1], EXTERNAL_VIEW[0])
    d = np.subtract(view[1], view[0])
    assert np.dot(d, d0) / np.linalg.norm(d) / np.linalg.norm(d0) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("fill", [(235, 235, 235), (20, 20, 20)], ids=["light", "dark"])
def test_captions_are_at_least_14_px_and_readable_on_any_background(fill) -> None:
    for background in (0, 128, 255):  # black, mid grey, white: the text's outline keeps it apart
        image = np.full((60, 400, 3), background, np.uint8)
        out = caption(image, ["palpation"], fill=fill).astype(int)
        ink = np.abs(out - background).sum(axis=2) > 60
        rows = np.flatnonzero(ink.any(axis=1))
        assert rows[-1] - rows[0] + 1 >= 14  # from the top of 'l' to the tail of 'p'
        # the letters' own colour is there, and so is the outline's contrast
        letters = (np.abs(out - np.array(fill)).sum(axis=2) < 30).sum()
        assert letters > 60
        outline = (0, 0, 0) if sum(fill) > 384 else (255, 255, 255)
        assert (np.abs(out - np.array(outline)).sum(axis=2) < 30).sum() > 60


@pytest.mark.slow
def test_the_gif_view_holds_every_limb_of_every_recorded_frame_and_the_objects() -> None:
    """The tentacles start folded up (off the top of a fixed view) and sink within a second: the GIF's view
    is fitted to every recorded frame of both worlds, so the first frame's tentacles are in it too."""
    from pccbullet.sim.views.scene import show_frame, world_frame
    from pccbullet.teleop.demo.gif import CAPTION_BAND, scene_points
    from pccbullet.teleop.demo.scene import ROBOT, demo_config
    from pccbullet.teleop.demo.script import scripted_operator
    from pccbullet.teleop.mmt.session import MmtSession
    from pccbullet.urdf_gen.spec_loader import load_robot

    with MmtSession(load_robot(ROBOT), demo_config("acoustic", "mixed")) as s:
        first = world_frame(s.world, s.shown_bodies)
        s.run(scripted_operator(), 0.6)
        frames = [first, world_frame(s.world, s.shown_bodies)]
        rock = s.cfg.rock_true
        view = fit_view(scene_points(s, s.robot, rock, frames, []), top=CAPTION_BAND)
        tips = []
        for frame in frames:
            show_frame(s.world, frame, s.shown_bodies)
            tips.append(np.array([s.robot.tip_pose(limb.name)[:3, 3] for limb in s.robot.spec.limbs]))
        placed = np.array([o.position for o in s.cfg.objects])
    assert tips[0][:, 2].max() > 0.3 > tips[1][:, 2].max()  # folded up at first, sunk after 0.6 s
    edge = 1.0 - FRAME_MARGIN
    for points in (*tips, placed, np.array([rock])):
        ndc = _ndc(points, view)
        assert np.abs(ndc[:, 0]).max() <= edge and -edge <= ndc[:, 1].min()
        assert ndc[:, 1].max() <= edge - 2 * CAPTION_BAND


def test_the_session_bar_tells_simulated_time_and_the_real_time_factor(monkeypatch) -> None:
    """On a terminal the headless demo shows the session's progress (nothing on a pipe: tqdm's disable=None)."""
    import io
    import sys

    from pccbullet.teleop.demo.gif import session_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, shown in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        bar, on_time = session_bar(20.0)
        for t in (1.0, 2.0, 5.0):
            on_time(t)
        bar.refresh()
        bar.close()
        text = stream.getvalue()
        assert ("5.0/20.0 s simulated" in text and "x real time" in text and "session:" in text) is shown
        assert shown or text == ""
