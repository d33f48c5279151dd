"""A local HTTP server playing the fake providers (see ``fake_provider``).

Per provider it serves two pages of two offers; the price of every offer moves
on each complete fetch, so each successful run stores price changes. Behaviour
per provider: ``ok``, ``fail`` (503 always), ``throttle`` (429 with Retry-After
for the first N requests), ``hang`` (sleeps past the client timeout). A gate can
hold page 2 so a test can act while a run is open mid-transaction.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class FakeProviders:
    def __init__(self) -> None:
        self.modes: dict[str, str] = {}
        self.throttle_left: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        self.fetches: Counter[str] = Counter()
        self.page_delay: dict[str, float] = {}
        self.hold_page2 = threading.Event()
        self.hold_page2.set()  # set = not holding
        self.page2_waiting = threading.Event()
        self.lock = threading.Lock()
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeProviders:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.hold_page2.set()
        self.server.shutdown()
        self.server.server_close()

    def hold(self) -> None:
        self.page2_waiting.clear()
        self.hold_page2.clear()

    def release(self) -> None:
        self.hold_page2.set()

    def page(self, provider: str, number: int) -> tuple[int, dict[str, str], bytes]:
        mode = self.modes.get(provider, "ok")
        with self.lock:
            self.requests[provider] += 1
            if mode == "throttle" and self.throttle_left[provider] > 0:
                self.throttle_left[provider] -= 1
                return 429, {"Retry-After": "0"}, b'{"error": "slow down"}'
        if mode == "fail":
            return 503, {}, b'{"error": "unavailable"}'
        if mode == "hang":
            time.sleep(2.0)
        time.sleep(self.page_delay.get(provider, 0.0))
        if number == 2:
            self.page2_waiting.set()
            self.hold_page2.wait(30)
        with self.lock:
            if number == 1:
                self.fetches[provider] += 1
            step = self.fetches[provider]
        price = Decimal("1.00") + Decimal("0.01") * step
        offers = [
            {
                "instance_type": f"gpu.{number}x{i}",
                "region": "test-1",
                "gpu": "A100-80GB",
                "gpus": i,
                "price": str(price * i),
            }
            for i in (1, 2)
        ]
        body: dict[str, Any] = {
            "offers": offers,
            "next": f"/{provider}/offers?page=2" if number == 1 else None,
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                provider = parts.path.strip("/").split("/")[0]
                number = int(parse_qs(parts.query).get("page", ["1"])[0])
                status, headers, payload = fake.page(provider, number)
                try:
                    self.send_response(status)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out first, as a test intended

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
