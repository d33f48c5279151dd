"""One offer's price at every step, the way hand-written SQL would read it (Postgres).

:func:`tracker.store.reads.offer_steps` joins the grid to the series filter and
converts every step to USD inside its one statement, so the planner looks the series
up again at every step and every row carries the conversion's CASE. A person's
``history`` names one offer (a few series at most): here its series are found first
(one indexed read), then each is probed once per step by its id, on the driver's
cursor (no per-row type processing), the same statement as hand-written SQL. A USD
price is its own USD figure; when any step is in another currency this returns None
and the caller takes the general statement, which converts at the rate in force.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC
from decimal import Decimal
from operator import itemgetter

from sqlalchemy import func, select

from tracker.store.engine import Engine
from tracker.store.errors import database_errors
from tracker.store.reads._history import RANK_KEYS, OfferStep, SeriesFilter, offer_steps
from tracker.store.schema import Series
from tracker.store.sql import Steps, Times

__all__ = ["probe_offer_steps", "probe_usd_offer_steps"]

_PROBE = """
SELECT CAST(g.k AS integer) - 1, s.id, p.price, p.currency
FROM {grid} WITH ORDINALITY AS g(t, k)
CROSS JOIN unnest(CAST(%(ids)s AS bigint[])) AS s(id)
LEFT JOIN LATERAL (
    SELECT price, currency, ended_at FROM price_points
    WHERE series_id = s.id AND first_seen <= g.t
    ORDER BY first_seen DESC LIMIT 1
) AS p ON p.ended_at IS NULL OR p.ended_at > g.t
"""
_STEPS = (
    "generate_series(CAST(%(start)s AS timestamptz), "
    "%(start)s + CAST(%(step)s AS interval) * (%(count)s - 1), %(step)s)"
)
"""The grid as :func:`tracker.store.reads._grid` generates it (its end too)."""
_LISTED = "unnest(CAST(%(times)s AS timestamptz[]))"


def probe_offer_steps(
    engine: Engine,
    times: Times,
    where: SeriesFilter,
    *,
    fx_rates: Mapping[str, Decimal] | None = None,
) -> list[OfferStep]:
    """:func:`tracker.store.reads.offer_steps`, by series id on Postgres when every
    step is in USD (see the module docstring).

    Raises :class:`~tracker.store.engine.DatabaseError`.
    """
    if engine.dialect.name == "postgresql":
        with database_errors("cannot read the price history"):
            if (found := probe_usd_offer_steps(engine, times, where)) is not None:
                return found
    return offer_steps(engine, times, where, fx_rates=fx_rates)


def probe_usd_offer_steps(
    engine: Engine, times: Times, where: SeriesFilter
) -> list[OfferStep] | None:
    """:func:`tracker.store.reads.offer_steps` for the series ``where`` selects, or
    None when some step's price is not in USD (see the module docstring)."""
    s = Series.__table__.c
    params: dict[str, object]
    if isinstance(times, Steps) and times.end is None:
        params = {"start": times.start, "step": times.step, "count": times.count}
        grid = _STEPS
    else:  # listed times, or steps ending at one more time (a window's end)
        listed = times.times() if isinstance(times, Steps) else times
        params = {"times": [t.astimezone(UTC) for t in listed]}
        grid = _LISTED
    # JIT off for the transaction in the same round trip (see tracker.store.sql.reading).
    jit_off = func.set_config("jit", "off", True)
    with engine.connect() as conn:
        found = conn.execute(
            select(s.id, *(s[c] for c in RANK_KEYS), jit_off).where(*where.where())
        )
        identity = {int(r[0]): tuple(r[1:-1]) for r in found}
        if not identity or (isinstance(times, Steps) and times.count < 1):
            return []
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor() as cur:
            cur.execute(_PROBE.format(grid=grid), {**params, "ids": list(identity)})
            rows: Sequence[tuple[int, int, object, str | None]] = cur.fetchall()
    steps = []
    make = OfferStep._make
    for k, sid, price, currency in rows:
        if currency is not None and currency != "USD":
            return None
        steps.append(make((k, *identity[sid], price, currency, price)))
    if len(identity) == 1:
        steps.sort(key=itemgetter(0))  # in order already: one linear pass
    else:
        steps.sort(key=lambda p: (*p[1:7], p.k))
    return steps
