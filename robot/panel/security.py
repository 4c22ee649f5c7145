"""Who may use the panel: the token off loopback, the page's own origin for anything that changes state.

The rules (docs/panel.md):
- bound to a loopback address, no token is needed, but the Host header must name loopback too (a web
  page elsewhere cannot reach the panel through a DNS name it rebinds to 127.0.0.1);
- bound to any other address, every request needs the token (query `token`, header
  `X-Cube-Robot-Token`, or the cookie the page gets), from loopback too;
- a request that changes anything (POST) needs the `X-Cube-Robot-Client` header, which a browser sends
  cross-site only after a CORS preflight the panel never answers, and an `Origin`, when sent, that is
  the panel's own; the websocket checks its `Origin` the same way.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from urllib.parse import urlsplit

TOKEN_COOKIE = "cube_robot_token"
TOKEN_HEADER = "X-Cube-Robot-Token"
CLIENT_HEADER = "X-Cube-Robot-Client"
CLIENT_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
MAX_BODY_BYTES = 64 * 1024
LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost (a bind address or the host part of a Host header)."""
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_part(host_header: str) -> str:
    """'127.0.0.1:8080' -> '127.0.0.1'; '[::1]:80' -> '::1'."""
    return urlsplit("//" + host_header).hostname or ""


def new_token() -> str:
    return secrets.token_urlsafe(18)


class Guard:
    """The checks of one panel: its bind address and token (None: loopback without one)."""

    def __init__(self, bind_host: str, token: str | None):
        self.loopback = is_loopback(bind_host)
        self.token = token if token else (None if self.loopback else new_token())

    def token_ok(self, given: str | None) -> bool:
        if self.token is None:
            return True
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def host_refusal(self, host_header: str | None) -> str | None:
        """Why a request's Host is refused (None: fine): on a loopback bind it must be loopback."""
        if self.loopback and not is_loopback(host_part(host_header or "")):
            return (f"Host {host_header!r} is not a loopback name: the panel listens on loopback only "
                    "(use http://127.0.0.1:PORT/, or start it with --host to reach it from elsewhere)")
        return None

    @staticmethod
    def origin_refusal(origin: str | None, host_header: str | None) -> str | None:
        """Why an Origin is refused (None: absent or the panel's own)."""
        if origin is None:
            return None
        if origin == "null" or urlsplit(origin).netloc.lower() != (host_header or "").lower():
            return f"Origin {origin!r} is not this panel's (http://{host_header}): cross-site requests are refused"
        return None

    @staticmethod
    def client_refusal(client: str | None) -> str | None:
        if client is None:
            return (f"the {CLIENT_HEADER} header is missing: a request that changes anything names its client "
                    "(any short name, e.g. 'script')")
        if not CLIENT_NAME.match(client):
            return f"the {CLIENT_HEADER} header must be 1-64 letters, digits or . _ : -"
        return None
