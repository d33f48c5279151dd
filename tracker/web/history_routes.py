"""``/api/v1/history/gpu``, ``/api/v1/history/offer`` and ``/api/v1/history/offer/at``:
the three questions ``/api/v1/history`` answers, one route each, so that the OpenAPI
document says exactly what each accepts.

``/api/v1/history`` takes a GPU *or* one offer's provider, instance type and region,
``at`` only without a window, and windows whose ends may cross: a schema cannot state
those combinations, so a request the document allowed was refused (schemathesis found
three such). Here every parameter is either required or free, every time matches
:data:`~tracker.web.params.TIME_PATTERN`, and what used to be a 400 between valid
parameters has an answer:

* a window whose ``since`` is not before its ``until`` (``since=7d&until=30d``), or
  that no step of ``resample`` falls in, holds nothing: ``[]``;
* ``until`` after now reads to now (the store holds no later price), and steps start at
  the first stored observation (rows before it were never answered), so
  ``since=2000-01-01&resample=1h`` reads the hours with data; more than
  :data:`~tracker.history.args.MAX_POINTS` of those is still a 400 (documented);
* one offer the store does not have is a 404.

The rows are ``/api/v1/history``'s (:func:`tracker.views.history.read_history`), with
the ``X-Data-Since`` header; that route stays for existing scripts.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import JSONResponse

from tracker.encode import jsonable
from tracker.format import iso_z
from tracker.history import args as history_args
from tracker.history.args import EmptyGrid, HistoryArgumentError
from tracker.models import PricingModel
from tracker.views.history import HistoryQuery, first_stored, read_history
from tracker.web.context import context_of
from tracker.web.currency import log_left_out
from tracker.web.errors import BadRequest, error_response
from tracker.web.params import (
    ONE_NAME_PATTERN,
    STEP_PATTERN,
    TIME_PATTERN,
    ProviderQuery,
    RegionQuery,
    check_known,
    check_time,
    clean,
)

__all__ = ["router"]

router = APIRouter(prefix="/api/v1/history", tags=["api"])

Time = Annotated[str | None, Query(pattern=TIME_PATTERN)]
Step = Annotated[str | None, Query(pattern=STEP_PATTERN)]
Gpus = Annotated[
    list[str],
    Query(min_length=1, description="GPU model or family, e.g. H100 or H100-SXM; repeatable."),
]
Name = Annotated[str, Query(min_length=1, max_length=200, pattern=ONE_NAME_PATTERN)]
Instance = Annotated[str, Query(min_length=1, max_length=128, pattern=ONE_NAME_PATTERN)]
Zone = Annotated[str | None, Query(max_length=64)]
Payment = Annotated[str | None, Query(max_length=32)]
DEFAULT_SPAN = timedelta(days=30)
OFFER = ("provider", "instance_type", "region", "pricing", "zone", "payment_option")


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _time(name: str, text: str | None, now: datetime) -> datetime | None:
    if text is None:
        return None
    return check_time(name, history_args.parse_time(text, name, now=now))


def _answer(request: Request, q: HistoryQuery, *, offer: bool, steps: bool) -> JSONResponse:
    """The rows of ``q`` over its window, read as the module docstring says."""
    context = context_of(request)
    now = _now()
    try:
        until = min(_time("until", q.until, now) or now, now)
        since = _time("since", q.since, now) or until - DEFAULT_SPAN
        stored = first_stored(context.engine, q)
    except HistoryArgumentError as exc:  # an unknown GPU name
        raise BadRequest(str(exc).replace("--gpu ", "gpu: ", 1)) from None
    if stored is None and offer:
        return error_response(404, f"no stored offer {_described(q)}")
    headers = {"X-Data-Since": iso_z(stored)} if stored else None
    if steps and stored is not None:
        since = max(since, stored)
    if stored is None or (since >= until and (steps or q.since or q.until)):
        return JSONResponse([], headers=headers)
    windowed = steps or q.since is not None or q.until is not None
    # intervals: every stored one, unless a window was asked for
    window = replace(q, since=iso_z(since), until=iso_z(until)) if windowed else q
    try:
        result = read_history(context.engine, context.settings, window, now=now, steps=steps)
    except EmptyGrid:
        return JSONResponse([], headers=headers)
    except HistoryArgumentError as exc:  # more than MAX_POINTS steps with data
        raise BadRequest(str(exc).replace("--", "")) from None
    if result.without_rate:
        log_left_out(request.url.path, result.without_rate)
    return JSONResponse(jsonable(result.rows), headers=headers)


def _described(q: HistoryQuery) -> str:
    parts = [*(q.provider or ()), q.instance_type or "", *(q.region or ()), q.pricing.value]
    return " ".join(p for p in (*parts, q.zone, q.payment_option) if p)


@router.get("/gpu", summary="A GPU's cheapest offer at each step (history --gpu)")
def history_gpu(
    request: Request,
    gpu: Gpus,
    pricing: PricingModel = PricingModel.ON_DEMAND,
    provider: ProviderQuery = None,
    region: RegionQuery = None,
    since: Time = None,
    until: Time = None,
    resample: Step = None,
) -> JSONResponse:
    """At each step of the window, the matching offer with the lowest USD price per
    GPU-hour: the rows of ``gpu-tracker history --gpu G --format json``. Daily steps
    unless ``resample`` says otherwise; no rows before the first stored price."""
    check_known(request, ("gpu", "pricing", "provider", "region", "since", "until", "resample"))
    names = clean(gpu)
    if not names:
        raise BadRequest("gpu: give a GPU model or family")
    q = HistoryQuery(
        gpu=names,
        provider=clean(provider),
        region=clean(region),
        pricing=pricing,
        since=since,
        until=until,
        resample=resample or "1d",
    )
    return _answer(request, q, offer=False, steps=True)


@router.get("/offer", summary="One offer's prices (history --provider … --instance-type …)")
def history_offer(
    request: Request,
    provider: Name,
    instance_type: Instance,
    region: Name,
    pricing: PricingModel = PricingModel.ON_DEMAND,
    zone: Zone = None,
    payment_option: Payment = None,
    since: Time = None,
    until: Time = None,
    resample: Step = None,
) -> JSONResponse:
    """One offer's price intervals overlapping the window, or with ``resample`` its
    price at each step (per zone for spot): ``gpu-tracker history --provider P
    --instance-type T --region R [--resample 1d] --format json``. 404: no such offer."""
    check_known(request, (*OFFER, "since", "until", "resample"))
    q = _offer(provider, instance_type, region, pricing, zone, payment_option)
    window = replace(q, since=since, until=until, resample=resample)
    return _answer(request, window, offer=True, steps=resample is not None)


@router.get("/offer/at", summary="One offer's price at one time (history … --at)")
def history_offer_at(
    request: Request,
    provider: Name,
    instance_type: Instance,
    region: Name,
    at: Annotated[str, Query(pattern=TIME_PATTERN)],
    pricing: PricingModel = PricingModel.ON_DEMAND,
    zone: Zone = None,
    payment_option: Payment = None,
) -> JSONResponse:
    """The offer's interval in force at ``at`` (per zone for spot; none if it was not
    listed then): ``gpu-tracker history … --at T --format json``. 404: no such offer."""
    check_known(request, (*OFFER, "at"))
    context = context_of(request)
    now = _now()
    q = _offer(provider, instance_type, region, pricing, zone, payment_option)
    moment = _time("at", at, now)
    stored = first_stored(context.engine, q)
    if stored is None:
        return error_response(404, f"no stored offer {_described(q)}")
    at_q = replace(q, at=moment)
    result = read_history(context.engine, context.settings, at_q, now=now)
    return JSONResponse(jsonable(result.rows), headers={"X-Data-Since": iso_z(stored)})


def _offer(
    provider: str,
    instance_type: str,
    region: str,
    pricing: PricingModel,
    zone: str | None,
    payment_option: str | None,
) -> HistoryQuery:
    return HistoryQuery(
        provider=clean([provider]),
        instance_type=instance_type.strip(),
        region=clean([region]),
        pricing=pricing,
        zone=zone,
        payment_option=payment_option,
    )
