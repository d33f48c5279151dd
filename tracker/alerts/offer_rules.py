"""What the offer rules look for: price moves, spot discounts, new hardware.

Each evaluator reads what changed since the rule's cursor (or the current offers),
applies the rule's filters and threshold, and hands candidate alerts to
:meth:`Evaluation.emit` (which applies dedupe and cooldown).

Prices are read and shown in the rule's ``currency`` (USD by default), both sides of a
comparison converted at the one exchange rate in force at the event (the change, now,
the ranking's snapshot): so a percentage between two prices in one currency is that
currency's own, exactly, and a rate move alone never fires; two prices in different
currencies compare in the rule's. Without a rate the alert is left out and counted
(:meth:`Evaluation.in_currency`), never converted at 1.0.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from datetime import datetime
from decimal import Context, Decimal
from functools import partial
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar

from tracker.alerts import price_staged
from tracker.alerts.rules import (
    NewHardwareRule,
    PriceChangeRule,
    SpotDiscountRule,
    channels_of,
)
from tracker.discounts import Discounts
from tracker.store import outbox
from tracker.store.outbox import NewAlert, SpotPair, spot_pairs
from tracker.store.reads import SeriesFilter

if TYPE_CHECKING:
    from tracker.alerts.context import Evaluation

__all__ = ["EVALUATORS", "percent", "read_ahead"]

log = logging.getLogger(__name__)
CENT = Decimal("0.01")
T = TypeVar("T")
_EXACT = Context(prec=100)
"""Products of a price and a threshold, unrounded."""
SHOWN = Decimal("0.0001")
"""A converted price is shown to a hundredth of a cent (a rate makes ten decimals)."""


def percent(old: Decimal, new: Decimal) -> Decimal:
    """Change from ``old`` to ``new`` in percent (exact; rounded only for display)."""
    return (new - old) / old * 100


def money(value: Decimal) -> str:
    """At least two decimals, no trailing zeros beyond them (``10.5000`` → ``10.50``)."""
    whole, _, frac = format(value, "f").partition(".")
    return f"{whole}.{frac.rstrip('0').ljust(2, '0')}"


def _offer_subject(*parts: str) -> str:
    return "offer:" + "/".join(parts)


def _series(rule: PriceChangeRule | SpotDiscountRule | NewHardwareRule) -> SeriesFilter:
    """The rule's offer filters, applied by the store in SQL."""
    return SeriesFilter.of(rule.offers)


Loads = list[Callable[[], list[T]]]


def read_ahead(rules: Sequence[Any], ev: Evaluation, reader: Executor) -> None:
    """Start the ``price_change``, ``spot_discount`` and ``new_hardware`` rules' reads on
    ``reader`` (:attr:`Evaluation.reads`): the database answers one rule while the rules
    before it build their alerts. In rule order, the order they are waited for: a small
    read queued behind a big one would hold up the rules after it (and the outbox
    writer, which is handed their alerts). Cursors and state are read here, on the
    caller's thread, as the rule would read them."""
    for rule in rules:
        loads: Loads[Any] | None
        if isinstance(rule, PriceChangeRule) and price_staged.staged(rule, ev):
            ev.rendering[id(rule)] = price_staged.start(rule, ev, _series(rule), reader)
            continue
        if isinstance(rule, PriceChangeRule):
            loads = _changes_reader(rule, ev)
        elif isinstance(rule, SpotDiscountRule):
            loads = [partial(spot_pairs, ev.engine, _series(rule))]
        elif isinstance(rule, NewHardwareRule):
            loads = _series_reader(rule, ev)
        else:
            continue
        ev.reads[id(rule)] = None if loads is None else [reader.submit(f) for f in loads]


def _read(rule: Any, ev: Evaluation, loads: Loads[T] | None) -> Iterator[list[T]] | None:
    """The rule's rows (in parts), read ahead or now; None when it has nothing to read
    (it seeds)."""
    if id(rule) in ev.reads:
        ahead = ev.reads.pop(id(rule))
        return None if ahead is None else (part.result() for part in ahead)
    return None if loads is None else (load() for load in loads)


