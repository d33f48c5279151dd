"""Query parameters shared by the pages and /api/v1, validated before any query runs.

FastAPI checks types and ranges; this module adds what it does not: a parameter the
route does not know is an error (a typo such as ``gpus=`` must not silently return
every offer), and ``limit`` is bounded by ``web.max_limit``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlencode

from fastapi import Query
from starlette.requests import Request

from tracker.filters import OfferFilter
from tracker.history.args import HistoryArgumentError, require_gpus
from tracker.models import PricingModel
from tracker.store import Engine
from tracker.store.reads import stored_gpu_names
from tracker.views.offers import SortKey
from tracker.web.errors import BadRequest

__all__ = [
    "DECIMAL",
    "NAME_PATTERN",
    "ONE_NAME_PATTERN",
    "POSITIVE",
    "STEP_PATTERN",
    "TIME_PATTERN",
    "DropEmptyFilters",
    "GpuQuery",
    "MinQuery",
    "OfferQuery",
    "PricingQuery",
    "ProviderQuery",
    "RegionQuery",
    "SortQuery",
    "check_gpus",
    "check_known",
    "check_limit",
    "check_time",
    "clean",
    "offer_filters",
]

NAME_PATTERN = "^[ -~]*$"
"""A provider's or region's name: printable ASCII (what every cloud uses), at most
200 characters; the OpenAPI document says so and :func:`clean` enforces it."""

ONE_NAME_PATTERN = "^[ -~]*[!-~][ -~]*$"
"""One offer's provider, instance type or region: printable ASCII, not blank."""

_LEAP = "2[0-9](0[48]|[2468][048]|[13579][26])|2[048]00"
_DATE = (
    "2[0-9]{3}-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)"
    f"|(0[13578]|1[02])-31)|({_LEAP})-02-29"
)
_CLOCK = (
    "T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?"
    "(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?"
)
_AGE = (
    "([0-9]{1,3}(\\.[0-9]{1,3})?w|[0-9]{1,4}(\\.[0-9]{1,3})?d|[0-9]{1,5}(\\.[0-9]{1,3})?h"
    "|[0-9]{1,7}(\\.[0-9]{1,3})?m|[0-9]{1,9}(\\.[0-9]{1,3})?s)( ago)?"
)
TIME_PATTERN = f"^(now|today|yesterday|{_AGE}|({_DATE})({_CLOCK})?)$"
"""A time as the API takes it, exactly: ``now``, ``today``, ``yesterday``; an age
before now (``30d``, ``12h``, ``2w``, ``90m``, ``45s``, ``1.5d``, ``7d ago``: at most
999 weeks, 9,999 days, 99,999 hours…); or an ISO-8601 date from 2000 to 2999, each day
one the calendar has, with an optional time (``T10:30``, ``T10:30:00.5``) and offset
(``Z``, ``+02:00``; none: UTC). Every text matching it is a time the history reads
(:func:`tracker.history.args.parse_time`), so the OpenAPI document promises exactly
what is accepted; the CLI's own parser takes more spellings."""

STEP_PATTERN = "^[1-9][0-9]{0,3}[hdw]$"
"""A resampling step: 1 to 9,999 hours, days or weeks (``1h``, ``6h``, ``1d``, ``1w``)."""

GpuQuery = Annotated[
    list[str] | None,
    Query(description="GPU model or family, e.g. H100 (every variant) or h100-sxm; repeatable."),
]
ProviderQuery = Annotated[list[str] | None, Query(description="Provider; repeatable.")]
RegionQuery = Annotated[list[str] | None, Query(description="Region; repeatable.")]
PricingQuery = Annotated[list[PricingModel] | None, Query(description="Pricing model; repeatable.")]
MinQuery = Annotated[float | None, Query(ge=0, allow_inf_nan=False)]
SortQuery = Annotated[
    SortKey,
    Query(
        description=(
            "price (per hour) or price_per_gpu (per GPU; per chip where the offer is a "
            "TPU, Trainium or Inferentia)."
        )
    ),
]


