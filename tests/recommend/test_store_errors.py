"""Issue 9 item 1: the recommender reaches the database only through the store, and a
database failure reaches it as the store's one-line ``DatabaseError``."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import Engine, func, select, text

from tests.conftest import make_offer
from tracker.recommend import ProfileSet, load_offer_table, make_profile, recompute_rankings
from tracker.settings import Settings
from tracker.store.engine import DatabaseError
from tracker.store.ingest import Ingest
from tracker.store.series import RankingSnapshot

T0 = datetime(2026, 3, 1, tzinfo=UTC)
PROFILES = ProfileSet(
    {"lora": make_profile("lora", dict(params=7e9, task="lora", precision="bf16", tokens=80e6))}
)


def test_reading_offers_from_an_unusable_database_is_a_database_error(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE price_points"))
    with pytest.raises(DatabaseError) as info:
        load_offer_table(engine, Settings())
    message = str(info.value)
    assert message.startswith("cannot read the current offers: ") and "\n" not in message
    with pytest.raises(DatabaseError):
        recompute_rankings(engine, Settings(), now=T0, profiles=PROFILES)


def test_a_failed_snapshot_write_is_a_database_error_and_stores_nothing(engine: Engine) -> None:
    with engine.begin() as conn:
        ingest = Ingest(conn, source="testcloud", run_time=T0)
        ingest.add(make_offer(gpu_model="H100-SXM", gpu_count=Decimal(1), gpu_memory_gib=80))
        ingest.finish(None)
        # the entries table is gone: the snapshot row inserts, its entries cannot
        conn.execute(text("DROP TABLE ranking_entries"))

    with pytest.raises(DatabaseError) as info:
        recompute_rankings(engine, Settings(), now=T0, profiles=PROFILES)
    assert str(info.value).startswith("cannot store ranking snapshots: ")
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(RankingSnapshot)).scalar() == 0