def _changes_reader(rule: PriceChangeRule, ev: Evaluation) -> Loads[outbox.PriceChange] | None:
    """The rule's read of the changes since its cursor (None on its first evaluation)."""
    state = ev.rule_state(rule)
    cursor = ev.cursor(rule, state, "price_points")
    if cursor is None:
        return None
    # Only the changes of the rule's offers, and on Postgres only those reaching its
    # threshold, come out of the store: after a big run that is the difference between
    # reading 100,000 changes per rule and reading the ones that fire.
    threshold = outbox.ChangeThreshold(rule.threshold_percent, rule.direction)
    return [partial(outbox.price_changes_since, ev.engine, cursor, _series(rule), threshold)]


def price_change(rule: PriceChangeRule, ev: Evaluation) -> None:
    if price_staged.staged(rule, ev):  # started by read_ahead
        return price_staged.queue(rule, ev, ev.rendering.pop(id(rule)))
    ahead = id(rule) in ev.reads
    parts = _read(rule, ev, None if ahead else _changes_reader(rule, ev))
    if parts is None:
        return
    out: list[NewAlert] = []
    alert = _PriceAlerts(rule, ev)
    net = ev.discounts() if rule.on == "net" and ev.discount_rules else None
    for listed in chain.from_iterable(parts):
        c = listed if net is None else _net_change(net, listed)
        if c is None:
            continue
        if not c.old_price:
            log.debug("price interval %d: no comparable previous price", c.interval_id)
            continue
        # one currency: its own prices, exactly (no rate needed to know it fires);
        # two: the rule's, at one rate
        same = c.old_currency == c.currency
        if same and not _reaches(rule, c.old_price, c.new_price):
            continue
        if same and c.currency == rule.currency:  # as _pair would: no rate needed
            old, new = c.old_price, c.new_price
        else:
            shown = _pair(rule, ev, (c.old_price, c.old_currency), (c.new_price, c.currency), c.at)
            if shown is None:
                continue
            old, new = shown
        if not same:
            if not old:  # a price too small to show in the rule's currency
                log.debug("price interval %d: no comparable previous price", c.interval_id)
                continue
            if not _reaches(rule, old, new):
                continue
        change = percent(c.old_price, c.new_price) if same else percent(old, new)
        out.append(alert(c, old, new, change))
    ev.emit(rule, out, known=False)


def _net_change(net: Discounts, c: outbox.PriceChange) -> outbox.PriceChange | None:
    """``c`` at what the account pays at the change: both sides under the one rule in
    force then (the same offer at the same moment), so a percentage scales both and
    leaves the move's percentage as listed; a fixed net price did not move (None)."""
    rule = net.rule_for(c.provider, c.pricing, c.instance_type, c.region, c.at)
    if rule is None:
        return c
    if rule.percent is None:
        return None
    keep = (Decimal(100) - rule.percent) / Decimal(100)
    return replace(c, old_price=c.old_price * keep, new_price=c.new_price * keep)


def _reaches(rule: PriceChangeRule, old: Decimal, new: Decimal) -> bool:
    """The change from ``old`` (> 0) to ``new`` goes the rule's way by at least its
    threshold, exactly (no division: as the store tests it, tracker.store.outbox)."""
    moved = new - old
    if (rule.direction == "down" and moved >= 0) or (rule.direction == "up" and moved <= 0):
        return False
    return _EXACT.multiply(abs(moved), 100) >= _EXACT.multiply(rule.threshold_percent, old)


