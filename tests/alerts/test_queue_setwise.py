"""Queueing a big run's alerts is set-wise: a few multi-row statements, never one
per alert, with the same outcome (duplicates and already-queued keys left out, one
delivery per channel, the rules' state written and deleted)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event, func, select

from tracker.store import outbox
from tracker.store.engine import Engine

NOW = datetime(2026, 7, 1, tzinfo=UTC)


def _alert(n: int, channels: tuple[str, ...] = ("slack", "email")) -> outbox.NewAlert:
    return outbox.NewAlert(
        dedupe_key=f"price_change:{n}",
        rule="moves",
        kind="price_change",
        subject=f"offer {n}",
        title=f"offer {n} moved",
        details={"n": n},
        channels=channels,
    )


def test_queueing_1200_alerts_takes_a_handful_of_statements(engine: Engine) -> None:
    first = outbox.queue_alerts(engine, [_alert(0), _alert(1)], NOW, state={("moves", "a"): "1"})
    assert len(first) == 2
    statements = 0

    def count(*_: Any) -> None:
        nonlocal statements
        statements += 1

    batch = [_alert(n) for n in range(1200)] + [_alert(5)]  # 0, 1 queued before; 5 twice
    state = {("moves", "a"): None, **{("moves", f"s{n}"): str(n) for n in range(700)}}
    event.listen(engine, "before_cursor_execute", count)
    try:
        queued = outbox.queue_alerts(engine, batch, NOW, state=state)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    # 1,198 new alerts (1,200 − the two already queued; the repeated 5 once)
    assert len(queued) == 1198 == len(set(queued))
    assert queued == sorted(queued)  # in the order they were given
    # the outbox, the deliveries and the state upserts each one executemany sent as
    # multi-row batches, one delete: per-alert statements would be 2,396
    assert statements <= 20, statements
    with engine.connect() as conn:
        deliveries = conn.execute(select(func.count()).select_from(outbox.AlertDelivery)).scalar()
        rows = conn.execute(select(outbox.AlertState.subject, outbox.AlertState.value)).all()
    states = {str(s): str(v) for s, v in rows}
    assert deliveries == 2 * 1200  # the first two alerts' four plus 1,198 × 2
    assert "a" not in states and len(states) == 700 and states["s699"] == "699"
