"""The run log (``collection_runs``): runs started, failed, skipped and succeeded, and what the service asks of it.

The public front of ``tracker.store.runs``: code outside the package imports only
these names; the private modules beside it may change shape freely.
"""

from tracker.store.runs._jobs import (
    LatestRuns,
    SuccessfulRun,
    abandon_running,
    last_success,
    latest_runs,
    mark_succeeded,
    probe_engine,
    record_failed_attempt,
    record_skipped_run,
    running_runs,
)
from tracker.store.runs._log import ORPHAN_ERROR, last_observed, record_failure, start_run

__all__ = [
    "ORPHAN_ERROR",
    "LatestRuns",
    "SuccessfulRun",
    "abandon_running",
    "last_observed",
    "last_success",
    "latest_runs",
    "mark_succeeded",
    "probe_engine",
    "record_failed_attempt",
    "record_failure",
    "record_skipped_run",
    "running_runs",
    "start_run",
]
