"""The web view's process: an HTTP + WebSocket server (``websockets``) on one port, fed through queues.

One thread takes the page and the frames from the publishing process (:class:`~pccbullet.sim.views.web.view.
WebView`), turns joint vectors into link poses (:class:`~pccbullet.sim.views.web.tracked.TrackedLinks`) and
encodes each frame once; the asyncio loop serves the page (``/``), its scripts (``/static/...``, vendored: no
network at run time) and the socket (``/ws``). Every page gets the newest frame when it is ready for one:
a page that lags skips frames (counted), it never holds up the others or the publisher. Key presses and
releases that the page sends go back through a queue; so do the page's own figures (frames drawn per
second), which end up in the report.

Access (:mod:`~pccbullet.sim.views.web.access`): the page, its scripts and the socket answer a request
whose ``Host`` names this view (its address or ``localhost``) or that carries the token; the socket also
needs the token when there is one and refuses a browser page of another origin. What a page sends is
checked and the keys it holds are released when it closes or goes silent
(:mod:`~pccbullet.sim.views.web.inbox`).

Frame message (binary): ``uint32`` length ``n`` of a JSON header (``t``, ``n``, ``force``...), the header,
zero padding to a multiple of 4 bytes, then the tracked links' poses as little-endian ``float32`` rows
``x y z qx qy qz qw``.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue
import signal
import struct
import time
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.exceptions import ConnectionClosed

from pccbullet.core import strict_json
from pccbullet.sim.views.web.access import Access
from pccbullet.sim.views.web.inbox import BEAT_S, MAX_MESSAGE, STALL_S, BadMessage, KeyRelay, parse_message

PAGE_DIR = Path(__file__).with_name("page")
POLL_S = 0.05  # s, the intake thread's longest wait for a frame before it looks at the scene and stop
WATCH_S = 0.05  # s, how often silent pages are looked for (on the loop's own timer)
SERVER_NICE = 10  # added to the view process's nice value: the physics keeps its cores
MAX_ANSWERS = 16  # bad messages of a page answered (then only counted)
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".txt": "text/plain"}


def encode_frame(header: dict[str, Any], poses: Any) -> bytes:
    """A frame message (module docstring) of ``header`` and ``poses`` ``(n, 7) float32``."""
    text = strict_json.dumps(header, compact=True).encode()
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
    return strict_json.dumps({"type": "image", "src": url, "caption": caption, "size": [w, h]})


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
        self.keys: frozenset[str] = frozenset()  # the keys the scene's page takes
        self.rejected = 0  # messages from pages that were not valid (dropped)
        self.sockets: dict[int, Any] = {}  # by page number: its socket

    def load(self, message: str, keys: frozenset[str]) -> None:
        """A new scene and the keys its page takes."""
        self.keys = keys
        self.put("scene", message)

    def put(self, kind: str, message: Any) -> None:
        """Store a new scene, hud, image or frame and wake every page's sender."""
        if kind == "frame":
            self.frame, self.frame_no = message, self.frame_no + 1
        else:
            setattr(self, kind, message)
            self.versions[kind] += 1
        for waker in self.wakers:
            waker.set()


@functools.cache
def _static() -> dict[str, Path]:
    """The page's files by name (``/static/<name>``): its own, then the vendored ones."""
    files = [p for folder in (PAGE_DIR / "vendor", PAGE_DIR) for p in folder.iterdir() if p.is_file()]
    return {p.name: p for p in files}


def _http(access: Access, connection: Any, request: Any) -> Any:
    """websockets' ``process_request``: refuse what :class:`~pccbullet.sim.views.web.access.Access`
    refuses, serve the page and its files, let ``/ws`` through to the socket."""
    from websockets.datastructures import Headers
    from websockets.http11 import Response

    path = urlsplit(request.path).path
    refusal = access.refusal(request.path, request.headers, socket=path == "/ws")
    if refusal is not None:
        return connection.respond(refusal[0], f"pccbullet web view: {refusal[1]}\n")
    if path == "/ws":
        return None
    if path in ("/", "/index.html"):
        file: Path | None = PAGE_DIR / "index.html"
    else:  # a name looked up among the page's files: no path of a request reaches the file system
        file = _static().get(path[len("/static/") :]) if path.startswith("/static/") else None
    if file is None:
        return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
    headers = Headers(
        [("Content-Type", TYPES.get(file.suffix, "application/octet-stream")), ("Cache-Control", "no-store")]
    )
    if file.name == "index.html" and access.query_token(request.path):  # the token, for its scripts
        headers["Set-Cookie"] = f"{access.cookie}={access.token}; HttpOnly; SameSite=Strict; Path=/"
    body = file.read_bytes()
    headers["Content-Length"] = str(len(body))
    return Response(200, "OK", headers, body)


