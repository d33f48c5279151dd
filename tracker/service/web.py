"""The small HTTP server for /healthz and /metrics.

stdlib ``ThreadingHTTPServer`` in a daemon thread: two GET routes need no
framework, and a slow database ping on /healthz must not block /metrics.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HealthServer", "parse_address"]

log = logging.getLogger(__name__)

HealthFn = Callable[[], tuple[bool, dict[str, Any]]]
MetricsFn = Callable[[], bytes]


def parse_address(value: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8080`` for IPv6) as a tuple; a clear error otherwise."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"expected host:port for the health server, got {value!r}")
    return host.strip("[]"), int(port)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/healthz", "/health"):
            healthy, body = self.server.health()
            payload = json.dumps(body, indent=2).encode()
            self._send(200 if healthy else 503, "application/json", payload)
        elif path == "/metrics":
            self._send(200, self.server.metrics_content_type, self.server.metrics())
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found: try /healthz or /metrics\n")

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
        self, address: tuple[str, int], health: HealthFn, metrics: MetricsFn, content_type: str
    ) -> None:
        if ":" in address[0]:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.health = health
        self.metrics = metrics
        self.metrics_content_type = content_type


class HealthServer:
    def __init__(
        self, address: str, health: HealthFn, metrics: MetricsFn, metrics_content_type: str
    ) -> None:
        self._server = _Server(parse_address(address), health, metrics, metrics_content_type)
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
        log.info("health and metrics on %s/healthz and %s/metrics", self.url, self.url)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
