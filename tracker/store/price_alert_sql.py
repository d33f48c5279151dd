"""Postgres: a ``price_change`` rule's alerts rendered by the store, set-wise.

After a big run a rule fires tens of thousands of alerts; built in Python each is a
row read, two prices converted, a title and a JSON object formatted (~0.1 ms each,
most of an evaluation, all on one core). Here one statement reads the rule's changes
(:func:`tracker.store.alert_events.price_changes_select`), converts them, tests the
threshold and renders each alert's dedupe key, subject, title and details. It runs on
a reader connection and its rows stream back in parts (a server-side cursor), which the
caller hands to the outbox as they are
(:meth:`tracker.store.outbox_stream.OutboxStream.add_rendered`): the database inserts
one part while it renders the next.

The statement renders exactly what :mod:`tracker.alerts.offer_rules` builds for the
same change (tests/alerts/test_price_alert_sql.py compares the two on random changes):

- converted prices: the amount times the rate factor of :meth:`tracker.fx.Rates.factor`
  (worked out in Python per currency and change time, passed in as JSON), exact,
  rounded half-even to the store's 10 decimals, then to 4 for display;
- the threshold tested exactly (no division); the percentage rounded half-even to 2
  decimals (one division; where it lands exactly half-way, the exact remainder
  decides), its sign kept when it rounds to zero (``-0.00``);
- prices shown with at least two decimals and no trailing zeros beyond them.

``round()`` on NUMERIC rounds half away from zero, so half-even is spelled out
(:func:`_half_even`). Changes left out for want of a rate, and those with nothing to
compare against, come back as rows without an alert (:class:`Rendered`), for the caller
to count and log as the Python path does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, NamedTuple

from sqlalchemy import Engine
from sqlalchemy.engine import Dialect

from tracker.store.alert_events import ChangeThreshold, price_changes_select
from tracker.store.errors import database_errors
from tracker.store.history import SeriesFilter

__all__ = ["PART", "PriceAlertSpec", "Rate", "Rendered", "Window", "rendered_price_alerts"]

PART = 5_000
"""Rows per part handed over: the outbox writer's batch."""


class Rendered(NamedTuple):
    """One change: its alert's columns, or (``dedupe_key`` None) why it has none: the
    currency ``lacking`` a rate, or None when it had no comparable previous price."""

    interval_id: int
    dedupe_key: str | None
    subject: str | None
    title: str | None
    details: str | None
    """The details object as JSON text."""
    lacking: str | None


@dataclass(frozen=True, slots=True)
class PriceAlertSpec:
    """What the rule contributes to the statement (plain values: the store does not
    know the alerts' rule types)."""

    rule: str
    kind: str
    currency: str
    threshold_percent: Decimal
    direction: str


Rate = tuple[Decimal | None, str | None]
"""Units of the rule's currency per unit of another; or None with the currency that
lacks a rate (as :meth:`tracker.alerts.evaluate.Evaluation.in_currency` counts it)."""


@dataclass(frozen=True, slots=True)
class Window:
    """What a rule's changes are read up to (``upto``: a run written after the rates
    were worked out is read next time), and at each time one of them happened the
    rate of every currency one may be in (a currency missing is one lacking a rate)."""

    upto: int
    rates: Mapping[datetime, Mapping[str, Rate]]


def _half_even(x: str, places: int) -> str:
    """``x`` rounded half-even to ``places`` decimals (Python's ``quantize``): ``round``
    unless ``x`` lies exactly half-way, then towards the even neighbour (the parity is
    only looked at there: a division per row costs more than the rest)."""
    half = f"0.{'0' * places}5"
    even = f"mod(trunc({x}, {places}) * 1{'0' * places}, 2) = 0"
    return (
        f"(CASE WHEN abs({x} - trunc({x}, {places})) = {half} AND {even} "
        f"THEN trunc({x}, {places}) ELSE round({x}, {places}) END)"
    )


def _money(x: str) -> str:
    """``x`` as text with at least two decimals, no trailing zeros beyond them."""
    return (
        f"(CASE WHEN scale(trim_scale({x})) < 2 THEN round({x}, 2) ELSE trim_scale({x}) END)::text"
    )


def _direction(direction: str) -> str:
    return {"down": "b_new < b_old", "up": "b_new > b_old"}.get(direction, "TRUE")


