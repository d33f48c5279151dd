"""Local stand-ins for the EC2 and Cloud Billing endpoints that refuse every credential.

The log-masking tests need the real AWS and GCP clients to send their credentials
somewhere and fail: then botocore (at DEBUG) prints the session token in its request
headers, and the GCP collector's error line carries whatever the endpoint answered.
The stub records what it was sent, so a test can prove the secret was in play.

EC2 (``POST /``, query protocol) answers HTTP 401 in the documented EC2 error envelope
(``Response/Errors/Error/Code|Message``, ``RequestID``; AWS EC2 API Reference, "Error
codes": AuthFailure). Cloud Billing (``GET /v1/services/.../skus``) answers HTTP 400 with
``tests/fixtures/gcp/error_api_key_invalid_opencost.json`` whose ``message`` value is
changed to quote the key back, as a gateway that echoes the rejected key would: the
envelope and field names are Google's.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GCP_ERROR = Path(__file__).resolve().parents[1] / "fixtures/gcp/error_api_key_invalid_opencost.json"
EC2_AUTH_FAILURE = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b"<Response><Errors><Error><Code>AuthFailure</Code>"
    b"<Message>AWS was not able to validate the provided access credentials</Message>"
    b"</Error></Errors><RequestID>ea966190-f9aa-478e-9ede-example</RequestID></Response>"
)


class CloudStub:
    def __init__(self) -> None:
        self.aws_tokens: list[str] = []
        self.gcp_keys: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stub.aws_tokens.append(self.headers.get("X-Amz-Security-Token", ""))
                self._answer(401, "text/xml;charset=UTF-8", EC2_AUTH_FAILURE)

            def do_GET(self) -> None:
                key = self.headers.get("x-goog-api-key", "")
                stub.gcp_keys.append(key)
                body = json.loads(GCP_ERROR.read_text())
                body["error"]["message"] = f"API key not valid: {key}"
                self._answer(400, "application/json", json.dumps(body).encode())

            def _answer(self, status: int, content_type: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> CloudStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def env(self) -> dict[str, str]:
        """Point the AWS (EC2, one region, no spot) and GCP collectors at this stub."""
        return {
            "AWS_ENDPOINT_URL_EC2": self.url,
            "GPU_TRACKER_AWS__REGIONS": "us-east-1",
            "GPU_TRACKER_AWS__SPOT": "false",
            "GPU_TRACKER_AWS__MAX_ATTEMPTS": "1",
            "GPU_TRACKER_GCP__ENDPOINT_URL": self.url,
            "GPU_TRACKER_GCP__RETRY_DEADLINE_SECONDS": "5",
        }
