"""The alert outbox: alerts, their per-channel deliveries, and the rules' state.

Evaluation and delivery are two steps joined by these tables (the transactional
outbox pattern), so an alert is never lost between "a rule matched" and "Slack
said ok":

* ``alert_outbox``: one row per event, unique on its ``dedupe_key`` (rule, subject,
  event), so evaluating the same run twice queues nothing new;
* ``alert_deliveries``: one row per alert and channel, ``pending`` until the channel
  accepted it (then ``sent``) or it failed ``max_attempts`` times (``dead``);
* ``alert_state``: what a rule remembers between evaluations (cursors over ids,
  thresholds currently crossed), keyed by rule name and subject.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Connection,
    Engine,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Mapped, mapped_column

from tracker.store.errors import database_errors
from tracker.store.outbox._stream import OutboxStream
from tracker.store.schema import Base, BigId
from tracker.store.types import UTCDateTime

__all__ = [
    "DEAD",
    "PENDING",
    "AlertDelivery",
    "AlertOutbox",
    "AlertRow",
    "AlertState",
    "DueDelivery",
    "NewAlert",
    "aware",
    "due_deliveries",
    "existing_keys",
    "last_fired",
    "list_alerts",
    "mark_failed",
    "mark_sent",
    "queue_alerts",
    "read_state",
    "read_states",
    "stream_alerts",
    "write_states",
]

PENDING, SENT, DEAD = "pending", "sent", "dead"


def _key(length: int) -> Any:
    """An identifier compared for equality only: bytewise (``COLLATE "C"``) on Postgres,
    as SQLite compares text, so its indexes make no locale call (migration 0011)."""
    return String(length).with_variant(String(length, collation="C"), "postgresql")


class AlertOutbox(Base):
    __tablename__ = "alert_outbox"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    dedupe_key: Mapped[str] = mapped_column(_key(255))
    rule: Mapped[str] = mapped_column(_key(64))
    kind: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(_key(255))
    """What the event is about (an offer, a profile, a collector): cooldowns count per
    rule and subject."""
    title: Mapped[str] = mapped_column(Text)
    details: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (
        UniqueConstraint("dedupe_key", name="uq_alert_outbox_dedupe_key"),
        Index("ix_alert_outbox_rule_subject", "rule", "subject"),
    )


class AlertDelivery(Base):
    __tablename__ = "alert_deliveries"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    alert_id: Mapped[int] = mapped_column(BigId)
    """The alert's id: it must be in ``alert_outbox``, and deleting the alert deletes
    its deliveries. Kept by triggers (migration 0011), checked per statement on Postgres,
    not a foreign key checked and locking per row."""
    channel: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        UniqueConstraint("alert_id", "channel", name="uq_alert_deliveries_alert_id"),
        Index("ix_alert_deliveries_status_next", "status", "next_attempt_at"),
    )


class AlertState(Base):
    __tablename__ = "alert_state"

    rule: Mapped[str] = mapped_column(String(64), primary_key=True)
    subject: Mapped[str] = mapped_column(String(255), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


@dataclass(frozen=True, slots=True)
class NewAlert:
    dedupe_key: str
    rule: str
    kind: str
    subject: str
    title: str
    details: Mapping[str, Any]
    channels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DueDelivery:
    delivery_id: int
    alert_id: int
    channel: str
    attempts: int
    rule: str
    kind: str
    subject: str
    title: str
    details: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class AlertRow:
    alert_id: int
    rule: str
    kind: str
    title: str
    created_at: datetime
    channel: str | None
    status: str | None
    attempts: int
    last_error: str | None
    sent_at: datetime | None
    next_attempt_at: datetime | None = None
    """When a ``pending`` delivery is tried next (None otherwise)."""
    details: dict[str, Any] | None = None
    """What evaluation stored about the event (what its line is rendered from)."""


def _insert(conn: Connection) -> Any:
    return pg_insert if conn.dialect.name == "postgresql" else sqlite_insert


def queue_alerts(
    engine: Engine,
    alerts: Sequence[NewAlert],
    now: datetime,
    *,
    state: Mapping[tuple[str, str], str | None] | None = None,
) -> list[int]:
    """Queue ``alerts`` and save the rules' ``state`` in one transaction.

    An alert whose dedupe key is already in the outbox is left out (its deliveries
    too); ``state`` maps (rule, subject) to a value, None deleting it. Returns the
    ids of the alerts queued now. Raises :class:`~tracker.store.engine.DatabaseError`
    (nothing stored).
    """
    if engine.dialect.name == "postgresql":
        stream = OutboxStream(engine, now, write_states)
        stream.add(alerts)
        return stream.finish(state or {})
    with database_errors("cannot queue alerts"), engine.begin() as conn:
        # Set-wise: the alerts and their deliveries each in one statement (a big run
        # fires tens of thousands), the state in batches.
        fresh: dict[str, NewAlert] = {}
        for alert in alerts:
            fresh.setdefault(alert.dedupe_key[:255], alert)
        if not fresh:
            queued: list[int] = []
        else:
            queued = _insert_outbox(conn, fresh, now)
        write_states(conn, state or {}, now)
    return queued


def stream_alerts(engine: Engine, now: datetime) -> OutboxStream | None:
    """Postgres: an outbox written while the caller goes on (:meth:`OutboxStream.add`,
    then :meth:`OutboxStream.finish` with the state, or :meth:`OutboxStream.abort`);
    None on SQLite, whose single writer gains nothing from it (:func:`queue_alerts`)."""
    return OutboxStream(engine, now, write_states) if engine.dialect.name == "postgresql" else None


def _insert_outbox(conn: Connection, fresh: Mapping[str, NewAlert], now: datetime) -> list[int]:
    """SQLite (Postgres streams, :mod:`tracker.store.outbox`): the outbox rows in
    one executemany that skips keys already queued (sent as multi-row batches,
    insertmanyvalues), then the new ones' deliveries in another."""
    stmt = (
        _insert(conn)(AlertOutbox)
        .on_conflict_do_nothing(index_elements=["dedupe_key"])
        .returning(AlertOutbox.id, AlertOutbox.dedupe_key)
    )
    rows = [_outbox_row(k, a, now) for k, a in fresh.items()]
    ids = {str(key): int(alert_id) for alert_id, key in conn.execute(stmt, rows)}
    queued, deliveries = [], []
    for key, alert in fresh.items():
        if key not in ids:
            continue  # already in the outbox
        queued.append(ids[key])
        deliveries += [
            {
                "alert_id": ids[key],
                "channel": channel,
                "status": PENDING,
                "attempts": 0,
                "next_attempt_at": now,
            }
            for channel in alert.channels
        ]
    if deliveries:
        conn.execute(insert(AlertDelivery), deliveries)
    return queued


