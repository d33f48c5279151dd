"""``/api/v1/history`` and ``/api/v1/compare``: the rows of ``gpu-tracker history`` and
``gpu-tracker compare`` with ``--format json``, from the same history functions.

The history route takes the command's options as parameters and picks the view the
same way: ``gpu`` → the cheapest offer per step; one ``provider``, ``instance_type``
and ``region`` → that offer's intervals (``at``: the one in force then), or its price
at each step with ``resample``. Argument errors are the history module's one line (400).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from tracker.cli.history import DEFAULT_STEP, gpu_selection
from tracker.cli.output import jsonable
from tracker.history import args as history_args
from tracker.history import views
from tracker.history.args import HistoryArgumentError
from tracker.history.compare import compare_rows, compare_without_rate
from tracker.models import PricingModel
from tracker.web.app import context_of
from tracker.web.currency import log_left_out
from tracker.web.errors import BadRequest
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


@router.get("/history", summary="Price history (gpu-tracker history --format json)")
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
    engine, now, fx_rates = context.engine, _now(), context.settings.fx_rates
    try:
        window = history_args.parse_window(since, until, now=now) if since or until else None
        if window is not None:
            check_time("since", window.since)
            check_time("until", window.until)
        check_time("at", at)
        grid_window = window or history_args.parse_window(None, None, now=now)
        rule = resample or DEFAULT_STEP
        names = clean(gpu)
        if names:
            if instance_type or at or zone is not None or payment_option is not None:
                raise HistoryArgumentError(
                    "gpu reads many offers: drop instance_type, zone, payment_option and at"
                )
            grid = history_args.make_grid(grid_window, history_args.parse_step(rule), rule)
            selection = gpu_selection(engine, names)
            where: dict[str, Any] = {
                "provider": clean(provider),
                "region": clean(region),
                "pricing": [pricing],
                "fx_rates": fx_rates,
            }
            rows = views.gpu_steps(engine, selection, grid, **where)
            # as the CLI: offers without a rate at some step never counted; say how many
            log_left_out(
                "/api/v1/history", views.gpu_steps_without_rate(engine, selection, grid, **where)
            )
            return JSONResponse(jsonable(rows))
        providers, regions = clean(provider) or [], clean(region) or []
        if not instance_type or len(providers) != 1 or len(regions) != 1:
            raise HistoryArgumentError(
                "history needs gpu, or one provider, instance_type and one region for one offer"
            )
        offer = views.OfferKey(
            providers[0], instance_type, regions[0], pricing, zone, payment_option
        )
        if at is not None:
            if resample or window:
                raise HistoryArgumentError("at reads one time: drop since/until/resample")
            moment = at.replace(tzinfo=UTC) if at.tzinfo is None else at
            rows = views.offer_intervals(engine, offer, at=moment, fx_rates=fx_rates)
        elif resample is None:
            rows = views.offer_intervals(engine, offer, window=window, fx_rates=fx_rates)
        else:
            grid = history_args.make_grid(grid_window, history_args.parse_step(rule), rule)
            rows = views.offer_steps(engine, offer, grid, fx_rates=fx_rates)
    except HistoryArgumentError as exc:
        raise BadRequest(str(exc)) from None
    except OverflowError:  # an age or a step longer than a datetime holds (99999999d)
        raise BadRequest("since, until or resample: out of range") from None
    return JSONResponse(jsonable(rows))


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
    names = clean(gpu)
    try:
        selection = gpu_selection(context.engine, names) if names else None
    except HistoryArgumentError as exc:
        raise BadRequest(str(exc)) from None
    where: dict[str, Any] = {
        "now": _now(),
        "gpu": selection,
        "provider": clean(provider),
        "fx_rates": context.settings.fx_rates,
    }
    rows = compare_rows(context.engine, **where)
    log_left_out(route, compare_without_rate(context.engine, **where))
    return rows


@page_router.get("/compare", response_class=HTMLResponse)
def compare_page(
    request: Request, gpu: GpuQuery = None, provider: ProviderQuery = None
) -> HTMLResponse:
    """``compare`` as a page: per GPU × provider the cheapest figures now and the 7- and
    30-day change of on-demand (history reads at three times: slower than the Overview)."""
    from tracker.web.pages import page

    rows = _compare(request, gpu, provider, "/compare")
    filters = {"gpu": clean(gpu) or [], "provider": clean(provider) or []}
    return page(request, "compare.html", "Compare", rows=rows, filters=filters)
