"""What an operator asks of the alert outbox: the backlog, what waits out a retry, and
requeueing deliveries now (``alerts send``, ``alerts retry``, the backlog gauge).

Kept apart from :mod:`tracker.store.outbox`, which queues and delivers: these read and
requeue only, and never mark anything sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Engine, func, select, update

from tracker.store.errors import database_errors
from tracker.store.outbox._tables import DEAD, PENDING, AlertDelivery, aware

__all__ = ["backlog", "requeue", "waiting"]


def backlog(engine: Engine) -> dict[str, int]:
    """Pending deliveries per channel (the outbox backlog gauge)."""
    with database_errors("cannot read the alert outbox"), engine.connect() as conn:
        rows = conn.execute(
            select(AlertDelivery.channel, func.count())
            .where(AlertDelivery.status == PENDING)
            .group_by(AlertDelivery.channel)
        ).all()
    return {channel: int(n) for channel, n in rows}


def waiting(engine: Engine, now: datetime) -> list[tuple[str, int, datetime]]:
    """Pending deliveries not due yet (waiting out a retry's backoff), per channel:
    (channel, how many, the earliest next attempt)."""
    with database_errors("cannot read the alert outbox"), engine.connect() as conn:
        rows = conn.execute(
            select(AlertDelivery.channel, func.count(), func.min(AlertDelivery.next_attempt_at))
            .where(AlertDelivery.status == PENDING, AlertDelivery.next_attempt_at > now)
            .group_by(AlertDelivery.channel)
            .order_by(AlertDelivery.channel)
        ).all()
    return [(channel, int(n), aware(at)) for channel, n, at in rows]


def requeue(
    engine: Engine, now: datetime, *, dead: bool = False, alert_ids: Sequence[int] = ()
) -> dict[int, int]:
    """Make deliveries due ``now``: the pending ones waiting for a retry, and with
    ``dead`` the dead ones too (back to pending, their attempts kept, so one more
    failure makes them dead again). Sent deliveries are never touched (each alert is
    still delivered at most once per channel). ``alert_ids`` narrows it to those
    alerts. Returns how many deliveries were requeued per alert id."""
    statuses = [PENDING, DEAD] if dead else [PENDING]
    cond = AlertDelivery.status.in_(statuses)
    with database_errors("cannot requeue alerts"), engine.begin() as conn:
        found: dict[int, int] = {}
        ids = list(alert_ids)
        chunks = [ids[i : i + 500] for i in range(0, len(ids), 500)] if ids else [None]
        for chunk in chunks:
            where = cond if chunk is None else cond & AlertDelivery.alert_id.in_(chunk)
            for (alert_id,) in conn.execute(select(AlertDelivery.alert_id).where(where)):
                found[int(alert_id)] = found.get(int(alert_id), 0) + 1
            conn.execute(
                update(AlertDelivery).where(where).values(status=PENDING, next_attempt_at=now)
            )
    return found
