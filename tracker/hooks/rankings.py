"""Built-in hook plugin: recompute the ranking snapshots after every collection.

Registered in the ``gpu_tracker.hooks`` group like any third-party plugin. Order
10, so later plugins (alerts on ranking changes) see the fresh snapshots.
"""

from __future__ import annotations

from tracker.settings import Settings
from tracker.store import Engine

order = 10


def after_collection(engine: Engine, settings: Settings) -> None:
    """Rank every profile over the offers as they now stand (one snapshot per profile)."""
    from tracker.recommend import recompute_rankings  # the recommender loads only when used

    recompute_rankings(engine, settings)
