"""The web view: its checks, its server (page, scripts, socket, token, origin), the link poses it computes, the
page's keys, and the views of an experiment and of the RL environment. The browser test is test_webview_page.py."""

from __future__ import annotations

import json
import math
import struct
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
from waits import until
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.bullet import pb
from pccbullet.sim.views.scene import SceneFrame, world_bodies
from pccbullet.sim.views.web import WebGroup, WebPage, WebView
from pccbullet.sim.views.web.tracked import TrackedLinks
from pccbullet.sim.views.web.view import (
    KEY_IS_DOWN,
    KEY_WAS_RELEASED,
    KEY_WAS_TRIGGERED,
    access_token,
    check_address,
    fold_keys,
    is_loopback,
)
from pccbullet.sim.world import World
from pccbullet.urdf_gen.pcc import PccConfig

TOKEN = "abcdef0123456789"


def _page(world: World) -> WebPage:
    return WebPage((WebGroup("world", "world", world_bodies(world)),), keys=("w", "2"))


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "127.0.0.2", "::1"])
def test_loopback_hosts_need_no_token(host: str) -> None:
    assert is_loopback(host)
    assert access_token(host, None) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "robot-lab.example"])
def test_any_other_host_gets_a_random_token(host: str) -> None:
    assert not is_loopback(host)
    a, b = access_token(host, None), access_token(host, None)
    assert a is not None and len(a) == 32 and a.isalnum() and a != b
    assert access_token(host, TOKEN) == TOKEN


@pytest.mark.parametrize(
    ("host", "port", "match"),
    [
        ("", 0, r"web view host = '' is invalid; allowed: an IP address or a host name"),
        ("bad host", 0, r"host = 'bad host' is invalid"),
        ("127.0.0.1/x", 0, r"host = '127.0.0.1/x' is invalid"),
        ("127.0.0.1", 70000, r"web view port = 70000 is invalid; allowed: an integer in \[0, 65535\]"),
        ("127.0.0.1", True, r"port = True is invalid"),
    ],
)
def test_bad_addresses_are_refused_in_one_line(host: str, port: int, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        check_address(host, port)


@pytest.mark.parametrize("token", ["short", "with space inside", "é" * 10, "x" * 129])
def test_bad_tokens_are_refused(token: str) -> None:
    with pytest.raises(
        ConfigurationError, match="web view token is invalid; allowed: 8 to 128 letters or digits"
    ):
        access_token("127.0.0.1", token)


def test_a_page_needs_distinct_groups_and_single_character_keys() -> None:
    with pytest.raises(ConfigurationError, match=r"groups = \['a', 'a'\] are invalid"):
        WebPage((WebGroup("a", "A", ()), WebGroup("a", "A", ())))
    with pytest.raises(ConfigurationError, match=r"key 'ww' is invalid; allowed: one printable character"):
        WebPage((WebGroup("a", "A", ()),), keys=("ww",))


def test_the_mirror_puts_every_link_where_the_world_has_it() -> None:
    """The view process computes link poses from joint vectors: they match PyBullet's in the world."""
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        robot.set_pcc("camera", [PccConfig(math.radians(70), math.radians(40), 0.59)])
        robot.set_pcc("grasper", [PccConfig(math.radians(50), math.radians(-90), 0.3)] * 2)
        page = _page(world)
        rest = TrackedLinks(page).poses().copy()  # as captured: already the bent pose
        mirror = TrackedLinks(page)
        mirror.update({"world": SceneFrame(0.0, {limb: robot.joints(limb) for limb in robot.bodies})})
        poses = mirror.poses()
        assert np.array_equal(poses, rest)
        checked = 0
        for i, (_, name, link) in enumerate(mirror.links):
            if link < 0:
                continue
            body = robot.bodies[name]
            state = pb.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=world.client)
            assert np.allclose(poses[i, :3], state[4], atol=1e-6)
            assert abs(abs(float(np.dot(poses[i, 3:], state[5]))) - 1.0) < 1e-6  # same rotation (q or -q)
            checked += 1
        mirror.close()
    assert checked >= 18  # at least every slice: 3 sections x 6 segments


