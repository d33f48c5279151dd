"""What each rule type looks for: price moves, spot discounts, new hardware, ranking shifts.

Each evaluator reads what changed since the rule's cursor (or the current offers),
applies the rule's filters and threshold, and hands candidate alerts to
:meth:`Evaluation.emit` (which applies dedupe and cooldown). Percentages compare
prices in the offer's own currency: a change of currency is not a price move and
is skipped, never converted with some rate.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import fields
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from tracker.alerts.rules import (
    NewHardwareRule,
    PriceChangeRule,
    RankingChangeRule,
    SpotDiscountRule,
)
from tracker.models import PricingModel
from tracker.store import alert_events, queries
from tracker.store.alerts import NewAlert

if TYPE_CHECKING:
    from tracker.alerts.evaluate import Evaluation

__all__ = ["EVALUATORS", "percent"]

log = logging.getLogger(__name__)
CENT = Decimal("0.01")


def percent(old: Decimal, new: Decimal) -> Decimal:
    """Change from ``old`` to ``new`` in percent (exact; rounded only for display)."""
    return (new - old) / old * 100


def _money(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}" if frac else f"{whole}.00"


def _offer_subject(*parts: str) -> str:
    return "offer:" + "/".join(parts)


def price_change(rule: PriceChangeRule, ev: Evaluation) -> None:
    state = ev.rule_state(rule)
    cursor = ev.cursor(rule, state, "price_points")
    if cursor is None:
        return
    out: list[NewAlert] = []
    for c in alert_events.price_changes_since(ev.engine, cursor):
        if not rule.matches_priced(c.pricing, c.provider, c.region, c.gpu_model, c.gpu_raw_name):
            continue
        if c.old_currency != c.currency or not c.old_price:
            log.debug("price interval %d: no comparable previous price", c.interval_id)
            continue
        change = percent(c.old_price, c.new_price)
        if (rule.direction == "down" and change >= 0) or (rule.direction == "up" and change <= 0):
            continue
        if abs(change) < rule.threshold_percent:
            continue
        shown = change.quantize(CENT)
        where = f"{c.region}/{c.zone}" if c.zone else c.region
        title = (
            f"{c.provider} {c.instance_type} {where} {c.pricing}: "
            f"{_money(c.old_price)} → {_money(c.new_price)} {c.currency}/h ({shown:+}%)"
        )
        out.append(
            ev.alert(
                rule,
                str(c.interval_id),
                _offer_subject(c.provider, c.instance_type, c.region, c.zone, c.pricing),
                title,
                {
                    "provider": c.provider,
                    "instance_type": c.instance_type,
                    "region": where,
                    "pricing": c.pricing,
                    "gpu": f"{c.gpu_count.normalize():f}x {c.gpu_model}",
                    "old": _money(c.old_price),
                    "new": _money(c.new_price),
                    "currency": c.currency,
                    "change_pct": str(shown),
                    "at": c.at.isoformat(),
                },
            )
        )
    ev.emit(rule, out)


def spot_discount(rule: SpotDiscountRule, ev: Evaluation) -> None:
    """Fires when an offer's spot discount reaches the threshold, not while it stays there."""
    state = ev.rule_state(rule)
    seeding = ev.seeding(rule, state)
    offers = ev.cached(
        "spot_and_on_demand",
        lambda: queries.current_offers(
            ev.engine, pricing=[PricingModel.SPOT, PricingModel.ON_DEMAND]
        ),
    )
    on_demand: dict[tuple[str, ...], Any] = {}
    for s in offers:
        o = s.offer
        if o.pricing is PricingModel.ON_DEMAND and not o.payment_option:
            key = (o.provider, o.instance_type, o.region, o.os)
            best = on_demand.get(key)
            if best is None or o.price_per_hour < best.offer.price_per_hour:
                on_demand[key] = s
    crossed: set[str] = set()
    out: list[NewAlert] = []
    for s in offers:
        o = s.offer
        if o.pricing is not PricingModel.SPOT:
            continue
        if not rule.matches(o.provider, o.region, o.gpu_model, o.gpu_raw_name):
            continue
        od = on_demand.get((o.provider, o.instance_type, o.region, o.os))
        if od is None or od.offer.currency != o.currency or not od.offer.price_per_hour:
            continue
        discount = -percent(od.offer.price_per_hour, o.price_per_hour)
        if discount < rule.threshold_percent:
            continue
        where = f"{o.region}/{o.zone}" if o.zone else o.region
        subject = _offer_subject(o.provider, o.instance_type, o.region, o.zone, o.os)
        crossed.add(subject)
        if f"spot:{subject}" in state:
            continue
        ev.state[(rule.name, f"spot:{subject}")] = ev.now.isoformat()
        if seeding:
            continue
        shown = discount.quantize(CENT)
        out.append(
            ev.alert(
                rule,
                f"{subject}|{s.price_since.isoformat()}|{od.price_since.isoformat()}",
                subject,
                f"{o.provider} {o.instance_type} {where} spot {_money(o.price_per_hour)} "
                f"{o.currency}/h is {shown}% below on-demand {_money(od.offer.price_per_hour)}",
                {
                    "provider": o.provider,
                    "instance_type": o.instance_type,
                    "region": where,
                    "pricing": "spot",
                    "gpu": f"{o.gpu_count.normalize():f}x {o.gpu_model}",
                    "old": _money(od.offer.price_per_hour),
                    "new": _money(o.price_per_hour),
                    "currency": o.currency,
                    "change_pct": str(-shown),
                },
            )
        )
    for flag in state:
        if flag.startswith("spot:") and flag.removeprefix("spot:") not in crossed:
            ev.state[(rule.name, flag)] = None  # back under the threshold: may cross again
    ev.emit(rule, out)


