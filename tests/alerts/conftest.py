"""Real local receivers for the channels: an HTTP server standing in for Slack's
webhook endpoint and an aiosmtpd SMTP server, both on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from tests.conftest import make_offer
from tracker.models import Offer


@dataclass
class SlackServer:
    """Answers each POST with the next scripted (status, body, delay), then 200 ok."""

    url: str = ""
    posts: list[dict[str, Any]] = field(default_factory=list)
    script: deque[tuple[int, str, float]] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, *replies: tuple[int, str, float]) -> None:
        self.script.extend(replies)

    @property
    def accepted(self) -> list[dict[str, Any]]:
        return [p for p in self.posts if p["status"] == 200]


@pytest.fixture
def slack() -> Iterator[SlackServer]:
    server_state = SlackServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with server_state._lock:
                status, text, delay = (
                    server_state.script.popleft() if server_state.script else (200, "ok", 0.0)
                )
                server_state.posts.append(
                    {"path": self.path, "json": json.loads(body), "status": status}
                )
            time.sleep(delay)
            self.send_response(status)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(text.encode())

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    server_state.url = f"http://127.0.0.1:{httpd.server_port}/services/T0001/B0001/s3cr3tTok3n"
    yield server_state
    httpd.shutdown()
    httpd.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SmtpServer:
    port: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)
    accept_login: bool = True


class _Handler:
    def __init__(self, state: SmtpServer) -> None:
        self.state = state

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.state.messages.append(
            {
                "mail_from": envelope.mail_from,
                "rcpt_tos": list(envelope.rcpt_tos),
                "content": envelope.content,
            }
        )
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    state = SmtpServer(port=free_port())

    def authenticator(
        server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        login = data.login.decode() if isinstance(data.login, bytes) else str(data.login)
        password = (
            data.password.decode() if isinstance(data.password, bytes) else str(data.password)
        )
        state.logins.append((login, password))
        # handled=False: aiosmtpd answers a refusal with "535 5.7.8" itself.
        return AuthResult(success=state.accept_login, handled=False)

    controller = Controller(
        _Handler(state),
        hostname="127.0.0.1",
        port=state.port,
        authenticator=authenticator,
        auth_require_tls=False,
    )
    controller.start()
    yield state
    controller.stop()


def offer(instance: str, price: str, **kw: Any) -> Offer:
    """A 1-GPU offer of ``testcloud``; ``gpu`` names its model (default H100-SXM)."""
    gpu = kw.pop("gpu", "H100-SXM")
    return make_offer(
        instance_type=instance,
        gpu_model=gpu,
        gpu_count=Decimal(1),
        gpu_memory_gib=Decimal(80),
        interconnect="pcie",
        price_per_hour=Decimal(price),
        **kw,
    )
