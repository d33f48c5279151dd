"""Every failure in one line: bad input 400, unknown path 404, database 503.

A client never sees a traceback or a framework's nested error list: validation
errors are folded into ``parameter: what is wrong`` and a database that went away
is a 503 whose message carries no password (``DatabaseError`` is already one line).

Who asked decides the form. ``/api/``, the probes and /metrics answer
``{"error": "…"}``, as a script expects; a dashboard page answers an HTML page with
the site's navigation, the same line and a way back, because a person followed a
link there and must not be stranded on a line of JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tracker.errors import one_line
from tracker.store import DatabaseError

__all__ = [
    "ALLOW",
    "BadRequest",
    "error_response",
    "install_error_handlers",
    "validation_line",
    "wants_json",
]

log = logging.getLogger(__name__)

ALLOW = "GET, HEAD"
"""What every route of this read-only app takes (the ``Allow`` of a 405)."""
JSON_PREFIXES = ("/api/", "/static/")
JSON_PATHS = frozenset({"/api", "/metrics", "/livez", "/readyz", "/healthz", "/health"})

HtmlError = Callable[[Request, int, str], Response]
"""Renders a page's error (the pages module's, installed by create_app)."""


class BadRequest(Exception):
    """A query the routes reject themselves (an unknown profile, a GPU name…)."""


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    line = " ".join(message.split())
    return JSONResponse(
        {"error": line},
        status_code=status,
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def wants_json(path: str) -> bool:
    """The API, the probes, /metrics and static files answer errors as JSON."""
    return path in JSON_PATHS or path.startswith(JSON_PREFIXES)


def validation_line(errors: Any) -> str:
    """``limit: Input should be greater than or equal to 1; sort: …`` in one line."""
    parts = []
    for e in errors:
        where = [str(p) for p in e.get("loc", ()) if p not in ("query", "path", "body")]
        given = e.get("input")
        shown = f" (got {given!r})" if isinstance(given, str | int | float) else ""
        parts.append(f"{'.'.join(where) or 'request'}: {_reason(e)}{shown}")
    return "; ".join(parts) or "invalid request"


def _reason(error: Any) -> str:
    """Pydantic's words, except a pattern too long to read: a time's (the API's one
    time syntax) is said in words, any other points to the document."""
    pattern = str((error.get("ctx") or {}).get("pattern", ""))
    if error.get("type") != "string_pattern_mismatch" or len(pattern) <= 60:
        return str(error.get("msg", "invalid"))
    if pattern.startswith("^(now|today|yesterday|"):
        return (
            "not a time: use now, today, yesterday, an age (7d, 12h, 2w) or an ISO date "
            "from 2000 to 2999 (2026-01-01, 2026-01-01T10:30:00Z)"
        )
    if pattern.startswith("^(0*[1-9][0-9]{0,8}"):
        return "not a decimal above zero and at most 1,000,000,000 (e.g. 16 or 0.5)"
    if pattern.startswith("^0*([0-9]{1,9}"):
        return "not a decimal from 0 to 1,000,000,000 (e.g. 16 or 0.5)"
    return "not in the form /api/openapi.json gives"


def install_error_handlers(
    app: FastAPI, *, hint: str | None = None, html: HtmlError | None = None
) -> None:
    """JSON errors everywhere, or ``html``'s page for the dashboard's paths when given."""

    def answer(
        request: Request, status: int, message: str, headers: dict[str, str] | None = None
    ) -> Response:
        if html is None or wants_json(request.url.path):
            return error_response(status, message, headers)
        response = html(request, status, " ".join(message.split()))
        response.headers.update({"Cache-Control": "no-store", **(headers or {})})
        return response

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return answer(request, 400, validation_line(exc.errors()))

    async def bad(request: Request, exc: Exception) -> Response:
        return answer(request, 400, str(exc))

    async def database(request: Request, exc: Exception) -> Response:
        log.warning("%s %s: %s", request.method, request.url.path, one_line(exc))
        return answer(request, 503, f"database unavailable: {exc}")

    async def http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        headers = None
        if exc.status_code == 404:
            message = f"not found: {request.url.path}" + (f"; try {hint}" if hint else "")
        elif exc.status_code == 405:
            message = f"{request.method} not allowed: this service is read-only (GET, HEAD)"
            headers = {"Allow": ALLOW}
        else:
            message = str(exc.detail)
        return answer(request, exc.status_code, message, headers)

    async def unexpected(request: Request, exc: Exception) -> Response:
        log.error("%s %s failed: %s", request.method, request.url.path, one_line(exc))
        return answer(request, 500, "internal error (logged)")

    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(BadRequest, bad)
    app.add_exception_handler(DatabaseError, database)
    app.add_exception_handler(HTTPException, http)
    app.add_exception_handler(Exception, unexpected)
