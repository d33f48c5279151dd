"""A local Tencent Cloud API endpoint (a real ``http.server`` on 127.0.0.1) for the SDK.

It answers recorded responses from ``tests/fixtures/tencent/`` by action, region
(``X-TC-Region``) and the ``instance-charge-type`` filter of the JSON body, and checks
that every request carries a TC3-HMAC-SHA256 signature that verifies with the test
secret key. The check follows Tencent's documented algorithm (API 3.0 "Signature v3":
canonical request → string to sign → HMAC chain "TC3"+key → date → service →
"tc3_request"), written here from the documentation rather than from the SDK, so a
request the SDK signed wrongly (or did not sign) is answered with the documented
AuthFailure.SignatureFailure envelope and recorded in ``bad_signatures``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tencent"
SECRET_ID = "AKIDtestTencentSecretId0000000000001"
SECRET_KEY = "testTencentSecretKey00000000000001"

_AUTH = re.compile(
    r"^TC3-HMAC-SHA256 Credential=(?P<id>[^/]+)/(?P<date>\d{4}-\d{2}-\d{2})/(?P<service>[a-z]+)"
    r"/tc3_request, SignedHeaders=(?P<signed>[a-z;-]+), Signature=(?P<sig>[0-9a-f]{64})$"
)


def fixture(name: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return payload


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def expected_signature(
    secret_key: str, method: str, headers: Any, body: bytes, signed: str, date: str, service: str
) -> str:
    # The documented canonical form: names and values lower-cased and trimmed.
    canonical_headers = "".join(
        f"{name}:{headers[name].strip().lower()}\n" for name in signed.split(";")
    )
    canonical_request = "\n".join(
        [method, "/", "", canonical_headers, signed, hashlib.sha256(body).hexdigest()]
    )
    string_to_sign = "\n".join(
        [
            "TC3-HMAC-SHA256",
            headers["X-TC-Timestamp"],
            f"{date}/{service}/tc3_request",
            hashlib.sha256(canonical_request.encode("utf-8")).hexdigest(),
        ]
    )
    key = _hmac(_hmac(_hmac(f"TC3{secret_key}".encode(), date), service), "tc3_request")
    return hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass
class Call:
    action: str
    region: str
    charge_type: str
    authorization: str


@dataclass
class TencentServer:
    """Routes ``(action, region, charge_type)`` to a queue of fixture payloads; the last
    payload of a queue repeats. ``charge_type`` is "" for actions without that filter."""

    routes: dict[tuple[str, str, str], deque[dict[str, Any]]] = field(
        default_factory=lambda: defaultdict(deque)
    )
    calls: list[Call] = field(default_factory=list)
    bad_signatures: list[str] = field(default_factory=list)
    secret_key: str = SECRET_KEY

    def answer(self, action: str, region: str, charge_type: str, *payloads: dict[str, Any]) -> None:
        self.routes[(action, region, charge_type)].extend(payloads)

    def start(self) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self._reply(server.handle(self.command, self.headers, body))

            def _reply(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)  # Tencent answers API errors with HTTP 200 too
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def handle(self, method: str, headers: Any, body: bytes) -> dict[str, Any]:
        auth = headers.get("Authorization", "")
        action = headers.get("X-TC-Action", "")
        region = headers.get("X-TC-Region", "")
        params = json.loads(body or b"{}")
        charge = ""
        for f in params.get("Filters") or []:
            if f.get("Name") == "instance-charge-type":
                charge = f["Values"][0]
        self.calls.append(Call(action, region, charge, auth))
        if not self._signed(method, headers, body, auth):
            self.bad_signatures.append(auth)
            return fixture("error_auth_failure_signature_docs_example.json")
        queue = self.routes.get((action, region, charge))
        if not queue:
            return fixture("error_unsupported_region_derived.json")
        return queue.popleft() if len(queue) > 1 else queue[0]

    def _signed(self, method: str, headers: Any, body: bytes, auth: str) -> bool:
        match = _AUTH.match(auth)
        if match is None or match["id"] != SECRET_ID or match["service"] != "cvm":
            return False
        stamp = int(headers.get("X-TC-Timestamp", "0"))
        if datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d") != match["date"]:
            return False
        want = expected_signature(
            self.secret_key, method, headers, body, match["signed"], match["date"], "cvm"
        )
        return hmac.compare_digest(want, match["sig"])
