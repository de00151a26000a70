"""Who can drive a web view: the Host/Origin/token checks of every request (DNS rebinding refused), the
checks of what a page sends, and the keys of a page that closes or goes silent released, on a real server
with real sockets. The browser's side is in test_webview_page.py."""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any

import pytest
from waits import WAIT_S, until
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.views.web import WebGroup, WebPage, WebView
from pccbullet.sim.views.web.access import MAX_TARGET, Access, host_allowed, split_host
from pccbullet.sim.views.web.inbox import MAX_MESSAGE, BadMessage, KeyRelay, SharedClock, parse_message
from pccbullet.sim.views.web.view import KEY_IS_DOWN, KEY_WAS_RELEASED, KEY_WAS_TRIGGERED

TOKEN = "abcdef0123456789"


# --- the Host check ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "parts"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("LocalHost:8000", ("localhost", 8000)),
        ("[::1]:8000", ("::1", 8000)),
        ("[::1]", ("::1", None)),
        ("evil.example", ("evil.example", None)),
        ("", None),
        ("a b:80", None),
        ("[::1:80", None),
        ("[evil]:80", None),
        ("::1:80", None),
        ("127.0.0.1:0", None),
        ("127.0.0.1:99999", None),
        ("127.0.0.1:80x", None),
        ("user@127.0.0.1:80", None),
    ],
)
def test_host_headers_split_into_name_and_port(header: str, parts: tuple[str, int | None] | None) -> None:
    assert split_host(header) == parts


@pytest.mark.parametrize(
    ("header", "bound", "allowed"),
    [
        ("127.0.0.1:8000", "127.0.0.1", True),  # its own bound address
        ("localhost:8000", "127.0.0.1", True),
        ("LOCALHOST:8000", "127.0.0.1", True),
        ("evil.example:8000", "127.0.0.1", False),  # DNS rebinding: the attacker's name, our address
        ("127.0.0.1.nip.io:8000", "127.0.0.1", False),
        ("127.0.0.1:8001", "127.0.0.1", False),  # another port
        ("127.0.0.1", "127.0.0.1", False),  # no port: 80
        ("127.0.0.2:8000", "127.0.0.1", False),  # another loopback address than the one bound
        (None, "127.0.0.1", False),  # missing
        ("[::1]:8000", "::1", True),  # IPv6
        ("[0:0::1]:8000", "::1", True),
        ("[::1]:8000", "127.0.0.1", False),
        ("localhost:8000", "::1", True),
        ("evil.example:8000", "::1", False),
        ("192.168.1.10:8000", "0.0.0.0", True),  # every address: any IP literal, no name
        ("[fe80::1]:8000", "::", True),
        ("robot-lab.example:8000", "0.0.0.0", False),
        ("robot-lab.example:8000", "robot-lab.example", True),  # bound by name: that name
        ("127.0.0.1:8000", "localhost", True),  # bound as localhost: its loopback addresses
        ("[::1]:8000", "localhost", True),
        ("10.0.0.2:8000", "localhost", False),
        ("evil.example:8000", "localhost", False),
    ],
)
def test_the_host_must_name_this_view(header: str | None, bound: str, allowed: bool) -> None:
    assert host_allowed(header, bound, 8000) is allowed


def _refusal(access: Access, target: str, socket: bool = False, **headers: str) -> Any:
    return access.refusal(target, {k.replace("_", "-").title(): v for k, v in headers.items()}, socket)


def test_the_rebinding_socket_is_refused_and_the_own_page_is_served() -> None:
    local = Access("127.0.0.1", 8000, None)
    assert _refusal(local, "/", Host="127.0.0.1:8000") is None
    assert _refusal(local, "/static/app.js", Host="localhost:8000") is None
    ws = {"Host": "127.0.0.1:8000", "Origin": "http://127.0.0.1:8000"}
    assert _refusal(local, "/ws", True, **ws) is None
    assert _refusal(local, "/ws", True, Host="127.0.0.1:8000") is None  # no Origin: not a browser
    status, line = _refusal(local, "/ws", True, Host="evil.example:8000", Origin="http://evil.example:8000")
    assert status == 403 and line == (
        "Host 'evil.example:8000' is not this view's address; allowed: 127.0.0.1:8000, localhost:8000 "
        "(or the view's token)"
    )
    for target in ("/", "/static/app.js"):  # the page and its files too
        assert _refusal(local, target, Host="evil.example:8000")[0] == 403
    other = {"Host": "127.0.0.1:8000", "Origin": "http://elsewhere.example"}
    assert _refusal(local, "/ws", True, **other) == (403, "a page of another origin may not open the socket")
    assert _refusal(local, "/", Origin="http://127.0.0.1:8000") == (400, "one Host header is needed")
    six = Access("::1", 8000, None)
    assert _refusal(six, "/ws", True, Host="[::1]:8000", Origin="http://[::1]:8000") is None
    assert _refusal(six, "/ws", True, Host="evil.example:8000", Origin="http://evil.example:8000")[0] == 403


