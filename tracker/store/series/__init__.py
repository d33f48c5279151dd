"""The other compact series beside offer prices: exchange rates, storage/egress service prices, availability, and ranking snapshots.

The public front of ``tracker.store.series``: code outside the package imports only
these names; the private modules beside it may change shape freely.
"""

from tracker.store.series._availability import (
    apply_run,
    availability_history,
    close_delisted,
    current_column,
    join_current,
    listed_keys,
    rentable,
)
from tracker.store.series._fx import (
    latest_day,
    load_rates,
    record_rates,
    record_run,
    usd_rate_case,
    usd_sql,
)
from tracker.store.series._obtainability import (
    WINDOWS,
    GroupObtainability,
    Obtainability,
    group_obtainability,
    keyed_obtainability,
    obtainability,
)
from tracker.store.series._rankings import (
    NewSnapshot,
    RankingEntry,
    RankingSnapshot,
    StoredSnapshot,
    current_offer_rows,
    save_snapshots,
    snapshot_history,
)
from tracker.store.series._service_prices import (
    record_service_prices,
    record_service_run,
    service_prices,
)

__all__ = [
    "WINDOWS",
    "GroupObtainability",
    "NewSnapshot",
    "Obtainability",
    "RankingEntry",
    "RankingSnapshot",
    "StoredSnapshot",
    "apply_run",
    "availability_history",
    "close_delisted",
    "current_column",
    "current_offer_rows",
    "group_obtainability",
    "join_current",
    "keyed_obtainability",
    "latest_day",
    "listed_keys",
    "load_rates",
    "obtainability",
    "record_rates",
    "record_run",
    "record_service_prices",
    "record_service_run",
    "rentable",
    "save_snapshots",
    "service_prices",
    "snapshot_history",
    "usd_rate_case",
    "usd_sql",
]
