"""What one attempt of a job came to: the vocabulary shared by runner, reporter and metrics.

The metrics pre-declare their label values from these enums, so a dashboard's
series are exactly the ones the service can emit (none stays at zero forever
because its name drifted from the code's).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from tracker.collect import RunSummary
from tracker.service.jobs import JobSpec

__all__ = ["FailureReason", "JobOutcome", "JobStatus", "SkipReason"]


class JobStatus(StrEnum):
    """The first three are runs (counted in ``gpu_tracker_runs_total``); the rest are not."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    """A run that collected nothing: credentials missing (recorded), or the service stopping."""
    LOCKED = "locked"
    """Another runner holds the job right now; nothing was attempted."""
    NOT_DUE = "not_due"
    """Another runner (a replica, a manual collect) ran the job within its cadence."""


class FailureReason(StrEnum):
    """Why a run failed (``gpu_tracker_run_failures_total{reason}``)."""

    COLLECTOR = "collector"
    """The provider or the collector failed (the runner recorded the run failed)."""
    DATABASE = "database"
    """The store was unreachable; the job is retried after ``db_retry_seconds``."""


class SkipReason(StrEnum):
    """Why no collection happened (``gpu_tracker_runs_skipped_total{reason}``)."""

    LOCKED = "locked"
    NOT_DUE = "not_due"
    NOT_CONFIGURED = "not_configured"
    """The collector's credentials (or other settings) are missing right now."""
    STOPPING = "stopping"
    """The service is shutting down (not counted: nothing was due to happen)."""


@dataclass(frozen=True)
class JobOutcome:
    spec: JobSpec
    status: JobStatus
    summary: RunSummary | None = None
    reason: FailureReason | SkipReason | None = None
    error: str | None = None

    @property
    def is_run(self) -> bool:
        """A run that health, metrics and the run log account for."""
        return self.status in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.SKIPPED) and (
            self.reason is not SkipReason.STOPPING
        )
