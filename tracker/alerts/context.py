"""What one alert evaluation carries from rule to rule: its inputs, the state it reads
once, the alerts it will write (:class:`Evaluation`), and a rule's rows being rendered
by the store on a reader thread (:class:`Rendering`).

Every rule module takes an :class:`Evaluation`; kept apart from
:mod:`tracker.alerts.evaluate`, which imports every rule module, so the type they share
does not tie them back to it.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import partial
from queue import SimpleQueue
from typing import Any

from tracker.alerts.rules import AlertRule, channels_of
from tracker.discounts import DiscountRule, Discounts
from tracker.fx import Rates
from tracker.store import Engine, outbox
from tracker.store import series as fx_store
from tracker.store.outbox import OutboxStream, RenderedPart

__all__ = ["SEEDED", "Evaluation", "Rendering"]

log = logging.getLogger(__name__)

SEEDED = "@seeded"
"""The state key a rule's first evaluation sets (it seeds its cursors, fires nothing)."""


@dataclass
class Evaluation:
    """One evaluation's inputs and what it will write."""

    engine: Engine
    now: datetime
    channels: Sequence[str]
    current: Mapping[str, int] = field(default_factory=dict)
    safe: Mapping[str, int] | None = None
    alerts: list[outbox.NewAlert] = field(default_factory=list)
    state: dict[tuple[str, str], str | None] = field(default_factory=dict)
    fx_rates: Mapping[str, Decimal] | None = None
    """The manual ``fx_rates`` setting (currencies the ECB does not publish)."""
    discount_rules: Sequence[DiscountRule] = ()
    """The ``[[discounts]]`` setting: rules comparing net prices apply them when read."""
    stream: OutboxStream | None = None
    """Postgres: where :meth:`emit` hands alerts over to be inserted while the
    evaluation goes on (committed with the state at the end)."""
    reads: dict[int, list[Future[Any]] | None] = field(default_factory=dict)
    """Postgres: rules' reads started ahead on a reader thread (:func:`offer_rules.read_ahead`),
    by ``id(rule)``; None: the rule seeds, nothing to read."""
    rendering: dict[int, Rendering | None] = field(default_factory=dict)
    """Postgres: rules' alerts being rendered by the store on a reader thread
    (:func:`tracker.alerts.price_staged.start`), by ``id(rule)``; None: it seeds."""
    states: dict[str, dict[str, str]] = field(default_factory=dict)
    """The rules' state read in one go at the start (:meth:`rule_state` takes each once)."""
    no_rate: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Alerts left out for want of an exchange rate, by (rule, currency lacking one)."""
    _cache: dict[str, Any] = field(default_factory=dict)
    _converters: dict[tuple[str, str, datetime | None], Callable[[Decimal], Decimal] | None] = (
        field(default_factory=dict)
    )

    def rates(self) -> Rates:
        return self.cached("rates", lambda: fx_store.load_rates(self.engine, self.fx_rates))  # type: ignore[no-any-return]

    def discounts(self) -> Discounts:
        """The discount rules with this evaluation's rates (read once)."""
        return self.cached(  # type: ignore[no-any-return]
            "discounts", lambda: Discounts(tuple(self.discount_rules), self.rates())
        )

    def in_currency(
        self, rule: AlertRule, amount: Decimal, currency: str, at: datetime | None
    ) -> Decimal | None:
        """``amount`` of ``currency`` in the rule's currency at the rate in force at
        ``at``, exact when it is already in it; None (counted) without a rate."""
        target: str = getattr(rule, "currency", "USD")
        if currency == target:
            return amount
        key = (currency, target, at)
        if key not in self._converters:  # a run's changes share a few times
            self._converters[key] = self.rates().converter(currency, target, at)
        into = self._converters[key]
        if into is None:
            lacking = currency if self.rates().usd_per_unit(currency, at) is None else target
            self.no_rate[(rule.name, lacking)] += 1
            return None
        return into(amount)

    def rule_state(self, rule: AlertRule) -> dict[str, str]:
        if rule.name in self.states:
            return dict(self.states.pop(rule.name))  # the caller's to change
        return outbox.read_state(self.engine, rule.name)

    def cursor(self, rule: AlertRule, state: Mapping[str, str], table: str) -> int | None:
        """The rule's cursor over ``table``; None on its first evaluation (it seeds)."""
        key = f"@{table}"
        if SEEDED not in state:
            self.state[(rule.name, SEEDED)] = self.now.isoformat()
            self.state[(rule.name, key)] = str(self.current.get(table, 0))
            return None
        cursor = int(state.get(key, "0"))
        if self.safe is not None and self.safe.get(table, 0) > cursor:
            self.state[(rule.name, key)] = str(self.safe[table])
        return cursor

    def seeding(self, rule: AlertRule, state: Mapping[str, str]) -> bool:
        """True (and marks it seeded) on a rule's first evaluation."""
        if SEEDED in state:
            return False
        self.state[(rule.name, SEEDED)] = self.now.isoformat()
        return True

    def cached(self, name: str, load: Callable[[], Any]) -> Any:
        if name not in self._cache:
            self._cache[name] = load()
        return self._cache[name]

    def alert(
        self,
        rule: AlertRule,
        event: str,
        subject: str,
        title: str,
        details: Mapping[str, Any],
    ) -> outbox.NewAlert:
        return outbox.NewAlert(
            dedupe_key=f"{rule.name}|{rule.type}|{event}",
            rule=rule.name,
            kind=rule.type,
            subject=subject,
            title=title,
            details={"kind": rule.type, **details},
            channels=channels_of(rule, self.channels),
        )

    def emit(
        self, rule: AlertRule, candidates: Sequence[outbox.NewAlert], *, known: bool = True
    ) -> None:
        """Queue ``candidates`` except those already queued or inside the cooldown.

        ``known=False``: the caller does not read :attr:`alerts` back, so without a
        cooldown an alert already queued may stay in it (queueing skips its dedupe key,
        ON CONFLICT DO NOTHING): a big run's 85,000 keys are not looked up first."""
        unique = list({a.dedupe_key: a for a in candidates}.values())
        if not unique or (not known and not rule.cooldown):
            self._keep(unique)
            return
        queued = outbox.existing_keys(self.engine, [a.dedupe_key for a in unique])
        fresh = [a for a in unique if a.dedupe_key[:255] not in queued]
        if rule.cooldown and fresh:
            fired = outbox.last_fired(self.engine, rule.name, [a.subject for a in fresh])
            kept = []
            for a in fresh:
                last = fired.get(a.subject)
                if last is not None and self.now - last < rule.cooldown:
                    log.info("alert %s held back by %s's cooldown", a.dedupe_key, rule.name)
                    continue
                fired[a.subject] = self.now
                kept.append(a)
            fresh = kept
        self._keep(fresh)

    def _keep(self, alerts: list[outbox.NewAlert]) -> None:
        self.alerts.extend(alerts)
        if self.stream is not None and alerts:
            self.stream.add(alerts)


class Rendering:
    """One rule's rendered rows, produced in parts on a reader thread and taken in
    order on the evaluating one (an exception in the read is raised there)."""

    _END = None

    def __init__(self) -> None:
        self._parts: SimpleQueue[RenderedPart | None] = SimpleQueue()
        self._done: Future[None] | None = None

    def start(self, read: partial[None], reader: Executor) -> None:
        def produce() -> None:
            try:
                read(self._parts.put)
            finally:
                self._parts.put(self._END)

        self._done = reader.submit(produce)

    def __iter__(self) -> Iterator[RenderedPart]:
        while (part := self._parts.get()) is not self._END:
            yield part
        assert self._done is not None
        self._done.result()
