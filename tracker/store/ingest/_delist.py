"""Delisting: a complete run marks its source's listed series it did not see.

Called at the end of :meth:`tracker.store.ingest.Ingest.finish`, on the run's
connection and inside its transaction, once every series the run saw exists, is
listed and carries the run's source. A delisted series' open price (and availability)
interval closes at the run's time.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, text

from tracker.store import series
from tracker.store.ingest._stats import DelistScope, IngestStats
from tracker.store.last_seen import effective_last_seen_sql
from tracker.store.staging import temp_table

__all__ = ["apply", "offers_in"]

log = logging.getLogger(__name__)


def offers_in(scope: DelistScope, counts: Mapping[tuple[str, str], int]) -> int:
    """How many of a run's offers fall in ``scope``, from its offers per (region,
    pricing) ``counts``."""
    pricing = {p.value for p in scope.pricing}
    return sum(
        n
        for (region, p), n in counts.items()
        if p in pricing and region not in scope.exclude_regions
    )


def apply(
    conn: Connection,
    scope: DelistScope,
    stats: IngestStats,
    *,
    run_time: Any,
    sqlite: bool,
    seen: int | None,
    compact_ids: str | None,
) -> None:
    """Delist ``scope``'s listed series the run did not see (``gt_seen`` lists those it
    saw, ``compact_ids`` selects the ids of its compact rows, which gt_seen may lack).

    ``seen``: how many series of ``scope`` the run saw, when each offer of the run was
    its own series (None when unknown). If as many are listed, every one was seen and
    nothing is compared; otherwise the listed series are set against the seen ones.
    ``run_time`` is bound as the ingest binds times.
    """
    params: dict[str, Any] = {"source": scope.source, "run_time": run_time}
    conds = ["s.source = :source", "s.delisted_at IS NULL"]
    names = []
    for n, pricing in enumerate(sorted(p.value for p in scope.pricing)):
        params[f"p{n}"] = pricing
        names.append(f":p{n}")
    conds.append(f"s.pricing IN ({', '.join(names) or 'NULL'})")
    for n, region in enumerate(sorted(scope.exclude_regions)):
        params[f"xr{n}"] = region
        conds.append(f"s.region <> :xr{n}")
    where = " AND ".join(conds)

    def x(sql: str) -> int:
        return conn.execute(text(sql), params).rowcount

    if stats.offers_seen == 0 or seen is not None:
        listed = int(
            conn.execute(text(f"SELECT COUNT(*) FROM series s WHERE {where}"), params).scalar() or 0
        )
        if stats.offers_seen == 0 and listed:
            log.warning(
                "%s: run returned no offers; not delisting its %d listed series",
                scope.source,
                listed,
            )
            stats.refused_delist = listed
            return
        if seen == listed:
            return
    seen_ids = "gt_seen"
    if compact_ids is not None:  # gt_seen lacks the compact rows that changed nothing
        temp = temp_table("gt_seen_all", sqlite=sqlite)
        x(f"{temp}SELECT series_id FROM gt_seen UNION {compact_ids}")
        seen_ids = "gt_seen_all"
    stats.delisted = x(
        # EXCEPT, not NOT IN or NOT EXISTS: a set operation (hashed or sorted) over
        # both lists whatever the estimates. Past work_mem, Postgres runs NOT IN as
        # a scan of gt_seen per listed series (hours at 1,000,000 offers), and with
        # the run's new series not yet analysed it plans NOT EXISTS as one index
        # probe of gt_obs per listed series (~0.35 s at 200,000).
        "UPDATE series SET delisted_at = :run_time WHERE id IN ("
        f"SELECT s.id FROM series s WHERE {where} EXCEPT SELECT series_id FROM {seen_ids})"
    )
    if stats.delisted:
        # Closing writes the last sighting, which may have been derived until now.
        eff = effective_last_seen_sql("price_points", "s")
        x(
            f"UPDATE price_points SET ended_at = :run_time, last_seen = (SELECT {eff} "
            "FROM series s WHERE s.id = price_points.series_id) WHERE ended_at IS NULL "
            "AND series_id IN (SELECT id FROM series WHERE delisted_at = :run_time "
            "AND source = :source)"
        )
        series.close_delisted(conn, source=scope.source, delisted_at=run_time)