def test_a_token_stands_for_the_host_and_the_socket_needs_it() -> None:
    remote = Access("0.0.0.0", 8000, TOKEN)
    assert _refusal(remote, f"/?token={TOKEN}", Host="robot-lab.example:8000") is None
    assert _refusal(remote, "/", Host="robot-lab.example:8000")[0] == 403
    cookie = f"other=1; {remote.cookie}={TOKEN}"
    assert _refusal(remote, "/static/app.js", Host="robot-lab.example:8000", Cookie=cookie) is None
    page = {"Host": "robot-lab.example:8000", "Origin": "http://robot-lab.example:8000"}
    assert _refusal(remote, f"/ws?token={TOKEN}", True, **page) is None
    assert _refusal(remote, "/ws", True, Cookie=cookie, **page) is None
    assert _refusal(remote, "/ws", True, Host="10.0.0.2:8000") == (403, "a valid ?token= is needed")
    assert _refusal(remote, "/ws?token=wrong0123456789", True, **page)[0] == 403


def test_an_over_long_target_is_answered_414_in_one_line() -> None:
    status, line = _refusal(Access("127.0.0.1", 8000, None), "/static/" + "a" * 5000, Host="127.0.0.1:8000")
    assert (
        status == 414
        and line == f"request target of 5008 characters is too long; allowed: up to {MAX_TARGET}"
    )


# --- what a page sends ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (b"{}", "a binary message is invalid; allowed: JSON text"),
        ("x" * (MAX_MESSAGE + 1), f"a message of {MAX_MESSAGE + 1} characters is invalid; allowed: up to"),
        ("{", "message is invalid: .*; allowed: standard JSON"),
        ('{"type": "stats", "fps": NaN}', "JSON number NaN is invalid"),
        ("[1]", "message type 'None' is invalid; allowed: beat, key, stats"),
        ('{"type": "exec"}', "message type 'exec' is invalid"),
        (
            '{"type": "key", "key": "w", "down": true, "x": 1}',
            "key message field x is invalid; allowed: down",
        ),
        ('{"type": "key", "key": "z", "down": true}', "key 'z' is invalid; allowed: one of '2wx'"),
        ('{"type": "key", "key": "ww", "down": true}', "key 'ww' is invalid"),
        ('{"type": "key", "key": "w", "down": 1}', "key down = '1' is invalid; allowed: true or false"),
        ('{"type": "key", "key": "w"}', "key down = 'None' is invalid"),
        (
            '{"type": "stats", "fps": 1e308}',
            r"stats fps = 1e\+308 is invalid; allowed: a number in \[0, 1000\]",
        ),
        ('{"type": "stats", "fps": -1}', "stats fps = -1 is invalid"),
        ('{"type": "stats", "frames": true}', "stats frames = True is invalid"),
        ('{"type": "stats", "render_ms": "3"}', "stats render_ms = 3 is invalid"),
        ('{"type": "beat", "t": 1}', "beat message field t is invalid; allowed: type"),
    ],
)
def test_bad_messages_are_refused_in_one_line(message: str | bytes, match: str) -> None:
    with pytest.raises(BadMessage, match=match) as info:
        parse_message(message, {"w", "x", "2"})
    assert "\n" not in str(info.value)


def test_good_messages_pass() -> None:
    assert parse_message('{"type": "key", "key": "w", "down": false}', {"w"})["down"] is False
    stats = '{"type": "stats", "fps": 30, "mean_fps": 29.5, "frames": 100, "render_ms": 4.2}'
    assert parse_message(stats, ())["mean_fps"] == 29.5
    assert parse_message('{"type": "beat"}', ()) == {"type": "beat"}


class _Queue:
    """A bounded queue with ``put_nowait`` (what the relay writes to)."""

    def __init__(self, size: int) -> None:
        self.items: list[tuple[str, bool]] = []
        self.size = size

    def put_nowait(self, item: tuple[str, bool]) -> None:
        import queue

        if len(self.items) >= self.size:
            raise queue.Full
        self.items.append(item)


