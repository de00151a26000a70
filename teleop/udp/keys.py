"""HMAC keys of the UDP bridge (:mod:`pccbullet.teleop.udp.bridge`): key files and where the demo looks for
one.

The demo takes the key from ``--udp-key-file``, else from the file ``$PCCBULLET_UDP_KEY_FILE`` names,
else from ``$XDG_CONFIG_HOME/pccbullet/udp.key`` (``~/.config/pccbullet/udp.key``), which it creates on
first use with a fresh random key readable by the user only (:func:`resolve_key`,
:func:`create_key_file`): HMAC is on by default. Every lookup takes the environment as an argument, so
tests never read the user's home.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pccbullet.core.errors import ConfigurationError

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
    only). Raises :class:`~pccbullet.core.errors.ConfigurationError` (one line) when the file is missing,
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


def create_key_file(path: str | os.PathLike[str]) -> bool:
    """Write a fresh random key (32 bytes as 64 hex digits) to ``path``, readable by the user only, unless
    the file exists; returns whether it was created. The folders are created (mode 700); the file
    appears whole or not at all (written beside it, then linked into place without replacing one that
    another process created meanwhile)."""
    p = Path(path)
    p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".udp-key-", dir=p.parent)  # mode 600
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, p)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    return True


def resolve_key(
    key_file: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> tuple[bytes, Path]:
    """The key and its file: ``key_file`` when given, else the file ``$PCCBULLET_UDP_KEY_FILE`` names
    (it must exist then), else the default file, created on first use (:func:`create_key_file`, logged).
    A bad file, or a default file that cannot be created, raises
    :class:`~pccbullet.core.errors.ConfigurationError`."""
    env = os.environ if env is None else env
    if key_file is not None:
        return load_key_file(key_file), Path(key_file)
    path = default_key_file(env)
    if not env.get(KEY_ENV) and not path.exists():
        try:
            if create_key_file(path):
                log.warning("created the UDP key file %s (give it to your device process)", path)
        except OSError as exc:
            raise ConfigurationError(
                f"UDP key file {_shown(path)} cannot be created ({exc.strerror or exc}); allowed: a "
                "writable folder, or --udp-key-file"
            ) from None
    return load_key_file(path), path
