"""``--engine ray`` against a real Ray cluster started here (127.0.0.1 only), compared with ``pool``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pccbullet.sim.experiments.engines import DONE
from pccbullet.sim.experiments.outputs import LOCK_NAME
from pccbullet.sim.experiments.sweep import run_sweep
from tests.test_sweep import write_sweep

ray = pytest.importorskip("ray")

# 3 runs that finish and one that fails (a 270 degree bend is out of the camera's range)
PARAMS = """
[[parameters]]
path = "inputs.bend.end"
values = [30, 60, 270]
[[parameters]]
path = "inputs.plane.value"
values = [0, 45]
"""


ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray keeps 127.0.0.1 (else it swaps in the host's IP)
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A one-node Ray cluster (head: GCS, raylet, 2 CPUs) bound to 127.0.0.1, started in its own
    temporary folder (also its processes' working directory); shut down (its processes killed by
    pid) and removed whatever the tests did."""
    from ray.cluster_utils import Cluster

    tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must stay < 108 chars
    saved, cwd = os.environ.get("RAY_TMPDIR"), os.getcwd()
    os.environ["RAY_TMPDIR"] = tmp  # Ray's address file goes there, not to the machine-wide /tmp/ray
    os.makedirs(os.path.join(tmp, "ray"))
    head = None
    try:
        os.chdir(tmp)  # a path left relative would land here, not beside the driver
        head = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 2,
                "node_ip_address": "127.0.0.1",
                "include_dashboard": False,
                "temp_dir": os.path.join(tmp, "ray"),
            },
        )
        os.chdir(cwd)
        yield head.address
    finally:
        os.chdir(cwd)
        if head is not None:
            head.shutdown()
        if saved is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = saved
        shutil.rmtree(tmp, ignore_errors=True)


def _files(folder: Path) -> dict[str, bytes]:
    """Every file's bytes, but the folder lock's (it holds its last sweep's process id)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != LOCK_NAME
    }


def _cli(args: list[str], cwd: Path, **env: str) -> tuple[int, dict]:
    """``pccbullet sweep ARGS`` in a process of its own (the Ray driver), from ``cwd``."""
    full = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {ENV: "0"} | env
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


def test_a_sweep_on_a_ray_cluster_equals_the_pool_byte_for_byte(cluster: str, tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, PARAMS)
    t0 = time.perf_counter()
    pool = run_sweep(sweep, tmp_path / "pool", engine="pool", workers=2, progress=False)
    t1 = time.perf_counter()
    # a relative --out: the files must land beside the driver
    code, out = _cli([str(sweep), "--out", "ray_out", "--engine", "ray", "--address", cluster], tmp_path)
    t2 = time.perf_counter()
    print(f"pool {t1 - t0:.1f} s, ray cluster {t2 - t1:.1f} s (driver process included) for 6 runs")  # noqa: T201
    assert code == 1 and out["completed"] == 4 and out["out"] == str(tmp_path / "ray_out")
    assert [f["run"] for f in out["failed"]] == ["run_0004", "run_0005"]
    guide = (ROOT / "docs" / "guide" / "experiments.md").read_text()
    assert [k for k in out if f"| `{k}` |" not in guide] == []  # every key of the summary documented
    assert "inputs.bend" in out["failed"][0]["error"]
    assert pool.completed == ("run_0000", "run_0001", "run_0002", "run_0003")
    # every file byte for byte: run.csv, run.npz, metadata.json, overrides.json, manifest.json, DONE,
    # error.txt and sweep.csv (metadata.json holds no timings; the engine is not recorded in it)
    a, b = _files(tmp_path / "pool"), _files(tmp_path / "ray_out")
    assert sorted(a) == sorted(b) and a == b
    assert len([k for k in a if k.endswith("run.npz")]) == 4
    rows = (tmp_path / "ray_out" / "sweep.csv").read_text().splitlines()
    assert rows[0].startswith("run_id,status,seed,inputs.bend.end,inputs.plane.value,camera_tip_x_m")
    assert rows[0].endswith(",error") and len(rows) == 7
    assert rows[5].startswith("run_0004,failed,7,270,0,") and "inputs.bend" in rows[5]

    # RAY_ADDRESS instead of --address; the run whose marker is gone is the only one redone
    (tmp_path / "ray_out" / "run_0002" / DONE).unlink()
    code, out = _cli([str(sweep), "--out", "ray_out", "--engine", "ray"], tmp_path, RAY_ADDRESS=cluster)
    assert code == 1 and out["completed"] == 1 and out["skipped"] == 3 and len(out["failed"]) == 2
    assert _files(tmp_path / "ray_out") == a

    # neither: a private local Ray, although this cluster's address file is where Ray looks first
    # (before: ValueError, num_cpus must not be given when connecting to an existing cluster)
    (tmp_path / "ray_out" / "run_0003" / DONE).unlink()
    code, out = _cli([str(sweep), "--out", "ray_out", "--engine", "ray", "--workers", "1"], tmp_path)
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_ray_worker_is_a_failed_run_not_a_silent_retry(cluster: str, tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, '[[parameters]]\npath = "duration_s"\nvalues = [20.0]\n')
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {ENV: "0"}
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