@dataclass(frozen=True)
class OfferQuery:
    """What /api/v1/offers and the Offers page both take, parsed once: the offers
    (:class:`~tracker.filters.OfferFilter`, blanks dropped) and their order."""

    where: OfferFilter
    sort: SortKey


DECIMAL = r"^0*([0-9]{1,9}(\.[0-9]+)?|1000000000(\.0+)?)$"
"""A decimal from 0 to 1,000,000,000 (:data:`tracker.recommend.demand.MAX_QUANTITY`, the
cap every plan quantity has), written out so the document says exactly what is taken."""
POSITIVE = r"^(0*[1-9][0-9]{0,8}(\.[0-9]+)?|0*1000000000(\.0+)?|0+\.[0-9]*[1-9][0-9]*)$"
"""A decimal above zero and at most 1,000,000,000 (``16``, ``0.5``; not ``0`` or ``0.00``)."""


def offer_filters(
    gpu: GpuQuery = None,
    provider: ProviderQuery = None,
    region: RegionQuery = None,
    pricing: PricingQuery = None,
    min_vram: MinQuery = None,
    min_gpus: MinQuery = None,
    sort: SortQuery = SortKey.price,
) -> OfferQuery:
    """The offers filters as one FastAPI dependency, so the API and the page declare and
    clean them in one place (their OpenAPI parameters stay flat)."""
    where = OfferFilter.of(
        gpu=clean(gpu),
        provider=clean(provider),
        region=clean(region),
        pricing=pricing,
        min_vram=min_vram,
        min_gpus=min_gpus,
    )
    return OfferQuery(where, sort)


def check_known(request: Request, known: Iterable[str]) -> None:
    """Reject a query parameter the route does not take."""
    unknown = sorted(set(request.query_params) - set(known))
    if unknown:
        raise BadRequest(
            f"unknown query parameter(s) {', '.join(unknown)} (this route takes "
            f"{', '.join(sorted(known)) or 'none'})"
        )


def check_gpus(engine: Engine, names: list[str] | None) -> None:
    """Reject a GPU name that selects nothing (neither the catalog's nor a stored one),
    as ``history`` and ``compare`` do: an empty answer would hide the typo."""
    if names:
        try:
            require_gpus(names, lambda wanted: stored_gpu_names(engine, wanted))
        except HistoryArgumentError as exc:
            raise BadRequest(str(exc).replace("--gpu ", "gpu: ", 1)) from None


EARLIEST = datetime(1900, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)
"""The times a query may name: any UTC offset keeps them inside what Python and the
databases represent (year 1 or 9999 with an offset overflows)."""


def check_time(name: str, moment: datetime | None) -> datetime | None:
    """``moment`` (naive: UTC) if it lies between 1900 and 9999, else a 400 naming it."""
    if moment is None:
        return None
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    try:
        inside = EARLIEST <= aware <= LATEST
    except OverflowError:
        inside = False
    if not inside:
        raise BadRequest(f"{name}: {moment.isoformat()} is out of range (years 1900 to 9999)")
    return aware


def check_limit(limit: int | None, maximum: int) -> None:
    if limit is not None and limit > maximum:
        raise BadRequest(f"limit: at most {maximum} rows per request (web.max_limit)")


def clean(values: list[str] | None) -> list[str] | None:
    """Repeatable text filters without blanks (``?provider=`` means no filter)."""
    if not values:
        return None
    for v in values:
        if len(v) > 200 or not (v.isascii() and v.isprintable()):
            raise BadRequest(f"filter value {v[:40]!r}… is not a name (printable ASCII)")
    kept = [v.strip() for v in values if v.strip()]
    return kept or None


class DropEmptyFilters:
    """An empty form field (``?pricing=&min_vram=``) means "no filter" on the pages.

    A plain HTML form submits every field, filled or not; the pages must work without
    JavaScript, so empty values are removed from the query string before validation.
    /api/v1 is left alone: an empty parameter there is the caller's mistake (400).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not scope["path"].startswith("/api/"):
            pairs = parse_qsl(
                scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True
            )
            kept = [(k, v) for k, v in pairs if v.strip()]
            if len(kept) != len(pairs):
                scope = dict(scope, query_string=urlencode(kept).encode("latin-1"))
        await self.app(scope, receive, send)
