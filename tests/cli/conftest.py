"""The CLI tests' database and price sheet."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import SHEET
from tests.conftest import Run, cli_runner


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Run:
    """``gpu-tracker`` on a freshly migrated database of each engine."""
    run = cli_runner(db_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


@pytest.fixture
def sheet(tmp_path: Path) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text(SHEET + "\n")
    return path
