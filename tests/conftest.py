"""Shared fixtures: real databases only (a temp SQLite file, a throwaway Postgres DB).

Postgres comes from GPU_TRACKER_TEST_POSTGRES_URL (default: the machine's server on
127.0.0.1:5432). Each test session creates its own database and drops it after.
When the server is unreachable the Postgres variants are skipped locally but fail
in CI (CI=true), and tests/ci_postgres.py fails a CI session in which any Postgres
test skipped, so a green CI always means both engines ran.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from tests import ci_postgres
from tests.ci_postgres import in_ci
from tests.cli_inprocess import run_in_process
from tests.fresh_db import PgFreshSchema, copy_sqlite, migrated_sqlite_file, reset_pg
from tracker.models import Offer
from tracker.store.engine import make_engine, normalize_url

pytest_plugins = ("pytester",)

PG_ADMIN_URL = os.environ.get(
    "GPU_TRACKER_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def pytest_configure(config: pytest.Config) -> None:
    ci_postgres.pytest_configure(config)


@pytest.fixture(autouse=True)
def _isolated_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test reads the developer's config or writes the user data dir."""
    for key in list(os.environ):
        if key.startswith("GPU_TRACKER_") and key != "GPU_TRACKER_TEST_POSTGRES_URL":
            monkeypatch.delenv(key)
    # xdist's workers run with COLUMNS=80 and LINES=24 set; a CLI call must see the
    # environment a plain `pytest` (or a shell without them) gives it: tables are
    # as wide as tracker.cli.table.TABLE_WIDTH, not 80.
    for key in ("COLUMNS", "LINES"):
        monkeypatch.delenv(key, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))  # the AWS bulk-file cache
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    for key in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "LAMBDA_API_KEY",
        "RUNPOD_API_KEY",
    ):  # the GPU clouds' conventional keys
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # Application Default Credentials must never probe the GCE metadata server
    # (169.254.169.254) from a test: no credentials file, no gcloud config, no probe.
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(home / "gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    from google.auth.compute_engine import _metadata

    monkeypatch.setattr(_metadata, "_NO_GCE_CHECK", True, raising=False)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    admin_url = normalize_url(PG_ADMIN_URL)
    try:
        admin = create_engine(
            admin_url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5}
        )
        with admin.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # pragma: no cover - depends on the machine
        if in_ci():
            pytest.fail(f"Postgres unreachable at {PG_ADMIN_URL}: {exc}")
        pytest.skip(f"Postgres unreachable at {PG_ADMIN_URL}")
    name = f"gpu_tracker_test_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = admin_url.set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def _pg_fresh() -> PgFreshSchema:
    return PgFreshSchema()


@pytest.fixture
def pg_engine(pg_url: str, _pg_fresh: PgFreshSchema) -> Iterator[Engine]:
    """The session's Postgres database, freshly migrated (tests/fresh_db.py says how)."""
    engine = make_engine(pg_url)
    _pg_fresh.migrated(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tracker.db'}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once a session; tests get copies of it."""
    return migrated_sqlite_file(tmp_path_factory.mktemp("sqlite-template") / "migrated.db")


@pytest.fixture
def sqlite_engine(sqlite_url: str, sqlite_template: Path) -> Iterator[Engine]:
    copy_sqlite(sqlite_template, Path(str(make_url(sqlite_url).database)))
    engine = make_engine(sqlite_url)
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> Engine:
    name = "sqlite_engine" if request.param == "sqlite" else "pg_engine"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty (unmigrated) database URL on each engine, for CLI and migration tests."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'cli.db'}"
    url: str = request.getfixturevalue("pg_url")
    engine = make_engine(url)
    reset_pg(engine)
    engine.dispose()
    return url


SCRIPT = shutil.which("gpu-tracker", path=str(Path(sys.executable).parent)) or "gpu-tracker"
"""The installed console script, for the tests that need a real process."""

Run = Callable[..., subprocess.CompletedProcess[str]]


def cli_runner(db_url: str, workdir: Path, *, process: bool = False) -> Run:
    """Runs ``gpu-tracker ARGS`` on ``db_url`` with no config or data of the developer's.

    In this process through ``tracker.cli.main`` (tests/cli_inprocess.py says what
    is kept apart), or as the installed console script when ``process`` is true.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env["GPU_TRACKER_DATABASE_URL"] = db_url
    env["XDG_DATA_HOME"] = str(workdir / "data")
    env["XDG_CONFIG_HOME"] = str(workdir / "config")
    env["XDG_CACHE_HOME"] = str(workdir / "cache")
    env["XDG_STATE_HOME"] = str(workdir / "state")

    def run(
        *args: str, extra_env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**env, **(extra_env or {})}
        if not process:
            return run_in_process(args, env=full_env, cwd=workdir)
        return subprocess.run(
            [SCRIPT, *args],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=workdir,
        )

    return run


def make_offer(**overrides: Any) -> Offer:
    """A valid offer with sensible defaults; tests override what they exercise."""
    fields: dict[str, Any] = {
        "provider": "testcloud",
        "instance_type": "gpu.8xa100",
        "region": "us-east-1",
        "pricing": "on_demand",
        "price_per_hour": Decimal("32.7726"),
        "currency": "USD",
        "gpu_model": "A100-40GB",
        "gpu_count": Decimal(8),
        "gpu_memory_gib": Decimal(40),
        "vcpus": Decimal(96),
        "memory_gib": Decimal(1152),
        "interconnect": "nvlink",
    }
    fields.update(overrides)
    return Offer(**fields)


def pg_url_database(url: str) -> str:
    return str(make_url(url).database)
