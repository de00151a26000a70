"""The publishing side of a web view: start its process, send pages and frames, read the page's keys.

:class:`WebView` starts the server (:mod:`pccbullet.sim.views.web.server`) in a process of its own at once
(the page says it is loading until a scene arrives) and returns when the port is bound. :meth:`WebView.
publish` never waits: it puts the frame in a queue of :data:`QUEUE_FRAMES` and, when the view process has
not taken the previous ones yet, drops it and counts it (:attr:`WebView.dropped`), as the GUI viewer does.
"""

from __future__ import annotations

import ipaddress
import multiprocessing as mp
import queue
import secrets
import shutil
import socket
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pccbullet.core.errors import ConfigurationError
from pccbullet.sim.views.pending import PendingOverlay
from pccbullet.sim.views.scene import Rgb, SceneFrame
from pccbullet.sim.views.web.files import SceneFiles
from pccbullet.sim.views.web.inbox import STALL_S
from pccbullet.sim.views.web.layout import WebPage

QUEUE_FRAMES = 2
KEY_QUEUE = 256
KEY_IS_DOWN, KEY_WAS_TRIGGERED, KEY_WAS_RELEASED = 1, 2, 4  # pybullet's keyboard event flags
LOCAL_HOST = "127.0.0.1"
START_TIMEOUT_S = 60.0  # s, longest wait for the view process to bind its port
ALIVE_CHECK_S = 0.1  # s, how often keyboard_events looks whether the view process still runs, keys held
MAX_STALL_S = 60.0  # s, the longest silence a view may allow a page that holds keys


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_address(host: str, port: int) -> None:
    """Raise :class:`ConfigurationError` for a host that is no name or address, or a port out of range."""
    if (
        not isinstance(host, str)
        or not host
        or len(host) > 253
        or any(c.isspace() or c in "/?#@" for c in host)
    ):
        raise ConfigurationError(
            f"web view host = {host!r} is invalid; allowed: an IP address or a host name"
        )
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigurationError(f"web view port = {port!r} is invalid; allowed: an integer in [0, 65535]")


def access_token(host: str, token: str | None) -> str | None:
    """The token a view on ``host`` needs: ``token`` when given (8 to 128 letters or digits), a new
    random one for a host other than a loopback address, else ``None`` (none needed)."""
    valid = isinstance(token, str) and token.isascii() and token.isalnum() and 8 <= len(token) <= 128
    if token is not None and not valid:
        raise ConfigurationError("web view token is invalid; allowed: 8 to 128 letters or digits")
    if token is None and not is_loopback(host):
        return secrets.token_hex(16)
    return token


def fold_keys(events: Sequence[tuple[str, bool]], held: set[str]) -> dict[int, int]:
    """Key events ``(key, down)`` in order -> ``pybullet.getKeyboardEvents`` flags by key code; ``held``
    (updated) is the set of keys down before and after. A key pressed and released among ``events`` is
    reported down and triggered (and released): a short tap acts for one read."""
    triggered: set[str] = set()
    released: set[str] = set()
    for key, down in events:
        if down and key not in held:
            triggered.add(key)
            held.add(key)
        elif not down and key in held:
            released.add(key)
            held.discard(key)
    out = {ord(k): KEY_IS_DOWN for k in held | triggered}
    for k in triggered:
        out[ord(k)] |= KEY_WAS_TRIGGERED
    for k in released:
        out[ord(k)] = out.get(ord(k), 0) | KEY_WAS_RELEASED
    return out


