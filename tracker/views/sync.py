"""What a team server hands another gpu-tracker: its current offers and service prices.

The rows keep every stored offer column as the store holds it (exact Decimal strings,
the original provider and currency), with the current price's interval
(``price_since``, ``last_seen``), so the receiving store (collectors/remote.py) opens
the same interval at the same times. The ETag is a hash of the rows themselves: it
changes exactly when what a client would store changes, and a client that sends it
back gets a 304 with no body.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tracker.encode import jsonable
from tracker.models import STORED_OFFER_COLUMNS
from tracker.store import Engine, reads
from tracker.store.series import service_prices

__all__ = ["SYNC_VERSION", "etag_of", "sync_offer_rows", "sync_service_rows"]

SYNC_VERSION = 1
"""Bumped when a row's shape changes: a client refuses a version it does not know."""


def sync_offer_rows(engine: Engine) -> list[dict[str, Any]]:
    """Every listed offer at its current price, oldest series first (raises DatabaseError)."""
    rows = []
    for stored in reads.current_offers(engine):
        offer = stored.offer
        row = {c.name: getattr(offer, c.name) for c in STORED_OFFER_COLUMNS}
        row["price_since"] = stored.price_since
        row["last_seen"] = stored.last_seen
        rows.append(jsonable(row))
    return rows


def sync_service_rows(engine: Engine) -> list[dict[str, Any]]:
    """Every storage and egress tier in force now (raises DatabaseError)."""
    rows = []
    for stored in service_prices(engine):
        p = stored.price
        row = {
            "provider": p.provider,
            "region": p.region,
            "service": p.service,
            "unit": p.unit,
            "price": p.price,
            "currency": p.currency,
            "tier_start_gb": p.tier_start_gb,
            "tier_end_gb": p.tier_end_gb,
            "since": stored.since,
            "last_seen": stored.last_seen,
        }
        rows.append(jsonable(row))
    return rows


def etag_of(document: Any) -> str:
    """A strong ETag of ``document``'s canonical JSON (quoted, as HTTP wants it)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'
