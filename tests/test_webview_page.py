"""The demo driven from a browser: ``pccbullet demo --view web`` on a free port, its page opened in headless
Chromium (Debian's ``chromium`` and ``chromium-driver`` through Selenium; ``.ci/run`` installs them), keys
pressed on the page, the palpation command changed, and a screenshot that shows the squid."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from browser import browser_missing, headless_chromium, wait_for

CLI = "import sys; from pccbullet.teleop.cli import main; sys.exit(main(sys.argv[1:]))"
START_S = 600.0  # s: a first run compiles the numba kernels in both processes; a loaded machine is slow
BEND = re.compile(r"command\s+bend\s+(-?\d+\.\d) deg")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(browser_missing() is not None, reason=f"no headless Chromium: {browser_missing()}"),
]


def _hud(driver) -> str:  # type: ignore[no-untyped-def]
    return driver.execute_script("return document.getElementById('hud').innerText") or ""


def _squid_pixels(png: bytes) -> tuple[int, float]:
    """Pixels of the limbs' shaded orange (r - g > 20 and r - b > 40: the sand, the sea, the head and the
    sky are not) and the standard deviation of the image's grey."""
    import imageio.v3 as iio

    rgb = iio.imread(io.BytesIO(png))[..., :3].astype(int)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return int(((r - g > 20) & (r - b > 40)).sum()), float(rgb.mean(axis=2).std())


def _rebinding_is_refused(port: int) -> None:
    """A socket of a page on another name that resolves here (DNS rebinding) is refused: 403."""
    import socket

    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        with pytest.raises(InvalidStatus, match="403"):
            connect(
                f"ws://evil.example:{port}/ws",
                sock=sock,
                origin=f"http://evil.example:{port}",  # type: ignore[arg-type]
                open_timeout=60,
            )


def test_the_demo_is_watched_and_driven_from_a_browser(tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    cmd = [sys.executable, "-c", CLI, "demo", "--view", "web", "--device", "keyboard", "--duration", "3600"]
    cmd += ["--out", str(tmp_path / "out"), "--no-gif", "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    url_found = threading.Event()

    def read_stderr() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "web view at " in line:
                url_found.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        assert url_found.wait(START_S), "".join(lines)[-2000:]
        url = next(m.group(1) for line in lines if (m := re.search(r"web view at (\S+)", line)))
        assert url.startswith("http://127.0.0.1:") and "token" not in url  # loopback: no token needed
        with headless_chromium((1280, 720)) as driver:
            driver.get(url)
            wait_for(
                driver,
                "window.pccbullet.scene && window.pccbullet.frames > 10 && window.pccbullet.hudLines > 0",
                START_S,
            )
            ActionChains(driver).key_down("2").pause(0.05).key_up("2").perform()  # select the palpation arm
            wait_for(
                driver, "document.getElementById('hud').innerText.includes('palpation segment 1/2')", 120
            )
            before = float(BEND.search(_hud(driver)).group(1))  # type: ignore[union-attr]
            ActionChains(driver).key_down("w").perform()  # bend it while the key is held
            deadline = time.monotonic() + 120
            while (
                (m := BEND.search(_hud(driver)))
                and float(m.group(1)) < before + 5.0
                and time.monotonic() < deadline
            ):
                time.sleep(0.1)
            ActionChains(driver).key_up("w").perform()
            after = float(BEND.search(_hud(driver)).group(1))  # type: ignore[union-attr]
            assert "palpation segment 1/2" in _hud(driver)
            assert after >= before + 5.0, (before, after)
            driver.save_screenshot(str(tmp_path / "web_view.png"))
            # the 3D panels alone (the HUD and camera overlays hidden): the squid's limbs are drawn
            driver.execute_script(
                "for (const id of ['hud', 'camera']) document.getElementById(id).style.visibility = 'hidden'"
            )
            panels = driver.find_element("id", "view").screenshot_as_png
            (tmp_path / "panels.png").write_bytes(panels)
            orange, spread = _squid_pixels(panels)
            assert orange > 2000 and spread > 20.0, (orange, spread)
            stats = driver.execute_script("return window.pccbullet")
            assert stats["frames"] > 10 and stats["drawn"] > 0
            # a page that goes away with "w" held: the demo's command stops (its keys were released)
            driver.execute_script("document.getElementById('hud').style.visibility = 'visible'")
            start = float(BEND.search(_hud(driver)).group(1))  # type: ignore[union-attr]
            ActionChains(driver).key_down("w").perform()
            deadline = time.monotonic() + 120
            while (
                (m := BEND.search(_hud(driver)))
                and float(m.group(1)) < start + 3.0
                and time.monotonic() < deadline
            ):
                time.sleep(0.1)
            driver.get("about:blank")
            driver.get(url)
            wait_for(driver, "window.pccbullet.scene && window.pccbullet.hudLines > 0", START_S)
            held = float(BEND.search(_hud(driver)).group(1))  # type: ignore[union-attr]
            frames = driver.execute_script("return window.pccbullet.frames")
            wait_for(driver, f"window.pccbullet.frames > {frames + 100}", 120)  # 2 s of the session
            assert float(BEND.search(_hud(driver)).group(1)) == held  # type: ignore[union-attr]
            assert held < 170.0, held  # far from the 180 deg limit it ran into when nobody let go
            _rebinding_is_refused(int(url.rsplit(":", 1)[1].strip("/")))
            ActionChains(driver).key_down("x").pause(0.05).key_up("x").perform()  # end the session
            stdout, _ = proc.communicate(timeout=START_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert proc.returncode == 0, "".join(lines)[-2000:]
    summary = json.loads(stdout)
    assert summary["status"] == "complete" and summary["mode"] == "web" and summary["device"] == "keyboard"
    web = summary["loop"]["web_view"]
    assert web["pages"] >= 1 and web["sent"] >= 10 and web["published"] == web["received"]
    assert summary["loop"]["viewer_frames_dropped"] == web["dropped"]
    assert np.isfinite(summary["loop"]["step_p99_ms"])
