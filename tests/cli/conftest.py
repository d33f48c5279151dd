"""The CLI tests' database and price sheet."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.cli.test_cli import SHEET
from tests.conftest import Run, cli_runner
from tests.fresh_db import copy_sqlite


@pytest.fixture
def cli(db_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Run:
    """``gpu-tracker`` on a freshly migrated database of each engine.

    A SQLite database starts as a copy of the session's migrated file (``db upgrade``
    then finds it at head); Postgres is migrated from empty by ``db upgrade``.
    """
    if db_url.startswith("sqlite"):
        template: Path = request.getfixturevalue("sqlite_template")
        copy_sqlite(template, Path(str(make_url(db_url).database)))
    run = cli_runner(db_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


@pytest.fixture
def sheet(tmp_path: Path) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text(SHEET + "\n")
    return path
