"""The recommender's database side: read the stored offers, rank, store snapshots.

Kept apart from the pure ranking so that ``tracker.recommend.rank`` and the rest of
the arithmetic import nothing that touches a database; every statement runs in the
store, and its failures arrive here as :class:`~tracker.store.engine.DatabaseError`.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from tracker.models import Offer
from tracker.recommend.history import RankingChange, fingerprint, record_rankings
from tracker.recommend.profiles import ProfileSet, load_profiles, user_profiles_path
from tracker.recommend.rank import Ranking, rank_table
from tracker.recommend.table import OfferTable
from tracker.recommend.throughput import WorkloadError
from tracker.settings import Settings
from tracker.store.engine import Engine
from tracker.store.queries import current_offers
from tracker.store.rankings import current_offer_rows

__all__ = ["load_offer_table", "load_offers", "profiles_for", "recompute_rankings"]

log = logging.getLogger(__name__)


def load_offers(engine: Engine) -> list[Offer]:
    """Every listed offer at its current price, as validated records (raises
    :class:`~tracker.store.engine.DatabaseError`)."""
    return [stored.offer for stored in current_offers(engine)]


def load_offer_table(engine: Engine) -> OfferTable:
    """The current offers as ranking columns, read without building every record
    (raises :class:`~tracker.store.engine.DatabaseError`)."""
    return OfferTable.from_rows(current_offer_rows(engine))


def profiles_for(settings: Settings) -> ProfileSet:
    """Built-in profiles plus the user's file (``settings.profiles_path`` or the default)."""
    return load_profiles(user_profiles_path(settings.profiles_path))


def recompute_rankings(
    engine: Engine,
    settings: Settings,
    *,
    now: datetime | None = None,
    profiles: ProfileSet | None = None,
    timings: dict[str, float] | None = None,
) -> list[RankingChange]:
    """Rank every profile over the stored offers, snapshot each top N, return the changes.

    One transaction for all snapshots. A profile whose work cannot be priced (e.g. its
    reference GPU lacks a figure) is logged and skipped; an unreadable profiles file
    raises :class:`ProfileError` (one line) because every ranking would be wrong.
    ``timings`` (optional) receives seconds spent in ``db_load``, ``rank``, ``db_write``.
    A database failure raises :class:`~tracker.store.engine.DatabaseError` and stores nothing.
    """
    clock = time.perf_counter
    profile_set = profiles or profiles_for(settings)
    a = profile_set.assumptions
    started = clock()
    rows = current_offer_rows(engine)
    loaded = clock()
    table = OfferTable.from_rows(rows)
    rankings: list[tuple[Ranking, str]] = []
    for name, profile in sorted(profile_set.profiles.items()):
        if not profile.has_work_size:
            log.info("ranking of %s not snapshotted: it gives no work size to cost", name)
            continue
        try:
            ranking = rank_table(
                profile,
                table,
                a,
                top=profile_set.history_top,
                measurements=profile_set.measurements,
            )
        except WorkloadError as exc:
            log.error("ranking skipped: %s", exc)
            continue
        rankings.append((ranking, fingerprint(profile, a)))
        log.debug("profile %s: %d of %d offers feasible", name, ranking.feasible, len(rows))
    ranked = clock()
    computed_at = (now or datetime.now(UTC)).astimezone(UTC)
    changes = record_rankings(engine, rankings, computed_at)
    written = clock()
    if timings is not None:
        timings.update(db_load=loaded - started, rank=ranked - loaded, db_write=written - ranked)
    log.info(
        "rankings recomputed for %d profiles over %d offers (%d changed)",
        len(changes),
        len(rows),
        sum(1 for c in changes if c.changed),
    )
    return changes
