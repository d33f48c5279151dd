"""Rules over what the store says changed → alerts queued in the outbox, in one transaction.

:func:`evaluate` reads, per rule, what is new since that rule last looked (its
cursors and remembered state), builds the alerts that match, drops those inside
the rule's cooldown or already queued, and writes the alerts together with the
rules' new state in one transaction: an evaluation that fails queues nothing and
moves no cursor, and one that runs twice queues nothing twice (dedupe keys). On
Postgres that transaction is written while the rules are evaluated (a writer thread,
:mod:`tracker.store.outbox_stream`) and the rules' reads start ahead (a reader thread,
:func:`offer_rules.read_ahead`): a big run's database work overlaps its alerts' building.

A rule's first evaluation *seeds*: it records where things stand and fires
nothing, so a fresh database (or a new rule) is not an alert storm.

Rules with prices read them in their ``currency`` (USD by default), converted at the
exchange rate in force (:meth:`Evaluation.in_currency`); an alert that cannot be shown
for want of a rate is left out, counted per rule and logged, never converted at 1.0.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from tracker.alerts import offer_rules
from tracker.alerts.cursor import CHECKPOINTS, GLOBAL_RULE, safe_ids
from tracker.alerts.ranking_rule import ranking_change
from tracker.alerts.render import health_job
from tracker.alerts.rules import AlertRule, CollectorHealthRule, channels_of
from tracker.fx import NO_RATE_HINT, Rates, which_missing
from tracker.hooks import JobHealthChange
from tracker.store import alert_events
from tracker.store import alerts as outbox
from tracker.store import fx as fx_store
from tracker.store.engine import Engine
from tracker.store.outbox_stream import OutboxStream

if TYPE_CHECKING:
    from tracker.alerts.price_staged import Rendering

__all__ = ["Evaluation", "evaluate", "health_change_alerts"]

log = logging.getLogger(__name__)
EVALUATORS: dict[str, Callable[[Any, Evaluation], None]] = {
    **offer_rules.EVALUATORS,
    "ranking_change": ranking_change,
}
"""Each rule type's evaluation (collector health is :func:`_failing_runs`)."""
SEEDED = "@seeded"
READERS = 2
"""Rules' reads running at one time ahead of the rule being built (Postgres)."""


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


def evaluate(
    engine: Engine,
    rules: Sequence[AlertRule],
    channels: Sequence[str],
    *,
    now: datetime | None = None,
    health_only: bool = False,
    fx_rates: Mapping[str, Decimal] | None = None,
) -> list[int]:
    """Evaluate ``rules`` and queue what fired; returns the new alert ids.

    ``health_only``: only the collector-health rules (the sender's timer runs them,
    since failed runs trigger no after-collection hook). ``fx_rates``: the manual rates
    setting, for rules whose currency differs from an offer's. Raises
    :class:`~tracker.store.engine.DatabaseError` (nothing queued).
    """
    ev = Evaluation(engine, (now or datetime.now(UTC)).astimezone(UTC), channels, fx_rates=fx_rates)
    reader = ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="gt-alert-reads")
    try:
        if not health_only:
            _start(ev, rules)
        if ev.stream is not None:
            # Each rule's offers read while the rules before it build their alerts.
            offer_rules.read_ahead(rules, ev, reader)
        for rule in rules:
            if isinstance(rule, CollectorHealthRule):
                _failing_runs(rule, ev)
            elif not health_only:
                EVALUATORS[rule.type](rule, ev)
    except BaseException:
        if ev.stream is not None:
            ev.stream.abort()  # nothing queued
        raise
    finally:
        reader.shutdown(wait=True, cancel_futures=True)
    if ev.stream is not None:
        queued = ev.stream.finish(ev.state)
    elif ev.alerts or ev.state:
        queued = outbox.queue_alerts(engine, ev.alerts, ev.now, state=ev.state)
    else:
        queued = []
    _report_no_rate(ev)
    if queued:
        log.info(
            "%d alert(s) queued", len(queued), extra={"event": "alerts_queued", "alerts": queued}
        )
    return queued