def test_the_socket_needs_the_token_and_this_origin_and_sends_scene_and_frames() -> None:
    with World(mode="kinematic") as world:
        robot = world.load_robot("ursula", sections=3)
        with WebView(_page(world), token=TOKEN) as view:
            assert view.url.endswith(f":{view.port}/?token={TOKEN}")
            page = urllib.request.urlopen(f"http://127.0.0.1:{view.port}/", timeout=30).read().decode()
            assert "three.module.min.js" in page and "app.js" in page
            three = urllib.request.urlopen(
                f"http://127.0.0.1:{view.port}/static/three.core.min.js", timeout=30
            )
            assert three.headers["Content-Type"].startswith("text/javascript") and len(three.read()) > 100_000
            with pytest.raises(urllib.error.HTTPError, match="404"):
                urllib.request.urlopen(f"http://127.0.0.1:{view.port}/static/..%2Fserver.py", timeout=30)
            ws = f"ws://127.0.0.1:{view.port}/ws"
            with pytest.raises(InvalidStatus, match="403"):
                connect(ws, open_timeout=30)
            with pytest.raises(InvalidStatus, match="403"):
                connect(f"{ws}?token={TOKEN}", origin="http://elsewhere.example", open_timeout=30)  # type: ignore[arg-type]
            assert view.wait_ready(60.0)
            with connect(f"{ws}?token={TOKEN}", open_timeout=30, max_size=2**24) as socket:
                assert json.loads(socket.recv(timeout=60)) == {"type": "hello", "beat_s": 0.5}  # heartbeat
                scene = json.loads(socket.recv(timeout=60))
                assert scene["type"] == "scene" and scene["keys"] == ["w", "2"]
                items = scene["groups"][0]["items"]  # head, 4 base disks, 18 slices, the sensor ball
                assert len(items) == 24 and {i["kind"] for i in items} == {"cylinder", "mesh", "sphere"}
                assert all(i["mesh"] in scene["meshes"] for i in items if i["kind"] == "mesh")
                robot.set_pcc("camera", [PccConfig(1.0, 0.5, 0.6)])
                frame = None
                deadline = time.monotonic() + 60
                while frame is None and time.monotonic() < deadline:
                    view.publish(
                        {"world": SceneFrame(1.5, {"camera": robot.joints("camera")})},
                        force={"world": [0, 0, 0, 1, 0, 0, 3]},
                    )
                    try:
                        message = socket.recv(timeout=0.2)
                    except TimeoutError:
                        continue
                    if isinstance(message, bytes):
                        frame = message
                n = struct.unpack("<I", frame[:4])[0]  # type: ignore[index]
                header = json.loads(frame[4 : 4 + n])  # type: ignore[index]
                assert header["t"] == 1.5 and header["force"] == {"world": [0, 0, 0, 1, 0, 0, 3]}
                poses = np.frombuffer(frame[4 + n + (-(4 + n) % 4) :], dtype="<f4").reshape(-1, 7)  # type: ignore[index]
                assert poses.shape[0] == scene["links"]
            report = view.close()
    assert report["pages"] == 1 and report["sent"] >= 1
    assert report["published"] + report["dropped"] >= report["published"] == report["received"]


def test_key_events_fold_into_keyboard_flags() -> None:
    """A tap (down and up between two reads) acts for one read; a held key stays down until released."""
    held: set[str] = set()
    first = fold_keys([("2", True), ("2", False), ("w", True), ("w", True)], held)  # "w" auto-repeated
    assert first == {
        ord("2"): KEY_IS_DOWN | KEY_WAS_TRIGGERED | KEY_WAS_RELEASED,
        ord("w"): KEY_IS_DOWN | KEY_WAS_TRIGGERED,
    }
    assert fold_keys([], held) == {ord("w"): KEY_IS_DOWN}
    assert fold_keys([("w", False), ("q", False)], held) == {ord("w"): KEY_WAS_RELEASED}  # q was never down
    assert fold_keys([], held) == {} and held == set()


def test_the_page_keys_come_back_as_keyboard_events() -> None:
    with World(mode="kinematic") as world:
        world.load_robot("ursula", sections=3)
        with (
            WebView(_page(world)) as view,
            connect(f"ws://127.0.0.1:{view.port}/ws", open_timeout=30) as socket,
        ):
            assert view.wait_ready(60.0)  # the page's keys are known once its scene is loaded
            for key, down in [("2", True), ("2", False), ("w", True), ("ww", True)]:  # "ww": refused
                socket.send(json.dumps({"type": "key", "key": key, "down": down}))
            seen: dict[int, int] = {}

            def arrived() -> bool:
                for code, flags in view.keyboard_events().items():
                    seen[code] = seen.get(code, 0) | flags
                return seen.get(ord("2"), 0) & KEY_WAS_RELEASED and seen.get(ord("w"), 0) & KEY_IS_DOWN

            assert until(arrived)
            assert set(seen) == {ord("2"), ord("w")}
            assert view.keyboard_events() == {ord("w"): KEY_IS_DOWN}  # held, no new event


