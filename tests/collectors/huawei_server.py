"""A local Huawei Cloud stand-in (IAM, ECS, BSS) on a real ``http.server`` for the SDK.

Every request must carry a valid ``SDK-HMAC-SHA256`` signature: the server recomputes
it from the request it received with Huawei's documented signing scheme (canonical
request → string to sign → HMAC-SHA256 with the SK), independently of the SDK's code,
so a request the SDK did not sign, or signed with another key, is refused with the
APIG error body real gateways send (APIGW.0301).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "huawei"
ON_DEMAND = "/v2/bills/ratings/on-demand-resources"
PERIOD = "/v2/bills/ratings/period-resources/subscribe-rate"
_AUTH = "SDK-HMAC-SHA256 "


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@dataclass
class Reply:
    status: int
    body: Any


@dataclass
class HuaweiStandIn:
    ak: str
    sk: str
    flavors: Any = field(default_factory=lambda: load("ecs_list_flavors_gpu_edited.json"))
    on_demand: Any = field(
        default_factory=lambda: load("bss_list_on_demand_resource_ratings_gpu_edited.json")
    )
    period: dict[int, Any] = field(
        default_factory=lambda: {
            1: load("bss_list_rate_on_period_detail_1y_gpu_edited.json"),
            3: load("bss_list_rate_on_period_detail_3y_gpu_edited.json"),
        }
    )
    projects: Any = field(
        default_factory=lambda: load("iam_keystone_list_projects_docs_example.json")
    )
    domains: Any = field(
        default_factory=lambda: load("iam_keystone_list_auth_domains_docs_example.json")
    )
    scripted: dict[str, deque[Reply]] = field(default_factory=lambda: defaultdict(deque))
    """Replies served (once each) before the recorded one, per path (errors, throttling)."""
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    """(method, path with query, JSON body or None) of every request that passed the check."""
    bad_signatures: int = 0
    url: str = ""

    def calls(self, path: str) -> list[Any]:
        return [body for _, p, body in self.requests if urlsplit(p).path == path]


def _canonical_uri(path: str) -> str:
    uri = "/".join(quote(part, safe="~") for part in unquote(path).split("/"))
    return uri if uri.endswith("/") else uri + "/"


def _canonical_query(query: str) -> str:
    pairs = sorted(parse_qsl(query, keep_blank_values=True))
    return "&".join(f"{quote(k, safe='~')}={quote(v, safe='~')}" for k, v in pairs)


def signature_ok(
    stand_in: HuaweiStandIn, method: str, raw_path: str, headers: Any, body: bytes
) -> bool:
    """Recompute the SDK-HMAC-SHA256 signature of a received request (Huawei's APIG scheme)."""
    auth = headers.get("Authorization", "")
    if not auth.startswith(_AUTH):
        return False
    fields = dict(
        part.strip().split("=", 1) for part in auth[len(_AUTH) :].split(",") if "=" in part
    )
    if fields.get("Access") != stand_in.ak or "X-Sdk-Date" not in headers:
        return False
    signed = fields.get("SignedHeaders", "").split(";")
    if "host" not in signed or "x-sdk-date" not in signed:
        return False
    parts = urlsplit(raw_path)
    canonical_headers = "".join(f"{h}:{(headers.get(h) or '').strip()}\n" for h in signed)
    canonical = "\n".join(
        [
            method,
            _canonical_uri(parts.path),
            _canonical_query(parts.query),
            canonical_headers,
            ";".join(signed),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    to_sign = "\n".join(
        ["SDK-HMAC-SHA256", headers["X-Sdk-Date"], hashlib.sha256(canonical.encode()).hexdigest()]
    )
    expected = hmac.new(stand_in.sk.encode(), to_sign.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("Signature", ""))


def _handler(stand_in: HuaweiStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _send(self, reply: Reply) -> None:
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Request-Id", "standin-request")
            self.end_headers()
            self.wfile.write(data)

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not signature_ok(stand_in, method, self.path, self.headers, raw):
                stand_in.bad_signatures += 1
                self._send(Reply(401, load("apigw_error_0301_auth.json")))
                return
            body = json.loads(raw) if raw else None
            stand_in.requests.append((method, self.path, body))
            parts = urlsplit(self.path)
            queue = stand_in.scripted.get(parts.path)
            if queue:
                self._send(queue.popleft())
                return
            self._send(self._route(method, parts.path, dict(parse_qsl(parts.query)), body))

        def _route(self, method: str, path: str, query: dict[str, str], body: Any) -> Reply:
            if method == "GET" and path == "/v3/projects":
                projects = [
                    p for p in stand_in.projects["projects"] if p["name"] == query.get("name")
                ]
                return Reply(200, {**stand_in.projects, "projects": projects})
            if method == "GET" and path == "/v3/auth/domains":
                return Reply(200, stand_in.domains)
            if method == "GET" and path.endswith("/cloudservers/flavors"):
                return Reply(200, stand_in.flavors)
            if method == "POST" and path == ON_DEMAND:
                return Reply(200, stand_in.on_demand)
            if method == "POST" and path == PERIOD:
                years = {p["period_num"] for p in body["product_infos"]}
                return Reply(200, stand_in.period[years.pop()])
            return Reply(404, {"error_code": "APIGW.0101", "error_msg": f"no route {path}"})

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

    return Handler


@contextmanager
def serve(stand_in: HuaweiStandIn) -> Iterator[HuaweiStandIn]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stand_in))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    stand_in.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
