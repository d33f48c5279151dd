"""The alert outbox: what evaluation reads (changes since a cursor), the alerts and deliveries it writes, and what an operator asks of them.

The public front of ``tracker.store.outbox``: code outside the package imports only
these names; the private modules beside it may change shape freely.
"""

from tracker.store.outbox._controls import backlog, requeue, waiting
from tracker.store.outbox._events import (
    ChangeThreshold,
    NewSeries,
    PriceChange,
    change_moments,
    failing_collectors,
    latest_ids,
    new_series_since,
    oldest_running_start,
    price_changes_since,
    snapshots_since,
)
from tracker.store.outbox._price_sql import (
    PriceAlertSpec,
    Rate,
    RenderedPart,
    Window,
    rendered_price_alerts,
)
from tracker.store.outbox._spot_pairs import SpotPair, spot_pairs
from tracker.store.outbox._stream import OutboxStream
from tracker.store.outbox._tables import (
    DEAD,
    PENDING,
    AlertDelivery,
    AlertOutbox,
    AlertRow,
    AlertState,
    DueDelivery,
    NewAlert,
    due_deliveries,
    existing_keys,
    last_fired,
    list_alerts,
    mark_failed,
    mark_sent,
    queue_alerts,
    read_state,
    read_states,
    stream_alerts,
)

__all__ = [
    "DEAD",
    "PENDING",
    "AlertDelivery",
    "AlertOutbox",
    "AlertRow",
    "AlertState",
    "ChangeThreshold",
    "DueDelivery",
    "NewAlert",
    "NewSeries",
    "OutboxStream",
    "PriceAlertSpec",
    "PriceChange",
    "Rate",
    "RenderedPart",
    "SpotPair",
    "Window",
    "backlog",
    "change_moments",
    "due_deliveries",
    "existing_keys",
    "failing_collectors",
    "last_fired",
    "latest_ids",
    "list_alerts",
    "mark_failed",
    "mark_sent",
    "new_series_since",
    "oldest_running_start",
    "price_changes_since",
    "queue_alerts",
    "read_state",
    "read_states",
    "rendered_price_alerts",
    "requeue",
    "snapshots_since",
    "spot_pairs",
    "stream_alerts",
    "waiting",
]
