"""A provider that fails every cadence for months must cost nothing per failed run.

Issue 41 measured ``serve`` growing 166 -> 247 MiB in four minutes (+3.5 MiB a run)
while Vultr, CUDO and CloudRift could not be resolved. The cause: each failed request
left a reference cycle (the retry policy's state holding the exception, whose
traceback held the frames, which held the client, its connection pool and its TLS
context with the CA bundle loaded) that only a full garbage collection frees, and a
large process runs those rarely. Like tests/store/test_flat_memory.py, this runs the
service's jobs with the cyclic collector switched off, so whatever a failed run leaves
in a cycle counts as growth every time, for each of the four ways an endpoint fails.
"""

from __future__ import annotations

import gc
import logging
import socket
import ssl
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from collectors.cloudrift import CloudRiftCollector
from collectors.cudo import CudoCollector
from collectors.vultr import VultrCollector
from tests.service.conftest import make_settings
from tests.service.outage import FAILURES, Outage, failing_getaddrinfo
from tracker.hooks import Hooks
from tracker.service import JobStatus, Service
from tracker.settings import HttpSettings
from tracker.store.schema import CollectionRun

pytestmark = pytest.mark.postgres

RUNS = 30
MEASURED_FROM = 10
MAX_GROWTH_KIB = 256
"""Traced growth allowed between run 10 and run 30 (60 failed jobs). Measured on this
machine: 1,588-1,791 KiB before the fix (about 27 KiB a failed job: frames, tracebacks,
the client and its pool kept in cycles), 42-60 KiB after it (caches settling)."""
COLLECTORS: dict[str, Any] = {
    "vultr": VultrCollector,
    "cudo": CudoCollector,
    "cloudrift": CloudRiftCollector,
}
EXPECTED_ERROR = {
    "http_503": "HTTP 503: upstream unavailable",
    "refused": "ConnectError: [Errno 111] Connection refused",
    "hang": "ReadTimeout",
    "unresolvable": "ConnectError: [Errno -2] Name or service not known",
}


def quiet_test_logging() -> list[logging.Handler]:
    """Swap pytest's capturing handlers (they keep every record for the report) for a
    sink, so the 90 ERROR lines are still made but not kept; returns what to restore."""
    root = logging.getLogger()
    kept = list(root.handlers)
    root.handlers[:] = [logging.NullHandler()]
    return kept


def filtered(snapshot: tracemalloc.Snapshot) -> tracemalloc.Snapshot:
    """Without what SQLAlchemy allocates: its statements are cyclic by design (a clone's
    ``_cloned_set`` holds the clone) and die young, freed by the first young-generation
    collection of a running process; with the collector off they would count here."""
    return snapshot.filter_traces(
        [
            tracemalloc.Filter(False, "*/sqlalchemy/*"),
            tracemalloc.Filter(False, tracemalloc.__file__),
        ]
    )


@pytest.fixture(scope="module")
def outage() -> Iterator[Outage]:
    with Outage() as endpoints:
        yield endpoints


def failing_service(url: str, origin: str, monkeypatch: pytest.MonkeyPatch) -> Service:
    for name in COLLECTORS:
        monkeypatch.setenv(f"GPU_TRACKER_{name.upper()}__ENDPOINT_URL", origin)
    settings = make_settings(url, list(COLLECTORS))
    # Short waits, so 30 runs take seconds; one retry, so the retry path is traced too.
    http = HttpSettings(
        timeout_seconds=0.1, max_retries=1, backoff_base_seconds=0.01, backoff_max_seconds=0.02
    )
    return Service(settings.model_copy(update={"http": http}), collectors=COLLECTORS, hooks=Hooks())


@pytest.mark.parametrize("kind", FAILURES)
def test_thirty_failed_runs_of_three_providers_leave_memory_flat(
    kind: str, pg_service_url: str, outage: Outage, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "unresolvable":
        monkeypatch.setattr(socket, "getaddrinfo", failing_getaddrinfo())
    service = failing_service(pg_service_url, outage.origins[kind], monkeypatch)
    assert sorted(s.id for s in service.jobs) == [f"{n}:standard" for n in sorted(COLLECTORS)]
    tls_loads: list[object] = []
    real_load = ssl.SSLContext.load_verify_locations

    def counted_load(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        tls_loads.append(self)
        real_load(self, *args, **kwargs)

    kept = quiet_test_logging()
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for run in range(1, RUNS + 1):
            if run == 2:  # the first run may load the process's one TLS context
                monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted_load)
            for spec in service.jobs:
                outcome = service.run_job(spec)
                assert outcome.status is JobStatus.FAILED, outcome
                assert EXPECTED_ERROR[kind] in (outcome.error or ""), outcome.error
            if run == MEASURED_FROM:
                tracemalloc.start()
                first = tracemalloc.take_snapshot()
        last = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()
        logging.getLogger().handlers[:] = kept
        service.engine.dispose()
    grown = [d for d in filtered(last).compare_to(filtered(first), "lineno") if d.size_diff > 0]
    growth_kib = sum(d.size_diff for d in grown) / 1024
    assert growth_kib < MAX_GROWTH_KIB, [str(d) for d in grown[:8]]
    # 87 clients were made after the first run; none loaded a CA bundle of its own.
    assert tls_loads == []
    # The run log keeps each failure with its error, 30 per provider.
    with service.engine.connect() as conn:
        rows = conn.execute(
            select(CollectionRun.provider, CollectionRun.status, CollectionRun.error)
        ).all()
    for name in COLLECTORS:
        mine = [r for r in rows if r.provider == name]
        assert len(mine) == RUNS and {r.status for r in mine} == {"failed"}
        assert all(EXPECTED_ERROR[kind] in r.error for r in mine)
