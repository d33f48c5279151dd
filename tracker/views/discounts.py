"""The ``discounts`` listing: each configured rule, whether it is in force, and how many
current offers it covers and prices (``gpu-tracker discounts``).

A rule that covers no current offer is flagged: a typo in ``provider`` or a glob
(``p5*`` vs ``p5.*``) would otherwise leave a team reading list prices unawares. An
offer covered by two rules is priced by the first (file order), so ``applies_to`` can
be below ``matches``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tracker.discounts import DiscountRule, Discounts
from tracker.settings import Settings
from tracker.store import Engine, reads
from tracker.views.currency import load_rates

__all__ = ["DISCOUNT_ROW_KEYS", "discount_rows"]

DISCOUNT_ROW_KEYS = (
    "name",
    "provider",
    "pricing",
    "instance_types",
    "regions",
    "percent",
    "price_per_hour",
    "currency",
    "valid_from",
    "valid_until",
    "in_force",
    "matches",
    "applies_to",
    "flag",
)
"""The keys of :func:`discount_rows` (the documented JSON shape)."""


def _row(rule: DiscountRule, now: datetime, matches: int, applies: int) -> dict[str, Any]:
    flag = None
    if matches == 0:
        flag = "matches no current offer"
    elif applies == 0 and rule.in_force(now):
        flag = "every offer it matches is priced by an earlier rule"
    return {
        "name": rule.name,
        "provider": rule.provider,
        "pricing": [p.value for p in rule.pricing],
        "instance_types": list(rule.instance_types),
        "regions": list(rule.regions),
        "percent": rule.percent,
        "price_per_hour": rule.price_per_hour,
        "currency": rule.currency or ("USD" if rule.price_per_hour is not None else None),
        "valid_from": rule.valid_from,
        "valid_until": rule.valid_until,
        "in_force": rule.in_force(now),
        "matches": matches,
        "applies_to": applies,
        "flag": flag,
    }


def discount_rows(
    engine: Engine, settings: Settings, now: datetime | None = None
) -> list[dict[str, Any]]:
    """One row per ``[[discounts]]`` rule, in file order (raises DatabaseError)."""
    at = now or datetime.now(UTC)
    rules = tuple(settings.discounts)
    if not rules:
        return []
    discounts = Discounts(rules, load_rates(engine, settings))
    offers = [s.offer for s in reads.current_offers(engine)]
    rows = []
    for rule in rules:
        matches = sum(
            rule.covers(o.provider, o.pricing.value, o.instance_type, o.region) for o in offers
        )
        rows.append(_row(rule, at, matches, discounts.matching(rule, offers, at)))
    return rows
