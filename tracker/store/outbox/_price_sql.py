"""Postgres: a ``price_change`` rule's alerts rendered by the store, set-wise.

After a big run a rule fires tens of thousands of alerts; built in Python each is a
row read, two prices converted, a title and a JSON object formatted (~0.1 ms each,
most of an evaluation, all on one core). Here one statement reads the rule's changes
(:func:`tracker.store.outbox.price_changes_select`), converts them, tests the
threshold and renders each alert's dedupe key, subject, title and details, leaving out
a key already queued. It runs on a reader connection as ``COPY (…) TO STDOUT``: each
alert arrives as a line of COPY text holding the outbox's columns, which the caller
hands to the outbox writer as it is
(:meth:`tracker.store.outbox.OutboxStream.add_copied`, which ``COPY``s it in
with its id in front). No alert is decoded into Python values and encoded again, and
the database inserts one part while it renders the next.

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
compare against, come back as lines whose key is ``\\N`` (:class:`RenderedPart`'s
``left_out``), for the caller to count and log as the Python path does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from psycopg.abc import Buffer
from sqlalchemy import Engine
from sqlalchemy.engine import Dialect

from tracker.store.errors import database_errors
from tracker.store.outbox._events import ChangeThreshold, price_changes_select
from tracker.store.reads import SeriesFilter

__all__ = ["PART", "PriceAlertSpec", "Rate", "RenderedPart", "Window", "rendered_price_alerts"]

PART = 5_000
"""Rows per part handed over: the outbox writer's batch."""


@dataclass(slots=True)
class RenderedPart:
    """Up to :data:`PART` rows of one rule's rendering."""

    lines: list[Buffer] = field(default_factory=list)
    """The alerts, each the outbox's columns after its id as one line of COPY text
    (dedupe key, rule, kind, subject, title, details, created at; the newline included):
    what :meth:`tracker.store.outbox.OutboxStream.add_copied` writes on."""
    left_out: list[tuple[int, str | None]] = field(default_factory=list)
    """The changes without an alert: (interval id, the currency lacking a rate), the
    currency None when there was no comparable previous price."""


@dataclass(frozen=True, slots=True)
class PriceAlertSpec:
    """What the rule contributes to the statement (plain values: the store does not
    know the alerts' rule types)."""

    rule: str
    kind: str
    currency: str
    threshold_percent: Decimal
    direction: str
    created_at: datetime
    """The evaluation's time, the alerts' ``created_at``."""


Rate = tuple[Decimal | None, str | None]
"""Units of the rule's currency per unit of another; or None with the currency that
lacks a rate (as :meth:`tracker.alerts.context.Evaluation.in_currency` counts it)."""


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