QUEUE_BATCH = 500
"""Subjects per DELETE of the rules' state."""


def _outbox_row(key: str, alert: NewAlert, now: datetime) -> dict[str, Any]:
    return {
        "dedupe_key": key,
        "rule": alert.rule,
        "kind": alert.kind,
        "subject": alert.subject[:255],
        "title": alert.title,
        "details": dict(alert.details),
        "created_at": now,
    }


def write_states(
    conn: Connection, state: Mapping[tuple[str, str], str | None], now: datetime
) -> None:
    """Every (rule, subject) state: deleted where None, else upserted, in batches."""
    gone = [(rule, subject) for (rule, subject), value in state.items() if value is None]
    for rule in {r for r, _ in gone}:
        subjects = [s for r, s in gone if r == rule]
        for i in range(0, len(subjects), QUEUE_BATCH):
            conn.execute(
                delete(AlertState).where(
                    AlertState.rule == rule, AlertState.subject.in_(subjects[i : i + QUEUE_BATCH])
                )
            )
    kept: dict[tuple[str, str], str] = {}
    for (rule, subject), value in state.items():
        if value is not None:
            kept[(rule, subject[:255])] = value
    rows = [{"rule": r, "subject": s, "value": v, "updated_at": now} for (r, s), v in kept.items()]
    if rows:
        stmt = _insert(conn)(AlertState)
        upsert = stmt.on_conflict_do_update(
            index_elements=["rule", "subject"],
            set_={"value": stmt.excluded.value, "updated_at": stmt.excluded.updated_at},
        )
        conn.execute(upsert, rows)


def read_state(engine: Engine, rule: str) -> dict[str, str]:
    """Everything ``rule`` remembers, by subject."""
    with database_errors("cannot read alert state"), engine.connect() as conn:
        rows = conn.execute(
            select(AlertState.subject, AlertState.value).where(AlertState.rule == rule)
        ).all()
    return {subject: value for subject, value in rows}


def read_states(engine: Engine, rules: Sequence[str]) -> dict[str, dict[str, str]]:
    """Everything each of ``rules`` remembers, by rule then subject, in one read."""
    found: dict[str, dict[str, str]] = {rule: {} for rule in rules}
    with database_errors("cannot read alert state"), engine.connect() as conn:
        rows = conn.execute(
            select(AlertState.rule, AlertState.subject, AlertState.value).where(
                AlertState.rule.in_(sorted(found))
            )
        ).all()
    for rule, subject, value in rows:
        found[rule][subject] = value
    return found


def last_fired(engine: Engine, rule: str, subjects: Iterable[str]) -> dict[str, datetime]:
    """When ``rule`` last queued an alert about each of ``subjects`` (cooldowns)."""
    wanted = sorted(set(subjects))
    found: dict[str, datetime] = {}
    with database_errors("cannot read alert history"), engine.connect() as conn:
        for start in range(0, len(wanted), 500):
            rows = conn.execute(
                select(AlertOutbox.subject, func.max(AlertOutbox.created_at))
                .where(
                    AlertOutbox.rule == rule, AlertOutbox.subject.in_(wanted[start : start + 500])
                )
                .group_by(AlertOutbox.subject)
            ).all()
            for subject, at in rows:
                found[subject] = aware(at)
    return found