class WebView:
    """A live 3D view in the browser, served by its own process (module docstring).

    Args:
        page: what to show; ``None``: send it later with :meth:`load`.
        host: the address to listen on; ``127.0.0.1`` (the default) serves this machine only. Any other
            host needs a token: ``token=None`` then makes one (:attr:`url` carries it).
        port: the port; 0 for any free one (:attr:`port` says which).
        token: the access token of the page and its socket (``None`` on a loopback host: none needed).
        start_timeout: longest wait (s) for the process to bind its port.
        stall: a page that sends nothing for this long (s) has every key it holds released (it sends a
            heartbeat every :data:`~pccbullet.sim.views.web.inbox.BEAT_S`).
        clock: the clock (s) a page's silence is measured on, read in the view's process; ``None``:
            :func:`time.monotonic`. Tests pass a :class:`~pccbullet.sim.views.web.inbox.SharedClock`.

    Raises:
        ConfigurationError: a bad host, port or stall. OSError: the port cannot be bound (e.g. it is taken).
    """

    def __init__(
        self,
        page: WebPage | None = None,
        *,
        host: str = LOCAL_HOST,
        port: int = 0,
        token: str | None = None,
        start_timeout: float = START_TIMEOUT_S,
        stall: float = STALL_S,
        clock: Callable[[], float] | None = None,
    ) -> None:
        from pccbullet.sim.views.web.server import serve_main

        check_address(host, port)
        if isinstance(stall, bool) or not isinstance(stall, int | float) or not 0.0 < stall <= MAX_STALL_S:
            raise ConfigurationError(
                f"web view stall = {stall!r} is invalid; allowed: a number in (0, {MAX_STALL_S:g}] s"
            )
        self.token = access_token(host, token)
        """The access token (``None``: none needed)."""
        self.host = host
        ctx = mp.get_context("spawn")
        self._queues: dict[str, Any] = {
            "frames": ctx.Queue(maxsize=QUEUE_FRAMES),
            "keys": ctx.Queue(maxsize=KEY_QUEUE),
            "pages": ctx.Queue(),
            "address": ctx.Queue(),
            "report": ctx.Queue(),
        }
        self._events: dict[str, Any] = {"stop": ctx.Event(), "page": ctx.Event(), "loaded": ctx.Value("i", 0)}
        self._pages = 0  # pages sent; the view process counts those it has loaded in events["loaded"]
        self._files = SceneFiles(Path(tempfile.mkdtemp(prefix="pccbullet_view_")))
        weakref.finalize(self, shutil.rmtree, self._files.root, True)  # also if never closed
        self._held: set[str] = set()
        self._alive_checked = -float("inf")  # when keyboard_events last looked at the process (s)
        self._overlay = PendingOverlay()  # HUD and image not yet in a frame the view process took
        self._closed: dict[str, Any] | None = None
        self._closing = False  # set by close(): no frame is published after it
        self.dropped = 0
        """Frames not sent because the view process had not taken the previous ones."""
        self.sent = 0
        """Frames handed to the view process."""
        self._process = ctx.Process(
            target=serve_main,
            args=(host, port, self.token, self._queues, self._events, clock or time.monotonic, float(stall)),
            daemon=True,
        )
        self._process.start()
        bound = self._wait_address(start_timeout)
        if isinstance(bound, OSError):
            self._process.join(timeout=10.0)
            raise OSError(bound.errno, f"cannot serve the web view on {host}:{port}: {bound.strerror}")
        self.port: int = bound[1]
        """The port the view listens on."""
        if page is not None:
            self.load(page)

    def _wait_address(self, timeout: float) -> Any:
        """The bound ``(host, port)`` (or the OSError) the process sends once it serves."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._queues["address"].get(timeout=0.1)
            except queue.Empty:
                if not self._process.is_alive():
                    raise OSError(
                        f"the web view process ended (exit code {self._process.exitcode}) before it served; "
                        'a script that starts one needs the `if __name__ == "__main__":` guard '
                        "(it is started with multiprocessing's spawn)"
                    ) from None
                if time.monotonic() >= deadline:
                    self._process.kill()
                    raise OSError(f"the web view did not start within {timeout:g} s") from None

    @property
    def url(self) -> str:
        """The page's address (with the token when one is needed)."""
        host = socket.gethostname() if self.host in ("0.0.0.0", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    def load(self, page: WebPage) -> None:
        """Show ``page`` (replacing the one shown): the pages rebuild their panels."""
        if not isinstance(page, WebPage):
            raise ConfigurationError(f"web view page = {type(page).__name__} is invalid; allowed: a WebPage")
        self._queues["pages"].put(self._files.page(page))  # its files copied: the world may close first
        self._pages += 1

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Wait until the view process has loaded the last page sent (frames before are dropped); False
        after ``timeout`` s, if it ended, or if no page was sent."""
        loaded = self._events["loaded"]
        return self._pages > 0 and self._wait(lambda: loaded.value >= self._pages, timeout)

    def wait_page(self, timeout: float = 60.0) -> bool:
        """Wait until a page has connected (since the view started); False after ``timeout`` s."""
        page = self._events["page"]
        return self._wait(lambda: page.wait(0.1), timeout)

    def _wait(self, done: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not done():
            if not self._process.is_alive() or time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def publish(
        self,
        frames: Mapping[str, SceneFrame],
        *,
        hud: Sequence[tuple[str, Rgb]] | None = None,
        image: tuple[np.ndarray, str] | None = None,
        force: Mapping[str, Sequence[float]] | None = None,
    ) -> bool:
        """Send a frame; False (and a drop counted) when the view process lags. Never waits.

        Args:
            frames: each panel's :class:`~pccbullet.sim.views.scene.SceneFrame` by group name; the page
                shows the first one's time. hud: lines (text, rgb 0..1) shown over the panels.
            image: ``(h, w, 3) uint8`` and its caption: a camera frame shown beside the panels.
            force: by group, ``[x, y, z, fx, fy, fz, limit]``: an arrow of force ``f`` (N) at ``x, y, z``
                (m, world), scaled to ``limit`` (N); the first group's also fills the page's force bar.
        """
        if self._closing:  # a closed view takes no more frames (counted as dropped)
            self.dropped += 1
            return False
        self._overlay.note(hud, image)  # kept until a frame carries it (a dropped frame must not lose it)
        t = next(iter(frames.values())).t if frames else None
        frame = {"frames": frames, "t": t, "force": force}
        if not self._overlay.offer(self._queues["frames"], frame):
            self.dropped += 1
            return False
        self.sent += 1
        return True

    def keyboard_events(self) -> dict[int, int]:
        """The page's key events since the last call, in ``pybullet.getKeyboardEvents`` form (key code ->
        flags), for :class:`~pccbullet.teleop.devices.keyboard.KeyboardDevice`. Held keys stay down
        between calls; a key pressed and released between two calls is reported down (and triggered)
        once, so that a short tap acts for one read. Once the view is closed, or its process has ended
        (looked at every :data:`ALIVE_CHECK_S` while keys are held), every held key is released."""
        events = []
        while True:
            try:
                events.append(self._queues["keys"].get_nowait())
            except (queue.Empty, OSError, ValueError):  # OSError, ValueError: the queue is closed
                break
        now = time.monotonic()
        if self._held and (self._closing or now >= self._alive_checked + ALIVE_CHECK_S):
            self._alive_checked = now
            if self._closing or not self._process.is_alive():  # nobody can release them any more
                events.extend((key, False) for key in sorted(self._held))
        return fold_keys(events, self._held)

    def close(self, timeout: float = 10.0) -> dict[str, Any]:
        """Stop the view; returns its report: frames ``received`` and ``applied`` by the view process,
        frames ``sent`` to pages and ``skipped`` by a busy page, ``pages`` that connected, the last
        figures a ``page`` sent (``fps``: frames drawn in its last second, ``mean_fps``: per second while
        frames arrived, ``frames`` received, ``render_ms``: a draw's time in its script), and this side's
        ``published`` and ``dropped``. A view that does not stop within ``timeout`` s is killed (the
        report then has an ``"error"``)."""
        if self._closed is not None:
            return self._closed
        self._closing = True
        frames = self._queues["frames"]
        frames.close()  # every frame published is in the pipe before the view stops (and counts them)
        frames.join_thread()
        self._events["stop"].set()
        deadline = time.monotonic() + timeout
        report: dict[str, Any] | None = None
        while report is None:
            try:
                report = self._queues["report"].get(timeout=0.1)
            except queue.Empty:
                if not self._process.is_alive():  # it may have reported just before it ended
                    try:
                        report = self._queues["report"].get(timeout=0.5)
                    except queue.Empty:
                        code = self._process.exitcode
                        report = {"error": f"the web view ended without a report (exit code {code})"}
                elif time.monotonic() >= deadline:
                    self._process.kill()
                    report = {"error": f"the web view did not stop within {timeout:g} s; killed"}
        self._process.join(timeout=timeout)
        shutil.rmtree(self._files.root, ignore_errors=True)
        report.update(published=self.sent, dropped=self.dropped)
        self._closed = report
        return report

    def _repr_html_(self) -> str:
        """The page in an ``<iframe>``: a notebook cell shows the live view."""
        return (
            f'<iframe src="{self.url}" width="100%" height="560" style="border:0" '
            'title="pccbullet web view"></iframe>'
        )

    def __enter__(self) -> WebView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
