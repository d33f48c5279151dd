"""Every failure as one line of JSON: bad input 400, unknown path 404, database 503.

A client never sees a traceback or a framework's nested error list: validation
errors are folded into ``parameter: what is wrong`` and a database that went away
is a 503 whose message carries no password (``DatabaseError`` is already one line).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from tracker.errors import one_line
from tracker.store.engine import DatabaseError

__all__ = ["BadRequest", "error_response", "install_error_handlers", "validation_line"]

log = logging.getLogger(__name__)


class BadRequest(Exception):
    """A query the routes reject themselves (an unknown profile, a GPU name…)."""


def error_response(status: int, message: str) -> JSONResponse:
    line = " ".join(message.split())
    return JSONResponse({"error": line}, status_code=status, headers={"Cache-Control": "no-store"})


def validation_line(errors: Any) -> str:
    """``limit: Input should be greater than or equal to 1; sort: …`` in one line."""
    parts = []
    for e in errors:
        where = [str(p) for p in e.get("loc", ()) if p not in ("query", "path", "body")]
        given = e.get("input")
        shown = f" (got {given!r})" if isinstance(given, str | int | float) else ""
        parts.append(f"{'.'.join(where) or 'request'}: {e.get('msg', 'invalid')}{shown}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI, *, hint: str | None = None) -> None:
    async def invalid(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(400, validation_line(exc.errors()))

    async def bad(_request: Request, exc: Exception) -> JSONResponse:
        return error_response(400, str(exc))

    async def database(request: Request, exc: Exception) -> JSONResponse:
        log.warning("%s %s: %s", request.method, request.url.path, one_line(exc))
        return error_response(503, f"database unavailable: {exc}")

    async def http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            message = f"not found: {request.url.path}" + (f"; try {hint}" if hint else "")
        elif exc.status_code == 405:
            message = f"{request.method} not allowed: this service is read-only"
        else:
            message = str(exc.detail)
        return error_response(exc.status_code, message)

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed: %s", request.method, request.url.path, one_line(exc))
        return error_response(500, "internal error (logged)")

    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(BadRequest, bad)
    app.add_exception_handler(DatabaseError, database)
    app.add_exception_handler(HTTPException, http)
    app.add_exception_handler(Exception, unexpected)
