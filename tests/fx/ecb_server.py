"""A local HTTP server answering the ECB's two rate files from tests/fixtures/fx/."""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fx"
PATHS = {
    "/stats/eurofxref/eurofxref-daily.xml": "eurofxref-daily.xml",
    "/stats/eurofxref/eurofxref-hist-90d.xml": "eurofxref-hist-90d.xml",
}


class EcbServer:
    """Serves the recorded files at the ECB's paths; counts requests per path."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.status = 200
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests[self.path] += 1
                name = PATHS.get(self.path)
                if name is None or server.status != 200:
                    self.send_response(404 if name is None else server.status)
                    self.end_headers()
                    return
                body = (FIXTURES / name).read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