def aware(value: Any) -> datetime:
    from tracker.store.types import aggregate_datetime  # max() skips the column type

    result = aggregate_datetime(value)
    assert result is not None
    return result


def _due_select(now: datetime, channel: str | None) -> Any:
    stmt = (
        select(
            AlertDelivery.id,
            AlertDelivery.alert_id,
            AlertDelivery.channel,
            AlertDelivery.attempts,
            AlertOutbox.rule,
            AlertOutbox.kind,
            AlertOutbox.subject,
            AlertOutbox.title,
            AlertOutbox.details,
            AlertOutbox.created_at,
        )
        .join(AlertOutbox, AlertOutbox.id == AlertDelivery.alert_id)
        .where(AlertDelivery.status == PENDING, AlertDelivery.next_attempt_at <= now)
        .order_by(AlertDelivery.channel, AlertDelivery.alert_id)
    )
    return stmt if channel is None else stmt.where(AlertDelivery.channel == channel)


def due_deliveries(engine: Engine, now: datetime, channel: str | None = None) -> list[DueDelivery]:
    """Pending deliveries whose next attempt is due, by channel then alert id."""
    with database_errors("cannot read the alert outbox"), engine.connect() as conn:
        return [DueDelivery(*row) for row in conn.execute(_due_select(now, channel))]


def mark_sent(engine: Engine, delivery_ids: Sequence[int], now: datetime) -> None:
    """The channel accepted these deliveries (call only after it did)."""
    with database_errors("cannot mark alerts sent"), engine.begin() as conn:
        for start in range(0, len(delivery_ids), 500):
            conn.execute(
                update(AlertDelivery)
                .where(AlertDelivery.id.in_(list(delivery_ids[start : start + 500])))
                .values(
                    status=SENT,
                    sent_at=now,
                    attempts=AlertDelivery.attempts + 1,
                    last_error=None,
                )
            )


def mark_failed(
    engine: Engine,
    deliveries: Sequence[tuple[int, int]],
    error: str,
    next_attempt_at: datetime | None,
) -> None:
    """One more failed attempt of each (delivery id, attempts before it).

    ``next_attempt_at`` None marks them ``dead``: no further attempt.
    """
    status = PENDING if next_attempt_at is not None else DEAD
    with database_errors("cannot record an alert failure"), engine.begin() as conn:
        for delivery_id, attempts in deliveries:
            values: dict[str, Any] = {
                "status": status,
                "attempts": attempts + 1,
                "last_error": error,
            }
            if next_attempt_at is not None:
                values["next_attempt_at"] = next_attempt_at
            conn.execute(
                update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(**values)
            )


def list_alerts(
    engine: Engine, *, since: datetime | None = None, failed: bool = False, limit: int = 200
) -> list[AlertRow]:
    """Alerts newest first, one row per channel delivery (an alert without a channel
    once); ``failed``: only dead deliveries."""
    stmt = (
        select(
            AlertOutbox.id,
            AlertOutbox.rule,
            AlertOutbox.kind,
            AlertOutbox.title,
            AlertOutbox.created_at,
            AlertDelivery.channel,
            AlertDelivery.status,
            AlertDelivery.attempts,
            AlertDelivery.last_error,
            AlertDelivery.sent_at,
            AlertDelivery.next_attempt_at,
            AlertOutbox.details,
        )
        .outerjoin(AlertDelivery, AlertDelivery.alert_id == AlertOutbox.id)
        .order_by(AlertOutbox.id.desc(), AlertDelivery.channel)
        .limit(limit)
    )
    if since is not None:
        stmt = stmt.where(AlertOutbox.created_at >= since)
    if failed:
        stmt = stmt.where(AlertDelivery.status == DEAD)
    with database_errors("cannot list alerts"), engine.connect() as conn:
        return [
            AlertRow(
                *r[:7],
                r[7] or 0,
                r[8],
                r[9],
                r[10] if r[6] == PENDING else None,
                r[11],
            )
            for r in conn.execute(stmt)
        ]


def existing_keys(engine: Engine, keys: Iterable[str]) -> set[str]:
    """Which of ``keys`` are already in the outbox (a re-scanned event)."""
    wanted = sorted({k[:255] for k in keys})
    found: set[str] = set()
    with database_errors("cannot read the alert outbox"), engine.connect() as conn:
        for start in range(0, len(wanted), 500):
            found.update(
                conn.execute(
                    select(AlertOutbox.dedupe_key).where(
                        AlertOutbox.dedupe_key.in_(wanted[start : start + 500])
                    )
                ).scalars()
            )
    return found
