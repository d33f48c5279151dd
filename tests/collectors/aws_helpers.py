"""Shared helpers for the AWS collector tests: fixture loading and parsed hardware."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from collectors.aws_hardware import InstanceHardware, parse_instance_types

from .conftest import run_context

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "aws"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def gpu_page() -> dict[str, Any]:
    """The derived GPU GetProducts page (PriceList items are JSON strings, as on the wire)."""
    page: dict[str, Any] = load("pricing_get_products_gpu_page_derived.json")
    return page


def gpu_items() -> dict[str, dict[str, Any]]:
    """Decoded derived items by ``instanceType/regionCode-ish`` key (type@location)."""
    items = {}
    for raw in gpu_page()["PriceList"]:
        item = json.loads(raw)
        attrs = item["product"]["attributes"]
        items[f"{attrs['instanceType']}@{attrs['location']}"] = item
    return items


def instance_type_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = load("ec2_describe_instance_types_gpu_page_moto.json")[
        "InstanceTypes"
    ]
    return items


def hardware() -> dict[str, InstanceHardware]:
    ctx = run_context()
    hw = parse_instance_types(instance_type_items(), ctx.skip)
    assert not ctx.skips, ctx.details
    return hw


Answer = tuple[int, dict[str, str], Any]
"""(HTTP status, response headers, JSON body)."""


class LocalAwsServer:
    """A local AWS endpoint on a free port: each POST is answered by
    ``respond(path, headers, body bytes)``; ``url`` is what a client's endpoint_url takes."""

    def __init__(self, respond: Callable[[str, Mapping[str, str], bytes], Answer]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, headers, answer = respond(self.path, self.headers, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
