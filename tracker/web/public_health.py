"""/healthz for whoever asks without the token: error classes and counts, no text.

The probes answer without the token (orchestrators send none), but an error text can
carry what no one meant to publish: a receiver's echo of a webhook path, a provider's
message naming an account. Secrets are masked in every text already
(:mod:`tracker.redact`); on top of that, when a token is set, a request without it
gets each error as its class only (``ProviderError``, ``slack: HTTP 404``) beside the
counts the report keeps (``consecutive_failures``), and the text itself only with the
token. Without a token set every route is open, so the report is shown whole.
"""

from __future__ import annotations

import hmac
import json
import re
from typing import Any

from starlette.requests import Request

from tracker.service.web import Response
from tracker.web.security import presented_token

__all__ = ["HEALTH_PATHS", "error_class", "for_request", "public_report"]

HEALTH_PATHS = frozenset({"/healthz", "/health", "/readyz"})
ERROR_KEYS = frozenset({"last_error", "error"})
_NAME = re.compile(r"^(?:[a-z_]+\.)*[A-Z][A-Za-z]{0,60}(?:Error|Exception|Timeout)$")
_CLASS = re.compile(r"^([A-Za-z_][\w. -]{0,40}?):(?:\s+(HTTP \d{3})\b)?")


def error_class(text: str) -> str:
    """What kind of error ``text`` tells, without what it says: the type or channel
    before its first colon (with an HTTP status right after it), else ``error``."""
    text = text.strip()
    if _NAME.match(text):
        return text  # a bare type name (``TimeoutError``) is its own class
    found = _CLASS.match(text)
    if found is None:
        return "error"
    return found.group(1) + (f": {found.group(2)}" if found.group(2) else "")


def public_report(body: Any) -> Any:
    """``body`` with every error text (``last_error``, ``error``) replaced by its class."""
    if isinstance(body, dict):
        return {
            key: error_class(value)
            if key in ERROR_KEYS and isinstance(value, str)
            else public_report(value)
            for key, value in body.items()
        }
    if isinstance(body, list):
        return [public_report(item) for item in body]
    return body


def for_request(request: Request, answer: Response, token: bytes | None) -> Response:
    """``answer`` as this request may see it: whole with the token (or none set),
    else with error classes only."""
    status, content_type, body = answer
    if token is None:
        return answer
    given = presented_token(request.headers.raw)
    if given is not None and hmac.compare_digest(given.encode(), token):
        return answer
    try:
        report = json.loads(body)
    except ValueError:
        return status, content_type, b'{"error": "health report withheld"}'
    return status, content_type, json.dumps(public_report(report), indent=2).encode()
