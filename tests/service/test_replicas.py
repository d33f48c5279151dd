"""Replicas on one Postgres collect each cadence once between them, not once each."""

from __future__ import annotations

import itertools
import json
import math
import signal
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, insert, select

from tests.service import fake_provider
from tests.service.fake_server import FakeProviders
from tests.service.test_serve_process import (
    Serve,
    fake_server,
    procs,
    serve_env,
    wait_for,
)
from tracker.collect import scope_label
from tracker.store.engine import make_engine
from tracker.store.schema import CollectionRun

__all__ = ["fake_server", "procs"]  # fixtures shared with the single-process tests

pytestmark = pytest.mark.postgres

CADENCE = 4.0
CADENCES = 4
STARTUP = 8.0
"""Seconds a ``serve`` process may take to start on a loaded machine."""


def record_success(engine: Engine, at: float) -> None:
    when = datetime.fromtimestamp(at, UTC)
    scope = scope_label(fake_provider.Good.pricing_models)
    with engine.begin() as conn:
        conn.execute(
            insert(CollectionRun).values(
                provider="fakegood",
                source="fakegood",
                scope=scope,
                status="succeeded",
                started_at=when,
                finished_at=when,
            )
        )


def test_two_replicas_make_one_run_per_cadence(
    pg_service_url: str, fake_server: FakeProviders, procs: list[Serve], tmp_path: Path
) -> None:
    env = serve_env(
        tmp_path,
        pg_service_url,
        fake_server,
        GPU_TRACKER_SCHEDULER__COLLECTORS="fakegood",
        GPU_TRACKER_SCHEDULER__CADENCES=json.dumps({"fakegood": CADENCE / 60}),
        GPU_TRACKER_SCHEDULER__STALE_AFTER_CADENCES="100",
    )
    engine = make_engine(pg_service_url)

    def succeeded() -> list[float]:
        with engine.connect() as conn:
            rows = conn.execute(
                select(CollectionRun.started_at).where(CollectionRun.status == "succeeded")
            ).scalars()
            return sorted(t.timestamp() for t in rows)

    first = Serve(tmp_path, "first", env)
    procs.append(first)
    wait_for(lambda: succeeded(), what="the first replica's first run")
    phase = succeeded()[0]  # the first replica fires at phase + k x CADENCE

    # A replica measures its first run from the last success it finds, so a success
    # recorded at the right time sets the second replica's timer half a cadence
    # after the first's: far enough apart that the lock alone (runs last < 1 s)
    # would let both collect every cadence. Its first run: `out_of_step`, a few
    # seconds ahead so the process is up by then.
    cadences_ahead = math.ceil((time.time() + STARTUP - phase - CADENCE / 2) / CADENCE)
    out_of_step = phase + CADENCE / 2 + cadences_ahead * CADENCE
    record_success(engine, at=out_of_step - CADENCE)
    second = Serve(tmp_path, "second", env)
    procs.append(second)

    # Window boundaries a quarter cadence from both replicas' firing times: CADENCES
    # cadences hold CADENCES runs if the replicas share the work (4), twice that if
    # each runs every cadence (8).
    window = out_of_step + CADENCE / 4
    end = window + CADENCES * CADENCE
    time.sleep(max(0.0, end + CADENCE / 2 - time.time()))
    ready = [p.get("/readyz")[0] for p in (first, second)]
    for replica in (first, second):  # both at once: one must not run on alone
        replica.proc.send_signal(signal.SIGTERM)
    assert [p.proc.wait(timeout=30) for p in (first, second)] == [0, 0]
    assert [p.stop() for p in (first, second)] == [0, 0]
    runs = [t for t in succeeded() if window <= t < end]
    engine.dispose()

    assert len(runs) == CADENCES, runs
    # The replica that did not run a cadence found it done by the other.
    timeline = sorted(
        (e["ts"][11:23], name, e["event"], e.get("status"))
        for name, p in (("first", first), ("second", second))
        for e in p.events()
        if e.get("event")
    )
    assert "run_not_due" in {event for _, _, event, _ in timeline}, timeline
    assert ready == [200, 200]  # the one that skipped learnt of the other's successes


READY_CADENCE = 3.0
OBSERVED_CADENCES = 6


