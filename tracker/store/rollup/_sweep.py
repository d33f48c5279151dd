"""The cheapest price of one rollup key as a step function, computed from raw intervals.

A key is (GPU model, pricing, provider, region); within it each currency has its own
step function (:class:`tracker.store.schema.PriceRollup`). The sweep visits every
time a price starts or ends, keeps the intervals in force in one heap per currency
(ordered by price per GPU-hour, then the offer identity as the history reads break
ties) and emits an interval whenever the cheapest offer or its price changes. As the
raw readers do (tracker.store.reads), a series' price at a time is its interval
started latest by then, if that one had not ended: an older interval it overlaps
no longer counts.
Pure Python, no SQL: the store's modules feed it rows and write what it returns.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import NamedTuple

__all__ = ["Member", "Segment", "sweep"]


class Member(NamedTuple):
    """One raw interval of a key's series, with what ranks it."""

    currency: str
    series_id: int
    price: Decimal
    gpu_count: Decimal
    rank: tuple[str, ...]
    """instance type, zone, payment option: the identity columns a key leaves free, in
    the order tracker.store.reads.RANK_KEYS breaks ties."""
    first_seen: datetime
    ended_at: datetime | None


class Segment(NamedTuple):
    """One rollup interval of a currency: ``series_id`` at ``price`` was the cheapest."""

    currency: str
    series_id: int
    price: Decimal
    first_seen: datetime
    ended_at: datetime | None


_Entry = tuple[Decimal, tuple[str, ...], int, datetime, Decimal, datetime | None]
"""In a currency's heap: price per GPU-hour, rank, series, start, price, end."""


@dataclass(slots=True)
class _Open:
    series_id: int
    price: Decimal
    first_seen: datetime


def sweep(members: Iterable[Member], since: datetime | None = None) -> list[Segment]:
    """The rollup intervals of one key from ``since`` on (None: its whole history),
    given every interval of its series in force at some time from ``since`` on.

    The first interval of a currency starts at ``since`` when something was in force
    then (the caller merges it with the stored one ending there, if equal)."""
    rows = sorted(members, key=lambda m: m.first_seen)
    times: set[datetime] = set()
    for m in rows:
        if since is None or m.first_seen > since:
            times.add(m.first_seen)
        if m.ended_at is not None and (since is None or m.ended_at > since):
            times.add(m.ended_at)
    if since is not None:
        times.add(since)
    heaps: dict[str, list[_Entry]] = {}
    latest: dict[int, datetime] = {}
    current: dict[str, _Open] = {}
    segments: list[Segment] = []
    i = 0
    for t in sorted(times):
        while i < len(rows) and rows[i].first_seen <= t:
            m = rows[i]
            i += 1
            latest[m.series_id] = m.first_seen
            if m.ended_at is not None and m.ended_at <= t:
                continue
            entry = (m.price / m.gpu_count, m.rank, m.series_id, m.first_seen, m.price, m.ended_at)
            heapq.heappush(heaps.setdefault(m.currency, []), entry)
        for currency, heap in heaps.items():
            while heap and (
                (heap[0][5] is not None and heap[0][5] <= t) or latest[heap[0][2]] != heap[0][3]
            ):
                heapq.heappop(heap)
            best = (heap[0][2], heap[0][4]) if heap else None
            now = current.get(currency)
            if now is not None and best == (now.series_id, now.price):
                continue
            if now is not None:
                segments.append(Segment(currency, now.series_id, now.price, now.first_seen, t))
                del current[currency]
            if best is not None:
                current[currency] = _Open(best[0], best[1], t)
    for currency, now in current.items():
        segments.append(Segment(currency, now.series_id, now.price, now.first_seen, None))
    return segments
