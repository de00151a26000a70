"""The web view's process: an HTTP + WebSocket server (``websockets``) on one port, fed through queues.

One thread takes the page and the frames from the publishing process (:class:`~pccbullet.sim.views.web.view.
WebView`), turns joint vectors into link poses (:class:`~pccbullet.sim.views.web.tracked.TrackedLinks`) and
encodes each frame once; the asyncio loop serves the page (``/``), its scripts (``/static/...``, vendored: no
network at run time) and the socket (``/ws``). Every page gets the newest frame when it is ready for one:
a page that lags skips frames (counted), it never holds up the others or the publisher. Key presses and
releases that the page sends go back through a queue; so do the page's own figures (frames drawn per
second), which end up in the report.

Access: the page and its scripts hold no data; the socket, which carries the scene and takes the keys,
needs the ``token`` when there is one (the page passes its own ``?token=`` on), and refuses a browser page
of another origin (a page elsewhere must not drive the robot through a browser that has this one open).

Frame message (binary): ``uint32`` length ``n`` of a JSON header (``t``, ``n``, ``force``...), the header,
zero padding to a multiple of 4 bytes, then the tracked links' poses as little-endian ``float32`` rows
``x y z qx qy qz qw``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import queue
import signal
import struct
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE_DIR = Path(__file__).with_name("page")
POLL_S = 0.05  # s, the intake thread's longest wait for a frame before it looks at the scene and stop
SERVER_NICE = 10  # added to the view process's nice value: the physics keeps its cores
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".txt": "text/plain"}


def encode_frame(header: dict[str, Any], poses: Any) -> bytes:
    """A frame message (module docstring) of ``header`` and ``poses`` ``(n, 7) float32``."""
    text = json.dumps(header, separators=(",", ":")).encode()
    pad = b"\0" * (-(4 + len(text)) % 4)
    return struct.pack("<I", len(text)) + text + pad + poses.astype("<f4").tobytes()


def image_message(image: tuple[int, int, bytes, str]) -> str:
    """A camera image ``(h, w, rgb bytes, caption)`` as a JSON ``image`` message with a PNG data URL."""
    import base64
    import io

    import imageio.v3 as iio
    import numpy as np

    h, w, data, caption = image
    png = io.BytesIO()
    iio.imwrite(png, np.frombuffer(data, dtype=np.uint8).reshape(h, w, 3), extension=".png")
    url = "data:image/png;base64," + base64.b64encode(png.getvalue()).decode()
    return json.dumps({"type": "image", "src": url, "caption": caption, "size": [w, h]})


class State:
    """What the pages are sent, and the counts for the report (used in the asyncio loop only)."""

    def __init__(self) -> None:
        self.scene: str | None = None
        self.hud: str | None = None
        self.image: str | None = None
        self.frame: bytes | None = None
        self.frame_no = 0  # frames encoded
        self.versions = {"scene": 0, "hud": 0, "image": 0}
        self.wakers: set[asyncio.Event] = set()
        self.sent = 0  # frame messages sent, over all pages
        self.skipped = 0  # frames a page did not get because it was still busy with an earlier one
        self.pages = 0  # pages that connected
        self.page_stats: dict[str, Any] = {}  # the last figures a page sent

    def put(self, kind: str, message: Any) -> None:
        """Store a new scene, hud, image or frame and wake every page's sender."""
        if kind == "frame":
            self.frame, self.frame_no = message, self.frame_no + 1
        else:
            setattr(self, kind, message)
            self.versions[kind] += 1
        for waker in self.wakers:
            waker.set()


def _token_ok(token: str | None, request: Any) -> bool:
    if token is None:
        return True
    given = parse_qs(urlsplit(request.path).query).get("token", [""])[0]
    return hmac.compare_digest(given.encode(), token.encode())


def _origin_ok(request: Any) -> bool:
    """A socket from a browser page must come from this server's own origin (no Origin: not a browser)."""
    origin = request.headers.get("Origin")
    return origin is None or urlsplit(origin).netloc == request.headers.get("Host", "")


def _http(token: str | None, connection: Any, request: Any) -> Any:
    """websockets' ``process_request``: serve the page and its files; let ``/ws`` through to the socket
    (with the token, from this server's origin)."""
    from websockets.datastructures import Headers
    from websockets.http11 import Response

    path = urlsplit(request.path).path
    if path == "/ws":  # the page and its scripts hold nothing: the socket carries the scene and the keys
        if not _token_ok(token, request):
            return connection.respond(HTTPStatus.FORBIDDEN, "pccbullet web view: a valid ?token= is needed\n")
        if not _origin_ok(request):
            return connection.respond(HTTPStatus.FORBIDDEN, "pccbullet web view: another origin\n")
        return None
    if path in ("/", "/index.html"):
        file = PAGE_DIR / "index.html"
    elif path.startswith("/static/") and "/" not in path[len("/static/") :]:
        name = path[len("/static/") :]
        file = PAGE_DIR / name if (PAGE_DIR / name).is_file() else PAGE_DIR / "vendor" / name
    else:
        file = None
    if file is None or not file.is_file():
        return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
    headers = Headers(
        [("Content-Type", TYPES.get(file.suffix, "application/octet-stream")), ("Cache-Control", "no-store")]
    )
    body = file.read_bytes()
    headers["Content-Length"] = str(len(body))
    return Response(200, "OK", headers, body)


