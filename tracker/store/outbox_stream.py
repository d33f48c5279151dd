"""Postgres: the alert outbox written on its own connection and thread while the
evaluation goes on.

A big run fires tens of thousands of alerts; inserting them (and a delivery each, with
their indexes and foreign key) is most of the database's part of an evaluation. Here
each batch a rule hands over is COPYed into a temporary table and inserted, with its
deliveries, by one statement, on a writer thread, while the next rule is read and its
alerts built (psycopg releases the GIL while it waits on the server). Everything is one
transaction, committed by :meth:`OutboxStream.finish` with the rules' state: an
evaluation that fails (:meth:`OutboxStream.abort`) queues nothing, as before.

Order and dedupe are those of queueing the whole list at once: alerts are inserted in
the order handed over, the first of a dedupe key wins, and a key already in the outbox
is skipped (``ON CONFLICT DO NOTHING``) with its deliveries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine

from tracker.store.errors import database_errors

if TYPE_CHECKING:
    from tracker.store.alerts import NewAlert

__all__ = ["CHUNK", "OutboxStream"]

CHUNK = 5_000
"""Alerts per COPY and insert: small enough that the last rule's alerts (inserted after
everything else is built) are not a long tail, large enough to keep statements few."""

PENDING = "pending"
_COLUMNS = "seq, dedupe_key, rule, kind, subject, title, details, channels"
_QUEUE_SQL = """
WITH queued AS (
    INSERT INTO alert_outbox (dedupe_key, rule, kind, subject, title, details, created_at)
    SELECT dedupe_key, rule, kind, subject, title, CAST(details AS json), %(now)s
    FROM gt_outbox ORDER BY seq
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id, dedupe_key
), delivered AS (
    INSERT INTO alert_deliveries (alert_id, channel, status, attempts, next_attempt_at)
    SELECT queued.id, channel.name, %(pending)s, 0, %(now)s
    FROM queued JOIN gt_outbox USING (dedupe_key)
    CROSS JOIN LATERAL json_array_elements_text(CAST(gt_outbox.channels AS json))
        WITH ORDINALITY AS channel(name, n)
    ORDER BY queued.id, channel.n
)
SELECT id FROM queued ORDER BY id
"""

Row = tuple[int, str, str, str, str, str, str, str]
"""seq, dedupe key, rule, kind, subject, title, details and channels as JSON."""
StateWriter = Callable[[Connection, Mapping[tuple[str, str], str | None], datetime], None]


class OutboxStream:
    """Alerts queued as they are handed over (:meth:`add`), committed by :meth:`finish`."""

    def __init__(self, engine: Engine, now: datetime, write_states: StateWriter) -> None:
        self._engine, self._now, self._write_states = engine, now, write_states
        self._conn: Connection | None = None
        self._seen: set[str] = set()
        self._seq = 0
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gt-outbox")
        self._batches: list[Future[list[int]]] = []
        self._dumps = json.JSONEncoder().encode
        self._channels: dict[tuple[str, ...], str] = {}  # a rule's alerts share theirs

    def add(self, alerts: Iterable[NewAlert]) -> None:
        """Queue ``alerts`` (those whose dedupe key was handed over before are left out)."""
        # Encoded here, on the caller's thread: the writer's is the longer task, and
        # its waits on the server are what overlap the caller's work.
        fresh: list[Row] = []
        dumps, channels = self._dumps, self._channels
        for a in alerts:
            key = a.dedupe_key[:255]
            if key in self._seen:
                continue
            self._seen.add(key)
            to = channels.get(a.channels)
            if to is None:
                to = channels[a.channels] = dumps(list(a.channels))
            details = a.details if isinstance(a.details, dict) else dict(a.details)
            fresh.append(
                (self._seq, key, a.rule, a.kind, a.subject[:255], a.title, dumps(details), to)
            )
            self._seq += 1
        rows = iter(fresh)
        while batch := list(islice(rows, CHUNK)):
            self._batches.append(self._writer.submit(self._insert, batch))

    def finish(self, state: Mapping[tuple[str, str], str | None]) -> list[int]:
        """Wait for the inserts, save ``state`` and commit: the ids queued, ascending.
        Raises :class:`~tracker.store.engine.DatabaseError` (nothing stored)."""
        try:
            with database_errors("cannot queue alerts"):
                queued = [alert_id for batch in self._batches for alert_id in batch.result()]
                conn = self._connection()
                self._write_states(conn, state, self._now)
                conn.commit()
        finally:
            self.abort()
        return queued

    def abort(self) -> None:
        """Stop and roll back whatever was inserted (nothing is committed)."""
        for batch in self._batches:
            batch.cancel()
        self._writer.shutdown(wait=True)
        self._batches = []
        if self._conn is not None:
            self._conn.close()  # rolls back an open transaction
            self._conn = None

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self._engine.connect()
        return self._conn

    def _insert(self, batch: list[Row]) -> list[int]:
        """On the writer thread: one COPY into the staging table and one insert of the
        alerts and their deliveries; the new ids."""
        first = self._conn is None
        conn = self._connection()
        if first:
            # A big run's alerts are sorted and joined in memory, not in temporary files,
            # and the statement's cost estimate (the temporary table has no statistics)
            # must not make the planner compile it (JIT: 0.5 s for 85,000 alerts).
            conn.exec_driver_sql("SET LOCAL work_mem = '128MB'")
            conn.exec_driver_sql("SET LOCAL jit = off")
            conn.exec_driver_sql(
                "CREATE TEMPORARY TABLE gt_outbox (seq bigint, dedupe_key text, rule text, "
                "kind text, subject text, title text, details text, channels text) ON COMMIT DROP"
            )
        else:
            conn.exec_driver_sql("TRUNCATE gt_outbox")
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor() as cur, cur.copy(f"COPY gt_outbox ({_COLUMNS}) FROM STDIN") as copy:
            for row in batch:
                copy.write_row(row)
        params: dict[str, Any] = {"now": self._now, "pending": PENDING}
        return [int(alert_id) for (alert_id,) in conn.exec_driver_sql(_QUEUE_SQL, params).all()]
