"""``ranking_change`` rules that watch a saved plan: the fleet question re-asked continuously.

The seeds' advice for long rentals is to re-evaluate every six months as prices move.
A rule naming a saved plan (``[plans.NAME]`` of the profiles file) re-plans it at
every evaluation from the prices in force, and fires when the best plan's provider
changed (``leader``) or its total moved by at least ``threshold_percent`` (``cost``).

The comparison is with the best plan the rule last *told* about (or found when it
started), not the previous evaluation's: prices that creep down 1 % a week add up
to an alert once they pass the threshold, as a person re-checking the plan would
notice. An alert held back by the rule's cooldown leaves that baseline alone, so it
fires once the cooldown is over if the move is still there.

The first evaluation (and the first after the plan or the assumptions it depends on
were edited: the question changed, not the market) records the best plan and fires
nothing. A plan with no complete candidate (no price for some part anywhere) keeps
its baseline and fires nothing until one is priced again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from tracker.alerts.rules import RankingChangeRule
from tracker.catalog import select_gpus
from tracker.fx import USD
from tracker.plan.stored import stored_plans
from tracker.recommend.saved_plans import PlanTarget
from tracker.store.outbox import NewAlert

if TYPE_CHECKING:
    from tracker.alerts.context import Evaluation

__all__ = ["Best", "plan_change"]

log = logging.getLogger(__name__)
CENT = Decimal("0.01")


def _percent(old: Decimal, new: Decimal) -> Decimal:
    return (new - old) / old * 100


def _cents(value: Decimal) -> str:
    """A total as an alert stores it: to the cent (a converted one has ten decimals)."""
    return f"{value.quantize(CENT):f}"


@dataclass(frozen=True)
class Best:
    """The best complete plan, as a rule remembers it (JSON in its state)."""

    fingerprint: str
    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: str
    instances: int
    months: int
    total_usd: Decimal

    def dumps(self) -> str:
        return json.dumps({**asdict(self), "total_usd": str(self.total_usd)}, sort_keys=True)

    @classmethod
    def loads(cls, text: str | None) -> Best | None:
        """None for nothing remembered (or a value this version cannot read: re-seeds)."""
        if not text:
            return None
        try:
            data = json.loads(text)
            return cls(**{**data, "total_usd": Decimal(data["total_usd"])})
        except (ValueError, TypeError, KeyError, ArithmeticError):
            return None

    def where(self) -> dict[str, Any]:
        """The fields an alert's line names the plan by."""
        return {
            "provider": self.provider,
            "region": self.region,
            "instance_type": self.instance_type,
            "gpu_model": self.gpu_model,
            "gpu_count": self.gpu_count,
            "instances": self.instances,
        }


def best_plan(ev: Evaluation, target: PlanTarget, net: bool = True) -> Best | None:
    """The saved plan's best complete plan from the prices in force, at the net prices
    under the discount rules (``net``) or the list ones (read once per evaluation and
    basis, however many rules watch it); None when no candidate is complete."""

    def compute() -> Best | None:
        plan = target.plan
        result = stored_plans(
            ev.engine,
            ev.rates(),
            plan.demand,
            gpu=select_gpus(plan.gpu),
            provider=plan.provider or None,
            region=plan.region or None,
            assumptions=target.assumptions,
            top=1,
            discounts=ev.discounts() if net else None,
        )
        left_out = result.conversion.report(USD)
        if left_out:
            log.info("plan %s: %s", target.name, left_out)
        row = result.rows[0] if result.rows else None
        if row is None or row.incomplete:
            log.info("plan %s: no complete plan from the prices in force", target.name)
            return None
        return Best(
            fingerprint=target.fingerprint(),
            provider=row.provider,
            region=row.region,
            instance_type=row.instance_type,
            gpu_model=row.gpu_model,
            gpu_count=f"{row.gpu_count.normalize():f}",
            instances=row.instances,
            months=row.months,
            total_usd=row.total_usd,
        )

    key = f"plan:{target.name}:{target.fingerprint()}:{'net' if net else 'list'}"
    return ev.cached(key, compute)  # type: ignore[no-any-return]


def plan_change(rule: RankingChangeRule, ev: Evaluation) -> None:
    """Compare each watched plan's best with the rule's baseline; queue what moved."""
    state = ev.rule_state(rule)
    seeding = ev.seeding(rule, state)
    pending: list[tuple[NewAlert, str, Best]] = []
    for name in rule.plan:
        best = best_plan(ev, rule.targets[name], net=rule.on == "net")
        if best is None:
            continue  # nothing to compare: the baseline stays
        key = f"plan:{name}"
        before = Best.loads(state.get(key))
        if seeding or before is None or before.fingerprint != best.fingerprint:
            ev.state[(rule.name, key)] = best.dumps()
            continue
        alert = _alert(rule, ev, name, before, best)
        if alert is not None:
            pending.append((alert, key, best))
    ev.emit(rule, [alert for alert, _, _ in pending])
    queued = {a.dedupe_key for a in ev.alerts}
    for alert, key, best in pending:
        if alert.dedupe_key in queued:  # told: the new best is the baseline now
            ev.state[(rule.name, key)] = best.dumps()


def _alert(
    rule: RankingChangeRule, ev: Evaluation, name: str, before: Best, best: Best
) -> NewAlert | None:
    change = _percent(before.total_usd, best.total_usd) if before.total_usd else None
    leader = "leader" in rule.events and best.provider != before.provider
    cost = (
        "cost" in rule.events
        and rule.threshold_percent is not None
        and change is not None
        and abs(change) >= rule.threshold_percent
    )
    if not (leader or cost):
        return None
    # Both totals at today's one rate: the percentage is the plan's own (USD) one.
    old = ev.in_currency(rule, before.total_usd, USD, ev.now)
    new = None if old is None else ev.in_currency(rule, best.total_usd, USD, ev.now)
    if old is None or new is None:
        return None  # counted by in_currency, said in one warning for the rule
    old_text, new_text = _cents(old), _cents(new)
    pct = (change or Decimal(0)).quantize(CENT)
    event = "leader" if leader else "cost"
    moved = (before.provider, before.region, before.instance_type) != (
        best.provider,
        best.region,
        best.instance_type,
    )
    if leader:
        title = (
            f"best plan for {name} now {best.provider} {best.instance_type} at {new_text} "
            f"{rule.currency} (was {before.provider} {before.instance_type} at {old_text})"
        )
    else:
        title = f"plan {name} total {old_text} → {new_text} {rule.currency} ({pct:+}%)"
    details = {
        **best.where(),
        "plan": name,
        "event": event,
        "old": old_text,
        "new": new_text,
        "currency": rule.currency,
        "change_pct": str(pct),
        "months": best.months,
        "previous": before.where() if moved else None,
    }
    return ev.alert(
        rule, f"plan:{name}|{event}|{ev.now.isoformat()}", f"plan:{name}", title, details
    )
