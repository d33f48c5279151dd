"""A health report as anyone may read it: each error text replaced by its class.

Shared by the dashboard's probes (:mod:`tracker.web.public_health`, which shows the whole
report to a request with the token) and ``serve`` with the dashboard off
(:mod:`tracker.serving`), whose bare probe app checks no token: with one configured, its
reports always show classes. Kept apart from both so neither loads the other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["HEALTH_PATHS", "error_class", "public_body", "public_report", "public_route"]

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


Answer = tuple[int, str, bytes]


def public_body(body: bytes) -> bytes:
    """A JSON health report's bytes with every error text replaced by its class (one
    that is not JSON is withheld whole)."""
    try:
        report = json.loads(body)
    except ValueError:
        return b'{"error": "health report withheld"}'
    return json.dumps(public_report(report), indent=2).encode()


def public_route(route: Callable[[], Answer]) -> Callable[[], Answer]:
    """A probe route whose JSON report shows error classes only."""

    def answer() -> Answer:
        status, kind, body = route()
        return status, kind, public_body(body)

    return answer