def _start(ev: Evaluation, rules: Sequence[AlertRule]) -> None:
    """The outbox opened (Postgres: this evaluation's turn taken, so the state and
    changes read from here on are those the evaluation before left; a rendered alert's
    key is checked against the outbox as it is rendered), then the rules' state and the
    ids it is safe to move their cursors to."""
    ev.stream = outbox.stream_alerts(ev.engine, ev.now)
    if ev.stream is not None:
        ev.stream.take_turn()
    ev.states = outbox.read_states(ev.engine, [GLOBAL_RULE, *(r.name for r in rules)])
    stored = ev.states.pop(GLOBAL_RULE).get(CHECKPOINTS)
    ev.current, ev.safe, checkpoints = safe_ids(ev.engine, ev.now, stored)
    ev.state[(GLOBAL_RULE, CHECKPOINTS)] = checkpoints


def _report_no_rate(ev: Evaluation) -> None:
    """One warning per rule that left alerts out for want of an exchange rate."""
    by_rule: dict[str, Counter[str]] = {}
    for (rule, currency), n in ev.no_rate.items():
        by_rule.setdefault(rule, Counter())[currency] += n
    for rule, missing in sorted(by_rule.items()):
        total = sum(missing.values())
        log.warning(
            "rule %s: %d alert%s left out: no exchange rate for %s (%s)",
            rule,
            total,
            "" if total == 1 else "s",
            which_missing(missing),
            NO_RATE_HINT,
            extra={"event": "alerts_without_rate", "rule": rule, "missing": dict(missing)},
        )


def _failing_runs(rule: CollectorHealthRule, ev: Evaluation) -> None:
    """``failures`` failed runs in a row fires once; the next success says it recovered."""
    state = _job_names(rule, ev, ev.rule_state(rule))
    failing = {
        health_job(f.provider, f.scope): f
        for f in ev.cached("failing", lambda: alert_events.failing_collectors(ev.engine))
        if not rule.provider or f.provider in rule.provider
    }
    out = []
    for job, f in sorted(failing.items()):
        flag = f"failing:{job}"
        if f.consecutive_failures < rule.failures or flag in state:
            continue
        ev.state[(rule.name, flag)] = f.last_run_at.isoformat()
        error = f": {f.last_error}" if f.last_error else ""
        out.append(
            ev.alert(
                rule,
                f"failing|{job}|{f.last_run_at.isoformat()}",
                f"collector:{job}",
                f"{job} failed {f.consecutive_failures} runs in a row{error}",
                {
                    "job": job,
                    "state": "failing",
                    "failures": f.consecutive_failures,
                    "error": f.last_error or "",
                },
            )
        )
    for subject, since in sorted(state.items()):
        if not subject.startswith("failing:"):
            continue
        job = subject.removeprefix("failing:")
        if job in failing:
            continue
        ev.state[(rule.name, subject)] = None
        out.append(
            ev.alert(
                rule,
                f"recovered|{job}|{since}",
                f"collector:{job}",
                f"{job} recovered: its latest run succeeded",
                {"job": job, "state": "recovered"},
            )
        )
    ev.emit(rule, out)


def _job_names(rule: CollectorHealthRule, ev: Evaluation, state: dict[str, str]) -> dict[str, str]:
    """``failing:`` flags under the scheduler's job names; a flag stored by an older
    version under the run-log scope (``pricesheet:all``) is renamed, not re-fired."""
    for subject in [s for s in state if s.startswith("failing:")]:
        provider, _, scope = subject.removeprefix("failing:").partition(":")
        named = f"failing:{health_job(provider, scope)}"
        if named != subject:
            ev.state[(rule.name, subject)] = None
            ev.state[(rule.name, named)] = state[subject]
            state[named] = state.pop(subject)
    return state


def health_change_alerts(
    engine: Engine,
    rules: Sequence[AlertRule],
    channels: Sequence[str],
    change: JobHealthChange,
) -> list[int]:
    """Queue the alerts of a job that turned stale or fresh again."""
    ev = Evaluation(engine, change.at.astimezone(UTC), channels)
    since = change.last_success.isoformat() if change.last_success else "never"
    for rule in rules:
        if not isinstance(rule, CollectorHealthRule):
            continue
        if rule.provider and change.collector not in rule.provider:
            continue
        if change.stale:
            title = f"{change.job_id} is stale: no successful run since {since}"
            event = f"stale|{change.job_id}|{since}"
        else:
            title = f"{change.job_id} is fresh again (last success {since})"
            event = f"fresh|{change.job_id}|{since}"
        state = "stale" if change.stale else "recovered"
        ev.emit(
            rule,
            [
                ev.alert(
                    rule,
                    event,
                    f"collector:{change.job_id}",
                    title,
                    {"job": change.job_id, "state": state, "since": since},
                )
            ],
        )
    return outbox.queue_alerts(engine, ev.alerts, ev.now) if ev.alerts else []