# Each step is one of offer_rules.price_change; the names are its variables'. Postgres
# does not share a subexpression: a column used in several expressions of one query
# level is worked out in each of them. So every figure is made in its own level, kept
# by OFFSET 0 (a level the planner may not fold into the one above), and the levels
# above read it as a column: each product, rounding and division once per change, not
# up to 20 times.
_STATEMENT = """
WITH read AS MATERIALIZED ({changes}),
moments AS MATERIALIZED (
    SELECT * FROM json_to_recordset(CAST(%(gt_moments)s AS json))
        AS m(at timestamptz, at_text text, rates jsonb)
),
rated AS (
    SELECT c.*, c.old_currency = c.currency AS same, m.at_text,
        CAST(m.rates -> c.old_currency ->> 0 AS numeric) AS fo,
        m.rates -> c.old_currency ->> 1 AS fo_lacking,
        CAST(m.rates -> c.currency ->> 0 AS numeric) AS fn,
        m.rates -> c.currency ->> 1 AS fn_lacking
    FROM read c
    -- the run's rates looked up row by row (LIMIT keeps it a lateral probe over the
    -- run's few times): a join could hash the changes and lose their order, which the
    -- rows stream out in
    LEFT JOIN LATERAL (SELECT m.rates, m.at_text FROM moments m WHERE m.at = c.at LIMIT 1) m
        ON TRUE
    WHERE c.interval_id <= CAST(%(gt_upto)s AS bigint) AND c.old_price <> 0
    OFFSET 0
),
converted AS (
    SELECT r.*,
        CASE WHEN r.old_currency = CAST(%(gt_currency)s AS text) THEN r.old_price
             ELSE {old_converted} END AS old_v,
        CASE WHEN r.currency = CAST(%(gt_currency)s AS text) THEN r.new_price
             ELSE {new_converted} END AS new_v,
        CASE WHEN r.old_currency <> CAST(%(gt_currency)s AS text) AND r.fo IS NULL
                THEN coalesce(r.fo_lacking, r.old_currency)
             WHEN r.currency <> CAST(%(gt_currency)s AS text) AND r.fn IS NULL
                THEN coalesce(r.fn_lacking, r.currency) END AS lacking
    FROM (SELECT r.*, r.old_price * r.fo AS old_x, r.new_price * r.fn AS new_x
          FROM rated r OFFSET 0) r
    OFFSET 0
),
judged AS MATERIALIZED (
    SELECT p.*, b_old <> 0 AND {direction}
            AND moved >= CAST(%(gt_threshold)s AS numeric) * b_old AS reaches
    FROM (SELECT p.*, abs(b_new - b_old) * 100 AS moved
          FROM (SELECT *, CASE WHEN same THEN old_price ELSE old_v END AS b_old,
                          CASE WHEN same THEN new_price ELSE new_v END AS b_new
                FROM converted OFFSET 0) p
          OFFSET 0) p
),
rendered AS (
    SELECT h.interval_id, h.provider, h.instance_type, h.region, h.zone, h.pricing,
        h.gpu_model, h.place, h.own, h.count, h.at_text, h.minus,
        CASE WHEN h.old_currency = CAST(%(gt_currency)s AS text) THEN {old_exact}
             ELSE {old_shown} END AS old_text,
        CASE WHEN h.currency = CAST(%(gt_currency)s AS text) THEN {new_exact}
             ELSE {new_shown} END AS new_text,
        (CASE WHEN trunc(h.ax, 3) = h.ax AND mod(h.ax * 1000, 10) = 5
              THEN trunc(h.ax, 2) + CASE WHEN h.moved - h.ax * h.b_old > 0
                   OR (h.moved - h.ax * h.b_old = 0 AND mod(trunc(h.ax, 2) * 100, 2) = 1)
                   THEN 0.01 ELSE 0 END
              ELSE round(h.ax, 2) END)::text AS pct
    FROM (
        SELECT j.*, j.moved / j.b_old AS ax,
            CASE WHEN j.b_new < j.b_old THEN '-' ELSE '' END AS minus,
            CASE WHEN j.zone <> '' THEN j.region || '/' || j.zone ELSE j.region END AS place,
            CASE WHEN j.old_currency = CAST(%(gt_currency)s AS text)
                      AND j.currency = CAST(%(gt_currency)s AS text) THEN ''
                 ELSE {old_own} || ' ' || j.old_currency || ' → ' || {new_own} || ' '
                      || j.currency END AS own,
            trim_scale(j.gpu_count)::text AS count,
            -- shown to 4 decimals: only a price converted into the rule's currency
            CASE WHEN j.old_currency <> CAST(%(gt_currency)s AS text) THEN {old_4} END AS old_4,
            CASE WHEN j.currency <> CAST(%(gt_currency)s AS text) THEN {new_4} END AS new_4
        FROM judged j WHERE j.reaches AND j.lacking IS NULL OFFSET 0
    ) h
    OFFSET 0
),
alerts AS (
    SELECT left(CAST(%(gt_key)s AS text) || interval_id, 255) AS dedupe_key,
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
-- the outbox's columns after its id, in interval order; a key already queued (a change
-- read again) is left out by one probe of its unique index (a scalar subquery: an
-- anti-join could hash the whole outbox)
SELECT dedupe_key, CAST(%(gt_rule)s AS text), CAST(%(gt_kind)s AS text), subject, title,
    details, CAST(%(gt_now)s AS timestamptz)
FROM alerts a
WHERE (SELECT 1 FROM alert_outbox o WHERE o.dedupe_key = a.dedupe_key LIMIT 1) IS NULL
UNION ALL SELECT NULL, lacking, CAST(interval_id AS text), NULL, NULL, NULL, NULL FROM judged
    WHERE lacking IS NOT NULL AND (NOT same OR reaches)
UNION ALL SELECT NULL, NULL, CAST(interval_id AS text), NULL, NULL, NULL, NULL FROM read
    WHERE interval_id <= CAST(%(gt_upto)s AS bigint) AND old_price = 0
UNION ALL SELECT NULL, NULL, CAST(interval_id AS text), NULL, NULL, NULL, NULL FROM judged
    WHERE lacking IS NULL AND b_old = 0
"""


