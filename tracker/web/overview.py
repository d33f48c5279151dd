"""The Overview: per GPU model, the cheapest on-demand, spot and reserved $/GPU-hour now.

The database picks each winner (:func:`tracker.store.dashboard.cheapest_per_gpu`, one
statement), so the page costs the same for 1,000 offers or 100,000. Reserved is the
cheaper of the 1- and 3-year terms. The spot discount is how far the cheapest spot
price is below the cheapest on-demand one of the same GPU model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from tracker.catalog import select_gpus
from tracker.fx import Rates
from tracker.models import PricingModel
from tracker.store.dashboard import cheapest_per_gpu
from tracker.store.engine import Engine

__all__ = ["COLUMNS", "Cheapest", "GpuOverview", "overview"]

COLUMNS = ("on_demand", "spot", "reserved")
"""The overview's price groups, in display order."""


@dataclass(frozen=True, slots=True)
class Cheapest:
    """The cheapest offer of one group: its $/GPU-hour and which offer it is."""

    price_per_gpu_hour_usd: Decimal
    provider: str
    instance_type: str
    region: str
    zone: str
    pricing: str


@dataclass
class GpuOverview:
    gpu_model: str
    offers: int = 0
    cheapest: dict[str, Cheapest] = field(default_factory=dict)

    @property
    def spot_discount_pct(self) -> Decimal | None:
        """(on-demand − spot) / on-demand × 100, one decimal; None without both."""
        od, spot = self.cheapest.get("on_demand"), self.cheapest.get("spot")
        if od is None or spot is None or not od.price_per_gpu_hour_usd:
            return None
        ratio = (
            od.price_per_gpu_hour_usd - spot.price_per_gpu_hour_usd
        ) / od.price_per_gpu_hour_usd
        return (ratio * 100).quantize(Decimal("0.1"))


def overview(
    engine: Engine,
    rates: Rates,
    at: datetime,
    *,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
    gpu: Sequence[str] | None = None,
) -> list[GpuOverview]:
    """One entry per GPU model with a matching offer that has a USD figure at the rates
    in force at ``at``, by model name (raises DatabaseError)."""
    winners = cheapest_per_gpu(
        engine,
        rates,
        at,
        gpu=select_gpus(list(gpu)) if gpu else None,
        provider=provider,
        region=region,
        pricing=pricing,
    )
    result: dict[str, GpuOverview] = {}
    for w in winners:
        entry = result.setdefault(w.gpu_model, GpuOverview(w.gpu_model, w.offers))
        entry.cheapest[w.group] = Cheapest(
            (w.price_per_hour_usd / w.gpu_count).quantize(Decimal("1e-6")),
            w.provider,
            w.instance_type,
            w.region,
            w.zone,
            w.pricing,
        )
    return [result[m] for m in sorted(result)]
