"""``compare``: per GPU model × provider, the cheapest $/GPU-hour now for each pricing
model (savings plans as their own columns beside reservations), how far below on-demand spot is, and how the cheapest on-demand price moved.

This is the table people otherwise build by hand from several catalogs. One SQL read
answers it: the cheapest offer per (GPU model, provider, pricing model) in force now,
7 days ago and 30 days ago, from the cheapest-price rollup
(:func:`tracker.store.reads.cheapest_from_rollup`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from tracker.catalog import GpuSelection
from tracker.discounts import Discounts
from tracker.history.views import per_gpu_hour
from tracker.models import PricingModel
from tracker.store import Engine, quantize_money, reads
from tracker.store import reads as store

__all__ = [
    "COMPARE_KEYS",
    "DISPLAY_KEYS",
    "Show",
    "change_pct",
    "compare_rows",
    "compare_without_rate",
]

COMPARE_KEYS = (
    "gpu_model",
    "provider",
    "on_demand",
    "spot",
    "reserved_1y",
    "reserved_3y",
    "savings_plan_1y",
    "savings_plan_3y",
    "capacity_block",
    "spot_discount_pct",
    "change_7d_pct",
    "change_30d_pct",
    *(f"net_{p.value}" for p in PricingModel),
    "discount",
    "obtainability_7d",
    "obtainability_30d",
    "median_back_hours",
)
"""A compare row: figures are USD per GPU-hour; percentages to a tenth. ``net_*`` are
the cheapest net figures under the discount rules in force now (the list figures where
no rule applies) and ``discount`` the rules that set them (comma-separated); then the
shares of the last 7 / 30 days the GPU was reported rentable at the provider (pooled
over its regions and offers, :mod:`tracker.views.obtainability`)."""

DISPLAY_KEYS = tuple(f"display_{p.value}" for p in PricingModel)
"""With a view currency (``show``), the now figures in it, after ``display_currency``."""

Show = Callable[[Decimal, Decimal, str], Decimal | None]
"""(USD price, own price, own currency) → the price in the view currency, or None."""

AGO = (timedelta(0), timedelta(days=7), timedelta(days=30))
PERCENT = Decimal("0.1")


def _pct(part: Decimal, whole: Decimal) -> Decimal:
    return (part / whole * 100).quantize(PERCENT, rounding=ROUND_HALF_EVEN)


def change_pct(now: Decimal | None, then: Decimal | None) -> Decimal | None:
    """``(now / then − 1) × 100`` to a tenth (None without both, or from zero): how a
    cheapest figure moved, here and on the dashboard's Overview."""
    return _pct(now - then, then) if now is not None and then else None


def _shown(cheapest: store.CheapestStep | None, show: Show) -> Decimal | None:
    """The per-GPU-hour figure of ``cheapest`` in the view currency, or None."""
    if cheapest is None:
        return None
    usd = quantize_money(Decimal(str(cheapest.price_usd)))
    shown = show(usd, cheapest.price, cheapest.currency)
    return None if shown is None else per_gpu_hour(shown, cheapest.gpu_count)


