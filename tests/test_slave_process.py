"""Real-time teleoperation with the slave in its own process (pccbullet.teleop.slave_process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from pccbullet.teleop.devices.scripted import ScriptedDevice
from pccbullet.teleop.mmt.session import MmtSession
from pccbullet.teleop.predict import segment_ends
from pccbullet.urdf_gen.spec_loader import load_robot


def test_slave_in_its_own_process_tracks_the_commands_and_reports() -> None:
    device = ScriptedDevice(
        waypoints=[(0.0, (0.475, 0.12, -0.41)), (1.0, (0.44, 0.15, -0.45))],
        presses=[(0.0, "select:palpation")],
    )
    with MmtSession(load_robot("ursula", sections=3), slave="process") as s:
        # until 8 reports came back and 3 s passed: a loaded machine only takes longer (no speed assumed)
        done = lambda: s.transport.updates >= 8 and s.world.time >= 3.0  # noqa: E731
        stats = s.run(device, 110.0, realtime=True, stop=done)
        metrics = s.metrics()
    slave = stats["slave"]
    assert slave["physics_steps"] >= 1400 and slave["sections"] == 3  # the robot ran on its own clock
    assert metrics["state_updates"] >= 8  # state packets came back over the emulated link
    tip_s = s.log["tip_s"]
    assert np.isfinite(tip_s[-1]).all() and tip_s[-1][2] < -0.15  # observed: the robot's limb sagged
    assert slave["real_time_factor"] < 1.05  # paced to the wall clock, never run ahead of it


def test_compiled_segment_ends_equal_the_model_kinematics() -> None:
    from pccbullet.sim.models.newton_euler.model import LimbModel

    m = LimbModel(load_robot("ursula", sections=10).limb("palpation"), 10)
    rng = np.random.default_rng(0)
    for k in range(100):
        q = rng.normal(0, 3, m.dof) * np.tile([0.02, 1, 1, 0.5], m.n) * (1e-3 if k % 3 == 0 else 1.0)
        out = np.empty((2, 3))
        segment_ends(q, m.l0, np.array([9, 19]), out)
        np.testing.assert_allclose(out, m.segment_tip_positions(q), atol=1e-14)


def test_udp_force_packets_are_non_zero_while_the_palpation_arm_presses_the_rock() -> None:
    """Issue 15: a device streaming poses over the UDP bridge presses the model's tip into the rock and
    gets the rendered force back (no fault from the stream being empty before its first packet)."""
    import threading
    import time

    from pccbullet.teleop.udp.bridge import UdpBridge
    from pccbullet.teleop.udp.client import UdpBridgeClient

    bridge = UdpBridge()
    stop = threading.Event()
    forces: list[float] = []

    def device() -> None:
        client = UdpBridgeClient(bridge.address)
        while not stop.is_set():
            client.send_pose((0.40, 0.18, -0.50))  # into the modelled rock, out of the arm's plane
            f = client.recv_force()
            if f is not None:
                forces.append(float(np.linalg.norm(f)))
            time.sleep(0.001)
        client.close()

    thread = threading.Thread(target=device, daemon=True)
    thread.start()
    time.sleep(0.2)  # the stream flows before the session starts; no fault latches meanwhile
    try:
        with MmtSession(load_robot("ursula", sections=3)) as s:
            s.mapping._select("select:palpation")
            s.run(bridge, 6.0)  # lockstep: the bridge is polled every tick
            depth = s.log["depth_m"]
            fault = s.haptics.fault
    finally:
        stop.set()
        thread.join()
        bridge.close()
    assert fault is None
    assert depth.max() > 1e-3  # the model's tip went into the modelled rock
    assert len(forces) > 100 and max(forces) > 0.05  # force packets came back, non-zero in contact


def test_the_predictors_compiled_step_and_fit_equal_the_models_own() -> None:
    """SagPredictor.update (the step kernel called with prepared arguments, compiled spring torques and
    fit) gives the state of integrators.step bit for bit and the bend vectors of pcc_from_points."""
    from pccbullet.sim.models.joint_targets import state_from_pcc
    from pccbullet.sim.models.newton_euler.integrators import step as model_step
    from pccbullet.teleop.predict import SagPredictor
    from pccbullet.urdf_gen.pcc import PccConfig
    from pccbullet.urdf_gen.pcc_fit import bend_vectors, pcc_from_points

    spec = load_robot("ursula", sections=10)
    p = SagPredictor(
        spec, {n.name: np.eye(4) for n in spec.limbs}, "seawater", (0, 0, -9.81), every_tick="palpation"
    )
    m = p.models["palpation"]
    rng = np.random.default_rng(3)
    for k in range(60):
        cmd = [
            PccConfig(rng.uniform(-2, 2), rng.uniform(-3, 3), g.length * rng.uniform(0.9, 1.1))
            for g in m.limb.segments
        ]
        q, qd = p.q["palpation"], p.qd["palpation"]
        np.testing.assert_allclose(
            p._torques("palpation", cmd), m.K * state_from_pcc(m, cmd), rtol=1e-15, atol=0
        )
        u = p.update("palpation", cmd, k, 1e-3)
        q2, _ = model_step(m, q, qd, 4e-3, m.K * state_from_pcc(m, cmd))
        np.testing.assert_array_equal(p.q["palpation"], q2)
        ends = np.empty((2, 3))
        segment_ends(p.q["palpation"], m.l0, p._ends["palpation"], ends)
        np.testing.assert_allclose(u, bend_vectors(pcc_from_points(ends)), atol=1e-13)


def test_bench_demo_prints_both_loops_with_the_probe_and_the_contact_figure(capsys) -> None:
    from pccbullet.teleop.cli import main

    assert main(["bench", "--demo", "--seconds", "1", "--sections", "3"]) == 0
    out = capsys.readouterr().out
    assert "master (1 kHz)" in out and "slave (process)" in out and "machine probe" in out
    assert "|F_operator - F_robot| max" in out and "haptic faults latched" in out


def _kill_at(s: MmtSession, signals: list[tuple[float, int]], sent: list[float] | None = None):  # type: ignore[no-untyped-def]
    """An ``on_visual`` that sends the robot's process each ``(t, signal)`` once the master's time
    reaches ``t`` (at the next visual frame: 20 ms later at most on time, more on a loaded machine);
    the master times it sent them at go into ``sent``."""
    pending = list(signals)

    def on_visual(frame: int, t: float) -> None:
        while pending and t >= pending[0][0]:
            os.kill(s.slave.pid, pending.pop(0)[1])  # type: ignore[union-attr]
            if sent is not None:
                sent.append(t)

    return on_visual


def test_a_killed_robot_is_lost_the_force_fades_and_the_session_says_so() -> None:
    """``kill -9`` of the robot's process in contact: the master declares it lost within a report interval,
    the link delay and the tolerance (master time), the force fades to 0 within the ramp, and the loop's
    ``slave`` entry says the process ended early with signal 9."""
    t_kill = 2.0
    device = ScriptedDevice(
        waypoints=[(0.0, (0.475, 0.12, -0.41)), (1.0, (0.40, 0.18, -0.50))],
        presses=[(0.0, "select:palpation")],
    )
    sent: list[float] = []
    with MmtSession(load_robot("ursula", sections=3), slave="process") as s:
        stats = s.run(device, 4.5, realtime=True, on_visual=_kill_at(s, [(t_kill, signal.SIGKILL)], sent))
        losses = s.watchdog.summary()["losses"]
        t, f = s.log["t"], np.linalg.norm(s.log["f_m"], axis=1)
        delay, ceiling = s.transport.report_delay(), s.watchdog.ceiling
        ramp = s.haptics.params.ramp_time
    assert stats["slave"] == {"ended_early": True, "exit_code": -signal.SIGKILL}
    # on a loaded machine the robot's process may also run late before the kill (a loss, then back):
    # the last loss is the kill's, for good; its margin was learned from the robot's reports (the floor
    # for a robot on time, at most the ceiling)
    assert losses[-1]["back_s"] is None  # type: ignore[index]
    detected, margin = losses[-1]["detected_s"], losses[-1]["timeout_s"]  # type: ignore[index]
    assert margin <= ceiling
    # from the master time the kill was sent (the visual frame after t_kill: late on a loaded machine);
    # failed under load when t_kill itself was the bound's start (detected 1 ms past it)
    assert t_kill <= sent[0] < detected <= sent[0] + margin + delay + 0.02  # + pipe reads every 5 ms, a tick
    assert (f[t >= detected + ramp] == 0.0).all()


def test_a_stopped_robot_is_lost_and_found_again() -> None:
    """``SIGSTOP`` of the robot's process for 1.5 s (master time) and ``SIGCONT``: lost, then heard again."""
    device = ScriptedDevice(waypoints=[(0.0, (0.475, 0.12, -0.41))], presses=[(0.0, "select:palpation")])
    with MmtSession(load_robot("ursula", sections=3), slave="process") as s:
        kills = [(1.0, signal.SIGSTOP), (2.5, signal.SIGCONT)]
        stats = s.run(device, 5.0, realtime=True, on_visual=_kill_at(s, kills))
        losses = s.watchdog.summary()["losses"]
        delay, ceiling = s.transport.report_delay(), s.watchdog.ceiling
    assert "physics_steps" in stats["slave"]  # it ran to the end and reported
    # the stop's loss is the one on at 1.0 s + the ceiling + the delay: detected within the margin learned
    # (at most the ceiling), and back only once the reports sent after SIGCONT (2.5 s) have crossed the
    # link (a loaded machine may add short losses of its own)
    at = 1.0 + ceiling + delay + 0.02
    (stop,) = [e for e in losses if e["detected_s"] <= at and (e["back_s"] is None or e["back_s"] > at)]
    assert stop["detected_s"] <= 1.0 + stop["timeout_s"] + delay + 0.02
    assert stop["back_s"] is not None and stop["back_s"] > 3.0


