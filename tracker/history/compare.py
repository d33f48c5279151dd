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
)
"""A compare row: figures are USD per GPU-hour; percentages to a tenth."""

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
    """
    where = store.SeriesFilter(gpu=gpu, provider=provider)
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
        if show is not None:
            row["display_currency"] = currency
            for pricing in PricingModel:
                row[f"display_{pricing.value}"] = _shown(
                    current.get((gpu_model, prov, pricing.value)), show
                )
        rows.append(row)
    rows.sort(
        key=lambda r: (
            r["gpu_model"],
            r["on_demand"] is None,
            r["on_demand"] or Decimal(0),
            r["provider"],
        )
    )
    return rows


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
