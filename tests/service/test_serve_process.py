"""``gpu-tracker serve`` as a real process against Postgres, with fake providers."""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, text

from tests.service.cloud_stub import CloudStub
from tests.service.fake_server import FakeProviders
from tracker.store.engine import make_engine
from tracker.store.schema import CollectionRun, PricePoint, Series

REPO = Path(__file__).resolve().parents[2]
PLUGINS = {
    "fakegood": "tests.service.fake_provider:Good",
    "fakebad": "tests.service.fake_provider:Bad",
    "fakeslow": "tests.service.fake_provider:Slow",
}
SECRET = "gcp-key-that-must-never-be-logged"
AWS_TOKEN = "aws-session-token-that-must-never-be-logged"

pytestmark = pytest.mark.postgres


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(predicate: Any, timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Serve:
    """One ``gpu-tracker serve`` subprocess; its log goes to a file (a pipe could fill)."""

    def __init__(
        self, tmp: Path, name: str, env: dict[str, str], *args: str, prelude: str = ""
    ) -> None:
        """``prelude``: Python run first in the process (``tests.service.outage.PRELUDE``
        makes ``.invalid`` names fail to resolve there)."""
        self.port = free_port()
        self.log_path = tmp / f"{name}.log"
        self._log = self.log_path.open("wb")
        command = [
            sys.executable,
            "-c",
            f"{prelude}\nfrom tracker.cli import main; main()"
            if prelude
            else "from tracker.cli import main; main()",
            "serve",
            "--http",
            f"127.0.0.1:{self.port}",
            "--log-format",
            "json",
            *args,
        ]
        self.proc = subprocess.Popen(
            command, env=env, cwd=tmp, stdout=self._log, stderr=subprocess.STDOUT
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except OSError:
            return 0, b""

    def events(self) -> list[dict[str, Any]]:
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._log.close()


@pytest.fixture
def fake_server() -> Iterator[FakeProviders]:
    server = FakeProviders().start()
    yield server
    server.stop()


@pytest.fixture
def procs() -> Iterator[list[Serve]]:
    started: list[Serve] = []
    yield started
    for proc in started:
        proc.kill()


def serve_env(tmp: Path, url: str, fake: FakeProviders, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env.update(
        PYTHONPATH=str(REPO),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        FAKE_PROVIDER_URL=fake.url,
        GPU_TRACKER_PLUGINS=json.dumps(PLUGINS),
        GPU_TRACKER_DATABASE_URL=url,
        GPU_TRACKER_GCP__API_KEY=SECRET,
        GPU_TRACKER_HTTP__TIMEOUT_SECONDS="2",
        GPU_TRACKER_HTTP__MAX_RETRIES="2",
        GPU_TRACKER_HTTP__BACKOFF_BASE_SECONDS="0.01",
        GPU_TRACKER_HTTP__BACKOFF_MAX_SECONDS="0.05",
        GPU_TRACKER_SCHEDULER__JITTER_SECONDS="0",
        GPU_TRACKER_SCHEDULER__DB_RETRY_SECONDS="0.5",
        GPU_TRACKER_SCHEDULER__SHUTDOWN_TIMEOUT_SECONDS="20",
    )
    env.update(extra)
    return env


def statuses(engine: Engine, provider: str) -> list[str]:
    with engine.connect() as conn:
        return list(
            conn.execute(
                select(CollectionRun.status)
                .where(CollectionRun.provider == provider)
                .order_by(CollectionRun.id)
            ).scalars()
        )


def test_serve_process_healthy_and_failing_collectors_kill_and_sigterm(
    pg_service_url: str,
    pg_database: tuple[str, Any],
    fake_server: FakeProviders,
    procs: list[Serve],
    tmp_path: Path,
) -> None:
    fake_server.modes["fakebad"] = "fail"
    env = serve_env(
        tmp_path,
        pg_service_url,
        fake_server,
        GPU_TRACKER_SCHEDULER__COLLECTORS="fakegood,fakebad",
        GPU_TRACKER_SCHEDULER__CADENCES=json.dumps({"fakegood": 1 / 60, "fakebad": 1 / 60}),
        GPU_TRACKER_SCHEDULER__STALE_AFTER_CADENCES="2",
    )
    serve = Serve(tmp_path, "serve", env)
    procs.append(serve)
    engine = make_engine(pg_service_url)

    wait_for(
        lambda: (
            statuses(engine, "fakegood").count("succeeded") >= 2
            and statuses(engine, "fakebad").count("failed") >= 2
        ),
        what="two cadences of each collector",
    )

    # The database connection dies mid-run: nothing partial, and the service recovers.
    _, admin = pg_database
    fake_server.hold()
    assert fake_server.page2_waiting.wait(20)
    with admin.connect() as conn:
        killed = conn.execute(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = :db AND pid <> pg_backend_pid() "
                "AND application_name = 'gpu-tracker'"
            ),
            {"db": pg_service_url.rsplit("/", 1)[1]},
        ).scalar()
    assert killed >= 1
    fake_server.release()
    before = statuses(engine, "fakegood").count("succeeded")
    wait_for(
        lambda: statuses(engine, "fakegood").count("succeeded") >= before + 2,
        what="successful runs after the connection was killed",
    )
    assert serve.proc.poll() is None  # recovered without a restart

    status, body = serve.get("/healthz")
    report = json.loads(body)
    assert status == 503  # fakebad has not succeeded for two cadences
    assert report["database"]["reachable"] is True
    assert report["stale"] == ["fakebad:standard"]
    assert report["collectors"]["fakegood:standard"]["stale"] is False
    assert report["collectors"]["fakebad:standard"]["consecutive_failures"] >= 2
    assert "HTTP 503" in report["collectors"]["fakebad:standard"]["last_error"]

    status, metrics = serve.get("/metrics")
    lines = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in metrics.decode().splitlines()
        if line and not line.startswith("#")
    }
    assert status == 200
    assert (
        lines['gpu_tracker_runs_total{collector="fakegood",scope="standard",status="succeeded"}']
        >= 2
    )
    assert (
        lines['gpu_tracker_runs_total{collector="fakebad",scope="standard",status="failed"}'] >= 2
    )
    assert lines['gpu_tracker_offers_seen_total{collector="fakegood",scope="standard"}'] >= 8
    assert lines['gpu_tracker_price_changes_total{collector="fakegood",scope="standard"}'] >= 4
    assert (
        lines['gpu_tracker_last_success_timestamp_seconds{collector="fakegood",scope="standard"}']
        > 0
    )
    assert (
        lines['gpu_tracker_last_success_timestamp_seconds{collector="fakebad",scope="standard"}']
        == 0
    )
    assert lines['gpu_tracker_collector_stale{collector="fakebad",scope="standard"}'] == 1

    # SIGTERM while a run is open: it is allowed to commit, then the process exits 0.
    fake_server.hold()
    assert fake_server.page2_waiting.wait(20)
    serve.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    fake_server.release()
    assert serve.stop() == 0
    final = statuses(engine, "fakegood")
    assert "running" not in final and final[-1] == "succeeded"

    with engine.connect() as conn:
        per_series = conn.execute(
            select(func.count(PricePoint.id))
            .join(Series, Series.id == PricePoint.series_id)
            .where(Series.provider == "fakegood")
            .group_by(Series.id)
        ).scalars()
        assert set(per_series) == {final.count("succeeded")}  # no partial snapshot ever
    engine.dispose()

    events = serve.events()
    runs = [e for e in events if e.get("event") == "run"]
    assert {(e["collector"], e["status"]) for e in runs} >= {
        ("fakegood", "succeeded"),
        ("fakebad", "failed"),
    }
    ok = [e for e in runs if e["status"] == "succeeded"]
    assert all("offers_seen" in e and "price_changes" in e for e in ok)
    # A failed run says why, not "0 offers": its line has the error, no counts.
    failed = [e for e in runs if e["status"] == "failed"]
    assert all(e["error"] and e["reason"] and "offers_seen" not in e for e in failed)
    assert all(e["message"].startswith(f"run {e['run_id']} ") for e in ok)
    assert any(e.get("event") == "stale" and e["collector"] == "fakebad" for e in events)
    assert events[-1]["event"] == "stopped"


def test_two_processes_never_run_the_same_job_at_once(
    pg_service_url: str, fake_server: FakeProviders, procs: list[Serve], tmp_path: Path
) -> None:
    fake_server.page_delay["fakeslow"] = 0.3  # a run takes ~0.6 s, the cadence is 0.5 s
    env = serve_env(
        tmp_path,
        pg_service_url,
        fake_server,
        GPU_TRACKER_SCHEDULER__COLLECTORS="fakeslow",
        GPU_TRACKER_SCHEDULER__CADENCES=json.dumps({"fakeslow": 0.5 / 60}),
        GPU_TRACKER_SCHEDULER__STALE_AFTER_CADENCES="100",
    )
    first = Serve(tmp_path, "first", env)
    second = Serve(tmp_path, "second", env)
    procs += [first, second]
    engine = make_engine(pg_service_url)

    def finished_runs() -> list[Any]:
        with engine.connect() as conn:
            return list(
                conn.execute(
                    select(
                        CollectionRun.started_at, CollectionRun.finished_at, CollectionRun.status
                    )
                    .where(CollectionRun.finished_at.is_not(None))
                    .order_by(CollectionRun.started_at)
                )
            )

    wait_for(lambda: len(finished_runs()) >= 6, what="six runs between the two processes")
    assert first.stop() == 0
    assert second.stop() == 0
    rows = finished_runs()
    engine.dispose()

    assert {r.status for r in rows} == {"succeeded"}
    for earlier, later in itertools.pairwise(rows):
        assert later.started_at >= earlier.finished_at, (earlier, later)
    locked = [e for p in (first, second) for e in p.events() if e.get("event") == "run_locked"]
    assert locked, "the processes never contended, so the test proved nothing"


def test_serve_at_debug_never_logs_the_secrets_its_providers_send(
    pg_service_url: str, fake_server: FakeProviders, tmp_path: Path
) -> None:
    """The real AWS and GCP collectors run against a stub that refuses them: botocore
    (asked for at DEBUG) logs the request with the session token, and the GCP error
    quotes the API key back, so both secrets reach a log record and must be masked."""
    with CloudStub() as stub:
        env = serve_env(
            tmp_path,
            pg_service_url,
            fake_server,
            **stub.env(),
            AWS_ACCESS_KEY_ID="AKIAFAKEKEYID4SERVE",
            AWS_SECRET_ACCESS_KEY="aws-secret-key-that-must-never-be-logged",
            AWS_SESSION_TOKEN=AWS_TOKEN,
            GPU_TRACKER_LOG_LEVELS="botocore=DEBUG",
        )
        args = ("--once", "--log-level", "DEBUG", "--collector", "aws", "--collector", "gcp")
        serve = Serve(tmp_path, "serve", env, *args)
        try:
            assert serve.proc.wait(timeout=120) == 1  # both due jobs failed
        finally:
            serve.kill()
    assert set(stub.aws_tokens) == {AWS_TOKEN} and set(stub.gcp_keys) == {SECRET}  # both sent
    text = serve.log_path.read_text()
    for secret in (AWS_TOKEN, SECRET, "aws-secret-key-that-must-never-be-logged", "AKIAFAKE"):
        assert secret not in text
    events = serve.events()
    sent = [e["message"] for e in events if e["logger"] == "botocore.endpoint"]
    assert any("'X-Amz-Security-Token': b'***'" in line for line in sent), sent
    failed = {e["collector"]: e.get("error", "") for e in events if e.get("event") == "run"}
    assert "API key not valid: ***" in failed["gcp"]


def test_sigterm_past_the_shutdown_timeout_abandons_the_run_in_one_line(
    pg_service_url: str, fake_server: FakeProviders, procs: list[Serve], tmp_path: Path
) -> None:
    env = serve_env(
        tmp_path,
        pg_service_url,
        fake_server,
        GPU_TRACKER_SCHEDULER__COLLECTORS="fakegood",
        GPU_TRACKER_SCHEDULER__SHUTDOWN_TIMEOUT_SECONDS="0.1",
    )
    fake_server.hold()  # the first run stops before page 2, its transaction open
    serve = Serve(tmp_path, "serve", env)
    procs.append(serve)
    assert fake_server.page2_waiting.wait(30)
    serve.proc.send_signal(signal.SIGTERM)
    assert serve.proc.wait(timeout=30) == 0  # bounded: it did not wait for the provider
    fake_server.release()
    engine = make_engine(pg_service_url)
    with engine.connect() as conn:
        [row] = conn.execute(select(CollectionRun)).all()
    engine.dispose()
    assert (row.status, row.scope) == ("abandoned", "standard")
    assert "shutdown_timeout_seconds = 0.1 s" in row.error and row.finished_at is not None
    events = serve.events()
    [line] = [e for e in events if e.get("event") == "abandoned"]
    assert line["message"] == (
        "still running after shutdown_timeout_seconds = 0.1 s: "
        "fakegood:standard: run rolled back; exiting anyway"
    )
    assert events[-1] is line  # nothing logged after it