# Each CTE is one step of offer_rules.price_change; the names are its variables'.
_STATEMENT = """
WITH read AS MATERIALIZED ({changes}),
changes AS (SELECT * FROM read WHERE interval_id <= CAST(%(gt_upto)s AS bigint)),
moments AS MATERIALIZED (
    SELECT * FROM json_to_recordset(CAST(%(gt_moments)s AS json))
        AS m(at timestamptz, at_text text, rates jsonb)
),
priced AS (
    SELECT c.*, c.old_currency = c.currency AS same,
        CASE WHEN c.old_currency = CAST(%(gt_currency)s AS text) THEN c.old_price
             ELSE {old_converted} END AS old_v,
        CASE WHEN c.currency = CAST(%(gt_currency)s AS text) THEN c.new_price
             ELSE {new_converted} END AS new_v,
        CASE WHEN c.old_currency <> CAST(%(gt_currency)s AS text) AND c.fo_factor IS NULL
                THEN coalesce(c.fo_lacking, c.old_currency)
             WHEN c.currency <> CAST(%(gt_currency)s AS text) AND c.fn_factor IS NULL
                THEN coalesce(c.fn_lacking, c.currency) END AS lacking
    FROM (
        SELECT r.*, r.rates -> r.old_currency ->> 0 AS fo_factor,
            r.rates -> r.old_currency ->> 1 AS fo_lacking,
            r.rates -> r.currency ->> 0 AS fn_factor, r.rates -> r.currency ->> 1 AS fn_lacking
        FROM (
            -- the run's rates looked up row by row (a scalar subquery over its few
            -- times): a join could hash the changes and lose their order, which the
            -- rows stream out in
            SELECT c.*, (SELECT m.rates FROM moments m WHERE m.at = c.at) AS rates
            FROM changes c WHERE c.old_price <> 0 OFFSET 0
        ) r
    ) c
),
judged AS (
    SELECT p.*, b_old <> 0 AND {direction}
            AND abs(b_new - b_old) * 100 >= CAST(%(gt_threshold)s AS numeric) * b_old AS reaches
    FROM (SELECT *, CASE WHEN same THEN old_price ELSE old_v END AS b_old,
                    CASE WHEN same THEN new_price ELSE new_v END AS b_new FROM priced) p
),
rendered AS (
    SELECT j.interval_id, j.provider, j.instance_type, j.region, j.zone, j.pricing,
        j.gpu_model, w.place, t.old_text, t.new_text, t.own, n.count, n.at_text,
        CASE WHEN b_new < b_old THEN '-' ELSE '' END AS minus,
        (CASE WHEN trunc(h.ax, 3) = h.ax AND mod(h.ax * 1000, 10) = 5
              THEN trunc(h.ax, 2) + CASE WHEN h.rest > 0 OR (h.rest = 0
                   AND mod(trunc(h.ax, 2) * 100, 2) = 1) THEN 0.01 ELSE 0 END
              ELSE round(h.ax, 2) END)::text AS pct
    FROM judged j
    CROSS JOIN LATERAL (SELECT ax, abs(j.b_new - j.b_old) * 100 - ax * j.b_old AS rest
        FROM (SELECT abs(j.b_new - j.b_old) * 100 / j.b_old AS ax) a) h
    CROSS JOIN LATERAL (SELECT CASE WHEN j.zone <> '' THEN j.region || '/' || j.zone
                                    ELSE j.region END AS place) w
    CROSS JOIN LATERAL (SELECT
        CASE WHEN j.old_currency = CAST(%(gt_currency)s AS text) THEN {old_exact}
             ELSE {old_shown} END AS old_text,
        CASE WHEN j.currency = CAST(%(gt_currency)s AS text) THEN {new_exact}
             ELSE {new_shown} END AS new_text,
        CASE WHEN j.old_currency = CAST(%(gt_currency)s AS text)
                  AND j.currency = CAST(%(gt_currency)s AS text) THEN ''
             ELSE {old_own} || ' ' || j.old_currency || ' → ' || {new_own} || ' ' || j.currency
             END AS own) t
    CROSS JOIN LATERAL (SELECT trim_scale(j.gpu_count)::text AS count,
        (SELECT m.at_text FROM moments m WHERE m.at = j.at) AS at_text) n
    WHERE j.reaches AND j.lacking IS NULL
),
alerts AS (
    SELECT interval_id AS seq,
        left(CAST(%(gt_key)s AS text) || interval_id, 255) AS dedupe_key,
        left('offer:' || provider || '/' || instance_type || '/' || region || '/' || zone
             || '/' || pricing, 255) AS subject,
        provider || ' ' || instance_type || ' ' || place || ' ' || pricing || ': '
            || old_text || ' → ' || new_text || ' ' || CAST(%(gt_currency)s AS text)
            || '/h (' || CASE WHEN minus = '' THEN '+' ELSE '-' END || pct || '%%)'
            || CASE WHEN own = '' THEN '' ELSE ' [' || own || ']' END AS title,
        '{{"kind": ' || CAST(%(gt_kind_json)s AS text) || ', "provider": ' || to_json(provider)
            || ', "instance_type": ' || to_json(instance_type) || ', "region": '
            || to_json(place) || ', "pricing": ' || to_json(pricing) || ', "gpu": '
            || to_json(count || 'x ' || gpu_model) || ', "gpu_count": "' || count
            || '", "gpu_model": ' || to_json(gpu_model) || ', "old": "' || old_text
            || '", "new": "' || new_text || '", "currency": '
            || CAST(%(gt_currency_json)s AS text) || ', "change_pct": "' || minus || pct
            || '", "own": ' || to_json(own)
            || ', "at": "' || at_text || '"}}' AS details
    FROM rendered
)
SELECT seq, dedupe_key, subject, title, details, NULL AS lacking FROM alerts
UNION ALL SELECT interval_id, NULL, NULL, NULL, NULL, lacking FROM judged
    WHERE lacking IS NOT NULL AND (NOT same OR reaches)
UNION ALL SELECT interval_id, NULL, NULL, NULL, NULL, NULL FROM changes WHERE old_price = 0
UNION ALL SELECT interval_id, NULL, NULL, NULL, NULL, NULL FROM judged
    WHERE lacking IS NULL AND b_old = 0
"""


