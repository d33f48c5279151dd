"""One runner per job: advisory locks on Postgres, thread locks on SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

import tracker.service
from tests.conftest import cli_runner
from tracker.store.engine import DatabaseError, make_engine
from tracker.store.locks import LocalLocks, PostgresLocks, lock_key, locks_for


def test_lock_keys_are_stable_signed_64_bit_and_distinct() -> None:
    # Pinned: replicas of different releases must agree on the key.
    assert lock_key("aws:spot") == lock_key("aws:spot")
    assert lock_key("aws:spot") != lock_key("aws:standard")
    assert -(2**63) <= lock_key("aws:spot") < 2**63
    assert lock_key("aws:spot") == 538160920992425990


@pytest.mark.postgres
def test_a_second_session_cannot_take_a_held_job(pg_service_url: str) -> None:
    one, two = make_engine(pg_service_url), make_engine(pg_service_url)
    try:
        a, b = PostgresLocks(one), PostgresLocks(two)
        with a.hold("aws:spot") as held:
            assert held
            with b.hold("aws:spot") as other:
                assert not other
            with b.hold("aws:standard") as different:
                assert different
        with b.hold("aws:spot") as after_release:
            assert after_release
    finally:
        one.dispose()
        two.dispose()


def test_local_locks_exclude_within_a_process(sqlite_service_url: str) -> None:
    engine: Engine = make_engine(sqlite_service_url)
    locks = locks_for(engine)
    assert isinstance(locks, LocalLocks)
    with locks.hold("job") as held, locks.hold("job") as again:
        assert held and not again
    with locks.hold("job") as later:
        assert later
    engine.dispose()


@pytest.mark.postgres
def test_an_unreachable_database_is_a_database_error_not_a_driver_exception(
    pg_database: tuple[str, object],
) -> None:
    url, _admin = pg_database  # never created
    engine = make_engine(url)
    try:
        with (
            pytest.raises(DatabaseError, match=r"cannot lock job aws:spot: OperationalError"),
            PostgresLocks(engine).hold("aws:spot"),
        ):
            pass  # pragma: no cover - never reached
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_import_takes_the_job_locks_of_the_collector_it_writes_for(
    pg_service_url: str, tmp_path: Path
) -> None:
    sheet = tmp_path / "prices.csv"
    sheet.write_text(
        "provider,instance_type,region,zone,pricing,gpu_model,gpu_count,gpu_memory_gib,"
        "vcpus,memory_gib,price_per_hour,currency\n"
        "acme,a100.1,eu-1,,on_demand,A100-80GB,1,80,12,85,1.50,USD\n"
    )
    run = cli_runner(pg_service_url, tmp_path)
    engine = make_engine(pg_service_url)
    try:
        with locks_for(engine).hold("pricesheet:standard") as held:  # a scheduled run
            assert held
            blocked = run("import", str(sheet))
        assert blocked.returncode == 1
        assert blocked.stderr.strip().endswith(
            f"{sheet}: not imported: a run of pricesheet is in progress"
        )
        assert run("runs", "--format", "json").stdout.strip() == "[]"  # nothing written
        assert run("import", str(sheet)).returncode == 0  # free again
    finally:
        engine.dispose()


def test_no_service_module_mentions_sqlalchemy() -> None:
    """The service reaches the database through tracker.store only (TYPE_CHECKING too)."""
    service = Path(tracker.service.__file__).parent
    assert [p.name for p in sorted(service.glob("*.py")) if "sqlalchemy" in p.read_text()] == []
