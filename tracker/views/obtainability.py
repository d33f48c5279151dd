"""Obtainability beside the offers: the share of the last 7 and 30 days each offer (and
each provider × GPU × region) was reported rentable, and how long a sold-out offer took
to come back. The rules (``low`` counts as rentable; unknown time is left out of the
share) are :mod:`tracker.store.series`'s; this module turns them into the documented
JSON keys, kept in one place so the offer rows and the group rows agree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from tracker.store import Engine, reads
from tracker.store.series import GroupObtainability, Obtainability, group_obtainability
from tracker.store.series import obtainability as stored_obtainability

__all__ = [
    "GROUP_ROW_KEYS",
    "OBTAINABILITY_KEYS",
    "group_rows",
    "obtainability_cells",
    "offer_obtainability",
    "with_group_obtainability",
]

OBTAINABILITY_KEYS = ("obtainability_7d", "obtainability_30d", "median_back_hours")
"""What every offer row carries (None where the provider never reported availability)."""

GROUP_ROW_KEYS = (
    "provider",
    "gpu_model",
    "region",
    "offers",
    "obtainability_7d",
    "obtainability_30d",
    "median_back_hours",
    "came_back",
)
"""The keys of :func:`group_rows`."""

_SHARE_DIGITS = 4
_HOURS_DIGITS = 1


def _share(value: float | None) -> float | None:
    return None if value is None else round(value, _SHARE_DIGITS)


def obtainability_cells(o: Obtainability | None) -> dict[str, Any]:
    """The :data:`OBTAINABILITY_KEYS` of one offer: shares to 4 decimals (3/7 is
    0.4286), the median time back in hours to one decimal."""
    if o is None:
        return dict.fromkeys(OBTAINABILITY_KEYS)
    back = o.median_back_seconds
    return {
        "obtainability_7d": _share(o.share_7d),
        "obtainability_30d": _share(o.share_30d),
        "median_back_hours": None if back is None else round(back / 3600, _HOURS_DIGITS),
    }


def offer_obtainability(
    engine: Engine, shown: Sequence[reads.StoredOffer], at: datetime | None = None
) -> dict[int, Obtainability]:
    """Obtainability of the offers about to be shown, by series id, over the windows
    ending at ``at`` (now): one statement for a page of them, or for every series when
    the listing is long (raises DatabaseError)."""
    when = (at or datetime.now(UTC)).astimezone(UTC)
    return stored_obtainability(engine, when, [s.series_id for s in shown])


def group_rows(
    engine: Engine, at: datetime | None = None, gpu_models: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Obtainability per (provider, GPU model, region), pooled over its offers, for the
    groups that reported availability in the last 30 days (raises DatabaseError)."""
    when = (at or datetime.now(UTC)).astimezone(UTC)
    return [_group_row(g) for g in group_obtainability(engine, when, gpu_models)]


def with_group_obtainability(
    engine: Engine,
    rows: list[dict[str, Any]],
    at: datetime | None = None,
    gpu_models: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """``rows`` keyed by ``gpu_model`` and ``provider`` (``compare``'s), each given the
    :data:`OBTAINABILITY_KEYS` of that GPU at that provider, pooled over its regions and
    offers (None where it never reported availability); ``gpu_models`` narrows the read
    (raises DatabaseError)."""
    when = (at or datetime.now(UTC)).astimezone(UTC)
    found = {
        (g.gpu_model, g.provider): g.figures
        for g in group_obtainability(engine, when, gpu_models, per=("provider", "gpu_model"))
    }
    for row in rows:
        row.update(obtainability_cells(found.get((row["gpu_model"], row["provider"]))))
    return rows


def _group_row(g: GroupObtainability) -> dict[str, Any]:
    cells: Mapping[str, Any] = obtainability_cells(g.figures)
    return {
        "provider": g.provider,
        "gpu_model": g.gpu_model,
        "region": g.region,
        "offers": g.offers,
        **cells,
        "came_back": g.figures.spells,
    }
