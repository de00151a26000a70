"""HMAC keys of the UDP bridge (:mod:`pccbullet.teleop.udp.bridge`): key files and where the demo looks for
one.

The demo takes the key from ``--udp-key-file``, else from the file ``$PCCBULLET_UDP_KEY_FILE`` names,
else from ``$XDG_CONFIG_HOME/pccbullet/udp.key`` (``~/.config/pccbullet/udp.key``) when it exists
(:func:`resolve_key`): HMAC is on by default as soon as that file exists. Every lookup takes the
environment as an argument, so tests never read the user's home.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from pccbullet.urdf_gen.errors import ConfigurationError

KEY_ENV = "PCCBULLET_UDP_KEY_FILE"
MIN_KEY_BYTES = 16
MAX_KEY_BYTES = 4096

log = logging.getLogger(__name__)


def _shown(path: object) -> str:
    """The path quoted, capped at 80 characters; a long one keeps its end (the file's name)."""
    text = repr(str(path))
    return text if len(text) <= 80 else "'..." + text[-76:]


def load_key_file(path: str | os.PathLike[str]) -> bytes:
    """The HMAC key in a file: its bytes with surrounding whitespace stripped, 16 to 4096 of them.

    Make one with ``python -c "import secrets; print(secrets.token_hex(32))" > FILE`` (readable by you
    only). Raises :class:`~pccbullet.urdf_gen.errors.ConfigurationError` (one line) when the file is missing,
    not a regular file, unreadable, empty, shorter than 16 or longer than 4096 bytes.
    """
    p = Path(path)
    allowed = f"allowed: a regular file of {MIN_KEY_BYTES} to {MAX_KEY_BYTES} bytes"
    try:
        mode = p.stat().st_mode
        regular = stat.S_ISREG(mode)
        data = b""
        if regular:
            with p.open("rb") as fh:
                data = fh.read(MAX_KEY_BYTES + 1)
    except FileNotFoundError:
        raise ConfigurationError(f"UDP key file {_shown(p)} does not exist; {allowed}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigurationError(f"UDP key file {_shown(p)} cannot be read ({reason}); {allowed}") from None
    if not regular:
        raise ConfigurationError(f"UDP key file {_shown(p)} is not a regular file; {allowed}")
    if len(data) > MAX_KEY_BYTES:
        raise ConfigurationError(f"UDP key file {_shown(p)} holds more than {MAX_KEY_BYTES} bytes; {allowed}")
    key = data.strip()
    if not key:
        raise ConfigurationError(f"UDP key file {_shown(p)} is empty; {allowed}")
    if len(key) < MIN_KEY_BYTES:
        raise ConfigurationError(f"UDP key file {_shown(p)} holds {len(key)} bytes, too short; {allowed}")
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("UDP key file %s is readable by other users (chmod 600 it)", p)
    return key


def default_key_file(env: Mapping[str, str] | None = None) -> Path:
    """Where the demo looks for the UDP key: ``$PCCBULLET_UDP_KEY_FILE``, else
    ``$XDG_CONFIG_HOME/pccbullet/udp.key``, else ``~/.config/pccbullet/udp.key`` (``env``: injectable)."""
    env = os.environ if env is None else env
    if env.get(KEY_ENV):
        return Path(env[KEY_ENV])
    config = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(config) / "pccbullet" / "udp.key"


def resolve_key(
    key_file: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> tuple[bytes | None, Path | None]:
    """The key and its file: ``key_file`` when given, else the file ``$PCCBULLET_UDP_KEY_FILE`` names
    (it must exist then), else the default file when it exists, else ``(None, None)`` (no HMAC).
    A bad file raises :class:`~pccbullet.urdf_gen.errors.ConfigurationError`."""
    env = os.environ if env is None else env
    if key_file is not None:
        return load_key_file(key_file), Path(key_file)
    path = default_key_file(env)
    if env.get(KEY_ENV) or path.exists():
        return load_key_file(path), path
    return None, None
