"""``/api/v1/history`` and ``/api/v1/compare``: the rows of ``gpu-tracker history`` and
``gpu-tracker compare`` with ``--format json``, from the same history functions.

The history route takes the command's options as parameters and picks the view the
same way: ``gpu`` → the cheapest offer per step; one ``provider``, ``instance_type``
and ``region`` → that offer's intervals (``at``: the one in force then), or its price
at each step with ``resample``. Argument errors are the history module's one line (400).
The ``X-Data-Since`` header says when the store's data for the question begins (the
rows leave out the steps before it).

``/api/v1/history`` stays for the scripts that call it, answering as it always did, but
is left out of the OpenAPI document: its parameters go in combinations a schema cannot
state. The document describes :mod:`tracker.web.history_routes` instead, one route per
question.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from tracker.encode import jsonable
from tracker.format import iso_z
from tracker.history import args as history_args
from tracker.history.args import HistoryArgumentError
from tracker.models import PricingModel
from tracker.views.history import HistoryQuery, compare, read_history
from tracker.web.context import context_of
from tracker.web.currency import log_left_out
from tracker.web.errors import BadRequest
from tracker.web.pages import page
from tracker.web.params import (
    GpuQuery,
    ProviderQuery,
    RegionQuery,
    check_known,
    check_time,
    clean,
)

__all__ = ["page_router", "router"]

router = APIRouter(prefix="/api/v1", tags=["api"])
page_router = APIRouter(include_in_schema=False)

Text = Annotated[str | None, Query(min_length=1, max_length=128)]
HISTORY_PARAMS = (
    "gpu",
    "provider",
    "instance_type",
    "region",
    "pricing",
    "zone",
    "payment_option",
    "since",
    "until",
    "resample",
    "at",
)


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@router.get(
    "/history", summary="Price history (gpu-tracker history --format json)", include_in_schema=False
)
def api_history(
    request: Request,
    gpu: GpuQuery = None,
    provider: ProviderQuery = None,
    instance_type: Text = None,
    region: RegionQuery = None,
    pricing: PricingModel = PricingModel.ON_DEMAND,
    zone: Annotated[str | None, Query(max_length=64)] = None,
    payment_option: Annotated[str | None, Query(max_length=32)] = None,
    since: Text = None,
    until: Text = None,
    resample: Annotated[str | None, Query(min_length=1, max_length=16)] = None,
    at: datetime | None = None,
) -> JSONResponse:
    """One offer's intervals or resampled steps, or a GPU's cheapest offer per step."""
    context = context_of(request)
    check_known(request, HISTORY_PARAMS)
    query = HistoryQuery(
        gpu=clean(gpu),
        provider=clean(provider),
        instance_type=instance_type,
        region=clean(region),
        pricing=pricing,
        zone=zone,
        payment_option=payment_option,
        since=since,
        until=until,
        resample=resample,
        at=at,
    )
    try:
        now = _now()
        for name, text in (("since", since), ("until", until)):
            if text:  # a time a datetime holds, between 1900 and 9999
                check_time(name, history_args.parse_time(text, f"--{name}", now=now))
        check_time("at", at)
        result = read_history(context.engine, context.settings, query, now=now)
    except HistoryArgumentError as exc:
        raise BadRequest(str(exc)) from None
    except OverflowError:  # an age or a step longer than a datetime holds (99999999d)
        raise BadRequest("since, until or resample: out of range") from None
    if result.without_rate:
        # as the CLI: offers without a rate at some step never counted; say how many
        log_left_out("/api/v1/history", result.without_rate)
    headers = {"X-Data-Since": iso_z(result.data_since)} if result.data_since else None
    return JSONResponse(jsonable(result.rows), headers=headers)


@router.get("/compare", summary="Cheapest per GPU × provider (gpu-tracker compare --format json)")
def api_compare(
    request: Request, gpu: GpuQuery = None, provider: ProviderQuery = None
) -> JSONResponse:
    """Per GPU model × provider the cheapest on-demand, spot, reserved $/GPU-hour now, the
    spot discount and the 7- and 30-day change of on-demand."""
    return JSONResponse(jsonable(_compare(request, gpu, provider, "/api/v1/compare")))


def _compare(
    request: Request, gpu: list[str] | None, provider: list[str] | None, route: str
) -> list[dict[str, Any]]:
    """The compare rows for the API and the page alike (400 for an unknown GPU name),
    in USD at the stored rates and ``fx_rates`` as the CLI's; offers left out for want
    of a rate are logged."""
    context = context_of(request)
    check_known(request, ("gpu", "provider"))
    try:
        found = compare(
            context.engine, context.settings, gpu=clean(gpu), provider=clean(provider), now=_now()
        )
    except HistoryArgumentError as exc:
        raise BadRequest(str(exc)) from None
    log_left_out(route, found.without_rate)
    return found.rows


@page_router.get("/compare", response_class=HTMLResponse)
def compare_page(
    request: Request, gpu: GpuQuery = None, provider: ProviderQuery = None
) -> HTMLResponse:
    """``compare`` as a page: per GPU × provider the cheapest figures now and the 7- and
    30-day change of on-demand (history reads at three times: slower than the Overview)."""
    rows = _compare(request, gpu, provider, "/compare")
    filters = {"gpu": clean(gpu) or [], "provider": clean(provider) or []}
    net = bool(context_of(request).settings.discounts)
    return page(request, "compare.html", "Compare", rows=rows, filters=filters, net=net)
