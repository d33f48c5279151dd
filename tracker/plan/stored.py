"""Plans over the stored prices: read the offers and service prices once, then plan.

Every figure is compared in USD at the latest exchange rates (plus the configured
``fx_rates``), as ``offers`` and ``recommend`` do; a price in a currency without a rate
is left out and counted, never taken as USD. The spot re-work default comes from the
recommender's assumptions (the provider's published interruption rate where an offer
carries one, else the profile file's figure for that provider).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from tracker.catalog import GpuSelection
from tracker.fx import Conversion
from tracker.models import Offer, PricingModel
from tracker.plan.build import (
    PlanRow,
    Tiers,
    build_plans,
    candidates,
    service_lookup,
    spot_overhead,
)
from tracker.plan.demand import Demand
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.stored import usd_conversion
from tracker.service_prices import ServiceKind
from tracker.settings import Settings
from tracker.store.engine import Engine
from tracker.store.queries import current_offers
from tracker.store.service_prices import service_prices

__all__ = ["PLAN_PRICING", "PlanResult", "stored_plans"]

PLAN_PRICING = (
    PricingModel.ON_DEMAND,
    PricingModel.SPOT,
    PricingModel.RESERVED_1Y,
    PricingModel.RESERVED_3Y,
)


@dataclass
class PlanResult:
    rows: list[PlanRow]
    conversion: Conversion
    """Says which prices were left out for want of an exchange rate."""
    offers_read: int


def stored_plans(
    engine: Engine,
    settings: Settings,
    demand: Demand,
    *,
    gpu: GpuSelection,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    assumptions: Assumptions | None = None,
) -> PlanResult:
    """Plans for every (provider, region, instance type) selling ``gpu``, ranked
    (raises :class:`~tracker.store.engine.DatabaseError`)."""
    conversion = usd_conversion(engine, settings)
    stored = current_offers(engine, gpu=gpu, provider=provider, region=region, pricing=PLAN_PRICING)
    offers = conversion.offers(s.offer for s in stored)
    wanted = {demand.storage, ServiceKind.EGRESS_INTERNET}
    tiers: dict[tuple[str, str, ServiceKind], Tiers] = {}
    for p in service_prices(engine, provider=provider, region=region, service=sorted(wanted)):
        usd = conversion.usd(p.price.price, p.price.currency)
        if usd is None:
            continue
        key = (p.price.provider, p.price.region, p.price.service)
        tiers.setdefault(key, []).append((p.price.tier_start_gb, p.price.tier_end_gb, usd))
    rules = assumptions or Assumptions()
    checkpoint_hours = float(demand.checkpoint_minutes) / 60

    def overhead_for(offer: Offer) -> Decimal:
        published = offer.attributes.get("interruption_max_pct")
        pct = (
            float(published)
            if isinstance(published, int | Decimal) and not isinstance(published, bool)
            else rules.interruption_pct(offer.provider)
        )
        return spot_overhead(
            pct, checkpoint_hours, rules.restart_hours, rules.checkpoint_write_hours
        )

    rows = build_plans(candidates(offers), demand, service_lookup(tiers), overhead_for)
    return PlanResult(rows, conversion, len(stored))
