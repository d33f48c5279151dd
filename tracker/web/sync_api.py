"""``/api/v1/sync/…``: a team server's current prices for another gpu-tracker to copy.

``gpu-tracker collect -p remote`` on a laptop (collectors/remote.py) reads these two
routes and stores what they list under each offer's original provider and currency,
at the server's observation times. Each answer carries an ETag computed from its rows
(:func:`tracker.views.sync.etag_of`); a client that sends it back in
``If-None-Match`` gets ``304 Not Modified`` with no body while nothing changed.
Guarded by the web token like the rest of /api/v1.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tracker.views.sync import SYNC_VERSION, etag_of, sync_offer_rows, sync_service_rows
from tracker.web.context import context_of
from tracker.web.params import check_known

__all__ = ["matches", "router"]

router = APIRouter(prefix="/api/v1/sync", tags=["api"])

_TEXT = {"type": "string"}
_MAYBE_TEXT = {"type": ["string", "null"]}
_OFFER = {
    "type": "object",
    "required": [
        "provider",
        "instance_type",
        "region",
        "zone",
        "pricing",
        "price_per_hour",
        "currency",
        "gpu_model",
        "gpu_count",
        "price_since",
        "last_seen",
    ],
    "properties": {
        "provider": _TEXT,
        "instance_type": _TEXT,
        "region": _TEXT,
        "zone": _TEXT,
        "pricing": _TEXT,
        "price_per_hour": {**_TEXT, "description": "Exact decimal, in currency."},
        "currency": {**_TEXT, "description": "ISO code the provider priced in."},
        "gpu_model": _TEXT,
        "gpu_count": _TEXT,
        "gpu_memory_gib": _MAYBE_TEXT,
        "vcpus": _MAYBE_TEXT,
        "memory_gib": _MAYBE_TEXT,
        "fabric": {**_TEXT, "description": "Inter-node network (tracker.models.Fabric)."},
        "network_gbps": _MAYBE_TEXT,
        "price_since": {**_TEXT, "description": "When the current price was first seen."},
        "last_seen": {**_TEXT, "description": "When the server last observed it."},
    },
}
_SERVICE = {
    "type": "object",
    "required": ["provider", "region", "service", "unit", "price", "currency", "tier_start_gb"],
    "properties": {
        "provider": _TEXT,
        "region": _TEXT,
        "service": _TEXT,
        "unit": _TEXT,
        "price": _TEXT,
        "currency": _TEXT,
        "tier_start_gb": _TEXT,
        "tier_end_gb": _MAYBE_TEXT,
        "since": _TEXT,
        "last_seen": _TEXT,
    },
}


def _responses(key: str, item: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    document = {
        "type": "object",
        "required": ["version", key],
        "properties": {"version": {"type": "integer"}, key: {"type": "array", "items": item}},
    }
    etag = {"ETag": {"description": "Send it back as If-None-Match.", "schema": _TEXT}}
    return {
        200: {
            "description": "The rows, with their ETag.",
            "headers": etag,
            "content": {"application/json": {"schema": document}},
        },
        304: {"description": "Unchanged since the ETag in If-None-Match: no body."},
    }


IfNoneMatch = Annotated[
    str | None,
    Header(
        alias="If-None-Match",
        max_length=2000,
        description="The ETag of the copy the client holds (a 304 if it is current).",
    ),
]


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (a list, ``*``, weak ``W/`` tags allowed)."""
    if not if_none_match:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags


def _answer(key: str, rows: list[dict[str, Any]], if_none_match: str | None) -> Response:
    document = {"version": SYNC_VERSION, key: rows}
    etag = etag_of(document)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    return JSONResponse(document, headers=headers)


@router.get(
    "/offers",
    summary="Current offers for another gpu-tracker to copy (collectors/remote.py)",
    responses=_responses("offers", _OFFER),
)
def sync_offers(request: Request, if_none_match: IfNoneMatch = None) -> Response:
    """Every listed offer at its current price: each stored column (exact decimals,
    the provider's own currency), the time its price was first seen and last observed."""
    check_known(request, ())
    return _answer("offers", sync_offer_rows(context_of(request).engine), if_none_match)


@router.get(
    "/service-prices",
    summary="Storage and egress prices in force, for another gpu-tracker to copy",
    responses=_responses("service_prices", _SERVICE),
)
def sync_service_prices(request: Request, if_none_match: IfNoneMatch = None) -> Response:
    """Every storage and egress tier in force, in its own currency and unit."""
    check_known(request, ())
    return _answer("service_prices", sync_service_rows(context_of(request).engine), if_none_match)
