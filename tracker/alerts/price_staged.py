"""Postgres: a ``price_change`` rule's alerts rendered by the store, not built in Python.

A big run's price alerts are most of an evaluation when each is built in Python (a
row read, prices converted, a title and details formatted, JSON encoded). A rule
without a cooldown needs nothing of them but their text, so on Postgres one statement
renders them (:mod:`tracker.store.outbox`), started ahead on a reader thread
like the other rules' reads; its rows stream back in parts, which go to the outbox
writer as they come, so the database inserts one part while it renders the next. A
rule with a cooldown looks up when each offer last fired and keeps the Python path
(:func:`tracker.alerts.offer_rules.price_change`), as does SQLite; both paths queue the
same alerts (tests/alerts/test_price_alert_sql.py).

The exchange rates come from :meth:`tracker.fx.Rates.factor`, worked out here for
every currency and time the changes need, so the conversion is the Python path's.
"""

from __future__ import annotations

import logging
from concurrent.futures import Executor
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from tracker.alerts.context import Rendering
from tracker.alerts.rules import PriceChangeRule, channels_of
from tracker.store import outbox
from tracker.store.outbox import PriceAlertSpec, Rate, Window, rendered_price_alerts
from tracker.store.reads import SeriesFilter

if TYPE_CHECKING:
    from tracker.alerts.context import Evaluation

__all__ = ["Rendering", "queue", "staged", "start"]

log = logging.getLogger(__name__)


def staged(rule: PriceChangeRule, ev: Evaluation) -> bool:
    """Whether ``rule``'s alerts are rendered by the store (Postgres, no cooldown, and
    list prices: net ones are worked out when read, in Python, tracker.discounts)."""
    net = rule.on == "net" and bool(ev.discount_rules)
    return ev.stream is not None and not rule.cooldown and not net


def start(
    rule: PriceChangeRule, ev: Evaluation, where: SeriesFilter, reader: Executor
) -> Rendering | None:
    """Start rendering the rule's alerts (its offers: ``where``) on ``reader``; None on
    its first evaluation (it seeds its cursor). Cursors and rates are read here, on the
    caller's thread."""
    cursor = ev.cursor(rule, ev.rule_state(rule), "price_points")
    if cursor is None:
        return None
    spec = PriceAlertSpec(
        rule=rule.name,
        kind=rule.type,
        currency=rule.currency,
        threshold_percent=rule.threshold_percent,
        direction=rule.direction,
        created_at=ev.now,
    )
    threshold = outbox.ChangeThreshold(rule.threshold_percent, rule.direction)
    window = _window(ev, cursor, rule.currency)
    rendering = Rendering()
    rendering.start(
        partial(rendered_price_alerts, ev.engine, cursor, where, threshold, spec, window), reader
    )
    return rendering


def queue(rule: PriceChangeRule, ev: Evaluation, rendering: Rendering | None) -> None:
    """Hand the rendered alerts to the outbox part by part; count the changes left out
    for want of a rate (:func:`tracker.alerts.evaluate._report_no_rate`), log the others."""
    assert ev.stream is not None
    channels = channels_of(rule, ev.channels)
    for part in rendering or ():
        if part.lines:
            ev.stream.add_copied(channels, part.lines)
        for interval_id, lacking in part.left_out:
            if lacking is not None:
                ev.no_rate[(rule.name, lacking)] += 1
            else:
                log.debug("price interval %d: no comparable previous price", interval_id)


def _window(ev: Evaluation, cursor: int, target: str) -> Window:
    """The last interval the rule reads (one written later is read next time: its time
    and rates are not known here), every time a change since ``cursor`` happened, and
    the rate factor into ``target`` then of every currency one may be in (those with
    rates, those of the changes).

    A currency in neither (an old price's, rate-less) gets no row: the statement
    counts it as the currency lacking a rate, as the Python path does."""
    moments, upto = ev.cached(f"moments@{cursor}", lambda: outbox.change_moments(ev.engine, cursor))
    rates = ev.rates()
    currencies = (rates.named() | {currency for currency, _ in moments}) - {target}
    in_force: dict[datetime, dict[str, Rate]] = {}
    for at in sorted({at for _, at in moments}):
        in_force[at] = {}
        for currency in sorted(currencies):
            factor = rates.factor(currency, target, at)
            lacking = None
            if factor is None:
                lacking = currency if rates.usd_per_unit(currency, at) is None else target
            in_force[at][currency] = (factor, lacking)
    return Window(upto, in_force)
