"""The dashboard's HTML pages, rendered on the server (tables work without JavaScript).

Every page reads through the read layer the CLI and /api/v1 use (:mod:`tracker.views`),
validates its query like the API (400 with a one-line reason) and turns a database
failure into a 503; a page's error is itself a page (:func:`error_page`), with the
navigation and a way back. What people read is written by :mod:`tracker.format`
(:mod:`tracker.web.reading` puts it in the templates).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query
from fastapi.templating import Jinja2Templates
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from tracker.catalog import all_specs, chip_unit
from tracker.encode import jsonable
from tracker.filters import OfferFilter
from tracker.format import pricing_label
from tracker.models import PricingModel
from tracker.recommend import ProfileError
from tracker.recommend.stored import profiles_for
from tracker.views import offers as offer_views
from tracker.views.errors import ReadError
from tracker.views.health import last_run_per_provider
from tracker.views.history import instance_history
from tracker.views.overview import (
    COLUMNS,
    SORTS,
    column_lows,
    overview,
    sort_rows,
    trend_pricing,
)
from tracker.views.profiles import profile_views
from tracker.web.context import HERE, context_of
from tracker.web.currency import left_out_line, page_view
from tracker.web.errors import BadRequest
from tracker.web.params import (
    GpuQuery,
    OfferQuery,
    PricingQuery,
    ProviderQuery,
    RegionQuery,
    check_gpus,
    check_known,
    clean,
    offer_filters,
)
from tracker.web.reading import install as install_reading
from tracker.web.svg import Series, Step, bars, sparkline, step_chart

__all__ = ["error_page", "page", "router", "templates"]

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.filters["iso"] = lambda v: "" if v is None else jsonable(v)
install_reading(templates.env)
templates.env.globals["urlencode"] = lambda params: urlencode(params, doseq=True)
templates.env.globals["sparkline"] = sparkline
templates.env.globals["bars"] = bars
templates.env.globals["catalog_names"] = frozenset(spec.name for spec in all_specs())

NAV = (
    ("/", "Overview"),
    ("/offers", "Offers"),
    ("/compare", "Compare"),
    ("/profiles", "Profiles"),
    ("/plan", "Plan"),
    ("/alerts", "Alerts"),
    ("/collectors", "Collectors"),
    ("/api/docs", "API"),
)


def page(request: Request, template: str, title: str, **values: Any) -> HTMLResponse:
    return templates.TemplateResponse(
        request, template, {"title": title, "nav": NAV, "path": request.url.path, **values}
    )


STATUS_TITLES = {
    400: "Bad request",
    404: "Not found",
    405: "Method not allowed",
    500: "Internal error",
    503: "Database unavailable",
}


def error_page(request: Request, status: int, reason: str) -> Response:
    """A page's error as a page: the navigation, what went wrong in one line, and the
    way back (this page without its query, or the Overview)."""
    path = request.url.path
    listed = any(path == href for href, _ in NAV)
    back = path if listed and request.url.query else "/"
    return templates.TemplateResponse(
        request,
        "error.html",
        {
            "title": STATUS_TITLES.get(status, f"Error {status}"),
            "nav": NAV,
            "path": path,
            "status": status,
            "reason": reason,
            "back": back,
            "back_label": "this page without its filters" if back != "/" else "the Overview",
        },
        status_code=status,
    )


def _filters(request: Request, names: tuple[str, ...]) -> dict[str, list[str]]:
    """The page's filters as given, for the form's values and the pager's links."""
    return {n: [v for v in request.query_params.getlist(n) if v.strip()] for n in names}


@router.get("/", response_class=HTMLResponse)
def overview_page(
    request: Request,
    gpu: GpuQuery = None,
    provider: ProviderQuery = None,
    region: RegionQuery = None,
    pricing: PricingQuery = None,
    sort: Annotated[str, Query(description="Column to sort by, cheapest first.")] = "on_demand",
) -> HTMLResponse:
    context = context_of(request)
    check_known(request, ("gpu", "provider", "region", "pricing", "sort"))
    if sort not in SORTS:
        raise BadRequest(f"sort: {sort!r} is not one of {', '.join(SORTS)}")
    view, now = page_view(context)
    names = clean(gpu)
    check_gpus(context.engine, names)
    where = OfferFilter.of(
        gpu=names, provider=clean(provider), region=clean(region), pricing=pricing
    )
    found = overview(context.engine, view.rates, now, where)
    return page(
        request,
        "overview.html",
        "Overview",
        rows=sort_rows(found.rows, sort),
        unit=chip_unit(r.gpu_model for r in found.rows),
        sort=sort,
        groups=COLUMNS,
        left_out=left_out_line(found.missing),
        filters=_filters(request, ("gpu", "provider", "region", "pricing")),
        lows=column_lows(found.rows),
        pricings=[p.value for p in PricingModel],
        trend_pricing=" / ".join(pricing_label(p.value) for p in trend_pricing(pricing)),
    )


