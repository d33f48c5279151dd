"""Fixtures for the service tests: fake providers on a local server, fresh databases."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import PG_ADMIN_URL
from tests.fresh_db import copy_sqlite
from tests.service import fake_provider
from tests.service.fake_server import FakeProviders
from tracker.service import Service
from tracker.settings import HttpSettings, SchedulerSettings, Settings
from tracker.store import migrate
from tracker.store.engine import make_engine, normalize_url

FAST_HTTP = {
    "timeout_seconds": 0.5,
    "max_retries": 2,
    "backoff_base_seconds": 0.01,
    "backoff_max_seconds": 0.05,
}
COLLECTORS: dict[str, Any] = {
    cls.name: cls
    for cls in (
        fake_provider.Good,
        fake_provider.Bad,
        fake_provider.Slow,
        fake_provider.Crashing,
        fake_provider.Spot,
        fake_provider.Keyed,
    )
}


@pytest.fixture
def services() -> Iterator[list[Service]]:
    """Services a test created (append them): stopped and disposed of afterwards."""
    created: list[Service] = []
    yield created
    for service in created:
        service.stop(timeout=10)
        service.engine.dispose()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProviders]:
    server = FakeProviders().start()
    monkeypatch.setenv(fake_provider.URL_ENV, server.url)
    yield server
    server.stop()


def _admin() -> Any:
    engine = create_engine(
        normalize_url(PG_ADMIN_URL),
        isolation_level="AUTOCOMMIT",
        connect_args={"connect_timeout": 5},
    )
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # pragma: no cover - depends on the machine
        import os

        if os.environ.get("CI"):
            pytest.fail(f"Postgres unreachable at {PG_ADMIN_URL}: {exc}")
        pytest.skip(f"Postgres unreachable at {PG_ADMIN_URL}")
    return engine


@pytest.fixture
def pg_database() -> Iterator[tuple[str, Any]]:
    """(url, admin engine) of a database name not yet created; dropped afterwards.

    Per test, because these tests kill the database's connections and count its rows.
    """
    admin = _admin()
    name = f"gpu_tracker_svc_{uuid.uuid4().hex[:10]}"
    url = normalize_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        yield url, admin
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def create_database(url: str, admin: Any) -> None:
    name = normalize_url(url).database
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()


@pytest.fixture(scope="session")
def pg_service_template() -> Iterator[str]:
    """A database migrated to head once a session, which pg_service_url copies
    (CREATE DATABASE ... TEMPLATE) instead of migrating each new one."""
    admin = _admin()
    name = f"gpu_tracker_svc_tpl_{uuid.uuid4().hex[:10]}"
    url = normalize_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        create_database(url, admin)  # disposes of its engine: no one stays connected
        yield name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def pg_service_url(pg_database: tuple[str, Any], pg_service_template: str) -> str:
    url, admin = pg_database
    name = normalize_url(url).database
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{pg_service_template}"'))
    return url


@pytest.fixture
def sqlite_service_url(tmp_path: Path, sqlite_template: Path) -> str:
    path = tmp_path / "service.db"
    copy_sqlite(sqlite_template, path)
    return f"sqlite:///{path}"


@pytest.fixture(params=["sqlite", "postgres"])
def service_url(request: pytest.FixtureRequest) -> str:
    name = "sqlite_service_url" if request.param == "sqlite" else "pg_service_url"
    return str(request.getfixturevalue(name))


def make_settings(url: str, collectors: list[str], **scheduler: Any) -> Settings:
    options: dict[str, Any] = {
        "collectors": collectors,
        "jitter_seconds": 0,
        "http": "",
        "db_retry_seconds": 0.5,
        "shutdown_timeout_seconds": 5,
    }
    options.update(scheduler)
    return Settings(
        database_url=url,
        http=HttpSettings(**FAST_HTTP),
        scheduler=SchedulerSettings(**options),
    )
