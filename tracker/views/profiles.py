"""The Profiles page: each workload's ranking now, and how its leader moved.

The current top N is ranked live over the stored offers (what ``recommend --profile``
prints); the history is the stored snapshots (``recompute_rankings`` after each
collection), each compared with the one before it exactly as the alerts compare them
(:class:`~tracker.recommend.history.RankingChange`): a snapshot taken with another
profile definition starts over instead of reporting a change.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from tracker.recommend import Ranking, WorkloadError, load_offer_table, rank_table
from tracker.recommend.history import RankedEntry, RankingChange
from tracker.recommend.profiles import ProfileSet
from tracker.settings import Settings
from tracker.store import Engine
from tracker.store.series import snapshot_history

__all__ = ["ProfileView", "ProfileViews", "profile_views"]

_ENTRY_FIELDS = tuple(f.name for f in fields(RankedEntry))
HISTORY_SNAPSHOTS = 30
"""Snapshots shown per profile (the latest ones)."""


@dataclass
class ProfileView:
    name: str
    source: str
    ranking: Ranking | None
    error: str | None
    history: list[RankingChange]
    """Oldest first; each compared with its predecessor."""


def _changes(engine: Engine, profile: str) -> list[RankingChange]:
    changes: list[RankingChange] = []
    previous = None
    for snap in snapshot_history(engine, profile, _ENTRY_FIELDS, limit=HISTORY_SNAPSHOTS):
        entries = tuple(RankedEntry(*row) for row in snap.entries)
        comparable = previous is not None and previous.fingerprint == snap.fingerprint
        changes.append(
            RankingChange(
                profile=profile,
                snapshot_id=snap.id,
                computed_at=snap.computed_at,
                entries=entries,
                previous_snapshot_id=previous.id if comparable and previous else None,
                previous_computed_at=previous.computed_at if comparable and previous else None,
                previous_entries=changes[-1].entries if comparable else (),
                profile_changed=previous is not None and not comparable,
            )
        )
        previous = snap
    return changes


@dataclass
class ProfileViews:
    views: list[ProfileView]
    missing: dict[str, int]
    """Offers left out of every ranking for want of an exchange rate, by currency."""


def profile_views(
    engine: Engine,
    settings: Settings,
    profile_set: ProfileSet,
    *,
    top: int,
    only: str | None = None,
) -> ProfileViews:
    """Every profile (or ``only``), by name, ranked in USD at the stored rates plus
    ``settings.fx_rates`` (as ``recommend``); raises DatabaseError, ProfileError."""
    table, conversion = load_offer_table(engine, settings)
    names = [only] if only else sorted(profile_set.profiles)
    views = []
    for name in names:
        profile = profile_set.get(name)
        ranking, error = None, None
        try:
            ranking = rank_table(
                profile,
                table,
                profile_set.assumptions,
                top=top,
                measurements=profile_set.measurements,
            )
        except WorkloadError as exc:
            error = str(exc)
        source = profile_set.sources.get(name, "built-in")
        views.append(ProfileView(name, source, ranking, error, _changes(engine, name)))
    return ProfileViews(views, dict(conversion.missing))
