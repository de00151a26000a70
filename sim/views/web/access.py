"""Who may open a web view: the checks of every request (the page, its files and the socket).

A request is served when its ``Host`` header names the view itself, the address it is bound to or
``localhost``, with its port (an IP address too when it listens on every address), or when it carries the
view's token (``?token=``, or the cookie the page got with it). A browser sends the name it looked up as
``Host``: a page of another site whose name the attacker points at ``127.0.0.1`` (*DNS rebinding*) sends
its own name and is refused, although the browser treats it as that site's own origin. The socket needs
more: the token when the view has one, and an ``Origin`` (when a browser sends one) that is the page's own,
``http://`` + the request's ``Host`` (a page elsewhere must not drive the robot through a browser that has
this one open). A request target longer than :data:`MAX_TARGET` characters is answered 414.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_TARGET = 2048  # characters of a request target (path and query): the page's are under 100
LOCAL_NAME = "localhost"
WILDCARDS = ("0.0.0.0", "::")
COOKIE_PREFIX = "pccbullet_view_"  # + the port: the page's token, for its scripts and socket


def _address(name: str) -> str | None:
    """``name`` as a normalized IP address (``::1``, ``127.0.0.1``), or ``None`` when it is a name."""
    try:
        return ipaddress.ip_address(name).compressed
    except ValueError:
        return None


def split_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` header's name (lower case, an IPv6 address without its brackets) and port (``None``:
    none given); ``None`` when it is not a host: ``"[::1]:8000"`` -> ``("::1", 8000)``."""
    value = value.strip().lower()
    if not value or len(value) > 260 or any(c.isspace() or c in "/?#@\\" for c in value):
        return None
    if value.startswith("["):
        name, sep, rest = value[1:].partition("]")
        if not sep or _address(name) is None or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text = value.partition(":")
        if ":" in port_text:
            return None
        port_text = port_text if sep else None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or not 0 < int(port_text) <= 65535:
        return None
    return name, int(port_text)


def host_allowed(host: str | None, bound: str, port: int) -> bool:
    """Whether a request's ``Host`` header names this view, bound to ``bound`` on ``port``: the bound
    address or ``localhost`` (any IP address when ``bound`` is a wildcard, a loopback one when it is
    ``localhost``), with the view's port (none given: 80)."""
    parts = split_host(host) if host is not None else None
    if parts is None:
        return False
    name, given = parts
    if (given if given is not None else 80) != port:
        return False
    if name == LOCAL_NAME:
        return True
    ours = _address(bound)
    if bound in WILDCARDS:
        return _address(name) is not None  # no name: a name could be anyone's
    given_address = _address(name)
    if bound.lower() == LOCAL_NAME:  # bound by the name: its loopback addresses are its own too
        return given_address is not None and ipaddress.ip_address(given_address).is_loopback
    return (given_address or name) == (ours if ours is not None else bound.lower())


def _all(headers: Any, name: str) -> list[str]:
    """Every value of the header ``name`` (websockets' ``Headers`` or a plain mapping)."""
    if hasattr(headers, "get_all"):
        return list(headers.get_all(name))
    value = headers.get(name)
    return [] if value is None else [value]


def _one(headers: Any, name: str) -> str | None:
    """The header ``name``'s value; ``None`` when it is missing or given more than once."""
    values = _all(headers, name)
    return values[0] if len(values) == 1 else None


def _cookie(header: str | None, name: str) -> str:
    for part in (header or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


@dataclass(frozen=True, slots=True)
class Access:
    """The access rules of a view bound to ``host`` on ``port`` with ``token`` (``None``: none needed)."""

    host: str
    port: int
    token: str | None

    @property
    def cookie(self) -> str:
        """The name of the cookie that carries the token to the page's scripts and socket."""
        return f"{COOKIE_PREFIX}{self.port}"

    def query_token(self, target: str) -> bool:
        """Whether the request target's ``?token=`` is the view's token."""
        if self.token is None:
            return False
        given = parse_qs(urlsplit(target).query).get("token", [""])[0]
        return hmac.compare_digest(given.encode(), self.token.encode())

    def has_token(self, target: str, headers: Any) -> bool:
        """Whether the request carries the view's token (``?token=`` or the cookie)."""
        if self.token is None:
            return False
        cookie = _cookie(_one(headers, "Cookie"), self.cookie)
        return self.query_token(target) or hmac.compare_digest(cookie.encode(), self.token.encode())

    def refusal(self, target: str, headers: Any, socket: bool) -> tuple[HTTPStatus, str] | None:
        """Why the request (its target and headers) is refused, as a status and one line; ``None`` when
        it is allowed (module docstring). ``socket``: a request for the socket (``/ws``)."""
        if len(target) > MAX_TARGET:
            return HTTPStatus.REQUEST_URI_TOO_LONG, (
                f"request target of {len(target)} characters is too long; allowed: up to {MAX_TARGET}"
            )
        host = _one(headers, "Host")
        token = self.has_token(target, headers)
        if host is None:
            return HTTPStatus.BAD_REQUEST, "one Host header is needed"
        if not host_allowed(host, self.host, self.port) and not token:
            shown = host if len(host) <= 80 else host[:80] + "..."
            return HTTPStatus.FORBIDDEN, (
                f"Host {shown!r} is not this view's address; allowed: {self._names()} (or the view's token)"
            )
        if socket:
            if self.token is not None and not token:
                return HTTPStatus.FORBIDDEN, "a valid ?token= is needed"
            origins = _all(headers, "Origin")
            own = (f"http://{host}".lower(), f"https://{host}".lower())
            if len(origins) > 1 or (origins and origins[0].lower() not in own):
                return HTTPStatus.FORBIDDEN, "a page of another origin may not open the socket"
        return None

    def _names(self) -> str:
        bound = f"[{self.host}]" if ":" in self.host else self.host
        names = [f"{LOCAL_NAME}:{self.port}"]
        if self.host in WILDCARDS:
            names.insert(0, f"any IP address of this machine:{self.port}")
        else:
            names.insert(0, f"{bound}:{self.port}")
        return ", ".join(names)
