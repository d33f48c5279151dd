"""Rankings and recommendations: a profile's offers ranked by the estimated cost of its
whole job (``recommend``, ``/api/v1/recommend``, the Profiles page, ``tracker.api``).

Every ranking reads the offers through :func:`rank_offers`, which takes the settings:
the USD figures it ranks by come from the stored rates plus ``fx_rates``, so no face
can rank without them (as ``/api/v1/recommend`` once did).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tracker.fx import Conversion
from tracker.models import Offer, offer_dict
from tracker.recommend.net import list_and_rule
from tracker.recommend.profiles import Profile, ProfileError, ProfileSet, make_profile
from tracker.recommend.rank import rank_table
from tracker.recommend.result import Ranking
from tracker.recommend.stored import add_obtainability, load_offer_table, profiles_for
from tracker.settings import Settings
from tracker.store import Engine
from tracker.views.currency import CurrencyView
from tracker.views.offers import PER_GPU

__all__ = [
    "OPTION_FIELDS",
    "RANKING_ROW_KEYS",
    "Recommendation",
    "choose_profile",
    "profile_fields",
    "profiles_of",
    "rank_offers",
    "ranking_rows",
    "two_places",
]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """A ranking and the USD conversion it ranked with (what it left out, by currency)."""

    ranking: Ranking
    conversion: Conversion


def profiles_of(settings: Settings) -> ProfileSet:
    """The built-in profiles plus the user's file (raises ProfileError, one line)."""
    return profiles_for(settings)


WORK_SIZE = ("tokens", "images", "epochs", "reference_gpu_hours")

OPTION_FIELDS = {
    "seq_len": "sequence_length",
    "batch": "batch_size",
    "spot": "interruptible",
    "checkpoint_hours": "checkpoint_interval_hours",
    "provider": "providers",
    "region": "regions",
    "gpu": "gpus",
    "max_price": "max_price_per_hour",
    "budget": "budget_usd",
    "deadline": "deadline_hours",
}
"""``recommend``'s option names (``--seq-len`` → ``seq_len``) → the profile's fields;
the other options (params, task, precision, tokens, …) are named as the fields."""


def profile_fields(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as ``recommend`` names them → profile fields, unset ones dropped."""
    return {OPTION_FIELDS.get(k, k): v for k, v in options.items() if v is not None and v != []}


def choose_profile(
    profile_set: ProfileSet, name: str | None, overrides: Mapping[str, Any]
) -> Profile:
    """Profile ``name`` with ``overrides`` (profile fields) applied, or an ad-hoc one
    from the overrides alone; a new work size replaces the profile's whole work size.
    Raises ProfileError (one line naming the field)."""
    if name is None:
        if not overrides:
            raise ProfileError("give a profile name or ad-hoc fields (params, task, ...)")
        return make_profile("ad-hoc", dict(overrides))
    base = profile_set.get(name)
    if not overrides:
        return base
    data = base.model_dump(exclude={"name"}, exclude_none=True)
    if set(WORK_SIZE) & overrides.keys():
        for size in (*WORK_SIZE, "reference_gpu"):
            data.pop(size, None)
    return make_profile(base.name, {**data, **overrides})


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
    table = add_obtainability(engine, table)
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


def _share(value: float | None) -> float | None:
    """A share of a window to 4 decimals, as the offer rows show it (None: never said)."""
    return None if value is None else round(value, 4)


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
    "fabric",
    "network_gbps",
)
"""The offer columns a ranking row repeats (documented in the README)."""

RANKING_ROW_KEYS = (
    "rank",
    *_RANKED_OFFER_FIELDS,
    "nodes",
    "total_gpus",
    "scaling_efficiency",
    "compute_share",
    "vram_needed_gib",
    "vram_available_gib",
    "vram_needed_per_gpu_gib",
    "sharded",
    "price_per_hour_usd",
    "net_price_per_hour_usd",
    "discount",
    "effective_price_per_hour_usd",
    "price_per_gpu_hour_usd",
    "compute_hours",
    "job_hours",
    "job_hours_low",
    "job_hours_high",
    "uncertainty",
    "job_cost_usd",
    "display_currency",
    "display_effective_price_per_hour",
    "display_job_cost",
    "interruption_pct",
    "obtainability_7d",
    "obtainability_30d",
    "basis",
    "basis_source",
    "compute_precision",
    "precision_fallback",
    "excluded_reason",
    "excluded_detail",
)
"""The keys of a candidate's row (:func:`ranking_rows`), in order."""


def _gpus(value: float) -> Decimal:
    """GPUs across the cluster (a fraction stays a fraction: 0.5 of one GPU)."""
    return Decimal(repr(value)).normalize()


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
    currency at the latest rate. ``price_per_hour_usd`` is the list price; the ranking,
    the effective price and the job cost use ``net_price_per_hour_usd``, what the
    account pays under ``discount`` (the list price where no rule applies)."""
    rows: list[dict[str, Any]] = []
    for c in ranking.candidates:
        listed, rule = list_and_rule(c.offer)
        rows.append(
            {
                "rank": c.rank,
                **_base_row(c.offer),
                "nodes": c.nodes,
                "total_gpus": _gpus(c.total_gpus),
                "scaling_efficiency": Decimal(f"{c.scaling_efficiency:.3f}"),
                "compute_share": None
                if c.compute_share is None
                else Decimal(f"{c.compute_share:.3f}"),
                "vram_needed_gib": two_places(c.vram_needed_gib),
                "vram_available_gib": two_places(c.vram_available_gib),
                "vram_needed_per_gpu_gib": two_places(c.vram_needed_per_gpu_gib),
                "sharded": c.sharded,
                "price_per_hour_usd": listed,
                "net_price_per_hour_usd": c.price_per_hour_usd,
                "discount": rule,
                "effective_price_per_hour_usd": c.effective_hourly_usd,
                "price_per_gpu_hour_usd": c.price_per_gpu_hour_usd.quantize(PER_GPU),
                "compute_hours": _d_or_none(c.compute_hours),
                "job_hours": _d_or_none(c.job_hours),
                "job_hours_low": _d_or_none(c.job_hours_low),
                "job_hours_high": _d_or_none(c.job_hours_high),
                "uncertainty": None if c.job_hours is None else c.uncertainty,
                "job_cost_usd": c.job_cost_usd,
                "display_currency": "USD" if view is None else view.code,
                "display_effective_price_per_hour": _shown(view, c.effective_hourly_usd),
                "display_job_cost": _shown(view, c.job_cost_usd),
                "interruption_pct": c.interruption_pct,
                "obtainability_7d": _share(c.obtainability_7d),
                "obtainability_30d": _share(c.obtainability_30d),
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
