"""The small HTTP server for /livez, /readyz, /healthz and /metrics.

stdlib ``ThreadingHTTPServer`` in a daemon thread: a few GET routes need no
framework, and a slow database ping on /readyz must not block /livez or /metrics.
Every connection has a socket timeout, so a client that connects and sends
nothing (or trickles a request) is dropped instead of holding a thread forever.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "REQUEST_TIMEOUT_SECONDS",
    "HealthServer",
    "Response",
    "Route",
    "json_response",
    "parse_address",
]

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_SECONDS = 10.0
"""How long a connection may take to send its request (and to read the answer)."""

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
    if not sep or not host or not port.isdigit():
        raise ValueError(f"expected host:port for the health server, got {value!r}")
    return host.strip("[]"), int(port)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        route = self.server.routes.get(self.path.split("?", 1)[0])
        if route is None:
            known = ", ".join(sorted(self.server.routes))
            self._send(404, "text/plain; charset=utf-8", f"not found: try {known}\n".encode())
            return
        self._send(*route())

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], routes: Mapping[str, Route], request_timeout: float
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.routes = dict(routes)
        self.request_timeout = request_timeout

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = super().get_request()
        conn.settimeout(self.request_timeout)  # a silent client times out in the handler
        return conn, address


class HealthServer:
    def __init__(
        self,
        address: str,
        routes: Mapping[str, Route],
        *,
        request_timeout: float = REQUEST_TIMEOUT_SECONDS,
    ) -> None:
        self._server = _Server(parse_address(address), routes, request_timeout)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="health-http", daemon=True
        )

    @property
    def url(self) -> str:
        address = self._server.server_address
        host = address[0] if isinstance(address[0], str) else address[0].decode()
        port = address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    def start(self) -> None:
        self._thread.start()
        log.info(
            "health and metrics on %s: %s",
            self.url,
            ", ".join(sorted(self._server.routes)),
        )

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
