"""The Overview: per GPU model, the cheapest on-demand, spot and reserved $/GPU-hour now.

Read from the same column tuples the recommender ranks (``current_offer_rows``), so
100,000 offers are compared as plain numbers without building a record each; only
each winner's figure is turned into an exact Decimal. Reserved is the cheaper of
the 1- and 3-year terms. The spot discount is how far the cheapest spot price is
below the cheapest on-demand one of the same GPU model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tracker.catalog import select_gpus
from tracker.models import OFFER_COLUMNS, PricingModel
from tracker.store.engine import Engine
from tracker.store.rankings import current_offer_rows

__all__ = ["COLUMNS", "Cheapest", "GpuOverview", "overview"]

_AT = {c.name: i for i, c in enumerate(OFFER_COLUMNS)}
_PROVIDER, _ITYPE, _REGION, _ZONE = (
    _AT["provider"],
    _AT["instance_type"],
    _AT["region"],
    _AT["zone"],
)
_PRICING, _GPU, _COUNT, _USD = (
    _AT["pricing"],
    _AT["gpu_model"],
    _AT["gpu_count"],
    _AT["price_per_hour_usd"],
)

COLUMNS = ("on_demand", "spot", "reserved")
"""The overview's price groups, in display order."""
_GROUP = {
    PricingModel.ON_DEMAND.value: "on_demand",
    PricingModel.SPOT.value: "spot",
    PricingModel.RESERVED_1Y.value: "reserved",
    PricingModel.RESERVED_3Y.value: "reserved",
}


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


def _cheapest(row: Sequence[Any]) -> Cheapest:
    per_gpu = Decimal(str(row[_USD])) / Decimal(str(row[_COUNT]))
    return Cheapest(
        per_gpu.quantize(Decimal("1e-6")),
        row[_PROVIDER],
        row[_ITYPE],
        row[_REGION],
        row[_ZONE],
        str(row[_PRICING]),
    )


def overview(
    engine: Engine,
    *,
    provider: Sequence[str] | None = None,
    region: Sequence[str] | None = None,
    pricing: Sequence[PricingModel] | None = None,
    gpu: Sequence[str] | None = None,
) -> list[GpuOverview]:
    """One entry per GPU model with a matching offer, by model name (raises DatabaseError)."""
    providers = set(provider) if provider else None
    regions = set(region) if region else None
    pricings = {PricingModel(p).value for p in pricing} if pricing else None
    models: set[str] | None = None
    names: set[str] = set()
    if gpu:
        selection = select_gpus(list(gpu))
        models, names = set(selection.models), set(selection.names)
    best: dict[tuple[str, str], tuple[float, Sequence[Any]]] = {}
    counts: dict[str, int] = {}
    for row in current_offer_rows(engine):
        group = _GROUP.get(str(row[_PRICING]))
        if group is None:
            continue
        if providers is not None and row[_PROVIDER] not in providers:
            continue
        if regions is not None and row[_REGION] not in regions:
            continue
        if pricings is not None and str(row[_PRICING]) not in pricings:
            continue
        model = row[_GPU]
        if models is not None and model not in models and model.lower() not in names:
            continue
        per_gpu = float(row[_USD]) / float(row[_COUNT])
        counts[model] = counts.get(model, 0) + 1
        key = (model, group)
        held = best.get(key)
        if held is None or per_gpu < held[0]:
            best[key] = (per_gpu, row)
    result = {model: GpuOverview(model, n) for model, n in counts.items()}
    for (model, group), (_, winner) in best.items():
        result[model].cheapest[group] = _cheapest(winner)
    return [result[m] for m in sorted(result)]
