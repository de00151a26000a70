"""The mirror viewer runs in its own process and shows the physics world's joint states."""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator

import numpy as np
import pytest

from pccbullet.sim.views.gui import ViewerProcess
from pccbullet.sim.views.scene import robot_bodies, world_frame
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig


def test_viewer_process_mirrors_the_last_published_joints() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        viewer = ViewerProcess(robot_bodies(robot), gui=False)
        published = 0
        for k in range(40):
            robot.set_pcc("camera", [PccConfig(math.radians(k), math.radians(30), 0.6)])
            world.step()
            published += viewer.publish(world_frame(world))
        robot.set_pcc("camera", [PccConfig(math.radians(45), math.radians(30), 0.6)])
        for _ in range(10_000):  # the final frame must get through; the viewer drains the queue
            if viewer.publish(world_frame(world)):
                break
        report = viewer.close()
    assert 1 <= report["applied"] == viewer.sent == published + 1
    camera = report["first_joints"]["camera"]  # plane, bend, chord of the first section
    assert camera[0] == pytest.approx(math.radians(30), abs=1e-6)
    assert camera[1] == pytest.approx(math.radians(45) / 6, abs=1e-6)  # bend / 2N at N = 3


def test_a_viewer_started_before_the_scene_loads_it_later_and_mirrors_it() -> None:
    """The demo starts the viewer first (it says it is loading), then sends the scene."""
    viewer = ViewerProcess(None, gui=False)
    assert not viewer.wait_ready(0.5)  # no scene yet: not ready, but running
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        viewer.load(robot_bodies(robot), camera=("camera", "camera_tip"))
        assert viewer.wait_ready(60.0)
        robot.set_pcc("camera", [PccConfig(math.radians(45), math.radians(30), 0.6)])
        for _ in range(10_000):
            if viewer.publish(world_frame(world)):
                break
        report = viewer.close()
    assert report["applied"] == 1
    assert report["first_joints"]["camera"][1] == pytest.approx(math.radians(45) / 6, abs=1e-6)


def test_a_viewer_that_never_gets_its_scene_ends_cleanly() -> None:
    viewer = ViewerProcess(None, gui=False)
    assert viewer.close(timeout=10.0)["applied"] == 0


def test_keyboard_events_keep_held_keys_between_viewer_polls() -> None:
    from pccbullet.sim.bullet import pb

    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=2)
        viewer = ViewerProcess(robot_bodies(robot), gui=False)
        try:
            a, b = ord("a"), ord("b")
            viewer._keys.put(
                {a: pb.KEY_WAS_TRIGGERED | pb.KEY_IS_DOWN, b: pb.KEY_WAS_TRIGGERED | pb.KEY_IS_DOWN}
            )
            deadline = time.monotonic() + 60.0  # generous: the queue is fed across processes
            while not (first := viewer.keyboard_events()) and time.monotonic() < deadline:
                time.sleep(0.001)
            assert first == {
                a: pb.KEY_IS_DOWN | pb.KEY_WAS_TRIGGERED,
                b: pb.KEY_IS_DOWN | pb.KEY_WAS_TRIGGERED,
            }
            assert viewer.keyboard_events() == {
                a: pb.KEY_IS_DOWN,
                b: pb.KEY_IS_DOWN,
            }  # no new poll: still held
            viewer._keys.put({a: pb.KEY_WAS_RELEASED})
            deadline = time.monotonic() + 60.0
            while a in (now := viewer.keyboard_events()) and time.monotonic() < deadline:
                time.sleep(0.001)
            assert now == {b: pb.KEY_IS_DOWN}
        finally:
            viewer.close()


def test_a_scene_body_of_an_unknown_geometry_is_refused() -> None:
    from pccbullet.core.errors import ConfigurationError
    from pccbullet.sim.views.scene import SceneBody, Visual

    still = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    cone = Visual(-1, 1, (0.1, 0.1, 0.1), "", still, (1.0, 1.0, 1.0, 1.0))
    with pytest.raises(
        ConfigurationError, match=r"scene body 'crate': geom = 1 is invalid; allowed: 2 \(sphere\), 3 \(box\)"
    ):
        SceneBody("crate", (cone,), still)


