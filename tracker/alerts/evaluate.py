"""Rules over what the store says changed → alerts queued in the outbox, in one transaction.

:func:`evaluate` reads, per rule, what is new since that rule last looked (its
cursors and remembered state), builds the alerts that match, drops those inside
the rule's cooldown or already queued, and writes the alerts together with the
rules' new state in one transaction: an evaluation that fails queues nothing and
moves no cursor, and one that runs twice queues nothing twice (dedupe keys). On
Postgres that transaction is written while the rules are evaluated (a writer thread,
:mod:`tracker.store.outbox`) and the rules' reads start ahead (a reader thread,
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
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from tracker.alerts import offer_rules
from tracker.alerts.context import Evaluation
from tracker.alerts.cursor import CHECKPOINTS, GLOBAL_RULE, safe_ids
from tracker.alerts.ranking_rule import ranking_change
from tracker.alerts.render import health_job
from tracker.alerts.rules import AlertRule, CollectorHealthRule
from tracker.discounts import DiscountRule
from tracker.fx import NO_RATE_HINT, which_missing
from tracker.hooks import JobHealthChange
from tracker.store import Engine, outbox

__all__ = ["evaluate", "health_change_alerts"]

log = logging.getLogger(__name__)
EVALUATORS: dict[str, Callable[[Any, Evaluation], None]] = {
    **offer_rules.EVALUATORS,
    "ranking_change": ranking_change,
}
"""Each rule type's evaluation (collector health is :func:`_failing_runs`)."""
READERS = 2
"""Rules' reads running at one time ahead of the rule being built (Postgres)."""


def evaluate(
    engine: Engine,
    rules: Sequence[AlertRule],
    channels: Sequence[str],
    *,
    now: datetime | None = None,
    health_only: bool = False,
    fx_rates: Mapping[str, Decimal] | None = None,
    discounts: Sequence[DiscountRule] = (),
) -> list[int]:
    """Evaluate ``rules`` and queue what fired; returns the new alert ids.

    ``health_only``: only the collector-health rules (the sender's timer runs them,
    since failed runs trigger no after-collection hook). ``fx_rates``: the manual rates
    setting, for rules whose currency differs from an offer's. Raises
    :class:`~tracker.store.engine.DatabaseError` (nothing queued).
    """
    ev = Evaluation(
        engine,
        (now or datetime.now(UTC)).astimezone(UTC),
        channels,
        fx_rates=fx_rates,
        discount_rules=discounts,
    )
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
        for f in ev.cached("failing", lambda: outbox.failing_collectors(ev.engine))
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
