"""The cheapest-price rollup's upkeep: kept exact by every run, rebuilt on demand (its reads are in :mod:`tracker.store.reads`).

The public front of ``tracker.store.rollup``: code outside the package imports only
these names; the private modules beside it may change shape freely.
"""

from tracker.store.rollup._maintain import (
    RebuildStats,
    hold_upkeep,
    last_point_id,
    maintain_run,
    rebuild,
)

__all__ = ["RebuildStats", "hold_upkeep", "last_point_id", "maintain_run", "rebuild"]
