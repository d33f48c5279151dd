"""The Alerts page and ``/api/v1/alerts``: recent alerts and their delivery status.

Rows are the ones ``gpu-tracker alerts list --format json`` prints (the alerts module's
``alert_rows`` over ``list_alerts``); each alert reads as its ``message``, the line
Slack and email show (:mod:`tracker.alerts.render`, escaped here by Jinja's
autoescape). The page also marks channels whose latest delivery failed, so a broken
webhook is seen before anyone misses an alert.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from tracker.encode import jsonable
from tracker.redact import secrets_of
from tracker.views.alerts import alerts, parse_since
from tracker.web.context import context_of
from tracker.web.errors import BadRequest
from tracker.web.pages import page
from tracker.web.params import TIME_PATTERN, check_known, check_time

__all__ = ["api_router", "router"]

router = APIRouter(include_in_schema=False)
api_router = APIRouter(prefix="/api/v1", tags=["api"])

SinceQuery = Annotated[
    str | None,
    Query(pattern=TIME_PATTERN, description="Only alerts since: an age (24h, 7d) or a time."),
]
FailedQuery = Annotated[bool, Query(description="Only dead deliveries.")]
LimitQuery = Annotated[int, Query(ge=1, le=10000)]


def _rows(request: Request, since: str | None, failed: bool, limit: int) -> list[dict[str, Any]]:
    check_known(request, ("since", "failed", "limit"))
    try:
        start = check_time("since", parse_since(since))
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    except OverflowError:  # an age longer than a datetime holds (99999999w)
        raise BadRequest(f"since: {since!r} is out of range") from None
    context = context_of(request)
    secrets = secrets_of(context.settings)
    return alerts(context.engine, since=start, failed=failed, limit=limit, secrets=secrets)


@api_router.get("/alerts", summary="Recent alerts (gpu-tracker alerts list --format json)")
def api_alerts(
    request: Request,
    since: SinceQuery = None,
    failed: FailedQuery = False,
    limit: LimitQuery = 200,
) -> JSONResponse:
    """Alerts newest first, one row per channel with its delivery status."""
    return JSONResponse(jsonable(_rows(request, since, failed, limit)))


def failing_channels(rows: list[dict[str, Any]]) -> set[str]:
    """Channels whose most recent delivery (rows are newest first) gave up (``dead``) or
    is being retried after a failed attempt."""
    latest: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["channel"] is not None:
            latest.setdefault(row["channel"], row)
    return {
        channel
        for channel, row in latest.items()
        if row["status"] == "dead" or (row["status"] == "pending" and row["attempts"] > 0)
    }


@router.get("/alerts", response_class=HTMLResponse)
def alerts_page(
    request: Request,
    since: SinceQuery = None,
    failed: FailedQuery = False,
    limit: LimitQuery = 200,
) -> HTMLResponse:
    rows = _rows(request, since, failed, limit)
    return page(request, "alerts.html", "Alerts", rows=rows, failing=failing_channels(rows))
