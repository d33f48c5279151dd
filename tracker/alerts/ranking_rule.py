"""What a ``ranking_change`` rule looks for: a profile's leader, its top N and its job
cost, between one ranking snapshot and the one before (a saved plan's: plan_rule.py).

Costs are stored in USD and shown in the rule's ``currency`` at the rate in force at the
snapshot (:meth:`tracker.alerts.context.Evaluation.in_currency`); without one the alert
is left out and counted, as for the offer rules (:mod:`tracker.alerts.offer_rules`).
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

from tracker.alerts.offer_rules import money, shown
from tracker.alerts.rules import RankingChangeRule
from tracker.fx import USD
from tracker.store import outbox
from tracker.store.outbox import NewAlert

if TYPE_CHECKING:
    from tracker.alerts.context import Evaluation

__all__ = ["ranking_change"]


def ranking_change(rule: RankingChangeRule, ev: Evaluation) -> None:
    from tracker.recommend.history import RankedEntry, RankingChange  # loads only when used

    if rule.plan:  # a saved plan, not a profile: its own module
        from tracker.alerts.plan_rule import plan_change

        return plan_change(rule, ev)
    state = ev.rule_state(rule)
    cursor = ev.cursor(rule, state, "ranking_snapshots")
    if cursor is None:
        return
    columns = tuple(f.name for f in fields(RankedEntry))
    out: list[NewAlert] = []
    # Rules over the same snapshots (one cursor, as usual) read them once.
    pairs = ev.cached(
        f"snapshots@{cursor}", lambda: outbox.snapshots_since(ev.engine, cursor, columns)
    )
    for pair in pairs:
        if rule.profile and pair.profile not in rule.profile:
            continue
        if pair.previous_id is None or pair.previous_fingerprint != pair.fingerprint:
            continue  # a first or re-defined profile: the job changed, not the market
        change = RankingChange(
            profile=pair.profile,
            snapshot_id=pair.snapshot_id,
            computed_at=pair.computed_at,
            entries=tuple(RankedEntry(*row) for row in pair.entries),
            previous_snapshot_id=pair.previous_id,
            previous_computed_at=pair.previous_computed_at,
            previous_entries=tuple(RankedEntry(*row) for row in pair.previous_entries),
            profile_changed=False,
        )
        out.extend(_ranking_alerts(rule, ev, change))
    ev.emit(rule, out, known=False)


def _entry(e: Any) -> dict[str, Any]:
    return {
        "provider": e.provider,
        "instance_type": e.instance_type,
        "region": f"{e.region}/{e.zone}" if e.zone else e.region,
        "pricing": e.pricing,
        "gpu": e.hardware,
        "gpu_count": f"{e.gpu_count.normalize():f}",
        "gpu_model": e.gpu_model,
        "job_cost_usd": money(e.job_cost_usd),
    }


def _ranking_alerts(rule: RankingChangeRule, ev: Evaluation, change: Any) -> list[NewAlert]:
    profile, sid, leader, before = (
        change.profile,
        change.snapshot_id,
        change.leader,
        change.previous_leader,
    )
    subject = f"profile:{profile}"
    out = []
    base = {"profile": profile, "snapshot": sid}

    def cost(entry: Any) -> str | None:
        """A job cost (USD) in the rule's currency at the snapshot's rate, or None."""
        value = ev.in_currency(rule, entry.job_cost_usd, USD, change.computed_at)
        return None if value is None else shown(value, USD, rule.currency)

    if "leader" in rule.events and change.new_leader and leader is not None:
        was = f" (was {before.provider} {before.instance_type})" if before is not None else ""
        new = cost(leader)
        old = "" if before is None else None if new is None else cost(before)
        if new is not None and old is not None:
            out.append(
                ev.alert(
                    rule,
                    f"{profile}|leader|{sid}",
                    f"{subject}:leader",
                    f"best for {profile} now {leader.provider} {leader.instance_type}{was}",
                    {**base, **_entry(leader), "event": "leader", "old": old, "new": new,
                     "currency": rule.currency,
                     "previous": _entry(before) if before is not None else None},
                )
            )  # fmt: skip
    if "top_n" in rule.events:
        top = change.entries[: rule.top_n]
        seen = {e.gpu_model for e in change.previous_entries[: rule.top_n]}
        for e in top:
            if e.gpu_model in seen:
                continue
            seen.add(e.gpu_model)
            out.append(
                ev.alert(
                    rule,
                    f"{profile}|top_n|{sid}|{e.gpu_model}",
                    f"{subject}:top_n:{e.gpu_model}",
                    f"{e.gpu_model} entered the top {rule.top_n} for {profile} "
                    f"(#{e.rank}: {e.provider} {e.instance_type})",
                    {**base, **_entry(e), "event": "top_n", "rank": e.rank, "top_n": rule.top_n},
                )
            )
    pct = change.leader_cost_delta_pct
    if (
        "cost" in rule.events
        and rule.threshold_percent is not None
        and pct is not None
        and abs(pct) >= rule.threshold_percent
        and leader is not None
        and before is not None
        and (new := cost(leader)) is not None
        and (old := cost(before)) is not None
    ):
        # both costs at the snapshot's one rate: the percentage is the USD one
        out.append(
            ev.alert(
                rule,
                f"{profile}|cost|{sid}",
                f"{subject}:cost",
                f"{profile} job cost {old} → {new} {rule.currency} ({pct:+}%)",
                {**base, **_entry(leader), "event": "cost", "old": old, "new": new,
                 "currency": rule.currency, "change_pct": str(pct),
                 "previous": _entry(before) if before.key != leader.key else None},
            )
        )  # fmt: skip
    return out