def test_box_and_cylinder_bodies_are_shown_and_moved_to_a_pose() -> None:
    """The demo's rock (a sphere), bar (a cylinder lying across the limb) and post (a box), captured from
    the world: built from their visual shapes with their orientation, and a frame moves the bar to a new
    position and orientation and the rock to a new position."""
    from pccbullet.sim.bullet import pb
    from pccbullet.sim.objects.environment import add_sphere
    from pccbullet.sim.views.scene import SceneFrame, body_name, world_bodies

    across = (math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5))
    with World(mode="kinematic") as world:
        world.load_robot("ursula", sections=2)
        cid = world.client
        rock = add_sphere(world, (0.4, 0.18, -0.54), 0.06)
        cylinder = pb.createVisualShape(pb.GEOM_CYLINDER, radius=0.012, length=0.2, physicsClientId=cid)
        bar = pb.createMultiBody(0, -1, cylinder, [0.5, 0.0, -0.2], across, physicsClientId=cid)
        box = pb.createVisualShape(pb.GEOM_BOX, halfExtents=[0.015, 0.01, 0.1], physicsClientId=cid)
        post = pb.createMultiBody(0, -1, box, [0.5, 0.1, -0.3], physicsClientId=cid)
        viewer = ViewerProcess(world_bodies(world), gui=False)
        moved = (0.4, -0.05, 0.0), (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5))
        still = (0.0, 0.0, 0.0, 1.0)
        frame = SceneFrame(0.0, bases={body_name(rock): ((0.4, 0.18, -0.5), still), body_name(bar): moved})
        for _ in range(10_000):
            if viewer.publish(frame):
                break
        report = viewer.close()
    assert report["applied"] == 1
    shapes = report["shapes"]
    np.testing.assert_allclose(shapes[body_name(bar)], [*moved[0], *moved[1]], atol=1e-9)
    np.testing.assert_allclose(shapes[body_name(rock)], [0.4, 0.18, -0.5, 0, 0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(shapes[body_name(post)], [0.5, 0.1, -0.3, 0, 0, 0, 1], atol=1e-9)


def test_close_shows_the_queued_frames_of_a_lagging_viewer_and_ends_a_stuck_one() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        for stuck in (False, True):
            viewer = ViewerProcess(robot_bodies(robot), gui=False)
            assert viewer.wait_ready(60.0)  # connected and waiting for frames
            os.kill(viewer._process.pid, signal.SIGSTOP)  # a viewer that lags (e.g. software rendering)
            newest_queued: list[float] = []
            for k in range(5):  # more frames than the queue holds: the last ones are dropped
                robot.set_pcc("camera", [PccConfig(math.radians(10 * k), math.radians(30), 0.6)])
                if viewer.publish(world_frame(world)):
                    newest_queued = list(robot.joints("camera"))
            assert viewer.dropped >= 1
            if not stuck:
                os.kill(viewer._process.pid, signal.SIGCONT)
            t0 = time.perf_counter()
            report = viewer.close(timeout=3.0 if stuck else 120.0)  # a lagging one gets all it needs
            assert not stuck or time.perf_counter() - t0 < 60.0  # a stuck one is killed after 3 s
            assert not viewer._process.is_alive()
            assert viewer.close() == report  # a second close returns the same report at once
            if stuck:
                assert report["applied"] is None and "did not stop within 3 s; killed" in report["error"]
            else:
                assert report["applied"] == viewer.sent
                # the newest frame that found room in the queue was the last one shown
                shown = report["first_joints"]["camera"]
                assert newest_queued[1] > 0.0
                assert shown == pytest.approx(newest_queued[:3], abs=1e-6)  # plane, bend, chord


def test_wait_ready_and_a_viewer_that_ended_on_its_own() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        viewer = ViewerProcess(robot_bodies(robot), gui=False)
        assert viewer.wait_ready(60.0)
        assert viewer.publish(world_frame(world))
        assert viewer.close()["applied"] == 1

        dead = ViewerProcess(robot_bodies(robot), gui=False)
        dead._process.kill()  # before it could load anything
        assert dead.wait_ready(30.0) is False
        report = dead.close()
        assert report["applied"] is None
        assert report["error"] == "the viewer ended without a report (exit code -9)"


@pytest.fixture
def xvfb_display(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private Xvfb display (skips where Xvfb is not installed: ``apt-get install -y xvfb``)."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as f:
        number = f.readline().strip()
    assert number.isdigit(), "Xvfb did not report its display"
    monkeypatch.setenv("DISPLAY", f":{number}")
    yield f":{number}"
    server.terminate()
    server.wait(timeout=10)


def test_gui_viewer_loads_the_scene_and_shows_the_published_joints(xvfb_display: str) -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=10)
        viewer = ViewerProcess(robot_bodies(robot), gui=True, help_lines=("a help line",))
        assert viewer.wait_ready(120.0)
        robot.set_pcc("camera", [PccConfig(math.radians(40), math.radians(-20), 0.58)])
        assert viewer.publish(world_frame(world))
        shown = list(robot.joints("camera")[:3])
        report = viewer.close()
    assert report["applied"] == 1
    assert report["first_joints"]["camera"] == pytest.approx(shown, abs=1e-6)
    assert shown[1] == pytest.approx(math.radians(40) / 20)  # bend / 2N


def test_gui_overlay_shows_the_hud_and_the_camera_panel_without_pybullet_panels(xvfb_display: str) -> None:
    """The HUD lines, the key table and a camera image are drawn over the scene (no example browser, no
    buffer previews): the panel at the top right shows the image's colours."""
    from PIL import ImageGrab

    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        viewer = ViewerProcess(robot_bodies(robot), gui=True, help_lines=("w/s: bend",))
        assert viewer.wait_ready(120.0)
        image = np.zeros((60, 80, 3), np.uint8)
        image[:, :, 0] = 255  # red
        hud = [("t 1.00 s", (1.0, 1.0, 1.0)), ("faults: none", (1.0, 1.0, 1.0))]
        assert viewer.publish(world_frame(world), hud=hud, image=(image, "robot camera, 0.5 s old"))
        deadline = time.monotonic() + 120.0
        red = 0
        while red < 1000 and time.monotonic() < deadline:
            time.sleep(0.5)
            shot = np.asarray(ImageGrab.grab(xdisplay=xvfb_display).convert("RGB")).astype(int)
            h, w = shot.shape[:2]
            panel = shot[: h // 2, w // 2 :]
            red = int(((panel[..., 0] > 80) & (panel[..., 1] < 40) & (panel[..., 2] < 40)).sum())
        report = viewer.close()
    assert report["applied"] == 1 and "error" not in report
    assert red >= 1000  # the image is in the top right quarter of the window
