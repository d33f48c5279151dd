"""Who may read, and the headers every answer carries.

A pure ASGI middleware (no per-request task or body buffering): it checks the
optional token, adds the security headers to every response, and logs each request
as method, path and status only, so neither a token nor a query string reaches a
log line. The token is compared in constant time, as a bearer token or as the
password of HTTP basic auth (what a browser prompts for).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pydantic import SecretStr

from tracker.web.errors import wants_json

__all__ = ["SECURITY_HEADERS", "SecurityMiddleware", "presented_token"]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""No inline script or style anywhere: charts are server-drawn SVG (presentation
attributes, not style), sorting is static/sort.js."""
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


def presented_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token in ``Authorization``: a bearer token, or basic auth's password."""
    for name, value in headers:
        if name != b"authorization":
            continue
        scheme, _, credentials = value.decode("latin-1").partition(" ")
        if scheme.lower() == "bearer":
            return credentials.strip()
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(credentials.strip(), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                return None
            return decoded.partition(":")[2]
    return None


class SecurityMiddleware:
    def __init__(self, app: App, *, token: SecretStr | None, public: frozenset[str]) -> None:
        self.app = app
        self.token = token.get_secret_value().encode() if token is not None else None
        self.public = public

    def _allowed(self, scope: Scope) -> bool:
        if self.token is None or scope["path"] in self.public:
            return True
        given = presented_token(scope.get("headers", []))
        return given is not None and hmac.compare_digest(given.encode(), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = 0

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [h for h in message.get("headers", []) if h[0] not in _OURS]
                message["headers"] = headers + list(SECURITY_HEADERS)
            await send(message)

        if self._allowed(scope):
            await self.app(scope, receive, send_with_headers)
        else:
            body, content_type = _unauthorized(scope["path"])
            await send_with_headers(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", content_type),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer, Basic realm="gpu-tracker"'),
                    ],
                }
            )
            await send_with_headers({"type": "http.response.body", "body": body})
        log.debug(
            "%s %s %d %.1f ms",
            scope["method"],
            scope["path"],
            status,
            (time.perf_counter() - began) * 1000,
        )


_OURS = frozenset(name for name, _ in SECURITY_HEADERS)

_REASON = "authentication required: send the web token"
_PAGE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    "<title>Authentication required · gpu-tracker</title></head><body>"
    "<h1>Authentication required</h1>"
    '<p id="reason"><strong>401</strong> ' + _REASON + " (your browser asks for it as the "
    'password of any user name).</p><p><a id="back" href="/">Try again</a></p></body></html>'
)


def _unauthorized(path: str) -> tuple[bytes, bytes]:
    """The 401's body: one line of JSON for the API and the probes, a page for a page
    (the stylesheet and navigation need the token too, so the page stands alone)."""
    if wants_json(path):
        return json.dumps({"error": _REASON}).encode(), b"application/json"
    return _PAGE.encode(), b"text/html; charset=utf-8"