async def _page(ws: Any, state: State, keys: Any, connected: Any) -> None:
    """One page: send it what changed and the newest frame whenever it can take them; read its keys."""
    state.pages += 1
    connected.set()
    waker = asyncio.Event()
    state.wakers.add(waker)
    waker.set()

    async def read() -> None:
        async for text in ws:
            try:
                msg = json.loads(text)
            except (TypeError, ValueError):
                continue
            if msg.get("type") == "key" and isinstance(msg.get("key"), str) and len(msg["key"]) == 1:
                try:
                    keys.put_nowait((msg["key"], bool(msg.get("down"))))
                except queue.Full:
                    pass
            elif msg.get("type") == "stats" and isinstance(msg.get("fps"), int | float):
                state.page_stats = {
                    k: float(msg[k])
                    for k in ("fps", "mean_fps", "frames", "render_ms")
                    if isinstance(msg.get(k), int | float)
                }

    reader = asyncio.create_task(read())
    seen = {"scene": 0, "hud": 0, "image": 0}
    last_frame = state.frame_no
    try:
        while True:
            woken = asyncio.ensure_future(waker.wait())
            await asyncio.wait({woken, reader}, return_when=asyncio.FIRST_COMPLETED)
            if reader.done():
                woken.cancel()
                break
            waker.clear()
            for kind in ("scene", "hud", "image"):
                message = getattr(state, kind)
                if seen[kind] != state.versions[kind] and message is not None:
                    seen[kind] = state.versions[kind]
                    await ws.send(message)
            if state.frame is not None and state.frame_no != last_frame and state.scene is not None:
                state.skipped += max(0, state.frame_no - last_frame - 1)
                last_frame = state.frame_no
                await ws.send(state.frame)
                state.sent += 1
    except Exception:  # a page that went away: websockets' ConnectionClosed and kin
        pass
    finally:
        state.wakers.discard(waker)
        reader.cancel()


def _finite(force: Any) -> dict[str, list[float]]:
    """The frame's force arrows whose numbers are all finite (JSON has no NaN)."""
    import math

    out = {}
    for group, values in (force or {}).items():
        numbers = [float(v) for v in values]
        if len(numbers) == 7 and all(math.isfinite(v) for v in numbers):
            out[str(group)] = numbers
    return out


def _intake(queues: dict[str, Any], events: dict[str, Any], loop: Any, state: State, counts: dict) -> None:
    """The intake thread: pages and frames from the publisher -> encoded messages for the pages."""
    try:
        _take(queues["frames"], queues["pages"], events, loop, state, counts)
    except Exception as exc:  # the report says why the view stopped; the publisher goes on
        counts["error"] = f"{type(exc).__name__}: {exc}"[:500]
        events["stop"].wait()


def _take(frames: Any, pages: Any, events: dict[str, Any], loop: Any, state: State, counts: dict) -> None:
    from pccbullet.sim.views.web.tracked import TrackedLinks

    tracked: TrackedLinks | None = None
    parent, stop, ready = os.getppid(), events["stop"], events["loaded"]
    while not stop.is_set() and os.getppid() == parent:
        try:
            page = pages.get_nowait()
        except queue.Empty:
            pass
        else:
            if tracked is not None:
                tracked.close()
            tracked = TrackedLinks(page)
            loop.call_soon_threadsafe(state.put, "scene", json.dumps(tracked.scene_message()))
            with ready.get_lock():  # the publisher waits for this count (WebView.wait_ready)
                ready.value += 1
        try:
            frame = frames.get(timeout=POLL_S)
        except queue.Empty:
            continue
        counts["received"] += 1
        if frame.get("hud") is not None:
            lines = [{"text": str(t), "rgb": list(map(float, rgb))} for t, rgb in frame["hud"]]
            loop.call_soon_threadsafe(state.put, "hud", json.dumps({"type": "hud", "lines": lines}))
        if frame.get("image") is not None:
            loop.call_soon_threadsafe(state.put, "image", image_message(frame["image"]))
        if tracked is None:
            continue
        tracked.update(frame.get("frames", {}))
        header = {"t": frame.get("t"), "n": counts["received"], "force": _finite(frame.get("force"))}
        loop.call_soon_threadsafe(state.put, "frame", encode_frame(header, tracked.poses()))
        counts["applied"] += 1
    while True:  # frames published before the stop arrived: received, not drawn (the report adds up)
        try:
            frames.get(timeout=POLL_S)
        except queue.Empty:
            break
        counts["received"] += 1
    if tracked is not None:
        tracked.close()


async def _serve(
    host: str, port: int, token: str | None, queues: dict[str, Any], events: dict[str, Any]
) -> dict[str, Any]:
    from functools import partial

    from websockets.asyncio.server import serve

    state, loop = State(), asyncio.get_running_loop()
    counts = {"received": 0, "applied": 0}
    handler = partial(_page, state=state, keys=queues["keys"], connected=events["page"])
    async with serve(
        handler,
        host,
        port,
        process_request=partial(_http, token),
        max_size=2**16,
        compression=None,
        close_timeout=1.0,
    ) as server:
        bound = server.sockets[0].getsockname()
        queues["address"].put((host, int(bound[1])))
        done = loop.run_in_executor(None, _intake, queues, events, loop, state, counts)
        await done
        server.close()
    return {
        **counts,
        "sent": state.sent,
        "skipped": state.skipped,
        "pages": state.pages,
        "page": state.page_stats,
    }


def serve_main(
    host: str, port: int, token: str | None, queues: dict[str, Any], events: dict[str, Any]
) -> None:
    """The process's main: serve until ``events["stop"]``; put the report (or the error) in
    ``queues["report"]``, the bound ``(host, port)`` in ``queues["address"]`` (or the error there when
    the port cannot be bound)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C ends the publisher's session, which stops us
    try:
        os.nice(SERVER_NICE)
    except OSError:
        pass
    try:
        report = asyncio.run(_serve(host, port, token, queues, events))
    except OSError as exc:
        queues["address"].put(exc)
        report = {"error": f"{exc.strerror or exc} ({host}:{port})"}
    queues["report"].put(report)
