"""The in-process CLI runner gives what the console script gives and leaves the
test process as it found it (tests/cli_inprocess.py)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from tests.cli_inprocess import run_in_process
from tests.conftest import cli_runner


def test_it_answers_as_the_console_script_does(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'same.db'}"
    for args in (["offers", "--format", "nope"], ["offers", "-f", "json"]):  # usage error, rows
        inside = cli_runner(url, tmp_path)(*args)
        outside = cli_runner(url, tmp_path, process=True)(*args)
        assert (inside.returncode, inside.stdout, inside.stderr) == (
            outside.returncode,
            outside.stdout,
            outside.stderr,
        ), args


def test_the_process_state_is_put_back(tmp_path: Path) -> None:
    root = logging.getLogger()
    before = (
        dict(os.environ),
        os.getcwd(),
        list(sys.path),
        list(root.handlers),
        root.level,
        logging.getLogger("botocore").level,
        signal.getsignal(signal.SIGTERM),
    )
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(tmp_path / "plugins")}
    env["GPU_TRACKER_DATABASE_URL"] = f"sqlite:///{tmp_path / 'state.db'}"
    proc = run_in_process(["-vv", "offers"], env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "DEBUG" in proc.stderr  # -vv configured the CLI's own logging, into its stderr
    after = (
        dict(os.environ),
        os.getcwd(),
        list(sys.path),
        list(root.handlers),
        root.level,
        logging.getLogger("botocore").level,
        signal.getsignal(signal.SIGTERM),
    )
    assert after == before


def test_an_uncaught_error_is_a_traceback_and_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tracker.cli

    def boom(argv: list[str] | None = None) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(tracker.cli, "main", boom)
    proc = run_in_process(["offers"], env={}, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("Traceback (most recent call last):")
    assert proc.stderr.rstrip().endswith("RuntimeError: boom")


@pytest.mark.postgres
def test_a_command_leaves_no_connection_open(
    pg_engine: Engine, pg_url: str, tmp_path: Path
) -> None:
    """The CLI disposes of its engines as the command ends (tracker.cli.context.State.close)."""
    pg_engine.dispose()
    proc = cli_runner(pg_url, tmp_path)("offers", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    with pg_engine.connect() as conn:
        others = conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = 'gpu-tracker' AND pid <> pg_backend_pid()"
            )
        ).scalar()
    assert others == 0