def compare_rows(
    engine: Engine,
    *,
    now: datetime,
    gpu: GpuSelection | None = None,
    provider: Sequence[str] | None = None,
    fx_rates: Mapping[str, Decimal],
    show: Show | None = None,
    currency: str = "USD",
    discounts: Discounts | None = None,
) -> list[dict[str, Any]]:
    """Figures in USD at the exchange rates in force at each time (an offer without a
    rate is not counted). One row per GPU model × provider that has a price in force at ``now``, sorted by
    GPU model then cheapest on-demand figure (providers without one last).

    ``spot_discount_pct`` is ``(1 − spot / on_demand) × 100``; ``change_7d_pct`` and
    ``change_30d_pct`` are ``(now / then − 1) × 100`` of the cheapest on-demand figure
    (None where either side has no on-demand price).

    With ``show`` (the CLI's ``--currency``), each row also has ``display_currency``
    (``currency``) and :data:`DISPLAY_KEYS`: the now figures, chosen in USD, in that
    currency at the rate in force now (``show`` keeps an offer's own figure when it is
    already in that currency; None where it has no rate).

    With ``discounts`` the rows are sorted by the net on-demand figure (:func:`_net_cells`).
    """
    where = store.SeriesFilter(gpu=gpu, provider=provider)
    net = discounts or Discounts()
    cells = _net_cells(engine, now, where, fx_rates, net) if net else {}
    found = reads.cheapest_from_rollup(
        engine,
        [now - ago for ago in AGO],
        where,
        per=("gpu_model", "provider", "pricing"),
        fx_rates=fx_rates,
    )
    figures: dict[tuple[str, str], dict[tuple[int, str], Decimal]] = {}
    current: dict[tuple[str, str, str], store.CheapestStep] = {}
    for c in found:
        if c.k == 0:
            current[(c.gpu_model, c.provider, c.pricing)] = c
        figures.setdefault((c.gpu_model, c.provider), {})[(c.k, c.pricing)] = per_gpu_hour(
            Decimal(str(c.price_usd)), c.gpu_count
        )
    rows = []
    for (gpu_model, prov), at in figures.items():
        now_figures = {pricing: value for (k, pricing), value in at.items() if k == 0}
        if not now_figures:
            continue
        row: dict[str, Any] = {"gpu_model": gpu_model, "provider": prov}
        for pricing in PricingModel:
            row[pricing.value] = now_figures.get(pricing.value)
        od, spot = row["on_demand"], row["spot"]
        row["spot_discount_pct"] = _pct(od - spot, od) if od and spot is not None else None
        for k, key in ((1, "change_7d_pct"), (2, "change_30d_pct")):
            then = at.get((k, PricingModel.ON_DEMAND.value))
            row[key] = change_pct(od, then)
        rules: list[str] = []
        for pricing in PricingModel:
            value, rule = cells.get((gpu_model, prov, pricing.value), (row[pricing.value], None))
            row[f"net_{pricing.value}"] = value
            if rule and rule not in rules:
                rules.append(rule)
        row["discount"] = ", ".join(rules) or None
        if show is not None:
            row["display_currency"] = currency
            for pricing in PricingModel:
                row[f"display_{pricing.value}"] = _shown(
                    current.get((gpu_model, prov, pricing.value)), show
                )
        rows.append(row)
    od_key = "net_on_demand" if net else "on_demand"
    rows.sort(
        key=lambda r: (
            r["gpu_model"],
            r[od_key] is None,
            r[od_key] or Decimal(0),
            r["provider"],
        )
    )
    return rows


Cells = dict[tuple[str, str, str], tuple[Decimal, str | None]]


def _net_cells(
    engine: Engine,
    now: datetime,
    where: store.SeriesFilter,
    fx_rates: Mapping[str, Decimal],
    net: Discounts,
) -> Cells:
    """Per (GPU model, provider, pricing) the lowest net USD per GPU-hour now and the
    rule that set it. A rule covers whole (provider, pricing, region[, instance type])
    groups, within which a percentage keeps the list order, so the store's cheapest of
    each such group is its cheapest net offer (see tracker.history.views)."""
    per = ["gpu_model", "provider", "pricing", "region"]
    if any(r.instance_types or r.price_per_hour is not None for r in net.rules):
        per.append("instance_type")
    cells: Cells = {}
    for c in reads.cheapest_from_rollup(engine, [now], where, per=per, fx_rates=fx_rates):
        usd = quantize_money(Decimal(str(c.price_usd)))
        found = net.net(
            (c.provider, c.pricing, c.instance_type, c.region), c.price, c.currency, usd, now
        )
        if found.price_per_hour_usd is None:
            continue
        value = per_gpu_hour(found.price_per_hour_usd, c.gpu_count)
        cell = (c.gpu_model, c.provider, c.pricing)
        held = cells.get(cell)
        if held is None or value < held[0]:
            cells[cell] = (value, found.rule)
    return cells


def compare_without_rate(
    engine: Engine,
    *,
    now: datetime,
    gpu: GpuSelection | None = None,
    provider: Sequence[str] | None = None,
    fx_rates: Mapping[str, Decimal],
) -> dict[str, int]:
    """The offers :func:`compare_rows` (same arguments) left out now, 7 or 30 days ago
    for want of an exchange rate then, by currency (each offer once)."""
    where = store.SeriesFilter(gpu=gpu, provider=provider)
    return reads.without_rate_at(engine, [now - ago for ago in AGO], where, fx_rates=fx_rates)
