"""The two shapes of the ``last_seen`` rule (tracker.store.last_seen) answer alike.

Readers outer-join each series' scope confirmation once (``join_confirmations``) and
select ``effective_last_seen``; the ingest's statements probe ``confirmed_scopes`` with
the scalar sub-select ``effective_last_seen_sql``. Both come from one rule: these tests
pin, on hand-built runs, that they give the same (hand-worked) answer per interval,
that the join matches a scope by its source too, and that selecting the column
without the join fails loudly instead of cross-joining every confirmation.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

import pytest
from sqlalchemy import Engine, exc, literal_column, select, type_coerce

from tests.store.test_history import ListCollector
from tests.store.test_last_seen import T0, H, od, partial, run_scoped
from tracker.collect import run_collector
from tracker.settings import Settings
from tracker.store.last_seen import (
    effective_last_seen,
    effective_last_seen_sql,
    join_confirmations,
)
from tracker.store.schema import PricePoint, Series
from tracker.store.types import UTCDateTime

Row = tuple[str, str, str, Decimal, datetime]
"""(source, instance_type, region, price, last_seen) of one interval."""


class OtherCloud(ListCollector):
    name: ClassVar[str] = "othercloud"


def both_shapes(engine: Engine) -> tuple[list[Row], list[Row]]:
    """Every interval's last_seen through the join and through the sub-select."""
    p, s = PricePoint.__table__.alias("p"), Series.__table__.alias("s")
    key = (s.c.source, s.c.instance_type, s.c.region, p.c.price)
    base = select(*key).select_from(p.join(s, s.c.id == p.c.series_id))
    probe = type_coerce(literal_column(effective_last_seen_sql("p", "s")), UTCDateTime())
    joined = join_confirmations(base.add_columns(effective_last_seen(p)), s)
    with engine.connect() as conn:
        return (
            sorted(tuple(r) for r in conn.execute(joined.order_by(*key))),  # type: ignore[misc]
            sorted(tuple(r) for r in conn.execute(base.add_columns(probe).order_by(*key))),  # type: ignore[misc]
        )


def test_the_join_and_the_sub_select_answer_alike(engine: Engine) -> None:
    run_scoped(engine, [od("a"), od("b"), od("a", region="eu-west-1")], T0)
    # T0+1h: "a" changed price in us-east-1; eu-west-1 failed (partial, nothing seen).
    run_scoped(engine, [od("a", "2.50"), od("b")], T0 + H, before=partial("eu-west-1"))
    run_collector(engine, OtherCloud([od("c", provider="othercloud")]), Settings(), now=T0)
    joined, probed = both_shapes(engine)
    assert joined == probed
    assert joined == [
        # othercloud ran once, at T0: testcloud's T0+1h confirmation is not its own.
        ("othercloud", "c", "us-east-1", Decimal("2.00"), T0),
        # eu-west-1 was partial at T0+1h: its "a" stays last seen at T0.
        ("testcloud", "a", "eu-west-1", Decimal("2.00"), T0),
        # 2.00 ended by the change seen at T0+1h: last seen at T0 (stored when closed).
        ("testcloud", "a", "us-east-1", Decimal("2.00"), T0),
        # 2.50 opened at T0+1h by the run that confirmed us-east-1.
        ("testcloud", "a", "us-east-1", Decimal("2.50"), T0 + H),
        # unchanged, confirmed by the complete us-east-1 read at T0+1h.
        ("testcloud", "b", "us-east-1", Decimal("2.00"), T0 + H),
    ]


def test_the_column_without_the_join_fails(engine: Engine) -> None:
    run_scoped(engine, [od("a")], T0)
    stmt: Any = select(PricePoint.id, effective_last_seen())
    with pytest.raises(exc.DBAPIError, match="gt_conf"), engine.connect() as conn:
        conn.execute(stmt).all()
