"""``--engine ray`` against a real Ray cluster started here (127.0.0.1 only), compared with ``pool``."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pccbullet.sim.experiments.engines import DONE
from pccbullet.sim.experiments.outputs import LOCK_NAME
from pccbullet.sim.experiments.ray_connect import LOOPBACK_ENV, START_COMMAND
from pccbullet.sim.experiments.sweep import run_sweep
from tests.test_sweep import write_sweep

ray = pytest.importorskip("ray")

# 4 runs that finish and two that fail when they run: a plane of 360 deg is the camera's limit, which the
# checks before dispatch accept, and the input's seeded noise (1 deg) takes those runs past it
PARAMS = """
[[parameters]]
path = "inputs.bend.end"
values = [30, 60]
[[parameters]]
path = "inputs.plane.value"
values = [0, 45, 360]
"""


ROOT = Path(__file__).resolve().parent.parent


def _descendants(root: int) -> set[int]:
    """``root`` and every process below it (from /proc)."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, grew = {root}, True
    while grew:
        more = {p for p, pp in parent.items() if pp in found} - found
        found |= more
        grew = bool(more)
    return found


def _listening(pids: set[int]) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state held by ``pids`` (/proc/net/tcp and tcp6)."""
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    link = os.readlink(fd)
                    if link.startswith("socket:["):
                        inodes.add(link[8:-1])
    out = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] != "0A" or cols[9] not in inodes:  # 0A: LISTEN
                continue
            hexaddr, hexport = cols[1].split(":")
            raw = bytes.fromhex(hexaddr)
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # per 32-bit word, host order
            out.add((socket.inet_ntop(family, raw), int(hexport, 16)))
    return out


def _loopback(address: str) -> bool:
    return ipaddress.ip_address(address.removeprefix("::ffff:")).is_loopback


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, set[tuple[str, int]], dict[str, str]]]:
    """The documented command (:data:`START_COMMAND`, with a free port, 2 CPUs, its own temporary folder
    and ``--block``) with token authentication (a token of its own, not the machine's ``~/.ray``): a
    one-node Ray cluster; yields its address, its listening sockets and the environment a driver needs
    (the token). Stopped (its process tree killed by pid) and removed whatever the tests did."""
    tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must stay < 108 chars
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assignment, _, command = START_COMMAND.partition(" ")
    name, _, value = assignment.partition("=")
    args = shlex.split(command.replace("--port=6379", f"--port={port}"))
    args += ["--num-cpus=2", f"--temp-dir={tmp}/ray", "--disable-usage-stats", "--block"]
    token = Path(tmp) / "token"
    token.write_text(secrets.token_hex(32))
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | auth
    auth["RAY_TMPDIR"] = tmp  # Ray's address file goes there, not to the machine-wide /tmp/ray
    env |= {name: value}
    log = open(os.path.join(tmp, "start.log"), "w+")  # closed below
    bindir = Path(sys.executable).parent
    head = subprocess.Popen([str(bindir / args[0]), *args[1:]], cwd=tmp, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 600  # generous: a loaded machine starts Ray slowly
        while "Ray runtime started" not in Path(log.name).read_text() and time.monotonic() < deadline:
            assert head.poll() is None, Path(log.name).read_text()[-3000:]
            time.sleep(0.2)
        sockets: set[tuple[str, int]] = set()
        while time.monotonic() < deadline:  # the raylet's and the agents' ports follow the GCS's
            sockets = _listening(_descendants(head.pid))
            if len(sockets) >= 4 and ("127.0.0.1", port) in {
                (a.removeprefix("::ffff:"), p) for a, p in sockets
            }:
                break
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", sockets, auth
    finally:
        tree = _descendants(head.pid)
        head.terminate()  # ray start --block stops what it started
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(timeout=60)
        for pid in tree:  # whatever is left of it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.slow
def test_the_documented_start_command_listens_on_127_0_0_1_only(cluster) -> None:
    """Before: ``ray start --head --node-ip-address=127.0.0.1`` (the README's command then) bound the GCS
    and the raylet to every interface (``*:6379``) and named the host's network address as the node's."""
    address, sockets, _ = cluster
    assert len(sockets) >= 4  # GCS, raylet (2), agents
    assert [s for s in sockets if not _loopback(s[0])] == []
    assert int(address.rsplit(":", 1)[1]) in {p for _, p in sockets}


def _files(folder: Path) -> dict[str, bytes]:
    """Every file's bytes, but the folder lock's (it holds its last sweep's process id)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != LOCK_NAME
    }


def _cli(args: list[str], cwd: Path, **env: str) -> tuple[int, dict]:
    """``pccbullet sweep ARGS`` in a process of its own (the Ray driver), from ``cwd``."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | env
    proc = subprocess.run(
        [sys.executable, "-m", "pccbullet.teleop.cli", "sweep", *args, "--quiet"],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=900,  # generous: a loaded machine starts Ray slowly
    )
    assert proc.stdout, proc.stderr[-3000:]
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.slow
def test_a_sweep_on_a_ray_cluster_equals_the_pool_byte_for_byte(cluster, tmp_path: Path) -> None:
    """The drivers' environment has no ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``: before, Ray dialled the host's
    network address instead of 127.0.0.1 and the sweep hung (rc 124 after 120 s)."""
    cluster, _, auth = cluster
    sweep = write_sweep(tmp_path, PARAMS)
    t0 = time.perf_counter()
    pool = run_sweep(sweep, tmp_path / "pool", engine="pool", workers=2, progress=False)
    t1 = time.perf_counter()
    # a relative --out: the files must land beside the driver
    code, out = _cli(
        [str(sweep), "--out", "ray_out", "--engine", "ray", "--address", cluster], tmp_path, **auth
    )
    t2 = time.perf_counter()
    print(f"pool {t1 - t0:.1f} s, ray cluster {t2 - t1:.1f} s (driver process included) for 6 runs")  # noqa: T201
    assert code == 1 and out["completed"] == 4 and out["out"] == str(tmp_path / "ray_out")
    assert [f["run"] for f in out["failed"]] == ["run_0002", "run_0005"]
    guide = (ROOT / "docs" / "guide" / "experiments.md").read_text()
    assert [k for k in out if f"| `{k}` |" not in guide] == []  # every key of the summary documented
    assert "field 'inputs.plane'" in out["failed"][0]["error"]
    assert pool.completed == ("run_0000", "run_0001", "run_0003", "run_0004")
    # every file byte for byte: run.csv, run.npz, metadata.json, overrides.json, manifest.json, DONE,
    # error.txt and sweep.csv (metadata.json holds no timings; the engine is not recorded in it)
    a, b = _files(tmp_path / "pool"), _files(tmp_path / "ray_out")
    assert sorted(a) == sorted(b) and a == b
    assert len([k for k in a if k.endswith("run.npz")]) == 4
    rows = (tmp_path / "ray_out" / "sweep.csv").read_text().splitlines()
    assert rows[0].startswith("run_id,status,seed,inputs.bend.end,inputs.plane.value,camera_tip_x_m")
    assert rows[0].endswith(",error") and len(rows) == 7
    assert rows[3].startswith("run_0002,failed,5,30,360,") and "inputs.plane" in rows[3]

    # RAY_ADDRESS instead of --address; the run whose marker is gone is the only one redone
    (tmp_path / "ray_out" / "run_0001" / DONE).unlink()
    code, out = _cli(
        [str(sweep), "--out", "ray_out", "--engine", "ray"], tmp_path, RAY_ADDRESS=cluster, **auth
    )
    assert code == 1 and out["completed"] == 1 and out["skipped"] == 3 and len(out["failed"]) == 2
    assert _files(tmp_path / "ray_out") == a

    # neither: a private local Ray, although this cluster's address file is where Ray looks first
    # (before: ValueError, num_cpus must not be given when connecting to an existing cluster)
    (tmp_path / "ray_out" / "run_0003" / DONE).unlink()
    code, out = _cli([str(sweep), "--out", "ray_out", "--engine", "ray", "--workers", "1"], tmp_path, **auth)
    assert code == 1 and out["completed"] == 1 and out["skipped"] == 3
    assert _files(tmp_path / "ray_out") == a


def _task_workers() -> list[int]:
    """Ray worker processes running a sweep run now (their title is ``ray::execute``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmd.startswith(b"ray::execute"):
                pids.append(int(entry.name))
    return pids


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_ray_worker_is_a_failed_run_not_a_silent_retry(cluster, tmp_path: Path) -> None:
    cluster, _, auth = cluster
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "duration_s"\nvalues = [20.0]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | auth
    args = [str(sweep), "--out", "o", "--engine", "ray", "--address", cluster, "--quiet"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pccbullet.teleop.cli", "sweep", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 600  # generous: a loaded machine starts workers slowly
        while not (workers := _task_workers()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(workers) == 1
        os.kill(workers[0], signal.SIGKILL)  # a worker of the cluster this module started
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert stdout.startswith("{"), (stdout[-2000:], stderr[-3000:])
    out = json.loads(stdout)
    assert proc.returncode == 1 and out["completed"] == 0 and out["failed"][0]["run"] == "run_0000"
    assert "WorkerCrashedError" in out["failed"][0]["error"] or "ActorDiedError" in out["failed"][0]["error"]
    rows = (tmp_path / "o" / "sweep.csv").read_text().splitlines()
    assert rows[1].startswith("run_0000,failed,3,20.0,") and "Error" in rows[1]
    assert not (tmp_path / "o" / "run_0000" / DONE).exists()


@pytest.mark.slow
def test_a_driver_without_the_clusters_token_fails_with_one_line(cluster, tmp_path: Path) -> None:
    cluster, _, auth = cluster
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.bend.end"\nvalues = [30]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env |= {"HOME": str(tmp_path), "RAY_TMPDIR": auth["RAY_TMPDIR"]}  # no token of the machine's either
    proc = subprocess.run(
        [sys.executable, "-m", "pccbullet.teleop.cli", "sweep", str(sweep), "--out", "o", "--engine", "ray"]
        + ["--address", cluster, "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("pccbullet")]
    assert proc.returncode == 2 and proc.stdout == ""
    assert lines == [
        f"pccbullet: error: Ray address '{cluster}': the cluster refused this driver's authentication token; "
        "allowed: its token, with RAY_AUTH_MODE=token (a token of ~/.ray, as ray start writes) or RAY_AUTH_TOKEN "
        "or RAY_AUTH_TOKEN_PATH set for the sweep"
    ]


@pytest.mark.slow
def test_a_port_that_answers_but_is_no_ray_cluster_fails_in_bounded_time(tmp_path: Path) -> None:
    """A listener that accepts and never speaks: Ray itself retries for many minutes (before: rc 124 after
    120 s); the probe is killed after --connect-timeout and the sweep ends with one line, exit 2."""
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "inputs.bend.end"\nvalues = [30]\n')
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", LOOPBACK_ENV)}
        args = ["--out", "o", "--engine", "ray", "--address", address, "--connect-timeout", "15", "--quiet"]
        proc = subprocess.run(
            [sys.executable, "-m", "pccbullet.teleop.cli", "sweep", str(sweep), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,  # the bound under test is 15 s plus start-up; this only stops a hang
        )
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("pccbullet")]
    assert proc.returncode == 2 and proc.stdout == ""
    assert lines == [
        f"pccbullet: error: Ray address '{address}': no Ray cluster answered within 15 s; allowed: HOST:PORT "
        "of a running Ray cluster's head (its GCS port) that this machine reaches, or a longer "
        "--connect-timeout"
    ]
    assert not (tmp_path / "o" / "run_0000").exists()  # nothing dispatched


def test_ray_imported_without_the_loopback_setting_is_refused_for_127_0_0_1() -> None:
    """This test process imported Ray without ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, so Ray would dial the
    host's network address for 127.0.0.1: refused in one line instead of a hang."""
    from pccbullet.core.errors import ConfigurationError
    from pccbullet.sim.experiments.ray_connect import import_ray

    resolved = ray.util.get_node_ip_address()
    if _loopback(resolved):
        pytest.skip(f"Ray resolves 127.0.0.1 to {resolved} here (no network address, or the variable is set)")
    with pytest.raises(
        ConfigurationError,
        match=rf"Ray address '127\.0\.0\.1:6379': Ray, imported in this process without "
        rf"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, would dial {re.escape(resolved)}:6379 instead",
    ):
        import_ray("127.0.0.1:6379")
    assert import_ray("10.1.2.3:6379") is ray  # a network address is what this Ray is set up for


def test_ray_set_up_for_loopback_refuses_a_network_address() -> None:
    """In a fresh process: a loopback import, then a network address (no traffic: refused before connecting)."""
    code = (
        "from pccbullet.sim.experiments.ray_connect import import_ray\n"
        "import_ray('127.0.0.1:6379')\n"
        "try:\n    import_ray('10.1.2.3:6379')\nexcept Exception as exc:\n    print(exc)\n"
        "import os; print(os.environ.get('RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", LOOPBACK_ENV)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600, check=True
    ).stdout.splitlines()
    assert out[-2].startswith(
        "Ray address '10.1.2.3:6379': Ray in this process was set up for a cluster on 127.0.0.1"
    )
    assert out[-1] == "None"  # the variable was set for Ray's import only


def test_check_nodes_refuses_a_loopback_name_for_a_cluster_on_the_network() -> None:
    from pccbullet.core.errors import ConfigurationError
    from pccbullet.sim.experiments.ray_connect import check_nodes, is_loopback, split_address

    check_nodes("127.0.0.1:6379", ["127.0.0.1"])
    check_nodes("10.0.0.5:6379", ["10.0.0.5", "10.0.0.6"])  # a network address: a network cluster is right
    with pytest.raises(
        ConfigurationError,
        match=r"Ray address 'localhost:6390': the cluster is not bound to 127\.0\.0\.1, its node listens on "
        r"192\.0\.2\.7 \(started without RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0\); allowed: a cluster started "
        r"with `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --head --node-ip-address=127\.0\.0\.1 "
        r"--port=6379 --include-dashboard=false`, or --address 192\.0\.2\.7:6390 for a cluster on the network$",
    ):
        check_nodes("localhost:6390", ["127.0.0.1", "192.0.2.7"])
    assert split_address("[::1]:6379") == ("::1", 6379) and split_address("auto") is None
    assert [is_loopback(h) for h in ("127.0.0.2", "::1", "LOCALHOST", "192.0.2.7", "head")] == [
        True,
        True,
        True,
        False,
        False,
    ]
