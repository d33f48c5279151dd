"""The recommender: rank offers by what the user's whole job costs, and track rankings.

``rank`` is pure (profile + offers in, ranking out); :func:`recompute_rankings` is
what the scheduler calls after each successful collection: it ranks every profile
over the stored offers, stores a snapshot per profile and returns what changed.

The names that need the database (:mod:`tracker.recommend.stored`,
:mod:`tracker.recommend.history`) are imported on first use, so importing the pure
parts (``tracker.recommend.rank``, which imports this package first) never loads the
store or the database library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.profiles import (
    Profile,
    ProfileError,
    ProfileSet,
    load_profiles,
    make_profile,
)
from tracker.recommend.rank import rank, rank_table
from tracker.recommend.reasons import Reason
from tracker.recommend.result import Candidate, Exclusion, Ranking
from tracker.recommend.table import OfferTable
from tracker.recommend.throughput import WorkloadError
from tracker.recommend.vram import VramEstimate, estimate_vram

if TYPE_CHECKING:
    from tracker.recommend.history import RankedEntry, RankingChange
    from tracker.recommend.stored import (
        load_offer_table,
        load_offers,
        profiles_for,
        recompute_rankings,
    )

__all__ = [
    "Assumptions",
    "Candidate",
    "Exclusion",
    "OfferTable",
    "Profile",
    "ProfileError",
    "ProfileSet",
    "RankedEntry",
    "Ranking",
    "RankingChange",
    "Reason",
    "VramEstimate",
    "WorkloadError",
    "estimate_vram",
    "load_offer_table",
    "load_offers",
    "load_profiles",
    "make_profile",
    "profiles_for",
    "rank",
    "rank_table",
    "recompute_rankings",
]

_LAZY = {
    "RankedEntry": "tracker.recommend.history",
    "RankingChange": "tracker.recommend.history",
    "load_offer_table": "tracker.recommend.stored",
    "load_offers": "tracker.recommend.stored",
    "profiles_for": "tracker.recommend.stored",
    "recompute_rankings": "tracker.recommend.stored",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