def rendered_price_alerts(
    engine: Engine,
    after_id: int,
    where: SeriesFilter,
    threshold: ChangeThreshold,
    spec: PriceAlertSpec,
    window: Window,
    emit: Callable[[RenderedPart], None],
) -> None:
    """The alerts of ``spec``'s rule for the changes after ``after_id`` of the series
    ``where`` selects, rendered in interval order (those whose key is queued already
    left out), then the changes left out: handed to ``emit`` in parts of :data:`PART`
    rows as the database produces them (the first ones while it still renders the
    rest). Raises :class:`~tracker.store.engine.DatabaseError`."""
    sql, params = _statement(engine.dialect, after_id, where, threshold, spec, window)
    with database_errors("cannot read price changes"), engine.connect() as conn:
        # work_mem: the changes are materialized and joined in memory; no JIT for a
        # statement whose cost the planner cannot estimate (its CTEs have no statistics);
        # no parallel workers: the evaluation's reads already run side by side, and each
        # worker would build the series' hash again (a third of the read, on a core
        # the other reads and the outbox writer are using)
        conn.exec_driver_sql("SET LOCAL work_mem = '64MB'")
        conn.exec_driver_sql("SET LOCAL jit = off")
        conn.exec_driver_sql("SET LOCAL max_parallel_workers_per_gather = 0")
        raw = conn.connection.driver_connection
        assert raw is not None
        part = RenderedPart()
        with raw.cursor() as cur, cur.copy(f"COPY ({sql}) TO STDOUT", params) as copy:
            for row in copy:  # one row per message, as the server sends them
                if row[:3] != b"\\N\t":
                    part.lines.append(row)
                else:
                    _, lacking, interval_id, _rest = bytes(row).split(b"\t", 3)
                    part.left_out.append(
                        (int(interval_id), None if lacking == b"\\N" else lacking.decode())
                    )
                if len(part.lines) + len(part.left_out) >= PART:
                    emit(part)
                    part = RenderedPart()
        if part.lines or part.left_out:
            emit(part)
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
        old_converted=_half_even("r.old_x", 10),
        new_converted=_half_even("r.new_x", 10),
        direction=_direction(spec.direction),
        old_exact=_money("h.old_v"),
        new_exact=_money("h.new_v"),
        old_4=_half_even("j.old_v", 4),
        new_4=_half_even("j.new_v", 4),
        old_shown=_money("h.old_4"),
        new_shown=_money("h.new_4"),
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
        "gt_rule": spec.rule,
        "gt_kind": spec.kind,
        "gt_now": spec.created_at.isoformat(),
        "gt_kind_json": json.dumps(spec.kind),
        "gt_currency_json": json.dumps(spec.currency),
    }
    return sql, params