async def _page(ws: Any, state: State, relay: KeyRelay, connected: Any) -> None:
    """One page: send it what changed and the newest frame whenever it can take them; read its keys."""
    state.pages += 1
    page = state.pages
    relay.open(page)
    state.sockets[page] = ws
    connected.set()
    waker = asyncio.Event()
    state.wakers.add(waker)
    waker.set()
    answered = 0

    async def read() -> None:
        try:
            await take()
        except ConnectionClosed:  # the page went away (not cleanly): its keys go in the finally below
            pass

    async def take() -> None:
        nonlocal answered
        async for text in ws:
            relay.hear(page)
            try:
                msg = parse_message(text, state.keys)
            except BadMessage as exc:
                state.rejected += 1
                if answered < MAX_ANSWERS:
                    answered += 1
                    await ws.send(strict_json.dumps({"type": "error", "message": str(exc)}))
                continue
            if msg["type"] == "key":
                relay.key(page, msg["key"], msg["down"])
            elif msg["type"] == "stats":
                state.page_stats = {k: float(v) for k, v in msg.items() if k != "type"}

    reader = asyncio.create_task(read())
    seen = {"scene": 0, "hud": 0, "image": 0}
    last_frame = state.frame_no
    try:
        await ws.send(strict_json.dumps({"type": "hello", "beat_s": BEAT_S}))
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
        relay.close(page)
        state.sockets.pop(page, None)


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
            keys = frozenset(page.keys)
            loop.call_soon_threadsafe(state.load, strict_json.dumps(tracked.scene_message()), keys)
            with ready.get_lock():  # the publisher waits for this count (WebView.wait_ready)
                ready.value += 1
        try:
            frame = frames.get(timeout=POLL_S)
        except queue.Empty:
            continue
        counts["received"] += 1
        if frame.get("hud") is not None:
            lines = [{"text": str(t), "rgb": list(map(float, rgb))} for t, rgb in frame["hud"]]
            hud = strict_json.dumps({"type": "hud", "lines": lines})
            loop.call_soon_threadsafe(state.put, "hud", hud)
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


async def _tell(ws: Any, message: str) -> None:
    """Send ``message`` to a page that may have gone away meanwhile."""
    try:
        await ws.send(message)
    except ConnectionClosed:
        pass


async def _watch(state: State, relay: KeyRelay) -> None:
    """Release the keys of silent pages (and tell them), send releases the queue had no room for."""
    while True:
        for page, keys in relay.stalled().items():
            ws = state.sockets.get(page)
            if ws is not None:
                message = strict_json.dumps({"type": "released", "keys": keys, "why": "silent"})
                asyncio.ensure_future(_tell(ws, message))
        relay.flush()
        await asyncio.sleep(WATCH_S)


async def _serve(
    host: str,
    port: int,
    token: str | None,
    queues: dict[str, Any],
    events: dict[str, Any],
    clock: Callable[[], float],
    stall: float,
) -> dict[str, Any]:
    from functools import partial

    from websockets.asyncio.server import serve

    state, loop = State(), asyncio.get_running_loop()
    counts = {"received": 0, "applied": 0}
    relay = KeyRelay(queues["keys"], clock, stall)
    access: dict[str, Access] = {}  # the bound port is known once it serves

    def check(connection: Any, request: Any) -> Any:
        return _http(access["rules"], connection, request)

    handler = partial(_page, state=state, relay=relay, connected=events["page"])
    async with serve(
        handler,
        host,
        port,
        process_request=check,
        max_size=4 * MAX_MESSAGE,  # bytes: a larger message closes the page's socket
        compression=None,
        close_timeout=1.0,
    ) as server:
        bound = server.sockets[0].getsockname()
        access["rules"] = Access(host, int(bound[1]), token)
        queues["address"].put((host, int(bound[1])))
        watch = asyncio.ensure_future(_watch(state, relay))
        done = loop.run_in_executor(None, _intake, queues, events, loop, state, counts)
        await done
        watch.cancel()
        server.close()
    return {
        **counts,
        "sent": state.sent,
        "skipped": state.skipped,
        "pages": state.pages,
        "page": state.page_stats,
        "rejected": state.rejected,
        "released": relay.released,
    }


def serve_main(
    host: str,
    port: int,
    token: str | None,
    queues: dict[str, Any],
    events: dict[str, Any],
    clock: Callable[[], float] = time.monotonic,
    stall: float = STALL_S,
) -> None:
    """The process's main: serve until ``events["stop"]``; put the report (or the error) in
    ``queues["report"]``, the bound ``(host, port)`` in ``queues["address"]`` (or the error there when
    the port cannot be bound). A page silent for ``stall`` s on ``clock`` has its keys released."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C ends the publisher's session, which stops us
    try:
        os.nice(SERVER_NICE)
    except OSError:
        pass
    try:
        report = asyncio.run(_serve(host, port, token, queues, events, clock, stall))
    except OSError as exc:
        queues["address"].put(exc)
        report = {"error": f"{exc.strerror or exc} ({host}:{port})"}
    queues["report"].put(report)
