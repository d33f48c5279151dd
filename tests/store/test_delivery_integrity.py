"""A delivery names an alert of the outbox, on both engines: what the foreign key did,
kept by triggers (migration 0011) that check a statement's rows at once on Postgres."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import DBAPIError

from tests.alerts.test_queue_setwise import _alert
from tracker.store import outbox
from tracker.store.engine import Engine

NOW = datetime(2026, 7, 1, tzinfo=UTC)


def _deliveries(engine: Engine) -> list[tuple[int, str]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(outbox.AlertDelivery.alert_id, outbox.AlertDelivery.channel).order_by(
                outbox.AlertDelivery.alert_id, outbox.AlertDelivery.channel
            )
        ).all()
    return [(int(a), str(c)) for a, c in rows]


def _delivery(alert_id: int, channel: str = "slack") -> dict[str, object]:
    return {
        "alert_id": alert_id,
        "channel": channel,
        "status": outbox.PENDING,
        "attempts": 0,
        "next_attempt_at": NOW,
    }


def test_a_delivery_of_a_missing_alert_is_refused_with_its_statement(engine: Engine) -> None:
    ids = outbox.queue_alerts(engine, [_alert(0)], NOW)  # one alert, slack and email
    missing = ids[0] + 1000
    refused = pytest.raises(DBAPIError, match="alert_id is not in alert_outbox")
    with refused, engine.begin() as conn:  # one statement: a good row and an orphan
        conn.execute(insert(outbox.AlertDelivery), [_delivery(ids[0], "pager"), _delivery(missing)])
    assert _deliveries(engine) == [(ids[0], "email"), (ids[0], "slack")]


def test_the_postgres_error_is_the_foreign_keys(pg_engine: Engine) -> None:
    with pytest.raises(DBAPIError) as raised, pg_engine.begin() as conn:
        conn.execute(insert(outbox.AlertDelivery), [_delivery(12345)])
    assert raised.value.orig.sqlstate == "23503"  # type: ignore[union-attr]
    assert raised.value.orig.diag.constraint_name == (  # type: ignore[union-attr]
        "fk_alert_deliveries_alert_id_alert_outbox"
    )


def test_deleting_alerts_deletes_their_deliveries_only(engine: Engine) -> None:
    ids = outbox.queue_alerts(engine, [_alert(n) for n in range(3)], NOW)
    with engine.begin() as conn:
        conn.execute(delete(outbox.AlertOutbox).where(outbox.AlertOutbox.id.in_(ids[:2])))
    assert _deliveries(engine) == [(ids[2], "email"), (ids[2], "slack")]


def test_a_delivery_cannot_move_to_a_missing_alert_but_its_status_changes(
    engine: Engine,
) -> None:
    ids = outbox.queue_alerts(engine, [_alert(0), _alert(1)], NOW)
    with engine.begin() as conn:  # the sender's updates: untouched by the check
        conn.execute(update(outbox.AlertDelivery).values(status=outbox.DEAD, attempts=3))
        conn.execute(  # to another alert that exists: allowed
            update(outbox.AlertDelivery)
            .where(outbox.AlertDelivery.alert_id == ids[0], outbox.AlertDelivery.channel == "slack")
            .values(channel="pager", alert_id=ids[1])
        )
    refused = pytest.raises(DBAPIError, match="alert_id is not in alert_outbox")
    with refused, engine.begin() as conn:
        conn.execute(
            update(outbox.AlertDelivery)
            .where(outbox.AlertDelivery.alert_id == ids[1])
            .values(alert_id=ids[1] + 1000)
        )
    assert _deliveries(engine) == [
        (ids[0], "email"),
        (ids[1], "email"),
        (ids[1], "pager"),
        (ids[1], "slack"),
    ]


def test_an_alert_named_by_deliveries_keeps_its_id(engine: Engine) -> None:
    ids = outbox.queue_alerts(engine, [_alert(0)], NOW)
    other = outbox.queue_alerts(engine, [_alert(1, channels=())], NOW)
    refused = pytest.raises(DBAPIError, match="cannot change while alert_deliveries name it")
    with refused, engine.begin() as conn:
        conn.execute(
            update(outbox.AlertOutbox)
            .where(outbox.AlertOutbox.id == ids[0])
            .values(id=ids[0] + 1000)
        )
    with engine.begin() as conn:  # an alert no delivery names may
        conn.execute(
            update(outbox.AlertOutbox)
            .where(outbox.AlertOutbox.id == other[0])
            .values(id=other[0] + 1000)
        )
        moved = conn.execute(select(func.max(outbox.AlertOutbox.id))).scalar()
    assert moved == other[0] + 1000
    assert _deliveries(engine) == [(ids[0], "email"), (ids[0], "slack")]
