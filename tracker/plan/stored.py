"""Plans over the stored prices: read the prices and service prices once, then plan.

Every figure is compared in USD at the exchange rates in force (the latest ones, or
those in force at ``at``, plus the configured ``fx_rates``), as ``offers`` and
``recommend`` do; a price in a currency without a rate is left out and counted, never
taken as USD. The spot re-work default comes from the recommender's assumptions (the
provider's published interruption rate where a price carries one, else the profile
file's figure for that provider).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from tracker.catalog import GpuSelection
from tracker.discounts import Discounts
from tracker.fx import Conversion, Rates
from tracker.models import PricingModel
from tracker.plan.build import (
    PlanRow,
    PriceRow,
    Tiers,
    build_plans,
    candidates,
    service_lookup,
    spot_overhead,
)
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.demand import Demand
from tracker.service_prices import ServiceKind
from tracker.settings import Settings
from tracker.store import Engine
from tracker.store import series as fx_store
from tracker.store.reads import PlanPrice, plan_prices
from tracker.store.series import service_prices

__all__ = ["PLAN_PRICING", "PlanResult", "net_price", "stored_plans"]

PLAN_PRICING = (
    PricingModel.ON_DEMAND,
    PricingModel.SPOT,
    PricingModel.RESERVED_1Y,
    PricingModel.RESERVED_3Y,
    PricingModel.SAVINGS_PLAN_1Y,
    PricingModel.SAVINGS_PLAN_3Y,
)


@dataclass
class PlanResult:
    rows: list[PlanRow]
    conversion: Conversion
    """Says which prices were left out for want of an exchange rate."""
    prices_read: int


def stored_plans(
    engine: Engine,
    settings: Settings | Rates,
    demand: Demand,
    *,
    gpu: GpuSelection,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    assumptions: Assumptions | None = None,
    at: datetime | None = None,
    top: int | None = None,
    discounts: Discounts | None = None,
) -> PlanResult:
    """Plans for every (provider, region, instance type) selling ``gpu``, ranked, from
    the prices in force now or at ``at``; with ``top`` only the best ``top`` (raises
    :class:`~tracker.store.engine.DatabaseError`). The exchange rates are read with the
    ``settings``' manual ones, or given already read (an alert evaluation reads them
    once for every rule). Prices are the net ones the account pays: ``discounts``, or
    the ``settings``' rules, in force at ``at`` (now when None)."""
    if isinstance(settings, Rates):
        rates = settings
    else:
        rates = fx_store.load_rates(engine, settings.fx_rates)
        if discounts is None and settings.discounts:
            discounts = Discounts(tuple(settings.discounts), rates)
    to_usd = Conversion(rates, at)
    stored = plan_prices(
        engine, gpu=gpu, pricing=PLAN_PRICING, provider=provider, region=region, at=at
    )
    if discounts:
        stored = [net_price(p, discounts, at or datetime.now(UTC)) for p in stored]
    tiers = _service_tiers(engine, demand, provider, region, at, to_usd)
    rules = assumptions or Assumptions()
    checkpoint_hours = float(demand.checkpoint_minutes) / 60

    def overhead_for(spot: PriceRow) -> Decimal:
        published = spot.interruption_max_pct
        pct = _percent(published) if published else None
        if pct is None:
            pct = rules.interruption_pct(spot.provider)
        return spot_overhead(
            pct, checkpoint_hours, rules.restart_hours, rules.checkpoint_write_hours
        )

    offers = candidates(stored, to_usd.usd)
    rows = build_plans(offers, demand, service_lookup(tiers), overhead_for, top)
    return PlanResult(rows, to_usd, len(stored))


def net_price(p: PlanPrice, discounts: Discounts, at: datetime) -> PlanPrice:
    """``p`` at the net price under the rule in force at ``at``: a percentage scales
    the price and a reservation's upfront and recurring parts alike; a fixed net price
    is the whole effective rate (the parts are dropped)."""
    key = (p.provider, p.pricing, p.instance_type, p.region)
    rule = discounts.rule_for(*key, at)
    if rule is None:
        return p
    net = discounts.net(key, p.price, p.currency, None, at)
    if net.rule is None:  # a fixed price without a rate to convert it: list, counted
        return p
    fields = {f: getattr(p, f) for f in PlanPrice._fields}  # the store's rows: Row-likes
    fields["price"] = net.price_per_hour
    keep = None if rule.percent is None else (Decimal(100) - rule.percent) / Decimal(100)
    for part in ("upfront_usd", "recurring_hourly_usd"):
        value = fields[part]
        fields[part] = None if keep is None or value is None else str(Decimal(value) * keep)
    return PlanPrice(**fields)


def _service_tiers(
    engine: Engine,
    demand: Demand,
    provider: Sequence[str] | None,
    region: Sequence[str] | None,
    at: datetime | None,
    to_usd: Conversion,
) -> dict[tuple[str, str, ServiceKind], Tiers]:
    wanted = sorted({demand.storage, ServiceKind.EGRESS_INTERNET})
    tiers: dict[tuple[str, str, ServiceKind], Tiers] = {}
    for s in service_prices(engine, provider=provider, region=region, service=wanted, at=at):
        p = s.price
        usd = to_usd.usd(p.price, p.currency)
        if usd is not None:
            key = (p.provider, p.region, p.service)
            tiers.setdefault(key, []).append((p.tier_start_gb, p.tier_end_gb, usd))
    return tiers


def _percent(text: str) -> float | None:
    """A published interruption rate stored as text; anything else is no rate."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 and value == value else None
