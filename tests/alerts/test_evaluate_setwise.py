"""An evaluation is set-wise (issue 29): the statements it sends do not grow with the
number of changes it reads. Counted at the driver, so the store's own cursors (the
rendered alerts' COPY out, the outbox's COPY in) count as well as SQLAlchemy's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from sqlalchemy import event

from tests.alerts.test_evaluate import rules
from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.alerts.evaluate import evaluate
from tracker.models import Offer, PricingModel
from tracker.store.engine import Engine
from tracker.store.outbox import list_alerts

T0 = datetime(2026, 6, 1, tzinfo=UTC)
H = timedelta(hours=1)
RULES = rules(
    {"name": "moves", "type": "price_change", "threshold_percent": 5},
    {"name": "moves-eur", "type": "price_change", "threshold_percent": 5, "currency": "EUR"},
    {"name": "held", "type": "price_change", "threshold_percent": 5, "cooldown": "1h"},
    {"name": "spot", "type": "spot_discount", "threshold_percent": 10},
    {"name": "new", "type": "new_hardware"},
)


def offers(name: str, n: int, step: int) -> list[Offer]:
    """``n`` on-demand offers and their spot twins, every price ``step`` % higher."""
    out = []
    for i in range(n):
        price = Decimal(10 + i) * (100 + step) / 100
        for pricing, factor in ((PricingModel.ON_DEMAND, 1), (PricingModel.SPOT, Decimal("0.5"))):
            out.append(
                make_offer(
                    instance_type=f"{name}.{i}",
                    pricing=pricing,
                    zone="z1" if pricing is PricingModel.SPOT else "",
                    price_per_hour=price * factor,
                    price_per_hour_usd=None,
                )
            )
    return out


@contextmanager
def statements(engine: Engine) -> Iterator[list[int]]:
    """Every statement sent meanwhile: each SQLAlchemy execute on SQLite; on Postgres
    each psycopg execute, executemany and COPY (but the connection pool's pings, one
    per reused connection, whose number depends on what the pool held before)."""
    count = [0]
    if engine.dialect.name != "postgresql":

        def one(*_: Any) -> None:
            count[0] += 1

        event.listen(engine, "before_cursor_execute", one)
        try:
            yield count
        finally:
            event.remove(engine, "before_cursor_execute", one)
        return
    with pytest.MonkeyPatch.context() as patch:
        for name in ("execute", "executemany", "copy"):
            method = getattr(psycopg.Cursor, name)

            def counted(cur: Any, query: Any, *args: Any, _method: Any = method, **kw: Any) -> Any:
                if query != ";":  # the pool's ping of a connection it hands out again
                    count[0] += 1
                return _method(cur, query, *args, **kw)

            patch.setattr(psycopg.Cursor, name, counted)
        yield count


def kinds(engine: Engine, at: datetime) -> list[tuple[str, str]]:
    """(rule, kind) of each alert queued at ``at``."""
    return [(a.rule, a.kind) for a in list_alerts(engine, limit=10_000) if a.created_at == at]


def evaluated(engine: Engine, at: datetime) -> tuple[int, int]:
    """(alerts queued, statements sent) by an evaluation at ``at``."""
    with statements(engine) as sent:
        queued = evaluate(engine, RULES, ["slack"], now=at, fx_rates={"EUR": Decimal("1.25")})
    return len(queued), sent[0]


def test_an_evaluation_sends_as_many_statements_for_few_changes_as_for_many(
    engine: Engine,
) -> None:
    small = offers("small", 4, 10)
    collect(engine, offers("small", 4, 0), T0)
    evaluated(engine, T0)  # seeds
    collect(engine, small, T0 + H)
    few = evaluated(engine, T0 + H)
    collect(engine, small + offers("big", 120, 0), T0 + 2 * H)
    # no price moved: each of the 120 new instance types fires once, and each of its
    # new spot offers 50 % below on-demand (at least 10 %)
    assert evaluated(engine, T0 + 2 * H)[0] == 240
    assert Counter(k for _, k in kinds(engine, T0 + 2 * H)) == {
        "new_hardware": 120,
        "spot_discount": 120,
    }
    collect(engine, small + offers("big", 120, 10), T0 + 3 * H)
    many = evaluated(engine, T0 + 3 * H)
    # every price up 10 %: each of the three price rules fires for every moved offer,
    # 2 × 4 = 8 then 2 × 120 = 240; the spot discount stays at 50 %, crossed since the
    # seeding, so it is quiet
    assert (few[0], many[0]) == (3 * 8, 3 * 240)
    # the same statements for 8 changes as for 240: one per change would be hundreds
    assert many[1] == few[1], (few, many)