def test_a_key_is_down_while_any_page_holds_it_and_released_when_its_page_goes() -> None:
    out, now = _Queue(16), [0.0]
    relay = KeyRelay(out, clock=lambda: now[0], stall=2.0)
    relay.open(1), relay.open(2)
    relay.key(1, "w", True), relay.key(2, "w", True), relay.key(2, "a", True)
    assert out.items == [("w", True), ("a", True)]
    assert relay.close(2) == ["a", "w"] and out.items[-1] == ("a", False)  # page 1 still holds w
    now[0] = 1.9
    relay.hear(1)  # a heartbeat
    now[0] = 3.8
    assert relay.stalled() == {}  # 1.9 s silent: alive
    now[0] = 4.0
    assert relay.stalled() == {1: ["w"]} and out.items[-1] == ("w", False)
    assert relay.stalled() == {} and relay.down == set() and relay.released == 3


def test_a_release_is_never_lost_when_the_queue_is_full() -> None:
    out = _Queue(1)
    relay = KeyRelay(out, clock=lambda: 0.0)
    relay.open(1)
    relay.key(1, "w", True)
    relay.key(1, "a", True)  # no room: the press is dropped, the key not down
    assert relay.down == {"w"}
    relay.close(1)  # no room for the release either: it waits
    assert list(relay.pending) == ["w"]
    out.items.clear()
    relay.flush()
    assert out.items == [("w", False)] and not relay.pending


def test_a_stall_or_clock_must_be_sane() -> None:
    with pytest.raises(
        ConfigurationError, match=r"web view stall = 0 is invalid; allowed: a number in \(0, 60\] s"
    ):
        WebView(stall=0)


# --- a real server ---------------------------------------------------------------------------------------


def _view_page() -> WebPage:
    return WebPage((WebGroup("world", "world", ()),), keys=("w", "2", "x"))