class _PriceAlerts:
    """One rule's price alerts, what they share worked out once (a big run builds tens
    of thousands: the dedupe key's prefix, the channels, a GPU count's and a time's text)."""

    def __init__(self, rule: PriceChangeRule, ev: Evaluation) -> None:
        self.rule, self.kind, self.currency = rule.name, rule.type, rule.currency
        self.key = f"{rule.name}|{rule.type}|"
        self.channels = channels_of(rule, ev.channels)
        self.counts: dict[Decimal, str] = {}
        self.times: dict[datetime, str] = {}

    def __call__(
        self, c: outbox.PriceChange, old: Decimal, new: Decimal, change: Decimal
    ) -> NewAlert:
        pct, cur = change.quantize(CENT), self.currency
        where = f"{c.region}/{c.zone}" if c.zone else c.region
        old_text = shown(old, c.old_currency, cur)
        new_text = shown(new, c.currency, cur)
        own = _own(cur, (c.old_price, c.old_currency), (c.new_price, c.currency))
        count = self.counts.get(c.gpu_count)
        if count is None:
            count = self.counts[c.gpu_count] = f"{c.gpu_count.normalize():f}"
        at = self.times.get(c.at)
        if at is None:
            at = self.times[c.at] = c.at.isoformat()
        details = {
            "kind": self.kind,
            "provider": c.provider,
            "instance_type": c.instance_type,
            "region": where,
            "pricing": c.pricing,
            "gpu": f"{count}x {c.gpu_model}",
            "gpu_count": count,
            "gpu_model": c.gpu_model,
            "old": old_text,
            "new": new_text,
            "currency": cur,
            "change_pct": str(pct),
            "own": own.strip(" []"),
            "at": at,
        }
        title = (
            f"{c.provider} {c.instance_type} {where} {c.pricing}: "
            f"{old_text} → {new_text} {cur}/h ({pct:+}%){own}"
        )
        subject = _offer_subject(c.provider, c.instance_type, c.region, c.zone, c.pricing)
        return NewAlert(
            f"{self.key}{c.interval_id}", self.rule, self.kind, subject, title, details,
            self.channels,
        )  # fmt: skip


Priced = tuple[Decimal, str]


def _pair(
    rule: Any, ev: Evaluation, old: Priced, new: Priced, at: datetime | None
) -> tuple[Decimal, Decimal] | None:
    """Both prices in the rule's currency at the rate in force at ``at`` (None, counted
    by :meth:`Evaluation.in_currency`, when a rate is missing)."""
    a = ev.in_currency(rule, *old, at)
    b = None if a is None else ev.in_currency(rule, *new, at)  # one alert: counted once
    return None if a is None or b is None else (a, b)


def shown(value: Decimal, own: str, shown_in: str) -> str:
    """A price as an alert shows it: exact in its own currency, else converted and
    rounded to :data:`SHOWN`."""
    return money(value if own == shown_in else value.quantize(SHOWN))


def _own(shown_in: str, old: Priced, new: Priced) -> str:
    """`` [30.00 CNY → 29.00 CNY]``: the provider's own figures, when not in ``shown_in``."""
    if old[1] == shown_in and new[1] == shown_in:
        return ""
    return f" [{money(old[0])} {old[1]} → {money(new[0])} {new[1]}]"


def _net_pair(
    net: Discounts, o: SpotPair, base: Priced, spot: Priced, at: datetime
) -> tuple[Priced, Priced]:
    """Both sides at what the account pays now, each in its own currency (the rule in
    force for the on-demand and for the spot offer, which may differ)."""
    od_key = (o.provider, "on_demand", o.instance_type, o.region)
    spot_key = (o.provider, "spot", o.instance_type, o.region)
    od_net = net.net(od_key, base[0], base[1], None, at).price_per_hour
    spot_net = net.net(spot_key, spot[0], spot[1], None, at).price_per_hour
    return (od_net, base[1]), (spot_net, spot[1])


