"""Rankings and recommendations: a profile's offers ranked by the estimated cost of its
whole job (``recommend``, ``/api/v1/recommend``, the Profiles page, ``tracker.api``).

Every ranking reads the offers through :func:`rank_offers`, which takes the settings:
the USD figures it ranks by come from the stored rates plus ``fx_rates``, so no face
can rank without them (as ``/api/v1/recommend`` once did).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tracker.fx import Conversion
from tracker.models import Offer, offer_dict
from tracker.recommend.profiles import Profile, ProfileSet
from tracker.recommend.rank import Ranking, rank_table
from tracker.recommend.stored import load_offer_table, profiles_for
from tracker.settings import Settings
from tracker.store.engine import Engine
from tracker.views.currency import CurrencyView
from tracker.views.offers import PER_GPU

__all__ = ["Recommendation", "profiles_of", "rank_offers", "ranking_rows", "two_places"]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """A ranking and the USD conversion it ranked with (what it left out, by currency)."""

    ranking: Ranking
    conversion: Conversion


def profiles_of(settings: Settings) -> ProfileSet:
    """The built-in profiles plus the user's file (raises ProfileError, one line)."""
    return profiles_for(settings)


def rank_offers(
    engine: Engine,
    settings: Settings,
    profile: Profile,
    *,
    profile_set: ProfileSet | None = None,
    top: int = 10,
    explain: bool = False,
    include_unavailable: bool = False,
) -> Recommendation:
    """``profile`` ranked over the current offers in USD at the latest rates (stored
    plus ``settings.fx_rates``); the assumptions and measurements are ``profile_set``'s
    (default: the settings' profiles). Raises DatabaseError, ProfileError, WorkloadError."""
    chosen = profile_set if profile_set is not None else profiles_for(settings)
    table, conversion = load_offer_table(engine, settings)
    ranking = rank_table(
        profile,
        table,
        chosen.assumptions,
        top=top,
        explain=explain,
        measurements=chosen.measurements,
        include_unavailable=include_unavailable,
    )
    return Recommendation(ranking, conversion)


def two_places(value: float) -> Decimal:
    """A float estimate as a 2-decimal Decimal (JSON shows it as an exact string)."""
    return Decimal(f"{value:.2f}")


def _d_or_none(value: float | None) -> Decimal | None:
    """Job figures are empty (null) when the profile gives no work size."""
    return None if value is None else two_places(value)


_RANKED_OFFER_FIELDS = (
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "payment_option",
    "offering_class",
    "gpu_model",
    "gpu_count",
    "interconnect",
)
"""The offer columns a ranking row repeats (documented in the README)."""


def _base_row(o: Offer) -> dict[str, Any]:
    values = offer_dict(o)
    return {name: values[name] for name in _RANKED_OFFER_FIELDS}


def _shown(view: CurrencyView | None, usd: Decimal | None) -> Decimal | None:
    """A USD figure in the view currency at the latest rate (USD itself without a view)."""
    if view is None or usd is None:
        return usd
    return view.show(usd)


def ranking_rows(
    ranking: Ranking, explain: bool, view: CurrencyView | None = None
) -> list[dict[str, Any]]:
    """The documented JSON rows: candidates first; with --explain, excluded offers after.

    Ranked in USD whatever the view; ``display_*`` are the USD figures in ``view``'s
    currency at the latest rate."""
    rows: list[dict[str, Any]] = []
    for c in ranking.candidates:
        rows.append(
            {
                "rank": c.rank,
                **_base_row(c.offer),
                "vram_needed_gib": two_places(c.vram_needed_gib),
                "vram_available_gib": two_places(c.vram_available_gib),
                "vram_needed_per_gpu_gib": two_places(c.vram_needed_per_gpu_gib),
                "sharded": c.sharded,
                "price_per_hour_usd": c.price_per_hour_usd,
                "effective_price_per_hour_usd": c.effective_hourly_usd,
                "price_per_gpu_hour_usd": c.price_per_gpu_hour_usd.quantize(PER_GPU),
                "compute_hours": _d_or_none(c.compute_hours),
                "job_hours": _d_or_none(c.job_hours),
                "job_cost_usd": c.job_cost_usd,
                "display_currency": "USD" if view is None else view.code,
                "display_effective_price_per_hour": _shown(view, c.effective_hourly_usd),
                "display_job_cost": _shown(view, c.job_cost_usd),
                "interruption_pct": c.interruption_pct,
                "basis": c.rate.label,
                "basis_source": c.rate.source,
                "compute_precision": c.rate.precision.value,
                "precision_fallback": c.rate.fallback or None,
                "excluded_reason": None,
                "excluded_detail": None,
            }
        )
    if explain:
        for e in ranking.exclusions:
            rows.append(
                {
                    "rank": None,
                    **_base_row(e.offer),
                    "excluded_reason": e.reason.label,
                    "excluded_detail": e.detail,
                }
            )
    return rows
