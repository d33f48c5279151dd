"""A re-collection meeting known and new series at once.

On Postgres a run seeing each series once joins the known series first and creates
the new ones afterwards, taking their observations from the insert's RETURNING; these
runs check that both kinds land (SQLite, which creates them first, must agree).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import Engine, text

from tests.conftest import make_offer
from tests.store.test_history import T0, run
from tracker.models import Offer


def offer(n: int, price: str) -> Offer:
    return make_offer(instance_type=f"gpu.{n}", price_per_hour=Decimal(price))


def test_known_and_new_series_in_one_run(engine: Engine) -> None:
    first = run(engine, [offer(0, "1.00"), offer(1, "2.00"), offer(2, "3.00")], T0)
    assert first.stats.new_series == 3
    t1 = T0 + timedelta(hours=1)
    # gpu.0 unchanged, gpu.1 changed, gpu.2 not seen (delisted), gpu.3 and gpu.4 new.
    again = run(
        engine,
        [offer(0, "1.00"), offer(3, "4.00"), offer(1, "2.50"), offer(4, "5.00")],
        t1,
    )
    s = again.stats
    assert (s.new_series, s.price_changes, s.unchanged, s.delisted) == (2, 1, 1, 1)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT s.instance_type, p.price, p.ended_at IS NULL, s.delisted_at IS NULL "
                "FROM price_points p JOIN series s ON s.id = p.series_id "
                "ORDER BY s.instance_type, p.first_seen"
            )
        ).all()
    # Five series, six intervals: gpu.1's 2.00 closed by the 2.50 that followed it,
    # gpu.2's 3.00 closed by its delisting, the new series' first prices open.
    assert [(t, Decimal(p), o, listed) for t, p, o, listed in rows] == [
        ("gpu.0", Decimal("1.00"), True, True),
        ("gpu.1", Decimal("2.00"), False, True),
        ("gpu.1", Decimal("2.50"), True, True),
        ("gpu.2", Decimal("3.00"), False, False),
        ("gpu.3", Decimal("4.00"), True, True),
        ("gpu.4", Decimal("5.00"), True, True),
    ]
