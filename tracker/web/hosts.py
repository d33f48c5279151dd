"""Which ``Host`` names the app answers, and redirects that stay on the request's host.

A dashboard without a token on 127.0.0.1 is still readable by a web page elsewhere
if that page's own name is re-pointed at 127.0.0.1 (DNS rebinding): the browser then
sends ``Host: evil.example``. Answering only the names the server is known by
(``web.allowed_hosts``; by default the bound host and the localhost names when no
token is set, :meth:`~tracker.settings.WebSettings.hosts`) closes that; any other
``Host`` is a 400. The liveness probes are exempt: an orchestrator probes by the
pod's address and they carry nothing.

A redirect the framework builds (``/api/v1`` → ``/api/v1/``) names the host of the
request it answers; it is sent as a path instead, so the browser stays on the host
it asked and no absolute URL is ever made from a header.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["EXEMPT", "HostCheck", "host_name", "name_allowed"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

EXEMPT = frozenset({"/livez", "/readyz"})


def host_name(value: str) -> str:
    """The name in a ``Host`` header, lower case, without its port (``[::1]:80`` →
    ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def name_allowed(name: str, allowed: frozenset[str]) -> bool:
    """``name`` is listed, or falls under a listed ``*.domain``."""
    if name in allowed:
        return True
    return any(a.startswith("*.") and name.endswith(a[1:]) for a in allowed)


def _header(scope: Scope, key: bytes) -> str:
    for name, value in scope.get("headers", []):
        if name == key:
            return str(value.decode("latin-1"))
    return ""


def _relative(location: bytes, host: str) -> bytes:
    """``location`` as a path when it points at ``host`` (the request's own)."""
    parts = urlsplit(location.decode("latin-1"))
    if not parts.scheme or parts.netloc.lower() != host.lower():
        return location
    path = parts.path or "/"
    return (path + (f"?{parts.query}" if parts.query else "")).encode("latin-1")


class HostCheck:
    """ASGI middleware: a 400 for a ``Host`` outside ``allowed`` (None: any), and
    redirects to the request's own host sent as paths."""

    def __init__(self, app: App, *, allowed: frozenset[str] | None) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if (
            self.allowed is not None
            and scope["path"] not in EXEMPT
            and not name_allowed(host_name(host), self.allowed)
        ):
            await _refuse(send, host)
            return

        async def send_relative(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (k, _relative(v, host) if k == b"location" else v)
                    for k, v in message.get("headers", [])
                ]
            await send(message)

        await self.app(scope, receive, send_relative)


async def _refuse(send: Send, host: str) -> None:
    shown = host[:80] or "(none)"
    line = f"host: {shown!r} is not a name this server answers (web.allowed_hosts)"
    body = json.dumps({"error": line}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
