"""The one HTTP server of ``serve`` and ``web``: an ASGI app under uvicorn, in a thread.

The dashboard, /api/v1, /livez, /readyz, /healthz and /metrics are one app
(``serve`` hands the service :func:`tracker.serving.service_app`, which builds it with
:func:`tracker.web.create_app`), so there is a single listener to secure and test.
uvicorn runs its own event loop in a daemon thread; synchronous routes (database
reads, the /readyz ping) run in its thread pool, so a slow database never blocks
/livez or /metrics. The socket is bound before the thread starts: a taken port
fails at once, before any job runs. A connection that sends nothing is dropped
after ``request_timeout`` seconds (uvicorn's keep-alive timer, which it starts only
after a first response, is started on connect too), so a silent client cannot hold
a connection open.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "REQUEST_TIMEOUT_SECONDS",
    "HealthServer",
    "Response",
    "Route",
    "WebServer",
    "json_response",
    "parse_address",
    "probe_app",
]

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_SECONDS = 10.0
"""How long a connection may stay silent before its request (and between requests)."""

Response = tuple[int, str, bytes]
"""(HTTP status, content type, body)."""
Route = Callable[[], Response]


def json_response(check: Callable[[], tuple[bool, dict[str, Any]]]) -> Route:
    """A route answering ``check``'s body as JSON: 200 when it passes, 503 otherwise."""

    def route() -> Response:
        ok, body = check()
        return 200 if ok else 503, "application/json", json.dumps(body, indent=2).encode()

    return route


def parse_address(value: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8080`` for IPv6) as a tuple; a clear error otherwise."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected host:port for the HTTP server, got {value!r}")
    return host.strip("[]"), int(port)


_PROBE_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
]


def probe_app(routes: Mapping[str, Route]) -> Any:
    """A bare ASGI app serving ``routes`` (the probes without the dashboard).

    Plain ASGI, no web framework: the service package never imports the dashboard
    (``serve`` composes the two, :mod:`tracker.serving`). Routes may block (the
    database ping of /readyz), so each runs in the loop's thread pool and a slow one
    never holds up /livez."""
    hint = ", ".join(sorted(routes))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        route = routes.get(scope["path"])
        method = scope["method"]
        if route is None:
            detail = f"not found: {scope['path']}; try {hint}"
            status, kind, body = 404, "application/json", json.dumps({"detail": detail}).encode()
        elif method not in ("GET", "HEAD"):
            detail = f"method {method} not allowed: the probes answer GET"
            status, kind, body = 405, "application/json", json.dumps({"detail": detail}).encode()
        else:
            status, kind, body = await asyncio.get_running_loop().run_in_executor(None, route)
        headers = [
            (b"content-type", kind.encode("latin-1")),
            (b"content-length", str(len(body)).encode()),
            *_PROBE_HEADERS,
            *([(b"allow", b"GET, HEAD")] if status == 405 else []),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})

    return app


class _SilentClientTimeout(H11Protocol):
    """h11 that also times out a connection that never sends its first request."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )


class WebServer:
    """``app`` served by uvicorn on ``address`` until :meth:`stop`."""

    def __init__(
        self, address: str, app: Any, *, request_timeout: float = REQUEST_TIMEOUT_SECONDS
    ) -> None:
        host, port = parse_address(address)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind((host, port))
        except OSError:
            self._socket.close()
            raise
        self._socket.listen(128)
        config = uvicorn.Config(
            app,
            log_config=None,  # the service's own logging (JSON or text, secrets masked)
            access_log=False,  # tracker.web logs requests itself, never a header
            http=_SilentClientTimeout,
            timeout_keep_alive=max(1, round(request_timeout)),
            lifespan="off",
            server_header=False,
            proxy_headers=False,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name="web-http",
            daemon=True,
        )

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    def start(self) -> None:
        self._thread.start()
        log.info("HTTP on %s", self.url)

    def stop(self, timeout: float = 5.0) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._socket.close()


class HealthServer(WebServer):
    """Only the probes (``routes``), for a process without the dashboard."""

    def __init__(
        self,
        address: str,
        routes: Mapping[str, Route],
        *,
        request_timeout: float = REQUEST_TIMEOUT_SECONDS,
    ) -> None:
        super().__init__(address, probe_app(routes), request_timeout=request_timeout)
