"""Exchange rates in the store: one compact series per currency (``fx_rates``).

A published rate adds a row only when it differs from the rate in force on its day,
so a year of an unchanged peg is one row, and weekends and holidays (no publication)
carry the last rate. Readers get :class:`tracker.fx.Rates`, which converts prices at
the rate in force when read; nothing converted is ever stored.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Numeric,
    and_,
    case,
    cast,
    func,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.sql.elements import ColumnElement

from tracker.fx import EcbRate, RatePoint, Rates, valid_from
from tracker.store.errors import database_errors
from tracker.store.runs import mark_succeeded
from tracker.store.schema import FxRate
from tracker.store.sql import Bind
from tracker.store.types import quantize_money

__all__ = [
    "RateStats",
    "latest_day",
    "load_rates",
    "record_rates",
    "record_run",
    "usd_rate_case",
    "usd_sql",
]


@dataclass
class RateStats:
    seen: int = 0
    """Published rates read (currency × day)."""
    added: int = 0
    """Rows written: a currency's first rate, or a rate that differs from the one in force."""
    unchanged: int = 0
    """Rates equal to the one already in force on their day (no row)."""
    new_currencies: int = 0


def _points(bind: Bind, currencies: Iterable[str] | None = None) -> list[RatePoint]:
    stmt = select(FxRate.currency, FxRate.valid_from, FxRate.per_eur).order_by(
        FxRate.currency, FxRate.valid_from
    )
    if currencies is not None:
        stmt = stmt.where(FxRate.currency.in_(sorted(set(currencies))))
    if isinstance(bind, Engine):
        with bind.connect() as conn:
            rows = conn.execute(stmt).all()
    else:
        rows = bind.execute(stmt).all()
    return [RatePoint(r.currency, r.valid_from, r.per_eur) for r in rows]


def load_rates(bind: Bind, manual: Mapping[str, Decimal] | None = None) -> Rates:
    """Every stored rate series, plus the manual ``fx_rates`` (raises DatabaseError)."""
    with database_errors("cannot read the exchange rates"):
        return Rates(_points(bind), manual)


def latest_day(bind: Bind) -> date | None:
    """The newest stored rate's day (where the collector resumes), or None when empty."""
    with database_errors("cannot read the exchange rates"):
        stmt = select(func.max(FxRate.valid_from))
        if isinstance(bind, Engine):
            with bind.connect() as conn:
                value: datetime | None = conn.execute(stmt).scalar()
        else:
            value = bind.execute(stmt).scalar()
    return value.date() if value is not None else None


def record_rates(conn: Connection, rates: Iterable[EcbRate], *, source: str) -> RateStats:
    """Store published rates, adding a row only where the rate in force changes.

    Rates may come in any order and overlap what is stored (the 90-day back-fill, a
    re-fetched day): each is compared with the rate in force on its own day. A day
    already stored with another value is corrected in place.
    """
    stats = RateStats()
    incoming = sorted(rates, key=lambda r: (r.currency, r.day))
    stats.seen = len(incoming)
    stored: dict[str, tuple[list[datetime], list[Decimal]]] = {}
    for p in _points(conn, {r.currency for r in incoming}):
        times, values = stored.setdefault(p.currency, ([], []))
        times.append(p.valid_from)
        values.append(p.per_eur)
    for r in incoming:
        when, value = valid_from(r.day), quantize_money(r.per_eur)
        if r.currency not in stored:
            stats.new_currencies += 1
        times, values = stored.setdefault(r.currency, ([], []))
        i = bisect_right(times, when)
        if i and values[i - 1] == value:
            stats.unchanged += 1
            continue
        if i and times[i - 1] == when:
            conn.execute(
                update(FxRate)
                .where(FxRate.currency == r.currency, FxRate.valid_from == when)
                .values(per_eur=value, source=source)
            )
            values[i - 1] = value
        else:
            conn.execute(
                insert(FxRate).values(
                    currency=r.currency, valid_from=when, per_eur=value, source=source
                )
            )
            times.insert(i, when)
            values.insert(i, value)
        stats.added += 1
    return stats


def record_run(
    engine: Engine,
    run_id: int,
    rates: Iterable[EcbRate],
    *,
    source: str,
    finished: datetime,
    skipped: int,
    skip_reasons: dict[str, int],
) -> RateStats:
    """Store a rates run and mark it succeeded, in one transaction (all or nothing).

    The run log's counters read: ``offers_seen`` rates published, ``price_changes``
    rows added, ``unchanged`` rates already in force, ``new_series`` new currencies.
    """
    with database_errors(f"run {run_id} of {source}"), engine.begin() as conn:
        stats = record_rates(conn, rates, source=source)
        counts = {
            "offers_seen": stats.seen,
            "new_series": stats.new_currencies,
            "price_changes": stats.added,
            "unchanged": stats.unchanged,
        }
        mark_succeeded(
            conn,
            run_id,
            finished=finished,
            counts=counts,
            skipped=skipped,
            skip_reasons=skip_reasons,
        )
    return stats


def _per_eur_at(currency: Any, at: Any) -> ColumnElement[Decimal]:
    """Units of ``currency`` per EUR in force at ``at``: the latest step at or before it."""
    r = FxRate.__table__.c
    return (
        select(r.per_eur)
        .where(r.currency == currency, r.valid_from <= at)
        .order_by(r.valid_from.desc())
        .limit(1)
        .scalar_subquery()
    )


def usd_sql(
    price: Any, currency: Any, at: Any, manual: Mapping[str, Decimal] | None = None
) -> ColumnElement[Decimal]:
    """SQL for the USD figure of ``price`` in ``currency`` at time ``at`` (columns or
    bound values), for reads that filter or order by USD inside one statement.

    The same rule as :meth:`tracker.fx.Rates.usd_per_unit`: USD as is; else the stored
    ECB steps in force at ``at`` (USD per EUR ÷ X per EUR, EUR's own being 1); else the
    manual ``fx_rates``; else NULL (no rate: the reader leaves the row out and counts
    it, never 1.0). Exact NUMERIC on Postgres; SQLite computes in its REAL arithmetic,
    so an exact figure for display comes from :class:`tracker.fx.Rates`.
    """
    num = Numeric(38, 20)
    x = cast(price, num)
    usd_eur = cast(_per_eur_at(literal("USD"), at), num)
    x_eur = case(
        (currency == "EUR", cast(literal(1), num)), else_=cast(_per_eur_at(currency, at), num)
    )
    # A rate <= 0 is no rate (as in Rates.usd_per_unit): NULL, then the manual one.
    ecb = case((and_(usd_eur > 0, x_eur > 0), x * usd_eur / x_eur), else_=None)
    fallback = [
        (currency == code, x * cast(literal(str(rate)), num))
        for code, rate in (manual or {}).items()
        if rate > 0
    ]
    converted = func.coalesce(ecb, case(*fallback, else_=None)) if fallback else ecb
    return case((currency == "USD", x), else_=converted)


def usd_rate_case(currency: Any, rates: Mapping[str, Decimal]) -> ColumnElement[Decimal]:
    """SQL for the USD rate of ``currency`` (a column) from rates already worked out
    with :meth:`tracker.fx.Rates.usd_per_unit` at one time (a page's ``at``): literals,
    NULL for a currency not in ``rates`` or with a rate <= 0 (no rate, as everywhere)."""
    num = Numeric(38, 20)
    whens = [(currency == c, literal(r, num)) for c, r in rates.items() if r > 0]
    return case(*whens, else_=None) if whens else cast(literal(None), num)
