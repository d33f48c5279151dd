"""``/api/v1``: the CLI's ``--format json`` rows over HTTP, for the same query.

Each route calls the read-layer function the CLI command calls and encodes with
:func:`~tracker.encode.jsonable`, so a script gets identical rows from either
(decimals as exact strings, times ISO-8601 UTC with ``Z``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import JSONResponse

from tracker.catalog import select_gpus
from tracker.encode import jsonable
from tracker.fx import USD
from tracker.recommend import ProfileError, WorkloadError
from tracker.views.obtainability import group_rows
from tracker.views.offers import offer_page
from tracker.views.rankings import profiles_of, rank_offers, ranking_rows
from tracker.web.context import context_of
from tracker.web.currency import currency_view, log_left_out
from tracker.web.errors import BadRequest
from tracker.web.paging import MAX_OFFSET, page_headers
from tracker.web.params import (
    GpuQuery,
    OfferQuery,
    check_gpus,
    check_known,
    check_limit,
    clean,
    offer_filters,
)

__all__ = ["router"]

router = APIRouter(prefix="/api/v1", tags=["api"])

OFFERS_PARAMS = (
    "gpu",
    "provider",
    "region",
    "pricing",
    "min_vram",
    "min_gpus",
    "sort",
    "limit",
    "offset",
    "currency",
)


def rows_response(rows: list[dict[str, Any]]) -> JSONResponse:
    return JSONResponse(jsonable(rows))


@router.get("/offers", summary="Current offers (gpu-tracker offers --format json)")
def api_offers(
    request: Request,
    filters: Annotated[OfferQuery, Depends(offer_filters)],
    limit: Annotated[int | None, Query(ge=1, description="Rows (default web.max_limit).")] = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Rows to skip.")] = 0,
    currency: Annotated[str, Query(max_length=10, description="View currency (ISO code).")] = USD,
) -> JSONResponse:
    """Listed offers at their current price, cheapest first: the rows of
    ``gpu-tracker offers --format json [--currency C]`` with the same filters, ``limit``
    of them from ``offset`` (ordered and cut by the database: a page costs its rows).
    ``X-Total-Count`` says how many match and ``Link: <…>; rel="next"`` where the next
    page is. Offers whose currency has no exchange rate are left out, as in the CLI,
    and logged."""
    context = context_of(request)
    check_known(request, OFFERS_PARAMS)
    check_limit(limit, context.settings.web.max_limit)
    check_gpus(context.engine, list(filters.where.gpu))
    now = datetime.now(UTC)  # the rates the SQL orders by are the ones rows show
    view = currency_view(context, currency, now)
    found = offer_page(
        context.engine,
        view,
        now,
        filters.where,
        sort=filters.sort,
        offset=offset,
        limit=limit or context.settings.web.max_limit,
    )
    log_left_out("/api/v1/offers", found.missing, view.code)
    return JSONResponse(jsonable(found.items), headers=page_headers(request, found, offset))


@router.get(
    "/obtainability", summary="How often offers could be rented, per provider × GPU × region"
)
def api_obtainability(request: Request, gpu: GpuQuery = None) -> JSONResponse:
    """Per provider, GPU model and region that reported availability in the last 30 days:
    the share of the last 7 and 30 days its offers were reported rentable (available or
    low; time without a report left out), pooled over the offers, and the median hours a
    sold-out offer took to come back. ``gpu`` narrows it to those models (a family name
    selects every variant)."""
    context = context_of(request)
    check_known(request, ("gpu",))
    names = clean(gpu)
    check_gpus(context.engine, names)
    models = None if not names else list(select_gpus(names).models)
    return rows_response(group_rows(context.engine, gpu_models=models))


@router.get("/recommend", summary="Ranking of a profile (gpu-tracker recommend --format json)")
def api_recommend(
    request: Request,
    profile: Annotated[str, Query(min_length=1, max_length=200)],
    top: Annotated[int, Query(ge=1, le=1000)] = 10,
    explain: bool = False,
) -> JSONResponse:
    """Offers ranked by the estimated cost of the profile's whole job: the rows of
    ``gpu-tracker recommend --profile P --top N [--explain] --format json``."""
    context = context_of(request)
    check_known(request, ("profile", "top", "explain"))
    try:
        profile_set = profiles_of(context.settings)
        found = rank_offers(
            context.engine,
            context.settings,
            profile_set.get(profile),
            profile_set=profile_set,
            top=top,
            explain=explain,
        )
    except (ProfileError, WorkloadError) as exc:
        raise BadRequest(str(exc)) from None
    log_left_out("/api/v1/recommend", found.conversion.missing)
    return rows_response(ranking_rows(found.ranking, explain))