def test_two_replicas_stay_ready_and_share_each_cadence(
    pg_service_url: str, fake_server: FakeProviders, procs: list[Serve], tmp_path: Path
) -> None:
    # The replica that starts second finds the first's success: before issue 30 it fired
    # at exactly the first's times (jitter 0), found the job locked every cadence, never
    # counted the other's success and answered 503 two cadences later, for good.
    env = serve_env(
        tmp_path,
        pg_service_url,
        fake_server,
        GPU_TRACKER_SCHEDULER__COLLECTORS="fakegood",
        GPU_TRACKER_SCHEDULER__CADENCES=json.dumps({"fakegood": READY_CADENCE / 60}),
        GPU_TRACKER_SCHEDULER__STALE_AFTER_CADENCES="2",
    )
    # Runs of most of a second: a quarter of the cadence, so the replicas' attempts meet
    # each other's runs in progress (the lock) as well as finished (not due).
    fake_server.page_delay["fakegood"] = 0.3
    engine = make_engine(pg_service_url)

    def succeeded() -> list[float]:
        with engine.connect() as conn:
            rows = conn.execute(
                select(CollectionRun.started_at).where(CollectionRun.status == "succeeded")
            ).scalars()
            return sorted(t.timestamp() for t in rows)

    first = Serve(tmp_path, "first", env)
    procs.append(first)
    wait_for(lambda: succeeded(), what="the first replica's first run")
    second = Serve(tmp_path, "second", env)
    procs.append(second)
    wait_for(lambda: second.get("/livez")[0] == 200, timeout=STARTUP * 2, what="second up")

    start = time.time()
    probes: list[tuple[float, int, int]] = []
    while time.time() < start + OBSERVED_CADENCES * READY_CADENCE:
        probes.append((time.time(), first.get("/readyz")[0], second.get("/readyz")[0]))
        time.sleep(0.25)
    end = time.time()
    for replica in (first, second):
        replica.proc.send_signal(signal.SIGTERM)
    assert [p.proc.wait(timeout=30) for p in (first, second)] == [0, 0]
    assert [p.stop() for p in (first, second)] == [0, 0]
    runs = [t for t in succeeded() if start <= t < end]
    with engine.connect() as conn:
        statuses = set(conn.execute(select(CollectionRun.status)).scalars())
    engine.dispose()

    not_ready = [p for p in probes if p[1:] != (200, 200)]
    assert not not_ready, not_ready
    assert statuses == {"succeeded"}
    # Once per cadence between them: 6 cadences hold 6 runs, give or take the one at
    # each end, and no two runs closer than a cadence less the clock slack (10 %).
    assert OBSERVED_CADENCES - 1 <= len(runs) <= OBSERVED_CADENCES + 1, runs
    gaps = [b - a for a, b in itertools.pairwise(runs)]
    assert min(gaps) >= READY_CADENCE * 0.9 - 0.05, gaps
    # What both printed: JSON only, no colour codes, no ERROR, no APScheduler INFO, each
    # run line with its run id, the disabled collectors in one line.
    for replica in (first, second):
        text = replica.log_path.read_text(encoding="utf-8")
        assert "\x1b" not in text
        events = replica.events()
        assert len(events) == len(text.splitlines())
        assert not [e for e in events if e["level"] in ("error", "critical")]
        chatter = [e for e in events if e["logger"].startswith("apscheduler")]
        assert not [e for e in chatter if e["level"] in ("debug", "info")]
        run_lines = [e for e in events if e.get("event") == "run"]
        assert all(isinstance(e["run_id"], int) for e in run_lines)
        assert all(e["message"].startswith(f"run {e['run_id']} ") for e in run_lines)
        [planned] = [e for e in events if e.get("event") == "collectors_planned"]
        assert planned["message"].startswith("scheduled: fakegood; disabled: ")
    # The replica that skips finds the other's run done, not in progress every time: one
    # locked attempt moves it out of step (by a quarter to three quarters of a cadence).
    for replica in (first, second):
        skips = [e["event"] for e in replica.events() if e.get("event", "").startswith("run_")]
        assert ["run_locked", "run_locked"] not in [skips[i : i + 2] for i in range(len(skips))]
    skipped = {e.get("event") for e in second.events()} | {e.get("event") for e in first.events()}
    assert "run_not_due" in skipped
