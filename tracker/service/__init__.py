"""The long-running service behind ``gpu-tracker serve``.

``scheduler`` wires it together (APScheduler, signals, start-up, shutdown),
``jobs`` plans the jobs, ``runner`` runs one job and classifies its outcome
(``outcome``), ``report`` tells that outcome to ``health``, ``metrics``, the log
and the hooks, ``web`` serves /livez, /readyz, /healthz and /metrics, ``logs``
formats the output. What runs after a collection plugs in through
:mod:`tracker.hooks`; job locks and run-log queries are the store's
(:mod:`tracker.store.locks`, :mod:`tracker.store.runs`).
"""

from tracker.service.jobs import JobSpec, plan_jobs
from tracker.service.outcome import JobOutcome, JobStatus
from tracker.service.scheduler import Service

__all__ = ["JobOutcome", "JobSpec", "JobStatus", "Service", "plan_jobs"]