def test_a_scene_keeps_its_files_after_its_world_closed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pccbullet.sim.views.web.files import SceneFiles

    files = SceneFiles(tmp_path / "copies")
    with World(mode="kinematic") as world:
        world.load_robot("ursula", sections=2)
        page = _page(world)
        copied = files.page(page)
        again = files.page(page)
    assert copied == again  # the second time nothing is copied again
    bodies = copied.groups[0].bodies
    assert all(b.urdf is None or b.urdf.startswith(str(tmp_path)) for b in bodies)
    assert all(not v.mesh or v.mesh.startswith(str(tmp_path)) for b in bodies for v in b.visuals)
    mirror = TrackedLinks(copied)  # loads the copied URDFs with their meshes, the world's folder gone
    message = mirror.scene_message()
    mirror.close()
    assert len(message["meshes"]) == 6 and len(message["groups"][0]["items"]) == 18  # 2 sections x 6 segments


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["demo", "--view", "web", "--host", "bad host"],
            "pccbullet: error: web view host = 'bad host' is invalid; allowed: an IP address or a host name",
        ),
        (
            ["demo", "--host", "0.0.0.0"],
            "pccbullet: error: argument --host/--port: --host 0.0.0.0 --port 0 serve the web view; allowed: with --view web only",
        ),
        (
            ["run", "camera_sweep", "--out", "OUT", "--port", "8000"],
            "pccbullet: error: argument --host/--port: --host 127.0.0.1 --port 8000 serve the web view; allowed: with --view web only",
        ),
        (
            ["bench", "--view", "web"],
            "pccbullet: error: argument --view: web shows the demo's bench; allowed: with --demo only",
        ),
        (
            ["demo", "--view", "web", "--port", "70000"],
            "pccbullet: error: argument --port: '70000' is invalid; allowed: an integer in [0, 65535]",
        ),
    ],
)
def test_bad_web_view_arguments_fail_in_one_line(argv: list[str], message: str, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from pccbullet.teleop.cli import main

    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and len(err.splitlines()) == 1, err


def test_a_view_whose_process_died_closes_at_once_with_an_error() -> None:
    view = WebView()
    view._process.kill()  # as if the machine's OOM killer had taken it
    view._process.join(timeout=60)
    started = time.monotonic()
    report = view.close(timeout=600.0)
    assert time.monotonic() - started < 60.0  # not the whole timeout
    assert report["error"].startswith("the web view ended without a report (exit code -9)")
    assert view.close() is report  # closing again: the same report


def test_a_taken_port_fails_in_one_line() -> None:
    with WebView() as first:
        with pytest.raises(OSError, match=rf"cannot serve the web view on 127.0.0.1:{first.port}: "):
            WebView(port=first.port)


def test_world_show_publishes_after_steps_and_captures_bodies_added_later() -> None:
    from pccbullet.sim.objects.environment import add_sphere

    with World(mode="kinematic") as world:
        world.load_robot("ursula", sections=3)
        view = world.show()
        try:
            assert view.wait_ready(60.0) and view.sent >= 1
            add_sphere(world, (0.4, 0.0, -0.3), 0.02)  # a marker: the next frame captures the scene again
            world.step(20)  # one visual period: a frame, if the last one is 20 ms old
            assert until(lambda: (world.step(20), view._pages == 2)[1])
            assert view.wait_ready(60.0)
        finally:
            report = view.close()
    assert report["received"] == report["published"] >= 2


def test_an_experiment_is_shown_live_and_its_last_frame_reaches_the_view(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pccbullet.sim.experiments.runner import run_experiment

    with WebView() as view:
        result = run_experiment("camera_sweep", tmp_path, progress=False, view=view)
        assert view.wait_ready(60.0)
        report = view.close()
    assert len(result.time) == 151
    assert "error" not in report  # its world (and URDF folder) closed before the view read the scene: copies
    assert report["published"] >= 2 and report["received"] == report["published"]


def test_the_rl_environment_renders_to_a_web_view() -> None:
    pytest.importorskip("gymnasium")
    from pccbullet.sim.rl.reach import UrsulaReachEnv

    env = UrsulaReachEnv(render_mode="web")
    try:
        assert env.view is not None and env.render() is None
        env.reset(seed=3)
        for _ in range(5):
            env.step(np.ones(env.action_space.shape, dtype=np.float32))
        assert env.view.wait_ready(60.0)
    finally:
        env.close()
    report = env.view.close()
    assert report["published"] >= 1 and report["received"] == report["published"]
    with pytest.raises(
        ConfigurationError, match=r"render_mode = 'human' is invalid; allowed: None, 'rgb_array', 'web'"
    ):
        UrsulaReachEnv(render_mode="human")


def test_every_frame_published_before_close_is_counted_by_the_view() -> None:
    """Frames published right before ``close`` are in the view's queue when it stops: it counts them as
    received (not drawn), so the report adds up, ``received == published``, however late the view process
    runs. Failed under load while the view stopped with frames still queued (received 1 of 2)."""
    with World(mode="kinematic") as world:
        world.load_robot("ursula", sections=2)
        view = WebView(_page(world))
        assert view.wait_ready(60.0)
        for k in range(30):
            view.publish({"world": SceneFrame(0.02 * k)})
        report = view.close()
        assert report["published"] + report["dropped"] == 30 and report["published"] >= 1
        assert report["received"] == report["published"], report
        assert (
            view.publish({"world": SceneFrame(1.0)}) is False and view.dropped == report["dropped"] + 1
        )  # closed
