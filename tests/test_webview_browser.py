"""The web view's access rules in a real browser (headless Chromium, tests/browser.py): a page of its own
drives it, and the key it holds is released when the page goes away or freezes; a name that resolves to
this machine (DNS rebinding, made with Chromium's host resolver rules) gets nothing without the token, and
the page, its scripts (by the token's cookie) and the socket with it."""

from __future__ import annotations

from typing import Any

import pytest
from browser import browser_missing, headless_chromium, wait_for
from waits import until

from pccbullet.sim.views.scene import world_bodies
from pccbullet.sim.views.web import WebGroup, WebPage, WebView
from pccbullet.sim.views.web.inbox import SharedClock
from pccbullet.sim.views.web.view import KEY_IS_DOWN, KEY_WAS_RELEASED, KEY_WAS_TRIGGERED
from pccbullet.sim.world import World

TOKEN = "abcdef0123456789"
WAIT_S = 120.0  # s, the longest event wait (a busy machine draws in software slowly)
REBIND = "--host-resolver-rules=MAP evil.example 127.0.0.1"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(browser_missing() is not None, reason=f"no headless Chromium: {browser_missing()}"),
]


def _view(**options: Any) -> WebView:
    """A view of a world with URSULA (its files are copied for the view: the world may close)."""
    with World(mode="kinematic") as world:
        world.load_robot("ursula", sections=2)
        page = WebPage((WebGroup("world", "world", world_bodies(world)),), keys=("w", "2"))
        return WebView(page, **options)


def _flags(view: WebView, seen: dict[int, int]) -> dict[int, int]:
    for code, flags in view.keyboard_events().items():
        seen[code] = seen.get(code, 0) | flags
    return seen


def _press_w(driver: Any, view: WebView) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    wait_for(driver, "window.pccbullet.scene", WAIT_S)
    ActionChains(driver).key_down("w").perform()
    seen: dict[int, int] = {}
    assert until(lambda: _flags(view, seen).get(ord("w"), 0) & KEY_WAS_TRIGGERED, WAIT_S)
    assert view.keyboard_events() == {ord("w"): KEY_IS_DOWN}  # held while the page holds it


def test_a_page_drives_and_its_held_key_is_released_when_it_goes_away() -> None:
    """The page's socket closes: released at once (the silence clock never moves here, so no stall
    releases it)."""
    with _view(clock=SharedClock()) as view, headless_chromium((640, 400)) as driver:
        assert view.wait_ready(WAIT_S)
        driver.get(view.url)
        _press_w(driver, view)
        driver.get("about:blank")  # the page goes away with the key down: no key-up is ever sent
        seen: dict[int, int] = {}
        assert until(lambda: _flags(view, seen).get(ord("w"), 0) & KEY_WAS_RELEASED, WAIT_S)
        assert view.keyboard_events() == {}
        report = view.close()
    assert report["released"] == 1 and report["rejected"] == 0


def test_a_page_that_freezes_has_its_held_key_released() -> None:
    """The page freezes (its timers and scripts stop, its socket stays open): its heartbeat stops, and
    after the stall its key is released; thawed, it is told."""
    with _view(stall=2.0) as view, headless_chromium((640, 400)) as driver:
        assert view.wait_ready(WAIT_S)
        driver.get(view.url)
        _press_w(driver, view)
        driver.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})
        seen: dict[int, int] = {}
        assert until(lambda: _flags(view, seen).get(ord("w"), 0) & KEY_WAS_RELEASED, WAIT_S)
        driver.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "active"})
        wait_for(driver, "window.pccbullet.released === 1", WAIT_S)  # it was told
        report = view.close()
    assert report["released"] == 1 and report["rejected"] == 0


def test_a_rebinding_name_gets_nothing_without_the_token() -> None:
    with _view() as view, headless_chromium((640, 400), flags=(REBIND,)) as driver:
        assert view.wait_ready(WAIT_S)
        driver.get(f"http://evil.example:{view.port}/")
        text = driver.execute_script("return document.body.innerText")
        assert text.startswith(
            f"pccbullet web view: Host 'evil.example:{view.port}' is not this view's address"
        )
        # a page there cannot open the socket either (it is that origin's own script)
        driver.execute_script(
            "window.outcome = null; const s = new WebSocket(`ws://${location.host}/ws`);"
            "s.onopen = () => { window.outcome = 'open'; }; s.onerror = () => { window.outcome = 'refused'; };"
        )
        assert wait_for(driver, "window.outcome", WAIT_S) == "refused"
        report = view.close()
    assert report["pages"] == 0


def test_with_the_token_any_name_gets_the_page_its_scripts_and_the_socket() -> None:
    with _view(token=TOKEN) as view, headless_chromium((640, 400), flags=(REBIND,)) as driver:
        assert view.wait_ready(WAIT_S)
        driver.get(f"http://evil.example:{view.port}/?token={TOKEN}")  # the name the operator typed
        wait_for(driver, "window.pccbullet && window.pccbullet.scene", WAIT_S)  # scripts by the cookie
        report = view.close()
    assert report["pages"] == 1
