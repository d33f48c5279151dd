"""A local HTTP server answering recorded payloads by (method, path), for the CLI tests.

The CLI tests run the installed ``gpu-tracker`` against providers reached through their
``*_ENDPOINT_URL`` overrides; this serves the recorded bodies on 127.0.0.1 so no test
touches the internet. ``bodies`` is read on every request, so a test may change an
answer between two collections; an unknown route is a 404 with an empty body.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def serve_recorded(bodies: Mapping[tuple[str, str], bytes]) -> Iterator[str]:
    """Serve ``bodies[(method, path)]`` as JSON (query strings ignored); yield the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def _serve(self, method: str) -> None:
            if method == "POST":
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = bodies.get((method, self.path.split("?", 1)[0]))
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
