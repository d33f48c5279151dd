"""Every read of offers and their history: current offers, prices in force on a grid of times, the dashboard's pages, the rollup's answers, plan prices.

The public front of ``tracker.store.reads``: code outside the package imports only
these names; the private modules beside it may change shape freely.
"""

from tracker.store.reads._coverage import first_observed
from tracker.store.reads._dashboard import cheapest, cheapest_per_gpu, offer_listing, without_rate
from tracker.store.reads._history import (
    EXPORT_COLUMNS,
    CheapestStep,
    SeriesFilter,
    cheapest_at,
    export_batches,
    offer_steps,
    stored_gpu_names,
)
from tracker.store.reads._names import stored_providers
from tracker.store.reads._net_order import NetRule, orderable
from tracker.store.reads._offers import (
    StoredOffer,
    current_offers,
    current_offers_select,
    find_series,
    price_at,
    price_history,
    recent_runs,
    unknown_gpus,
)
from tracker.store.reads._plan_prices import PlanPrice, plan_prices
from tracker.store.reads._probe import probe_offer_steps, probe_usd_offer_steps
from tracker.store.reads._rate_gaps import without_rate_at
from tracker.store.reads._rollup_read import answerable, cheapest_from_rollup
from tracker.store.reads._trend import cheapest_trend
from tracker.store.sql import Steps, Times

__all__ = [
    "EXPORT_COLUMNS",
    "CheapestStep",
    "NetRule",
    "PlanPrice",
    "SeriesFilter",
    "Steps",
    "StoredOffer",
    "Times",
    "answerable",
    "cheapest",
    "cheapest_at",
    "cheapest_from_rollup",
    "cheapest_per_gpu",
    "cheapest_trend",
    "current_offers",
    "current_offers_select",
    "export_batches",
    "find_series",
    "first_observed",
    "offer_listing",
    "offer_steps",
    "orderable",
    "plan_prices",
    "price_at",
    "price_history",
    "probe_offer_steps",
    "probe_usd_offer_steps",
    "recent_runs",
    "stored_gpu_names",
    "stored_providers",
    "unknown_gpus",
    "without_rate",
    "without_rate_at",
]
