"""``history --availability``: one offer's availability intervals as rows.

Kept out of the history command itself so that command only decides which series to
show; this module turns their availability series (tracker/store/series/_availability.py)
into the documented rows. A time outside every interval is unknown: the provider did
not say then, or the offer was not listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tracker.cli.output import Column
from tracker.store import Engine, Series
from tracker.store.series import availability_history

__all__ = ["AVAILABILITY_COLUMNS", "AVAILABILITY_TABLE", "availability_rows"]

AVAILABILITY_COLUMNS = (
    "zone",
    "payment_option",
    "offering_class",
    "availability",
    "first_seen",
    "last_seen",
    "ended_at",
)
"""The rows' keys, in order (documented in the README)."""
AVAILABILITY_TABLE = (
    Column("zone", "zone", priority=1),
    Column("payment_option", "payment", priority=3),
    Column("offering_class", "class", priority=3),
    Column("availability", "availability"),
    Column("first_seen", "from"),
    Column("last_seen", "last seen", priority=2),
    Column("ended_at", "ended", priority=1),
)


def availability_rows(
    engine: Engine, series: Sequence[Series], at: datetime | None = None
) -> list[dict[str, Any]]:
    """Each series' availability intervals, oldest first; with ``at``, only the interval
    in force then (started at or before it, not ended by then), if any."""
    rows = []
    for s in series:
        for h in availability_history(engine, s.id):
            if at is not None and not (
                h.first_seen <= at and (h.ended_at is None or h.ended_at > at)
            ):
                continue
            rows.append(
                {
                    "zone": s.zone,
                    "payment_option": s.payment_option,
                    "offering_class": s.offering_class,
                    "availability": h.availability.value,
                    "first_seen": h.first_seen,
                    "last_seen": h.last_seen,
                    "ended_at": h.ended_at,
                }
            )
    return rows