def rendered_price_alerts(
    engine: Engine,
    after_id: int,
    where: SeriesFilter,
    threshold: ChangeThreshold,
    spec: PriceAlertSpec,
    window: Window,
    emit: Callable[[list[Rendered]], None],
) -> None:
    """The alerts of ``spec``'s rule for the changes after ``after_id`` of the series
    ``where`` selects, rendered, in interval order, then the changes left out: handed
    to ``emit`` in parts of :data:`PART` rows as the database produces them (the first
    ones while it still renders the rest). Raises
    :class:`~tracker.store.engine.DatabaseError`."""
    sql, params = _statement(engine.dialect, after_id, where, threshold, spec, window)
    with database_errors("cannot read price changes"), engine.connect() as conn:
        # work_mem: the changes are materialized and joined in memory; no JIT for a
        # statement whose cost the planner cannot estimate (its CTEs have no statistics);
        # a cursor is planned as a whole query, not for its first rows.
        conn.exec_driver_sql("SET LOCAL work_mem = '64MB'")
        conn.exec_driver_sql("SET LOCAL jit = off")
        conn.exec_driver_sql("SET LOCAL cursor_tuple_fraction = 1.0")
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor(name="gt_rendered_alerts") as cursor:  # a server-side cursor
            cursor.execute(sql, params)
            while rows := cursor.fetchmany(PART):
                emit([Rendered(*row) for row in rows])
        conn.rollback()


def _statement(
    dialect: Dialect,
    after_id: int,
    where: SeriesFilter,
    threshold: ChangeThreshold,
    spec: PriceAlertSpec,
    window: Window,
) -> tuple[str, dict[str, Any]]:
    compiled = price_changes_select(after_id, where, threshold).compile(
        dialect=dialect, compile_kwargs={"render_postcompile": True}
    )
    sql = _STATEMENT.format(
        changes=compiled.string,
        old_converted=_half_even("c.old_price * CAST(c.fo_factor AS numeric)", 10),
        new_converted=_half_even("c.new_price * CAST(c.fn_factor AS numeric)", 10),
        direction=_direction(spec.direction),
        old_exact=_money("j.old_v"),
        new_exact=_money("j.new_v"),
        old_shown=_money(_half_even("j.old_v", 4)),
        new_shown=_money(_half_even("j.new_v", 4)),
        old_own=_money("j.old_price"),
        new_own=_money("j.new_price"),
    )
    moments = [
        {
            "at": at.isoformat(),
            "at_text": at.isoformat(),
            "rates": {
                currency: [None if factor is None else str(factor), lacking]
                for currency, (factor, lacking) in rates.items()
            },
        }
        for at, rates in window.rates.items()
    ]
    params = {
        **compiled.params,
        "gt_moments": json.dumps(moments),
        "gt_currency": spec.currency,
        "gt_threshold": str(spec.threshold_percent),
        # here, not in the read: a two-sided id range is estimated from statistics that
        # lag a big run's new ids, and a plan probing that range per series took minutes
        "gt_upto": window.upto,
        "gt_key": f"{spec.rule}|{spec.kind}|",
        "gt_kind_json": json.dumps(spec.kind),
        "gt_currency_json": json.dumps(spec.currency),
    }
    return sql, params
