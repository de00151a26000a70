"""A headless Chromium on a web view's page, for the tests (``import browser``: a module beside them) and
the web view's bench (``examples/44_web_view_bench.py``), through Selenium and the system browser.

Uses Debian's ``chromium`` and ``chromium-driver`` (``apt-get install chromium chromium-driver``) through
Selenium (``pip install selenium``), with the driver's path given so that Selenium's manager never tries
to download a browser or a driver. Each browser gets a new empty profile folder, removed on close.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

from pccbullet.core.errors import ConfigurationError

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--enable-unsafe-swiftshader",  # WebGL in software (no GPU): our own page only
)


def browser_missing() -> str | None:
    """Why no headless Chromium can be started here (``None``: it can)."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing: apt-get install -y {package}"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install selenium"
    return None


@contextlib.contextmanager
def headless_chromium(
    size: tuple[int, int] = (1280, 720), nice: int = 0, flags: Sequence[str] = ()
) -> Iterator[Any]:
    """A Selenium ``WebDriver`` of a headless Chromium with a window of ``size`` (px), its processes
    ``nice`` steps below normal priority (0..19), with Chromium's command-line ``flags`` added (e.g.
    ``--host-resolver-rules=MAP evil.example 127.0.0.1``: a name that resolves to this machine, as DNS
    rebinding makes it); quits on exit."""
    missing = browser_missing()
    if missing is not None:
        raise ConfigurationError(f"headless Chromium is unavailable: {missing}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="pccbullet_chromium_")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, *flags, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}"):
        options.add_argument(flag)
    saved = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"  # Selenium's manager must not look anything up online
    try:
        lower = {"preexec_fn": lambda: os.nice(nice)} if nice else {}  # the driver's children inherit it
        service = Service(executable_path=CHROMEDRIVER, popen_kw=lower)
        driver = webdriver.Chrome(service=service, options=options)
    finally:
        if saved is None:
            os.environ.pop("SE_OFFLINE", None)
        else:
            os.environ["SE_OFFLINE"] = saved
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver: Any, script: str, timeout: float = 60.0) -> Any:
    """Poll ``return <script>`` in the page every 50 ms until it is truthy; its value (``TimeoutError``
    after ``timeout`` s)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = driver.execute_script(f"return {script}")
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"the page did not satisfy {script!r} within {timeout:g} s")
        time.sleep(0.05)
