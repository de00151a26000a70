"""The robot's camera frames cross the link (pccbullet.teleop.mmt.video), sized by its bandwidth."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pccbullet.core.errors import ConfigurationError
from pccbullet.teleop.channel import Bernoulli, acoustic_link, link_named, optical_link
from pccbullet.teleop.demo.script import scripted_operator
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.mmt.video import decode_frame, encode_frame, video_plan
from pccbullet.urdf_gen.spec_loader import load_robot


def test_the_links_bandwidth_sets_the_frames() -> None:
    acoustic = video_plan(acoustic_link(), telemetry_bits_per_s=3800.0)
    assert acoustic.size == (80, 60) and acoustic.period == pytest.approx(8 * 1200 / 5200)
    optical = video_plan(optical_link(), telemetry_bits_per_s=3800.0)
    assert optical.size == (320, 240) and optical.period == 0.2
    starved = video_plan(acoustic_link(bandwidth=4000.0), telemetry_bits_per_s=3800.0)
    assert starved.bandwidth == 400.0 and starved.size == (80, 60)  # a tenth of the link at least
    assert link_named("optical").name == "optical"
    with pytest.raises(ConfigurationError, match=r"link = 'radio' is invalid; allowed: acoustic, optical"):
        link_named("radio")


def test_a_frame_fits_its_budget_and_round_trips() -> None:
    rng = np.random.default_rng(1)
    image = rng.integers(0, 255, (60, 80, 3)).astype(np.uint8)  # noise: the hardest to compress
    packet = encode_frame(image, 1.25, 7, budget=1200)
    t, number, back = decode_frame(packet)  # type: ignore[misc]
    assert (t, number, back.shape) == (1.25, 7, (60, 80, 3))
    smooth = np.full((60, 80, 3), 120, np.uint8)
    assert len(encode_frame(smooth, 0.0, 0, budget=1200)) <= 1200 + 12
    assert decode_frame(packet[:20]) is None and decode_frame(b"x" * 40) is None


@pytest.mark.parametrize("link", ["acoustic", "optical"])
def test_camera_frames_arrive_late_as_the_link_says(link: str) -> None:
    spec = link_named(link)
    with MmtSession(load_robot("ursula", sections=3), MmtConfig(downlink=spec, uplink=spec)) as s:
        s.run(scripted_operator(), 4.0)
        video = s.transport.video
        latency = video.arrived - video.captured
        w, h = video.plan.size
        assert video.received >= 1 and video.frame is not None and video.frame.shape == (h, w, 3)
        assert video.frame.std() > 5  # the scene, not a blank frame
        # at least the propagation and the frame's own serialization on the video's share
        assert latency >= spec.propagation_delay + 8 * 100 / video.plan.bandwidth
        assert 0.0 <= video.age(s.world.time) <= latency + video.plan.period + spec.jitter * 2 + 1e-9


def test_lost_frames_never_arrive() -> None:
    lossy = acoustic_link(loss=Bernoulli(1.0))
    with MmtSession(load_robot("ursula", sections=3), MmtConfig(uplink=lossy)) as s:
        s.run(scripted_operator(), 3.0)
        assert s.transport.video.received == 0 and s.transport.video.channel.lost >= 1


def test_the_demo_takes_the_link_and_writes_the_last_frame_received(tmp_path, monkeypatch) -> None:
    from pccbullet.teleop.cli import main

    monkeypatch.delenv("DISPLAY", raising=False)
    out = tmp_path / "out"
    args = ["demo", "--headless", "--out", str(out), "--link", "optical", "--duration", "1.5", "--no-gif"]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["link"] == "optical" and summary["metrics"]["mean_down_delay_s"] < 0.01
    assert str(out / "camera_tip.png") in summary["files"] and not (out / "demo.gif").exists()
    # the demo's default drive: the grasper on its tendons, named as the command line names it
    assert summary["tendons"]["drive"] == "mixed" and summary["tendons"]["limbs"] == ["grasper"]


def test_the_demo_guide_gives_the_camera_cadence_the_demo_has() -> None:
    """docs/guide/demo.md's figures for the acoustic link are the demo's: the report size, the video's
    share, the frame size and the period (the HUD's "a frame every 2.2 s")."""
    from pathlib import Path

    from pccbullet.teleop.demo.hud import camera_line
    from pccbullet.teleop.demo.scene import ROBOT, demo_config

    guide = Path(__file__).resolve().parents[1] / "docs" / "guide" / "demo.md"
    text = " ".join(guide.read_text(encoding="utf-8").split())
    with MmtSession(load_robot(ROBOT), demo_config("acoustic", "mixed", None)) as session:
        transport, hud = session.transport, camera_line(session)
    plan = transport.video.plan
    reports = 8 * transport.report_size * session.cfg.state_rate
    assert f"the state reports take {transport.report_size} bytes five times a second" in text
    assert f"{reports:.0f} bit/s) and leave the video {plan.bandwidth:.0f} bit/s" in text
    w, h = plan.size
    assert f"{w}×{h} px (a {plan.budget}-byte budget;" in text
    assert f"every 8 × {plan.budget} / {plan.bandwidth:.0f} = {plan.period:.1f} s" in text
    assert f"a frame every {plan.period:.2g} s" in hud and f"{plan.period:.2g}" == f"{plan.period:.1f}"
