"""Unchanged prices write nothing; the identity hash is stored and back-filled (issue 17)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from hashlib import blake2b

import pytest
from sqlalchemy import Engine, text

from tests.conftest import make_offer
from tests.store.test_last_seen import od, run_scoped
from tracker.store import migrate
from tracker.store.engine import make_engine
from tracker.store.identity import identity_hash
from tracker.store.ingest import IdentityCollision, Ingest

T0 = datetime(2026, 4, 1, tzinfo=UTC)
H = timedelta(hours=1)


def rows(engine: Engine, sql: str) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


def test_an_unchanged_complete_recollection_writes_no_interval(engine: Engine) -> None:
    run_scoped(engine, [od("a"), od("b")], T0)
    before = rows(engine, "SELECT * FROM price_points ORDER BY id")
    summary = run_scoped(engine, [od("a"), od("b")], T0 + H)
    assert summary.stats.unchanged == 2  # still counted as re-seen unchanged
    # Not one interval rewritten: the run's confirmation of its scope is what moved.
    assert rows(engine, "SELECT * FROM price_points ORDER BY id") == before
    [(source, region, pricing, run_id)] = rows(
        engine, "SELECT source, region, pricing, run_id FROM confirmed_scopes"
    )
    assert (source, region, pricing, run_id) == ("testcloud", "us-east-1", "on_demand", 2)


def test_identity_hash_is_blake2b_of_the_key(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    # provider/instance/region/zone/pricing/payment/class/os joined by U+001F.
    key = "testcloud\x1fa\x1fus-east-1\x1f\x1fon_demand\x1f\x1f\x1flinux"
    expected = int.from_bytes(blake2b(key.encode(), digest_size=8).digest(), "big", signed=True)
    assert rows(engine, "SELECT identity_hash FROM series") == [(expected,)]
    assert identity_hash(tuple(key.split("\x1f"))) == expected


def test_migration_backfills_the_hash_of_existing_series(db_url: str) -> None:
    engine = make_engine(db_url)
    migrate.upgrade(engine, "0006")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO series (provider, instance_type, region, zone, pricing, "
                "payment_option, offering_class, os, gpu_model, gpu_raw_name, gpu_known, "
                "gpu_count, interconnect, source, first_seen) VALUES ('p', 'i', 'r', 'z', "
                "'spot', '', '', 'linux', 'T4', 'T4', true, 1, 'pcie', 'p', :t)"
            ),
            {"t": T0},
        )
    migrate.upgrade(engine)
    assert rows(engine, "SELECT identity_hash FROM series") == [
        (identity_hash(("p", "i", "r", "z", "spot", "", "", "linux")),)
    ]
    engine.dispose()


@pytest.mark.parametrize("stored", ["another source's", "delisted"])
def test_a_hash_collision_fails_the_run_instead_of_merging(engine: Engine, stored: str) -> None:
    """An identity staged in full is checked against the stored one. (One whose hash is
    a series the run's own source lists is staged compact, on the hash: see
    tracker.store.ingest for why that is sound.)"""
    run_scoped(engine, [od("a")], T0)
    other = make_offer(instance_type="zzz")
    with engine.begin() as conn:  # pretend "a" was stored under the hash of "zzz"
        conn.execute(
            text("UPDATE series SET identity_hash = :h"), {"h": identity_hash(other.key())}
        )
        if stored == "delisted":
            conn.execute(text("UPDATE series SET delisted_at = first_seen"))
    source = "testcloud" if stored == "delisted" else "elsewhere"
    collision = r"testcloud/zzz/.* matches stored testcloud/a/"
    with pytest.raises(IdentityCollision, match=collision), engine.begin() as conn:
        ingest = Ingest(conn, source=source, run_time=T0 + H)
        ingest.add(other)
        ingest.finish(None)
