"""``gpu-tracker serve`` through the CLI entry point, in process: --once, options, errors.

The service as a real process (signals, replicas) is tests/service/test_serve_process.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.cli_inprocess import run_in_process
from tests.service.fake_server import FakeProviders

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_server() -> FakeProviders:
    server = FakeProviders().start()
    yield server  # type: ignore[misc]
    server.stop()


def run_cli(
    tmp: Path, fake: FakeProviders, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    full.update(
        PYTHONPATH=str(REPO),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        FAKE_PROVIDER_URL=fake.url,
        GPU_TRACKER_PLUGINS=json.dumps(
            {
                "fakegood": "tests.service.fake_provider:Good",
                "fakebad": "tests.service.fake_provider:Bad",
            }
        ),
        GPU_TRACKER_DATABASE_URL=f"sqlite:///{tmp / 'cli.db'}",
        GPU_TRACKER_HTTP__MAX_RETRIES="1",
        GPU_TRACKER_HTTP__BACKOFF_BASE_SECONDS="0.01",
    )
    full.update(env)
    return run_in_process(args, env=full, cwd=tmp)


def test_once_runs_due_jobs_then_nothing_until_the_next_cadence(
    tmp_path: Path, fake_server: FakeProviders
) -> None:
    first = run_cli(tmp_path, fake_server, "serve", "--once", "--collector", "fakegood")
    assert first.returncode == 0, first.stderr
    # The text line of a run: a UTC time with its Z, the run's id in the run log, counts.
    assert re.search(
        r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO tracker\.service\.report: "
        r"run 1 fakegood:standard succeeded in \d+\.\ds: \d+ offers, ",
        first.stderr,
        re.MULTILINE,
    ), first.stderr

    second = run_cli(tmp_path, fake_server, "serve", "--once", "--collector", "fakegood")
    assert second.returncode == 0, second.stderr
    assert "no job is due" in second.stderr
    assert fake_server.fetches["fakegood"] == 1


def test_once_exits_1_when_a_due_job_failed(tmp_path: Path, fake_server: FakeProviders) -> None:
    fake_server.modes["fakebad"] = "fail"
    result = run_cli(
        tmp_path,
        fake_server,
        "serve",
        "--once",
        "--log-format",
        "json",
        GPU_TRACKER_SCHEDULER__COLLECTORS="fakebad,fakegood",
    )
    assert result.returncode == 1
    runs = [json.loads(line) for line in result.stderr.splitlines() if '"event": "run"' in line]
    assert {(r["collector"], r["status"]) for r in runs} == {
        ("fakebad", "failed"),
        ("fakegood", "succeeded"),
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "--collector", "nope"], "unknown collector(s) nope"),
        (["serve", "--log-level", "LOUD"], "unknown level 'LOUD'"),
        (["serve", "--http", "nowhere"], "expected host:port"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, fake_server: FakeProviders, args: list[str], message: str
) -> None:
    result = run_cli(tmp_path, fake_server, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
