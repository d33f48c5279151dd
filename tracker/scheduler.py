"""The collection scheduler; implemented in :mod:`tracker.service` (kept here as the
documented entry point of the architecture map)."""

from tracker.service import JobOutcome, JobSpec, Service, plan_jobs

__all__ = ["JobOutcome", "JobSpec", "Service", "plan_jobs"]