MASTER = """
import sys, time
from pccbullet.teleop.mmt.config import MmtConfig
from pccbullet.teleop.slave_process import SlaveProcess
from pccbullet.urdf_gen.spec_loader import load_robot
slave = SlaveProcess(load_robot("ursula", sections=3), MmtConfig())
if sys.argv[1] == "run":
    slave.start()
print(slave.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie has exited
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("phase", ["waiting", "run"])
def test_the_robot_ends_quietly_when_the_master_process_dies(tmp_path, phase: str) -> None:
    """``kill -9`` of the master: the robot's process notices it is orphaned and ends without a
    traceback, waiting for the start or running."""
    err = tmp_path / "stderr.txt"
    with err.open("w") as fh:
        master = subprocess.Popen(
            [sys.executable, "-c", MASTER, phase], stdout=subprocess.PIPE, stderr=fh, text=True
        )
        assert master.stdout is not None
        robot = int(master.stdout.readline())  # the robot's process is up (start-up may take long)
        time.sleep(0.3)
        master.kill()
        master.wait()
        deadline = time.monotonic() + 60.0  # generous: the machine may be loaded
        while not _gone(robot) and time.monotonic() < deadline:
            time.sleep(0.05)
    assert _gone(robot)
    assert "Traceback" not in err.read_text()