def _raw(port: int, target: str, host: str | None) -> tuple[int, str]:
    """A GET of ``target`` with exactly the ``Host`` header given (``None``: none)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    conn.putrequest("GET", target, skip_host=True)
    if host is not None:
        conn.putheader("Host", host)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read().decode(errors="replace")
    conn.close()
    return response.status, body


def _events(view: WebView, seen: dict[int, int]) -> dict[int, int]:
    for code, flags in view.keyboard_events().items():
        seen[code] = seen.get(code, 0) | flags
    return seen


def _hold_w(view: WebView, ws: ClientConnection) -> dict[int, int]:
    assert json.loads(ws.recv(timeout=WAIT_S)) == {"type": "hello", "beat_s": 0.5}
    ws.send(json.dumps({"type": "key", "key": "w", "down": True}))
    seen: dict[int, int] = {}
    assert until(lambda: _events(view, seen).get(ord("w"), 0) & KEY_WAS_TRIGGERED)
    assert view.keyboard_events() == {ord("w"): KEY_IS_DOWN}  # held
    return seen


def test_a_real_server_refuses_rebinding_and_long_paths_and_serves_its_own_host() -> None:
    with WebView(_view_page()) as view:
        port = view.port
        assert _raw(port, "/", f"127.0.0.1:{port}")[0] == 200
        assert _raw(port, "/static/app.js", f"localhost:{port}")[0] == 200
        status, body = _raw(port, "/", f"evil.example:{port}")
        assert status == 403 and body.startswith("pccbullet web view: Host 'evil.example:")
        assert _raw(port, "/static/app.js", f"evil.example:{port}")[0] == 403
        assert _raw(port, "/", None)[0] == 400
        status, body = _raw(port, "/static/" + "a" * 5000, f"127.0.0.1:{port}")
        assert (
            status == 414
            and body
            == f"pccbullet web view: request target of 5008 characters is too long; allowed: up to {MAX_TARGET}\n"
        )
        assert _raw(port, "/static/" + "a" * 1500, f"127.0.0.1:{port}") == (
            404,
            "not found\n",
        )  # no file name
        assert _raw(port, "/static/server.py", f"127.0.0.1:{port}")[0] == 404  # only the page's files
        assert _raw(port, "/static/" + "a" * 9000, f"127.0.0.1:{port}")[0] == 414  # websockets' own limit
        rebound = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)  # evil.example -> us
        with pytest.raises(InvalidStatus, match="403"):  # DNS rebinding: the attacker's name, Host and Origin
            connect(
                f"ws://evil.example:{port}/ws",
                sock=rebound,
                origin=f"http://evil.example:{port}",  # type: ignore[arg-type]
                open_timeout=WAIT_S,
            )
        rebound.close()
        with pytest.raises(InvalidStatus, match="400"):  # two Host headers: which one is meant?
            connect(
                f"ws://127.0.0.1:{port}/ws",
                additional_headers={"Host": f"evil.example:{port}"},
                open_timeout=WAIT_S,
            )
        with pytest.raises(InvalidStatus, match="403"):
            connect(f"ws://127.0.0.1:{port}/ws", origin="http://elsewhere.example", open_timeout=WAIT_S)  # type: ignore[arg-type]
        own = f"http://127.0.0.1:{port}"
        with connect(f"ws://127.0.0.1:{port}/ws", origin=own, open_timeout=WAIT_S) as ws:  # type: ignore[arg-type]
            assert json.loads(ws.recv(timeout=WAIT_S))["type"] == "hello"
        # the server is alive and whole after all of it
        assert _raw(port, "/", f"localhost:{port}")[0] == 200
        report = view.close()
    assert "error" not in report


def test_a_page_that_closes_has_its_held_key_released() -> None:
    with WebView(_view_page(), clock=SharedClock()) as view:  # no stall: only the close releases
        assert view.wait_ready(WAIT_S)
        with connect(f"ws://127.0.0.1:{view.port}/ws", open_timeout=WAIT_S) as ws:
            seen = _hold_w(view, ws)
        seen.clear()
        assert until(lambda: _events(view, seen).get(ord("w"), 0) & KEY_WAS_RELEASED)
        assert view.keyboard_events() == {}
        report = view.close()
    assert report["released"] == 1


def test_a_page_that_goes_silent_has_its_held_key_released_and_is_told() -> None:
    """Silence is measured on a clock the test moves (the relay's thresholds: the unit test above)."""
    clock = SharedClock(100.0)
    with WebView(_view_page(), stall=2.0, clock=clock) as view:
        assert view.wait_ready(WAIT_S)
        with connect(f"ws://127.0.0.1:{view.port}/ws", open_timeout=WAIT_S) as ws:
            _hold_w(view, ws)
            ws.send(json.dumps({"type": "key", "key": "q", "down": True}))  # answered: it was read
            answer = json.loads(_recv_text(ws, "error"))
            assert answer == {"type": "error", "message": "key 'q' is invalid; allowed: one of '2wx'"}
            assert view.keyboard_events() == {ord("w"): KEY_IS_DOWN}
            clock.advance(2.5)  # 2.5 s silent: released
            released = json.loads(_recv_text(ws, "released"))
            assert released == {"type": "released", "keys": ["w"], "why": "silent"}
            seen: dict[int, int] = {}
            assert until(lambda: _events(view, seen).get(ord("w"), 0) & KEY_WAS_RELEASED)
            assert view.keyboard_events() == {}
            ws.send(json.dumps({"type": "key", "key": "w", "down": True}))  # pressed again: acts again
            assert until(lambda: _events(view, {}).get(ord("w"), 0) & KEY_WAS_TRIGGERED)
        report = view.close()
    assert report["released"] == 2 and report["rejected"] == 1


def _recv_text(ws: ClientConnection, kind: str | None = None) -> str:
    """The next text message (of ``type`` ``kind``), skipping the scene's."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        message = ws.recv(timeout=WAIT_S)
        if isinstance(message, str):
            kind_of = json.loads(message)["type"]
            if kind_of in ("scene", "hud", "image") or (kind is not None and kind_of != kind):
                continue
            return message
    raise TimeoutError("no message")


def test_bad_messages_from_a_real_page_are_answered_and_counted_and_nan_never_reaches_the_report() -> None:
    with WebView(_view_page()) as view:
        assert view.wait_ready(WAIT_S)
        with connect(f"ws://127.0.0.1:{view.port}/ws", open_timeout=WAIT_S) as ws:
            ws.send('{"type": "stats", "fps": NaN, "mean_fps": Infinity}')
            assert json.loads(_recv_text(ws, "error"))["message"].startswith(
                "message is invalid: JSON number NaN"
            )
            ws.send(b"\x00" * 10)
            assert (
                json.loads(_recv_text(ws, "error"))["message"]
                == "a binary message is invalid; allowed: JSON text"
            )
            ws.send(json.dumps({"type": "stats", "fps": 31.5, "mean_fps": 30, "frames": 12, "render_ms": 3}))
            ws.send(json.dumps({"type": "key", "key": "2", "down": "yes"}))
            assert json.loads(_recv_text(ws, "error"))["message"].startswith("key down = 'yes' is invalid")
        report = view.close()
    assert report["rejected"] == 3
    assert report["page"] == {"fps": 31.5, "mean_fps": 30.0, "frames": 12.0, "render_ms": 3.0}


def test_a_token_view_serves_any_host_with_the_token_and_its_cookie() -> None:
    with WebView(_view_page(), token=TOKEN) as view:
        port = view.port
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        conn.request("GET", f"/?token={TOKEN}", headers={"Host": f"robot-lab.example:{port}"})
        response = conn.getresponse()
        response.read()
        conn.close()
        assert response.status == 200
        cookie = response.headers["Set-Cookie"].split(";")[0]
        assert cookie == f"pccbullet_view_{port}={TOKEN}" and "HttpOnly" in response.headers["Set-Cookie"]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        conn.request("GET", "/static/app.js", headers={"Host": f"robot-lab.example:{port}", "Cookie": cookie})
        assert conn.getresponse().status == 200
        conn.close()
        assert _raw(port, "/static/app.js", f"robot-lab.example:{port}")[0] == 403
        with pytest.raises(InvalidStatus, match="403"):
            connect(f"ws://127.0.0.1:{port}/ws", open_timeout=WAIT_S)
        with connect(
            f"ws://127.0.0.1:{port}/ws", additional_headers={"Cookie": cookie}, open_timeout=WAIT_S
        ) as ws:
            assert json.loads(ws.recv(timeout=WAIT_S))["type"] == "hello"


def test_nothing_listens_after_close() -> None:
    view = WebView()
    port = view.port
    view.close()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=WAIT_S):
        pass


def test_a_page_that_sends_an_oversized_message_is_closed_and_its_key_released() -> None:
    from websockets.exceptions import ConnectionClosed

    with WebView(_view_page(), clock=SharedClock()) as view:  # no stall: only the close releases
        assert view.wait_ready(WAIT_S)
        with connect(f"ws://127.0.0.1:{view.port}/ws", open_timeout=WAIT_S) as ws:
            _hold_w(view, ws)
            ws.send("x" * (4 * MAX_MESSAGE + 1))
            with pytest.raises(ConnectionClosed, match="1009"):  # message too big
                while True:
                    ws.recv(timeout=WAIT_S)
        seen: dict[int, int] = {}
        assert until(lambda: _events(view, seen).get(ord("w"), 0) & KEY_WAS_RELEASED)
        report = view.close()
    assert report["released"] == 1


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_a_view_on_the_ipv6_loopback_takes_its_own_address_and_localhost() -> None:
    with WebView(host="::1") as view:
        port = view.port
        assert view.url == f"http://[::1]:{port}/"

        def status(host: str) -> int:
            conn = http.client.HTTPConnection("::1", port, timeout=WAIT_S)
            conn.putrequest("GET", "/", skip_host=True)
            conn.putheader("Host", host)
            conn.endheaders()
            code = conn.getresponse().status
            conn.close()
            return code

        assert status(f"[::1]:{port}") == 200 and status(f"localhost:{port}") == 200
        assert status(f"evil.example:{port}") == 403 and status(f"127.0.0.1:{port}") == 403
        with connect(f"ws://[::1]:{port}/ws", origin=f"http://[::1]:{port}", open_timeout=WAIT_S) as ws:  # type: ignore[arg-type]
            assert json.loads(ws.recv(timeout=WAIT_S))["type"] == "hello"


@pytest.mark.parametrize("end", ["kill", "close"])
def test_keys_held_when_the_view_process_ends_or_the_view_closes_are_released(end: str) -> None:
    view = WebView(_view_page(), clock=SharedClock())
    try:
        assert view.wait_ready(WAIT_S)
        with connect(f"ws://127.0.0.1:{view.port}/ws", open_timeout=WAIT_S) as ws:
            _hold_w(view, ws)
            if end == "kill":  # as if the machine's OOM killer had taken it: nobody can release w
                view._process.kill()
                view._process.join(timeout=WAIT_S)
            else:
                view.close()
            assert until(lambda: view.keyboard_events().get(ord("w"), 0) & KEY_WAS_RELEASED)
            assert view.keyboard_events() == {}
    finally:
        view.close()
