"""Connecting a sweep to a Ray cluster: bounded, and a loopback cluster kept on 127.0.0.1.

Ray replaces a loopback host (``127.0.0.1``, ``localhost``, ``::1``) in an address by the host's network
address, unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` was set when Ray was imported; so a driver that
names a cluster bound to 127.0.0.1 would dial the network address and wait for minutes, and ``ray start
--head --node-ip-address=127.0.0.1`` without that variable binds the cluster's ports to every interface.
:func:`import_ray` imports Ray with the variable set for a loopback address and refuses, in one line, a Ray
already imported that rewrites the address (or one set up for loopback asked for a network address).
:func:`probe_cluster` connects once in a child process, killed after ``timeout`` seconds, and returns the
addresses of the cluster's live nodes; :func:`check_nodes` refuses a cluster named by a loopback address
whose nodes listen on a network address (started without the variable). Only then does the sweep's own
``ray.init`` run, so a cluster that never answers costs ``timeout`` seconds and one line, not a hang.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys
from types import ModuleType

from pccbullet.core.errors import ConfigurationError

LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray keeps 127.0.0.1 (read when Ray is imported)
CONNECT_TIMEOUT_S = 60.0  # s, default bound of the probe's connection (a loaded machine imports Ray slowly)
START_COMMAND = (
    f"{LOOPBACK_ENV}=0 ray start --head --node-ip-address=127.0.0.1 --port=6379 --include-dashboard=false"
)
RAY_HINT = (
    "--engine ray needs Ray, an optional extra: pip install 'pccbullet[ray]' (or pip install 'ray>=2.9')"
)
_MARK = "pccbullet-probe:"
_PROBE = f"""
import json, sys
import ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
nodes = sorted({{n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}})
print({_MARK!r} + json.dumps(nodes), flush=True)
ray.shutdown()
"""


def split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` address (``[::1]:P`` too), ``None`` for other forms."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address or not host:
        return None
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or an address in 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_reachable(address: str) -> None:
    """Fail fast with one line where nothing answers at a ``HOST:PORT`` Ray address (Ray itself retries for
    minutes); other forms (``auto``, ``ray://...``) are left to Ray."""
    parts = split_address(address)
    if parts is None:
        return
    try:
        socket.create_connection(parts, timeout=5).close()
    except (OSError, ValueError) as exc:
        raise ConfigurationError(
            f"Ray address {address[:80]!r} does not answer ({exc}); allowed: HOST:PORT of a running "
            "Ray cluster's head (its GCS port, 6379 by default), via --address or RAY_ADDRESS"
        ) from exc


def import_ray(address: str | None) -> ModuleType:
    """Import Ray for a sweep on ``address`` (``None``: a private local Ray).

    A loopback address, or none, imports Ray with ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (unless the
    variable is set already), so that a private local Ray binds 127.0.0.1 too; the variable is removed again
    afterwards (Ray read it on import). Raises
    :class:`ConfigurationError` if Ray, imported earlier in this process, would rewrite a loopback address
    to a network one, or was set up for loopback and is asked for a network address."""
    parts = None if address is None else split_address(address)
    loopback = parts is not None and is_loopback(parts[0])
    # a private local Ray (no address) stays on 127.0.0.1 too
    set_env = (address is None or loopback) and LOOPBACK_ENV not in os.environ and "ray" not in sys.modules
    if set_env:
        os.environ[LOOPBACK_ENV] = "0"
    try:
        import ray
    except ImportError as exc:
        raise ConfigurationError(RAY_HINT) from exc
    finally:
        if set_env:
            del os.environ[LOOPBACK_ENV]
    if parts is None or ray.is_initialized():
        return ray
    resolved = ray.util.get_node_ip_address()  # what Ray puts in place of a loopback host
    if loopback and not is_loopback(resolved):
        raise ConfigurationError(
            f"Ray address {address!r}: Ray, imported in this process without {LOOPBACK_ENV}=0, would dial "
            f"{resolved}:{parts[1]} instead; allowed: set {LOOPBACK_ENV}=0 before Ray is imported "
            "(pccbullet sweep does), or the cluster's network address"
        )
    if not loopback and is_loopback(resolved):
        raise ConfigurationError(
            f"Ray address {address!r}: Ray in this process was set up for a cluster on 127.0.0.1 "
            f"({LOOPBACK_ENV}=0 when it was imported), so it cannot join a cluster on the network; "
            "allowed: a loopback address here, or a new process for this cluster"
        )
    return ray


def probe_cluster(address: str, timeout: float = CONNECT_TIMEOUT_S) -> list[str]:
    """Connect to the Ray cluster at ``address`` from a child process and return its live nodes' addresses.

    The child is killed after ``timeout`` seconds; a cluster that does not answer in time, or a failed
    connection, raises :class:`ConfigurationError` in one line."""
    env = dict(os.environ)
    parts = split_address(address)
    if parts is not None and is_loopback(parts[0]):
        env.setdefault(LOOPBACK_ENV, "0")
    env.pop("RAY_ADDRESS", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, address],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise ConfigurationError(
            f"Ray address {address[:80]!r}: no Ray cluster answered within {timeout:g} s; allowed: "
            "HOST:PORT of a running Ray cluster's head (its GCS port) that this machine reaches, or a "
            "longer --connect-timeout"
        ) from exc
    for line in proc.stdout.splitlines():
        if line.startswith(_MARK):
            return [str(n) for n in json.loads(line[len(_MARK) :])]
    if "InvalidAuthToken" in proc.stderr:
        raise ConfigurationError(
            f"Ray address {address[:80]!r}: the cluster refused this driver's authentication token; allowed: "
            "its token, with RAY_AUTH_MODE=token (a token of ~/.ray, as ray start writes) or RAY_AUTH_TOKEN "
            "or RAY_AUTH_TOKEN_PATH set for the sweep"
        )
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    last = lines[-1][:300] if lines else f"exit status {proc.returncode}"
    raise ConfigurationError(
        f"Ray address {address[:80]!r}: connecting failed ({last}); allowed: HOST:PORT of a running Ray "
        "cluster's head with this machine's Ray version"
    )


def check_nodes(address: str, nodes: list[str]) -> None:
    """Refuse a cluster named by a loopback address whose nodes listen on a network address."""
    parts = split_address(address)
    if parts is None or not is_loopback(parts[0]):
        return
    exposed = [n for n in nodes if not is_loopback(n)]
    if exposed:
        raise ConfigurationError(
            f"Ray address {address!r}: the cluster is not bound to 127.0.0.1, its node listens on "
            f"{', '.join(exposed[:3])} (started without {LOOPBACK_ENV}=0); allowed: a cluster started "
            f"with `{START_COMMAND}`, or --address {exposed[0]}:{parts[1]} for a cluster on the network"
        )


def connect(address: str | None, workers: int, timeout: float = CONNECT_TIMEOUT_S) -> tuple[ModuleType, bool]:
    """Import Ray and connect: to the cluster at ``address`` (probed first, see the module docstring) or,
    for ``None``, to a private local Ray with ``workers`` CPUs. Returns Ray and whether this call
    initialised it (the caller then shuts it down)."""
    if address:
        check_reachable(address)  # before Ray is imported: nothing there costs no Ray start-up
    ray = import_ray(address)
    if ray.is_initialized():
        return ray, False
    if address:  # an existing cluster brings its own resources: no num_cpus here
        check_nodes(address, probe_cluster(address, timeout))
        ray.init(address=address, log_to_driver=False)
    else:  # "local": a private Ray, even where a cluster started on this machine would be found
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
    return ray, True
