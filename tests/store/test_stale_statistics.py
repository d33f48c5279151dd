"""A run into a store whose statistics say its tables are empty (analysed before it
grew: after ``VACUUM ANALYZE`` on a fresh database, or a small store meeting a big new
provider) stays linear in the run's size on Postgres.

The planner then takes ``series`` and ``availability_points`` for empty, and an
``INSERT … WHERE NOT EXISTS (SELECT … FROM <the same table>)`` becomes a nested loop
that scans the table once per incoming row, visiting every row the statement has
inserted so far: a first collection of 200,000 offers took 872 s instead of 8. The run
finds what is already stored in statements of their own, so no statement scans the
table it inserts into. Counted here: the sequential scans each table took inside the
run's transaction (``pg_stat_xact_user_tables``), one per rescan of such a loop.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import Connection, text

from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.models import Availability, Offer
from tracker.store import rollup
from tracker.store.engine import Engine

T0 = datetime(2026, 5, 1, tzinfo=UTC)
OFFERS = 3_000


def offers(dated: bool) -> list[Offer]:
    """``OFFERS`` offers; ``dated``: each observed twice, at its own times (a provider's
    price history, as AWS spot reports it), so the run orders several per series."""
    times = [T0 - timedelta(hours=2), T0 - timedelta(hours=1)] if dated else [None]
    return [
        make_offer(
            instance_type=f"gpu.{n}",
            availability=Availability.AVAILABLE,
            observed_at=at,
            price_per_hour=make_offer().price_per_hour + k,
        )
        for n in range(OFFERS)
        for k, at in enumerate(times)
    ]


@pytest.mark.parametrize("dated", [False, True], ids=["one each", "dated history"])
def test_a_first_collection_into_a_store_analysed_empty_scans_no_table_per_offer(
    pg_engine: Engine, monkeypatch: pytest.MonkeyPatch, dated: bool
) -> None:
    url = pg_engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE series")
        conn.execute("VACUUM ANALYZE availability_points")
    scans: dict[str, int] = {}
    maintain = rollup.maintain_run

    def counted(conn: Connection, **kwargs: Any) -> int:  # still in the run's transaction
        rows = conn.execute(
            text(
                "SELECT relname, seq_scan FROM pg_stat_xact_user_tables "
                "WHERE relname IN ('series', 'availability_points')"
            )
        )
        scans.update({str(name): int(n) for name, n in rows})
        return maintain(conn, **kwargs)

    monkeypatch.setattr(rollup, "maintain_run", counted)
    collect(pg_engine, offers(dated), T0)
    with pg_engine.connect() as conn:
        stored = conn.execute(text("SELECT count(*) FROM series")).scalar()
    assert stored == OFFERS
    # a handful of scans per run at most; a loop rescanning per offer makes thousands
    assert scans["series"] < 20, scans
    assert scans["availability_points"] < 20, scans
