"""Postgres: a ``price_change`` rule's alerts rendered by the store, not built in Python.

A big run's price alerts are most of an evaluation when each is built in Python (a
row read, prices converted, a title and details formatted, JSON encoded). A rule
without a cooldown needs nothing of them but their text, so on Postgres one statement
renders them (:mod:`tracker.store.price_alert_sql`), read ahead on a reader thread like
the other rules' reads, and the rows go to the outbox as they are. A rule with a
cooldown looks up when each offer last fired and keeps the Python path
(:func:`tracker.alerts.offer_rules.price_change`), as does SQLite; both paths queue the
same alerts (tests/alerts/test_price_alert_sql.py).

The exchange rates come from :meth:`tracker.fx.Rates.factor`, worked out here for
every currency and time the changes need, so the conversion is the Python path's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from tracker.alerts.rules import PriceChangeRule, channels_of
from tracker.store import alert_events
from tracker.store.history import SeriesFilter
from tracker.store.outbox_stream import RenderedAlert
from tracker.store.price_alert_sql import Factor, PriceAlertSpec, Rendered, rendered_price_alerts

if TYPE_CHECKING:
    from tracker.alerts.evaluate import Evaluation

__all__ = ["queue", "reader", "staged"]

log = logging.getLogger(__name__)


def staged(rule: PriceChangeRule, ev: Evaluation) -> bool:
    """Whether ``rule``'s alerts are rendered by the store (Postgres, no cooldown)."""
    return ev.stream is not None and not rule.cooldown


def reader(
    rule: PriceChangeRule, ev: Evaluation, where: SeriesFilter
) -> list[Callable[[], list[Rendered]]] | None:
    """The rule's read of its rendered alerts (its offers: ``where``); None on its first
    evaluation (it seeds its cursor). Cursors and rates are read here, on the caller's
    thread."""
    cursor = ev.cursor(rule, ev.rule_state(rule), "price_points")
    if cursor is None:
        return None
    spec = PriceAlertSpec(
        rule=rule.name,
        kind=rule.type,
        currency=rule.currency,
        threshold_percent=rule.threshold_percent,
        direction=rule.direction,
    )
    threshold = alert_events.ChangeThreshold(rule.threshold_percent, rule.direction)
    upto, times, factors = _factors(ev, cursor, rule.currency)
    read = partial(rendered_price_alerts, ev.engine, cursor, where, threshold, spec)
    return [partial(read, upto, times, factors)]


def queue(rule: PriceChangeRule, ev: Evaluation, parts: Iterable[list[Rendered]]) -> None:
    """Hand the rendered alerts to the outbox; count the changes left out for want of a
    rate (:func:`tracker.alerts.evaluate._report_no_rate`), log the others."""
    assert ev.stream is not None
    for part in parts:
        ev.stream.add_rendered(
            rule.name, rule.type, channels_of(rule, ev.channels), _alerts(rule, ev, part)
        )


def _alerts(rule: PriceChangeRule, ev: Evaluation, rows: list[Rendered]) -> Iterator[RenderedAlert]:
    for row in rows:
        if row.dedupe_key is not None:
            yield row.dedupe_key, row.subject, row.title, row.details  # type: ignore[misc]
        elif row.lacking is not None:
            ev.no_rate[(rule.name, row.lacking)] += 1
        else:
            log.debug("price interval %d: no comparable previous price", row.interval_id)


def _factors(ev: Evaluation, cursor: int, target: str) -> tuple[int, list[datetime], list[Factor]]:
    """The last interval the rule reads (one written later is read next time: its time
    and rates are not known here), every time a change since ``cursor`` happened, and
    the rate factor into ``target`` then of every currency one may be in (those with
    rates, those of the changes).

    A currency in neither (an old price's, rate-less) gets no row: the statement
    counts it as the currency lacking a rate, as the Python path does."""
    moments, upto = ev.cached(
        f"moments@{cursor}", lambda: alert_events.change_moments(ev.engine, cursor)
    )
    rates = ev.rates()
    currencies = (rates.named() | {currency for currency, _ in moments}) - {target}
    out = []
    times: list[datetime] = sorted({at for _, at in moments})
    for at in times:
        for currency in sorted(currencies):
            factor = rates.factor(currency, target, at)
            lacking = None
            if factor is None:
                lacking = currency if rates.usd_per_unit(currency, at) is None else target
            out.append(Factor(currency, at, factor, lacking))
    return upto, times, out