def new_hardware(rule: NewHardwareRule, ev: Evaluation) -> None:
    state = ev.rule_state(rule)
    cursor = ev.cursor(rule, state, "series")
    if cursor is None:
        return
    out: list[NewAlert] = []
    for s in alert_events.new_series_since(ev.engine, cursor):
        if not rule.matches_priced(s.pricing, s.provider, s.region, s.gpu_model, s.gpu_raw_name):
            continue
        details = {
            "provider": s.provider,
            "instance_type": s.instance_type,
            "region": s.region,
            "pricing": s.pricing,
            "gpu": f"{s.gpu_count.normalize():f}x {s.gpu_model}",
        }
        found = [
            ("gpu_model", s.new_gpu_model, f"gpu:{s.gpu_model}", f"new GPU model {s.gpu_model} "
             f"at {s.provider} ({s.instance_type}, {s.region})"),
            ("instance_type", s.new_instance_type, f"instance:{s.provider}/{s.instance_type}",
             f"new instance type {s.provider} {s.instance_type} ({details['gpu']})"),
            ("region", s.new_region, f"region:{s.provider}/{s.region}",
             f"{s.provider} offers GPUs in {s.region} now ({s.instance_type})"),
        ]  # fmt: skip
        for event, is_new, subject, title in found:
            if is_new and event in rule.events:
                out.append(ev.alert(rule, subject, subject, title, {**details, "event": event}))
    ev.emit(rule, out)


def ranking_change(rule: RankingChangeRule, ev: Evaluation) -> None:
    from tracker.recommend.history import RankedEntry, RankingChange  # loads only when used

    state = ev.rule_state(rule)
    cursor = ev.cursor(rule, state, "ranking_snapshots")
    if cursor is None:
        return
    columns = tuple(f.name for f in fields(RankedEntry))
    out: list[NewAlert] = []
    for pair in alert_events.snapshots_since(ev.engine, cursor, columns):
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
    ev.emit(rule, out)


def _entry(e: Any) -> dict[str, Any]:
    return {
        "provider": e.provider,
        "instance_type": e.instance_type,
        "region": f"{e.region}/{e.zone}" if e.zone else e.region,
        "pricing": e.pricing,
        "gpu": e.hardware,
        "job_cost_usd": _money(e.job_cost_usd),
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
    base = {"profile": profile}
    if "leader" in rule.events and change.new_leader and leader is not None:
        was = f" (was {before.provider} {before.instance_type})" if before is not None else ""
        out.append(
            ev.alert(
                rule,
                f"{profile}|leader|{sid}",
                f"{subject}:leader",
                f"best for {profile} now {leader.provider} {leader.instance_type}{was}",
                {**base, **_entry(leader), "event": "leader", "old": _money(before.job_cost_usd)
                 if before is not None else "", "new": _money(leader.job_cost_usd),
                 "currency": "USD"},
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
                    {**base, **_entry(e), "event": "top_n", "rank": e.rank},
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
    ):
        out.append(
            ev.alert(
                rule,
                f"{profile}|cost|{sid}",
                f"{subject}:cost",
                f"{profile} job cost {_money(before.job_cost_usd)} → "
                f"{_money(leader.job_cost_usd)} USD ({pct:+}%)",
                {**base, **_entry(leader), "event": "cost", "old": _money(before.job_cost_usd),
                 "new": _money(leader.job_cost_usd), "currency": "USD", "change_pct": str(pct)},
            )
        )  # fmt: skip
    return out


EVALUATORS: dict[str, Callable[[Any, Evaluation], None]] = {
    "price_change": price_change,
    "spot_discount": spot_discount,
    "new_hardware": new_hardware,
    "ranking_change": ranking_change,
}
