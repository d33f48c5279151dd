"""One runner per job: advisory locks on Postgres, thread locks on SQLite."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from tracker.store.engine import make_engine
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
