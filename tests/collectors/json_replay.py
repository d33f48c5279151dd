"""A local HTTP server on 127.0.0.1 that replays recorded JSON bodies by path.

For the end-to-end tests of the small JSON APIs: ``collect --provider NAME`` runs
through the real entry point and store while ``GPU_TRACKER_<NAME>__ENDPOINT_URL``
points here. Each request is recorded (method, path with query, headers) so a test
can check what was sent, e.g. that a key travelled in its header.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Replay:
    """Answers by path with its query (``/p?page=2``, for a paged API) or else by path
    alone: ``(status, body)``; anything else is a 404."""

    answers: Mapping[str, tuple[int, Any]]
    calls: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


def fixture_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@contextmanager
def serve(replay: Replay) -> Iterator[str]:
    """Runs the server for the ``with`` block; yields its ``http://127.0.0.1:PORT`` origin."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            replay.calls.append((self.command, self.path, dict(self.headers.items())))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            missing = (404, {"error": "?"})
            by_path = replay.answers.get(self.path.split("?", 1)[0], missing)
            status, body = replay.answers.get(self.path, by_path)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
