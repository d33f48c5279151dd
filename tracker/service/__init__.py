"""The long-running service behind ``gpu-tracker serve``.

``scheduler`` runs the jobs, ``jobs`` plans them, ``locks`` keeps one runner per
job, ``health``/``metrics``/``web`` report on it, ``logs`` formats its output and
``hooks`` is where rankings and alerts plug in.
"""

from tracker.service.jobs import JobSpec, plan_jobs
from tracker.service.scheduler import JobOutcome, Service

__all__ = ["JobOutcome", "JobSpec", "Service", "plan_jobs"]
