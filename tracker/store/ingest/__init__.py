"""The write path: one collection run's offers into series and price intervals, in the run's one transaction (staging, change detection, delisting, confirmations).

The public front of ``tracker.store.ingest``: code outside the package imports only
these names; the private modules beside it may change shape freely.
"""

from tracker.store.ingest._ingest import (
    INCOMING_COLUMNS,
    DelistScope,
    IdentityCollision,
    Ingest,
    IngestStats,
    offer_hash,
    store_row,
)
from tracker.store.ingest._known import CHUNK_ROWS, KnownSeries, chunk_rows
from tracker.store.ingest._transaction import RunWriter, run_transaction

__all__ = [
    "CHUNK_ROWS",
    "INCOMING_COLUMNS",
    "DelistScope",
    "IdentityCollision",
    "Ingest",
    "IngestStats",
    "KnownSeries",
    "RunWriter",
    "chunk_rows",
    "offer_hash",
    "run_transaction",
    "store_row",
]
