"""The outbox's operator queries on SQLite and Postgres: what waits, and requeueing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine

from tests.alerts.test_slack import price_alert
from tracker.store.outbox import (
    due_deliveries,
    list_alerts,
    mark_failed,
    mark_sent,
    queue_alerts,
    requeue,
    waiting,
)

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def test_waiting_requeue_and_next_attempt(engine: Engine) -> None:
    queue_alerts(engine, [price_alert(n, "10.00", "8.00", "-20.00") for n in (1, 2, 3)], T0)
    d1, d2, d3 = due_deliveries(engine, T0)
    mark_failed(engine, [(d1.delivery_id, 0)], "slack: HTTP 500", T0 + timedelta(minutes=5))
    mark_failed(engine, [(d2.delivery_id, 0)], "slack: HTTP 500", T0 + timedelta(minutes=9))
    mark_failed(engine, [(d3.delivery_id, 7)], "slack: HTTP 404", None)  # dead
    # Two wait, the first 5 minutes on.
    assert waiting(engine, T0) == [("slack", 2, T0 + timedelta(minutes=5))]
    rows = {r.alert_id: r for r in list_alerts(engine)}
    assert rows[1].next_attempt_at == T0 + timedelta(minutes=5)
    assert rows[3].status == "dead" and rows[3].next_attempt_at is None
    assert rows[1].details is not None and rows[1].details["instance_type"] == "i1"
    # Requeue alert 2 only: due now, alert 1 still waits.
    assert requeue(engine, T0, alert_ids=[2]) == {2: 1}
    assert [d.alert_id for d in due_deliveries(engine, T0)] == [2]
    # Without --dead a dead one stays dead; with it, it is due again, attempts kept.
    assert requeue(engine, T0, alert_ids=[3]) == {}
    assert requeue(engine, T0, dead=True) == {1: 1, 2: 1, 3: 1}
    due = due_deliveries(engine, T0)
    assert [(d.alert_id, d.attempts) for d in due] == [(1, 1), (2, 1), (3, 8)]
    # A sent delivery is never requeued.
    mark_sent(engine, [d.delivery_id for d in due], T0)
    assert requeue(engine, T0, dead=True) == {}
    assert waiting(engine, T0) == [] and due_deliveries(engine, T0 + timedelta(days=1)) == []
