"""The Overview: per GPU model, the cheapest on-demand, spot and reserved $/GPU-hour now.

The database picks each winner (:func:`tracker.store.reads.cheapest`, one
aggregate that also counts the offers without an exchange rate), so the page costs
about the same for 1,000 offers or 100,000. Reserved is the
cheaper of the 1- and 3-year terms. The spot discount is how far the cheapest spot
price is below the cheapest on-demand one of the same GPU model.

The trend columns follow the cheapest on-demand $/GPU-hour (the figure ``compare``
tracks; the filter's pricing models instead when it leaves on-demand out) at each day
of the last 30, ending now (:func:`tracker.store.reads.cheapest_trend`): the 7- and
30-day change with ``compare``'s formula, and the days as a sparkline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from tracker.filters import ANY_OFFER, OfferFilter
from tracker.fx import Rates
from tracker.history.compare import change_pct
from tracker.models import PricingModel
from tracker.store import Engine
from tracker.store.reads import SeriesFilter, Steps, cheapest, cheapest_per_gpu, cheapest_trend

__all__ = [
    "COLUMNS",
    "SORTS",
    "TREND_DAYS",
    "Cheapest",
    "GpuOverview",
    "Overview",
    "column_lows",
    "overview",
    "sort_rows",
    "trend_pricing",
]

COLUMNS = ("on_demand", "spot", "reserved")
"""The overview's price groups, in display order."""

TREND_DAYS = 30
"""The trend covers this many days before now, one figure a day (and one now)."""


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
    trend: list[Decimal | None] = field(default_factory=list)
    """The tracked cheapest $/GPU-hour at now − 30 days, now − 29 days, …, now."""

    def _ago(self, days: int) -> Decimal | None:
        return self.trend[TREND_DAYS - days] if len(self.trend) == TREND_DAYS + 1 else None

    @property
    def change_7d_pct(self) -> Decimal | None:
        """(now / 7 days ago − 1) × 100, one decimal; None without both."""
        return change_pct(self._ago(0), self._ago(7))

    @property
    def change_30d_pct(self) -> Decimal | None:
        """(now / 30 days ago − 1) × 100, one decimal; None without both."""
        return change_pct(self._ago(0), self._ago(30))

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


@dataclass(frozen=True, slots=True)
class Overview:
    rows: list[GpuOverview]
    """By GPU model name."""
    missing: dict[str, int]
    """Matching offers without an exchange rate now, by currency (left out)."""


def overview(
    engine: Engine,
    rates: Rates,
    at: datetime,
    offers: OfferFilter = ANY_OFFER,
) -> Overview:
    """One entry per GPU model with a matching offer that has a USD figure at the rates
    in force at ``at``, by model name, with its trend; and the offers left out for want
    of a rate (raises DatabaseError)."""
    days = Steps(at - timedelta(days=TREND_DAYS), timedelta(days=1), TREND_DAYS + 1)
    followed = trend_pricing(offers.pricing)
    found = cheapest(engine, rates, at, offers, since=days.start, since_pricing=followed)
    where = replace(SeriesFilter.of(offers), pricing=followed)
    # the open intervals' lows come from the scan above: one pass over them, not two
    trends = cheapest_trend(engine, rates, days, where, spanning=found.spanning)
    result: dict[str, GpuOverview] = {}
    for w in found.rows:
        entry = result.setdefault(
            w.gpu_model, GpuOverview(w.gpu_model, w.offers, trend=trends.get(w.gpu_model, []))
        )
        entry.cheapest[w.group] = Cheapest(
            (w.price_per_hour_usd / w.gpu_count).quantize(Decimal("1e-6")),
            w.provider,
            w.instance_type,
            w.region,
            w.zone,
            w.pricing,
        )
    return Overview([result[m] for m in sorted(result)], found.missing)


def cheapest_now(engine: Engine, rates: Rates, at: datetime, model: str) -> dict[str, Any]:
    """One catalog model's cheapest offer now per group (on_demand, spot, reserved), the
    Overview's figures for one row (the GPU page's "Cheapest now")."""
    only = OfferFilter(gpu=(model,))
    return {w.group: w for w in cheapest_per_gpu(engine, rates, at, only)}


def trend_pricing(pricing: Sequence[PricingModel] | None) -> list[PricingModel]:
    """What the trend follows: on-demand, unless the filter leaves it out (then the
    filter's pricing models together)."""
    if not pricing or PricingModel.ON_DEMAND in pricing:
        return [PricingModel.ON_DEMAND]
    return list(pricing)


SORTS = ("on_demand", "spot", "reserved", "spot_discount", "change_7d", "change_30d", "gpu")
"""What the Overview sorts by: a price column (cheapest first; GPU models without that
figure last, by name), the spot discount (largest first), a change (biggest fall
first) or the model's name. The default is the cheapest on-demand $/GPU-hour."""


def _sort_value(row: GpuOverview, key: str) -> Decimal | None:
    if key in COLUMNS:
        found = row.cheapest.get(key)
        return found.price_per_gpu_hour_usd if found else None
    if key == "spot_discount":
        discount = row.spot_discount_pct
        return -discount if discount is not None else None
    return row.change_7d_pct if key == "change_7d" else row.change_30d_pct


def sort_rows(rows: Sequence[GpuOverview], key: str) -> list[GpuOverview]:
    """``rows`` in the order ``key`` (one of :data:`SORTS`) reads them."""
    by_name = sorted(rows, key=lambda r: r.gpu_model)
    if key == "gpu":
        return by_name
    valued = [(v, r) for r in by_name if (v := _sort_value(r, key)) is not None]
    missing = [r for r in by_name if _sort_value(r, key) is None]
    return [r for _, r in sorted(valued, key=lambda pair: pair[0])] + missing


def column_lows(rows: Sequence[GpuOverview]) -> dict[str, Decimal | None]:
    """Each price column's cheapest $/GPU-hour, the figure the page marks."""
    return {
        group: min(
            (r.cheapest[group].price_per_gpu_hour_usd for r in rows if group in r.cheapest),
            default=None,
        )
        for group in COLUMNS
    }