def spot_discount(rule: SpotDiscountRule, ev: Evaluation) -> None:
    """Fires when an offer's spot discount reaches the threshold, not while it stays there."""
    state = ev.rule_state(rule)
    seeding = ev.seeding(rule, state)
    # The rule's spot offers with an on-demand counterpart, paired in SQL.
    loads: Loads[SpotPair] = [partial(spot_pairs, ev.engine, _series(rule))]
    offers = chain.from_iterable(_read(rule, ev, loads) or [])
    crossed: set[str] = set()
    out: list[NewAlert] = []
    net = ev.discounts() if rule.on == "net" else None
    for o in offers:
        if not o.od_price:
            continue
        base: Priced = (o.od_price, o.od_currency)
        spot: Priced = (o.price, o.currency)
        if net:
            base, spot = _net_pair(net, o, base, spot, ev.now)
        same = base[1] == spot[1]
        pair = None if same else _pair(rule, ev, base, spot, ev.now)
        if not same and pair is None:
            continue
        discount = -percent(base[0], spot[0]) if pair is None else -percent(*pair)
        if discount < rule.threshold_percent:
            continue
        where = f"{o.region}/{o.zone}" if o.zone else o.region
        subject = _offer_subject(o.provider, o.instance_type, o.region, o.zone, o.os)
        crossed.add(subject)
        if f"spot:{subject}" in state:
            continue
        if seeding:
            ev.state[(rule.name, f"spot:{subject}")] = ev.now.isoformat()
            continue
        pair = pair or _pair(rule, ev, base, spot, ev.now)
        if pair is None:
            continue  # not marked crossed: it fires once the rate is there
        ev.state[(rule.name, f"spot:{subject}")] = ev.now.isoformat()
        rounded = discount.quantize(CENT)
        od_text, spot_text = (
            shown(v, c, rule.currency) for v, c in zip(pair, (base[1], spot[1]), strict=True)
        )
        own = (
            f" [spot {money(spot[0])} {spot[1]}, on-demand {money(base[0])} {base[1]}]"
            if {spot[1], base[1]} != {rule.currency}
            else ""
        )
        out.append(
            ev.alert(
                rule,
                f"{subject}|{o.price_since.isoformat()}|{o.od_since.isoformat()}",
                subject,
                f"{o.provider} {o.instance_type} {where} spot {spot_text} "
                f"{rule.currency}/h is {rounded}% below on-demand {od_text}{own}",
                {
                    "provider": o.provider,
                    "instance_type": o.instance_type,
                    "region": where,
                    "pricing": "spot",
                    "gpu": f"{o.gpu_count.normalize():f}x {o.gpu_model}",
                    "gpu_count": f"{o.gpu_count.normalize():f}",
                    "gpu_model": o.gpu_model,
                    "old": od_text,
                    "new": spot_text,
                    "currency": rule.currency,
                    "change_pct": str(-rounded),
                    "own": own.strip(" []"),
                },
            )
        )
    for flag in state:
        if flag.startswith("spot:") and flag.removeprefix("spot:") not in crossed:
            ev.state[(rule.name, flag)] = None  # back under the threshold: may cross again
    ev.emit(rule, out, known=False)


def _series_reader(rule: NewHardwareRule, ev: Evaluation) -> Loads[outbox.NewSeries] | None:
    """The rule's read of the series since its cursor (None on its first evaluation)."""
    cursor = ev.cursor(rule, ev.rule_state(rule), "series")
    return None if cursor is None else [partial(outbox.new_series_since, ev.engine, cursor)]


def new_hardware(rule: NewHardwareRule, ev: Evaluation) -> None:
    ahead = id(rule) in ev.reads
    parts = _read(rule, ev, None if ahead else _series_reader(rule, ev))
    if parts is None:
        return
    out: list[NewAlert] = []
    for s in chain.from_iterable(parts):
        if not rule.matches_priced(s.pricing, s.provider, s.region, s.gpu_model, s.gpu_raw_name):
            continue
        details = {
            "provider": s.provider,
            "instance_type": s.instance_type,
            "region": s.region,
            "pricing": s.pricing,
            "gpu": f"{s.gpu_count.normalize():f}x {s.gpu_model}",
            "gpu_count": f"{s.gpu_count.normalize():f}",
            "gpu_model": s.gpu_model,
        }
        found = [
            ("gpu_model", s.new_gpu_model, f"gpu:{s.gpu_model}", f"new GPU model {s.gpu_model} "
             f"at {s.provider} ({s.instance_type}, {s.region})"),
            ("instance_type", s.new_instance_type, f"instance:{s.provider}/{s.instance_type}",
             f"new instance type {s.provider} {s.instance_type} ({details['gpu']})"),
            ("region", s.new_region, f"region:{s.provider}/{s.region}",
             f"{s.provider} offers GPUs in {s.region} now ({s.instance_type})"),
        ]  # fmt: skip
        # One machine that is new in several ways is one line in a digest: each alert
        # (kept apart for its own dedupe key) names all of them.
        events = [e for e, is_new, _, _ in found if is_new and e in rule.events]
        for event, _, subject, title in found:
            if event in events:
                out.append(
                    ev.alert(
                        rule, subject, subject, title, {**details, "event": event, "events": events}
                    )
                )
    ev.emit(rule, out, known=False)


EVALUATORS: dict[str, Callable[[Any, Evaluation], None]] = {
    "price_change": price_change,
    "spot_discount": spot_discount,
    "new_hardware": new_hardware,
}
"""The offer rules; ``ranking_change`` is :mod:`tracker.alerts.ranking_rule`'s."""
