"""On Postgres an evaluation's alerts are inserted while it goes on (a writer thread, in
batches of ``outbox_stream.CHUNK``) and its rules' reads start ahead (a reader thread).
The outcome must be that of queueing the whole list at the end: the same alerts, in the
order fired, the first of a dedupe key winning, one delivery per channel, and nothing
at all (no alert, no cursor moved) when the evaluation fails."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from tests.alerts.conftest import offer
from tests.alerts.test_evaluate import fired, rules
from tests.alerts.test_queue_setwise import NOW, _alert
from tests.listed_collector import collect
from tracker.alerts import evaluate as evaluate_module
from tracker.alerts.evaluate import evaluate
from tracker.store import outbox
from tracker.store.engine import Engine
from tracker.store.outbox import _stream as outbox_stream  # patched where it is looked up

T0 = datetime(2026, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)


def _again(n: int) -> outbox.NewAlert:
    """Alert ``n``'s dedupe key a second time, with another title."""
    return replace(_alert(n), title=f"again {n}")


def test_batches_queue_as_one_list_would(pg_engine: Engine, monkeypatch: Any) -> None:
    monkeypatch.setattr(outbox_stream, "CHUNK", 3)
    outbox.queue_alerts(pg_engine, [_alert(0), _alert(1)], NOW)
    stream = outbox.stream_alerts(pg_engine, NOW)
    assert stream is not None
    stream.add([_alert(n) for n in range(5)] + [_again(2)])  # batches of 3, 2
    stream.add([_alert(5), _again(3), _alert(6)])
    queued = stream.finish({("moves", "a"): "1"})
    # 0 and 1 were queued before, the second 2 and 3 come after their first: 2, 3, 4, 5,
    # 6 are new, in the order given, each with two deliveries (4 before + 10 = 14)
    assert len(queued) == 5 and queued == sorted(queued)
    with pg_engine.connect() as conn:
        rows = conn.execute(
            select(outbox.AlertOutbox.id, outbox.AlertOutbox.title).order_by(outbox.AlertOutbox.id)
        ).all()
        deliveries = conn.execute(select(func.count()).select_from(outbox.AlertDelivery)).scalar()
        state = conn.execute(select(outbox.AlertState.value)).scalars().all()
    assert [t for _, t in rows] == [f"offer {n} moved" for n in range(7)]
    assert [i for i, _ in rows][2:] == queued
    assert deliveries == 14
    assert state == ["1"]


def test_an_abort_queues_nothing(pg_engine: Engine, monkeypatch: Any) -> None:
    monkeypatch.setattr(outbox_stream, "CHUNK", 1)
    stream = outbox.stream_alerts(pg_engine, NOW)
    assert stream is not None
    stream.add([_alert(n) for n in range(3)])
    stream.abort()
    with pg_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(outbox.AlertOutbox)).scalar() == 0


def test_an_evaluation_failing_after_alerts_streamed_queues_nothing(
    pg_engine: Engine, monkeypatch: Any
) -> None:
    # every alert handed over, and inserted, on its own before the failing rule runs
    monkeypatch.setattr(outbox_stream, "CHUNK", 1)
    rule = rules(
        {"name": "moves", "type": "price_change", "threshold_percent": 10},
        {"name": "new", "type": "new_hardware"},
    )
    collect(pg_engine, [offer("a", "10.00"), offer("b", "10.00"), offer("c", "10.00")], T0)
    evaluate(pg_engine, rule, ["slack"], now=T0)  # seeds
    # a: 10 → 12 (+20 %), b: 10 → 8 (−20 %), c: 10 → 10.50 (+5 %, below 10 %)
    collect(pg_engine, [offer("a", "12.00"), offer("b", "8.00"), offer("c", "10.50")], T0 + H)

    def boom(*_: Any) -> None:
        raise RuntimeError("rule failed")

    with monkeypatch.context() as patch:
        patch.setitem(evaluate_module.EVALUATORS, "new_hardware", boom)
        with pytest.raises(RuntimeError, match="rule failed"):
            evaluate(pg_engine, rule, ["slack"], now=T0 + H)
    assert fired(pg_engine) == []
    # nothing lost: the cursor did not move, the next evaluation fires both
    assert len(evaluate(pg_engine, rule, ["slack"], now=T0 + 2 * H)) == 2
    assert sorted(t for _, t in fired(pg_engine)) == [
        "testcloud a us-east-1 on_demand: 10.00 → 12.00 USD/h (+20.00%)",
        "testcloud b us-east-1 on_demand: 10.00 → 8.00 USD/h (-20.00%)",
    ]


def test_alerts_rendered_by_the_store_are_written_as_they_came(pg_engine: Engine) -> None:
    """:meth:`OutboxStream.add_copied` writes the store's COPY text lines on unchanged,
    ids in front, in batches, and a delivery per channel whose name COPY must escape."""
    lines = [
        b"k%d\tmoves\tprice_change\toffer:a\\\\b\tA \\\\ B\t{}\t2026-07-01 00:00:00+00\n" % n
        for n in range(7)
    ]
    stream = outbox.stream_alerts(pg_engine, NOW)
    assert stream is not None
    stream.add_copied(["back\\slash", "tab\there", "new\nline"], lines[:4])
    stream.add_copied(["plain"], lines[4:])
    queued = stream.finish({})
    assert len(queued) == 7 and queued == sorted(queued)
    with pg_engine.connect() as conn:
        rows = conn.execute(
            select(outbox.AlertOutbox.id, outbox.AlertOutbox.dedupe_key, outbox.AlertOutbox.subject,
                   outbox.AlertOutbox.title, outbox.AlertOutbox.created_at)
            .order_by(outbox.AlertOutbox.id)
        ).all()  # fmt: skip
        channels = conn.execute(
            select(outbox.AlertDelivery.alert_id, outbox.AlertDelivery.channel).order_by(
                outbox.AlertDelivery.alert_id, outbox.AlertDelivery.channel
            )
        ).all()
    # COPY's escapes undone: a doubled backslash in the lines is one
    assert [tuple(r) for r in rows] == [
        (queued[n], f"k{n}", "offer:a\\b", "A \\ B", datetime(2026, 7, 1, tzinfo=UTC))
        for n in range(7)
    ]
    assert [c for i, c in channels if i == queued[0]] == ["back\\slash", "new\nline", "tab\there"]
    assert [c for i, c in channels if i == queued[6]] == ["plain"]
