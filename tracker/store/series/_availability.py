"""Availability as its own interval series per offer (table ``availability_points``).

Where a provider says whether it has capacity (Lambda's regions with capacity,
RunPod's stock status), that state changes far more often than the price, so it is
kept apart from ``price_points``: a stock flicker opens availability intervals and
never splits a price interval. The mechanism is the price one: a re-seen unchanged
state moves ``last_seen``; a change closes the open interval (``ended_at``) and opens
the next; delisting closes it. ``unknown`` is never stored: an offer seen without a
state closes its open interval, so a gap in the series reads as unknown.

The write side runs inside :class:`tracker.store.ingest.Ingest` (same connection,
same transaction, same staging table ``gt_incoming``); the read side gives the
offer readers the current state and ``history --availability`` the intervals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, func, select, text

from tracker.models import OFFER_KEY_FIELDS, Availability, OfferKey
from tracker.store.errors import database_errors
from tracker.store.schema import AvailabilityPoint, Series
from tracker.store.series._window_totals import sql_parts
from tracker.store.sql import Bind, execute
from tracker.store.staging import temp_table

__all__ = [
    "AvailabilityInterval",
    "apply_run",
    "availability_history",
    "close_delisted",
    "current_column",
    "join_current",
    "listed_keys",
    "rentable",
]

_UNKNOWN = Availability.UNKNOWN.value
_RENTABLE = tuple(a.value for a in Availability if a.rentable)
_RENTABLE_SQL = ", ".join(f"'{a}'" for a in _RENTABLE)


@dataclass(frozen=True, slots=True)
class AvailabilityInterval:
    availability: Availability
    first_seen: datetime
    last_seen: datetime
    ended_at: datetime | None


# -- write side (called by tracker.store.ingest) ----------------------------------------


def apply_run(conn: Connection, *, sqlite: bool, repeats: bool) -> int:
    """Apply the availability of the offers staged in ``gt_incoming`` (after their
    series exist and ``gt_seen`` lists them); returns how many intervals were opened.

    Costs one probe when the run reports no availability and none of its series has an
    open interval (most providers): nothing else runs then.
    """

    def x(sql: str, **params: Any) -> int:
        return conn.execute(text(sql), params).rowcount

    reported = conn.execute(
        text("SELECT 1 FROM gt_incoming WHERE availability <> :u LIMIT 1"), {"u": _UNKNOWN}
    ).first()
    if not reported:
        # gt_seen: the ingest's table of this run's series ids (unique index).
        still_open = conn.execute(
            text(
                "SELECT 1 FROM availability_points a JOIN gt_seen g "
                "ON g.series_id = a.series_id WHERE a.ended_at IS NULL LIMIT 1"
            )
        ).first()
        if not still_open:
            return 0
    ident = " AND ".join(f"s.{c} = i.{c}" for c in OFFER_KEY_FIELDS)
    temp = temp_table("gt_av", sqlite=sqlite)
    x("DROP TABLE IF EXISTS gt_av")
    if repeats:
        # Several observations of one series (dated history): applied in time order,
        # the last one reported winning at one instant, as the prices are.
        x(
            temp + "SELECT series_id, observed_at, availability, "
            "ROW_NUMBER() OVER (PARTITION BY series_id ORDER BY observed_at) AS rn "
            "FROM (SELECT s.id AS series_id, i.observed_at, i.availability, "
            "ROW_NUMBER() OVER (PARTITION BY s.id, i.observed_at ORDER BY i.seq DESC) AS dup "
            f"FROM gt_incoming i JOIN series s ON {ident}) d WHERE d.dup = 1"
        )
    else:
        x(
            temp + "SELECT s.id AS series_id, i.observed_at, i.availability, 1 AS rn "
            f"FROM gt_incoming i JOIN series s ON {ident}"
        )
    x("CREATE INDEX gt_av_series ON gt_av (series_id, rn)")
    # An observation no newer than what is stored is already known (an incremental
    # fetch's boundary point, a sheet imported twice).
    x(
        "DELETE FROM gt_av WHERE EXISTS (SELECT 1 FROM availability_points p "
        "WHERE p.series_id = gt_av.series_id "
        "AND (p.last_seen >= gt_av.observed_at OR p.ended_at >= gt_av.observed_at))"
    )
    rounds = int(conn.execute(text("SELECT MAX(rn) FROM gt_av")).scalar() or 0)
    opened = sum(_apply_round(x, r, sqlite=sqlite) for r in range(1, rounds + 1))
    x("DROP TABLE IF EXISTS gt_av")
    return opened


def _previous(x: Callable[..., int], r: int, *, sqlite: bool) -> None:
    """``gt_av_prev``: for each series of round ``r`` about to open an interval, its
    latest one and the totals the new one starts from. Taken before the round closes
    anything, so the latest is found through an index by a flag, never by ordering a
    series' history: the open interval (about to close at the observation: a change of
    state), else the ``last_closed`` one (a reopening after a gap). Two equality joins,
    like ``gt_av_open``'s, so a store whose statistics say it is empty is not scanned
    once per observation."""
    branches = []
    for latest, end in (
        ("p.ended_at IS NULL AND p.availability <> o.availability", "o.observed_at"),
        ("p.last_closed", "p.ended_at"),
    ):
        secs = sql_parts("sqlite" if sqlite else "postgresql")["secs"].format(
            a="p.first_seen", b=end
        )
        branches.append(
            f"SELECT p.id, p.series_id, p.last_closed, {end} AS ended_at, "
            f"p.known_before + {secs} AS known, p.rentable_before + CASE WHEN "
            f"p.availability IN ({_RENTABLE_SQL}) THEN {secs} ELSE 0.0 END AS rentable "
            f"FROM gt_av AS o JOIN availability_points p ON p.series_id = o.series_id "
            f"AND {latest} WHERE o.rn = :r AND o.availability <> :u"
        )
    x("DROP TABLE IF EXISTS gt_av_prev")
    x(temp_table("gt_av_prev", sqlite=sqlite) + " UNION ALL ".join(branches), r=r, u=_UNKNOWN)


def _apply_round(x: Callable[..., int], r: int, *, sqlite: bool) -> int:
    """Round ``r`` of ``gt_av`` (each series' ``r``-th observation): an open interval of
    the same availability extended, one of another closed, a new one opened where none
    is left open. Returns how many were opened.

    A new interval carries its series' running totals (``known_before``,
    ``rentable_before``: the previous interval's plus its length) and when the previous
    one ended (``previous_end``), what obtainability reads instead of every interval of
    a window. An interval closed by a state-less sighting (or a delisting) is marked
    ``last_closed``, its series' last, until a later one opens; a state change opens
    the next at once, so only a reopening after a gap updates the previous row again."""
    x(
        "UPDATE availability_points AS p SET last_seen = o.observed_at FROM gt_av AS o "
        "WHERE o.rn = :r AND p.series_id = o.series_id AND p.ended_at IS NULL "
        "AND p.availability = o.availability",
        r=r,
    )
    _previous(x, r, sqlite=sqlite)
    x(
        "UPDATE availability_points AS p SET ended_at = o.observed_at, "
        "last_closed = (o.availability = :u) FROM gt_av AS o "
        "WHERE o.rn = :r AND p.series_id = o.series_id AND p.ended_at IS NULL "
        "AND p.availability <> o.availability",
        r=r,
        u=_UNKNOWN,
    )
    # The series still open are found first, in a statement of their own: one that
    # inserts into availability_points while its anti-join scans it visits every row
    # it has inserted so far, per observation, when the planner takes the table for
    # small (statistics from when it was): quadratic in the run's size.
    x("DROP TABLE IF EXISTS gt_av_open")
    x(
        temp_table("gt_av_open", sqlite=sqlite)
        + "SELECT o.series_id FROM gt_av AS o JOIN availability_points p "
        "ON p.series_id = o.series_id AND p.ended_at IS NULL WHERE o.rn = :r",
        r=r,
    )
    x(
        "UPDATE availability_points SET last_closed = false WHERE id IN "
        "(SELECT id FROM gt_av_prev WHERE last_closed)"
    )
    opened = x(
        "INSERT INTO availability_points (series_id, availability, first_seen, last_seen, "
        "known_before, rentable_before, previous_end, last_closed) "
        "SELECT o.series_id, o.availability, o.observed_at, o.observed_at, "
        "COALESCE(v.known, 0.0), COALESCE(v.rentable, 0.0), v.ended_at, false "
        "FROM gt_av AS o LEFT JOIN gt_av_prev v ON v.series_id = o.series_id "
        "WHERE o.rn = :r AND o.availability <> :u AND NOT EXISTS (SELECT 1 FROM "
        "gt_av_open k WHERE k.series_id = o.series_id)",
        r=r,
        u=_UNKNOWN,
    )
    x("DROP TABLE gt_av_open")
    x("DROP TABLE gt_av_prev")
    return opened


def close_delisted(conn: Connection, *, source: str, delisted_at: Any) -> int:
    """Close the open availability of ``source``'s series delisted at ``delisted_at``
    (the run time, in the form the ingest binds it): a delisted offer has no capacity
    to report, and a relisting opens a new interval."""
    return conn.execute(
        text(
            "UPDATE availability_points SET ended_at = :t, last_closed = true "
            "WHERE ended_at IS NULL "
            "AND series_id IN (SELECT id FROM series WHERE delisted_at = :t "
            "AND source = :source)"
        ),
        {"t": delisted_at, "source": source},
    ).rowcount


# -- read side ---------------------------------------------------------------------------


def join_current(stmt: Any) -> Any:
    """``stmt`` (selecting from ``series``) outer-joined to each series' open availability
    interval: a series without one is still listed, its availability unknown."""
    return stmt.outerjoin(
        AvailabilityPoint,
        and_(AvailabilityPoint.series_id == Series.id, AvailabilityPoint.ended_at.is_(None)),
    )


def current_column() -> Any:
    """The current availability of a :func:`join_current` row (``unknown`` when none)."""
    return func.coalesce(AvailabilityPoint.availability, _UNKNOWN)


def rentable() -> Any:
    """Where-clause for a :func:`join_current` row known to be rentable (available or
    low): what ``offers --available`` keeps."""
    return AvailabilityPoint.availability.in_(_RENTABLE)


def availability_history(bind: Bind, series_id: int) -> list[AvailabilityInterval]:
    """One series' availability intervals, oldest first (raises
    :class:`~tracker.store.engine.DatabaseError`)."""
    a = AvailabilityPoint
    stmt = (
        select(a.availability, a.first_seen, a.last_seen, a.ended_at)
        .where(a.series_id == series_id)
        .order_by(a.first_seen, a.id)
    )
    with database_errors("cannot read the availability history"):
        rows = execute(bind, stmt)
    return [AvailabilityInterval(Availability(r[0]), r[1], r[2], r[3]) for r in rows]


def listed_keys(bind: Bind, source: str) -> list[OfferKey]:
    """Identity keys of ``source``'s listed (not delisted) series.

    A collector whose provider names only where capacity *is* (Lambda) uses these to
    keep reporting, as unavailable, the offers it listed before, instead of letting
    them be delisted when capacity runs out.
    """
    stmt = (
        select(*(getattr(Series, c) for c in OFFER_KEY_FIELDS))
        .where(Series.source == source, Series.delisted_at.is_(None))
        .order_by(Series.id)
    )
    with database_errors(f"cannot read what {source} has listed"):
        rows = execute(bind, stmt)
    return [tuple(r) for r in rows]  # type: ignore[misc]