OFFER_FILTERS = ("gpu", "provider", "region", "pricing", "min_vram", "min_gpus", "sort", "page")


@router.get("/offers", response_class=HTMLResponse)
def offers_page(
    request: Request,
    offers: Annotated[OfferQuery, Depends(offer_filters)],
    page_number: Annotated[int, Query(alias="page", ge=1, le=1_000_000)] = 1,
) -> HTMLResponse:
    context = context_of(request)
    check_known(request, OFFER_FILTERS)
    check_gpus(context.engine, list(offers.where.gpu))
    size = context.settings.web.page_size
    view, now = page_view(context)
    listing = offer_views.offer_page(
        context.engine,
        view,
        now,
        offers.where,
        sort=offers.sort,
        offset=(page_number - 1) * size,
        limit=size,
    )
    total = listing.total
    pages = max(1, math.ceil(total / size))
    if page_number > pages:
        raise BadRequest(f"page: {page_number} is past the last page ({pages})")
    return page(
        request,
        "offers.html",
        "Offers",
        rows=listing.items,
        unit=chip_unit(str(r["gpu_model"]) for r in listing.items),
        total=total,
        left_out=left_out_line(listing.missing),
        page=page_number,
        pages=pages,
        filters=_filters(request, OFFER_FILTERS[:-1]),
        pricings=[p.value for p in PricingModel],
        net=bool(view.discounts),
    )


def _series_name(s: Any) -> str:
    parts = [pricing_label(s.pricing, s.payment_option)]
    for extra in (s.zone, s.offering_class):
        if extra:
            parts.append(extra)
    return " ".join(parts)


@router.get("/offer", response_class=HTMLResponse)
def offer_page(
    request: Request,
    provider: Annotated[str, Query(min_length=1, max_length=64)],
    instance_type: Annotated[str, Query(min_length=1, max_length=128)],
    region: Annotated[str, Query(min_length=1, max_length=64)],
) -> HTMLResponse:
    """Every series of one instance type in one region: on-demand, spot (per zone) and
    reserved on one chart, and each one's raw intervals."""
    context = context_of(request)
    check_known(request, ("provider", "instance_type", "region"))
    view, now = page_view(context)
    try:
        found = instance_history(context.engine, view.rates, provider, instance_type, region)
    except ReadError as exc:
        raise BadRequest(str(exc)) from None
    chart_series, tables = [], []
    for h in found:
        name = _series_name(h.series)
        # An open interval's price is still in force: its line runs to now, as the
        # table's "until now" says (a delisting closes the interval).
        steps = [Step(p.first_seen, p.ended_at or now, u) for p, u in h.intervals if u is not None]
        chart_series.append(Series(name, steps))
        tables.append((name, h.series, h.intervals))
    first = found[0].series
    return page(
        request,
        "offer.html",
        f"{provider} {instance_type} {region}",
        chart=step_chart(
            chart_series,
            unit="USD/h",
            title=f"{instance_type} {region}",
            empty="No price with a USD figure is stored for this offer.",
            now=now,
        ),
        tables=tables,
        offer=first,
    )


@router.get("/collectors", response_class=HTMLResponse)
def collectors_page(request: Request) -> HTMLResponse:
    context = context_of(request)
    check_known(request, ())
    healthy, report = context.health() if context.health else (True, {"collectors": {}})
    return page(
        request,
        "collectors.html",
        "Collectors",
        healthy=healthy,
        report=report,
        jobs=[
            {**j, "status": job_status(j)}
            for j in sorted(report.get("collectors", {}).values(), key=lambda j: j["collector"])
        ],
        disabled=report.get("disabled", {}),
        last_runs=last_run_per_provider(context.engine),
    )


def job_status(job: dict[str, Any]) -> str:
    """What a job is doing or last did: running, or the outcome of its latest run.

    The service records each run's status as it ends; the dashboard alone rebuilds the
    report from the run log, which knows the last success and the last failure, so
    the later of the two is the status (``never run`` before either).
    """
    if job.get("running_since"):
        return "running"
    if job.get("last_status"):
        return str(job["last_status"])
    success, failure = job.get("last_success"), job.get("last_failure")
    if success is None and failure is None:
        return "never run"
    if failure is None or (
        success is not None and datetime.fromisoformat(success) >= datetime.fromisoformat(failure)
    ):
        return "succeeded"
    return "failed"


@router.get("/profiles", response_class=HTMLResponse)
def profiles_page(
    request: Request,
    profile: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    top: Annotated[int, Query(ge=1, le=100)] = 5,
) -> HTMLResponse:
    context = context_of(request)
    check_known(request, ("profile", "top"))
    try:
        found = profile_views(
            context.engine,
            context.settings,
            profiles_for(context.settings),
            top=top,
            only=profile,
        )
    except ProfileError as exc:
        raise BadRequest(str(exc)) from None
    left_out = left_out_line(found.missing)
    return page(request, "profiles.html", "Profiles", views=found.views, top=top, left_out=left_out)
