"""Postgres: the alert outbox written on its own connection and thread while the
evaluation goes on.

A big run fires tens of thousands of alerts; inserting them (and a delivery each, with
their indexes) is most of the database's part of an evaluation. Here each batch a rule
hands over is written on a writer thread, while the next rule is read and its alerts
built (psycopg releases the GIL while it waits on the server): the new alerts' ids drawn
from their sequence, and the alerts and their deliveries COPYed into their tables (COPY
inserts in bulk; an ``INSERT … ON CONFLICT … RETURNING`` through a staging table cost
twice as much). Alerts built in Python (:meth:`OutboxStream.add`) have the keys already
queued looked up first, in one statement per batch; alerts rendered by the store
(:meth:`OutboxStream.add_copied`) come as COPY text lines whose keys the rendering
checked, and are written on as they are. Everything is one transaction, committed by
:meth:`OutboxStream.finish` with the rules' state: an evaluation that fails
(:meth:`OutboxStream.abort`) queues nothing.

Order and dedupe are those of queueing the whole list at once: alerts are inserted in
the order handed over (ids ascending), the first of a dedupe key wins, and a key already
in the outbox is skipped with its deliveries. Evaluations on one database take turns (a
transaction-level advisory lock: :meth:`OutboxStream.take_turn` at an evaluation's
start, or before the first batch), so a key another evaluation queues is committed
before this one looks for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from psycopg import Cursor
from psycopg.abc import Buffer
from sqlalchemy import Connection, Engine

from tracker.store.errors import database_errors
from tracker.store.locks import lock_key

if TYPE_CHECKING:
    from tracker.store.outbox._tables import NewAlert

__all__ = ["CHUNK", "OutboxStream"]

CHUNK = 5_000
"""Alerts per batch: small enough that the last rule's alerts (inserted after
everything else is built) are not a long tail, large enough to keep statements few."""

PENDING = "pending"
_EXISTING = (
    "SELECT dedupe_key FROM alert_outbox "
    "WHERE dedupe_key IN (SELECT json_array_elements_text(CAST(%(keys)s AS json)))"
)
_IDS = (
    # the sequence looked up once (OFFSET 0 keeps the planner from folding the look-up
    # into every row: pg_get_serial_sequence per row took 0.25 s for 85,742 ids, 0.06 s so)
    "SELECT nextval(seq) FROM (SELECT CAST(pg_get_serial_sequence('alert_outbox', 'id') "
    "AS regclass) AS seq OFFSET 0) s, generate_series(1, %(n)s) ORDER BY 1"
)
_ALERTS = (
    "COPY alert_outbox (id, dedupe_key, rule, kind, subject, title, details, created_at) FROM STDIN"
)
_DELIVERIES = (
    "COPY alert_deliveries (alert_id, channel, status, attempts, next_attempt_at) FROM STDIN"
)

Row = tuple[str, str, str, str, str, str, tuple[str, ...]]
"""Dedupe key, rule, kind, subject, title, details as JSON, channels."""
StateWriter = Callable[[Connection, Mapping[tuple[str, str], str | None], datetime], None]
_TURN = lock_key("store: alert evaluation")


class OutboxStream:
    """Alerts queued as they are handed over (:meth:`add`), committed by :meth:`finish`."""

    def __init__(self, engine: Engine, now: datetime, write_states: StateWriter) -> None:
        self._engine, self._now, self._write_states = engine, now, write_states
        self._conn: Connection | None = None
        self._seen: set[str] = set()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gt-outbox")
        self._batches: list[Future[list[int]]] = []
        self._dumps = json.JSONEncoder().encode

    def add(self, alerts: Iterable[NewAlert]) -> None:
        """Queue ``alerts`` (those whose dedupe key was handed over before are left out)."""
        # Encoded here, on the caller's thread: the writer's is the longer task, and
        # its waits on the server are what overlap the caller's work.
        fresh: list[Row] = []
        dumps = self._dumps
        for a in alerts:
            key = a.dedupe_key[:255]
            if key in self._seen:
                continue
            self._seen.add(key)
            details = a.details if isinstance(a.details, dict) else dict(a.details)
            fresh.append(
                (key, a.rule, a.kind, a.subject[:255], a.title, dumps(details), tuple(a.channels))
            )
        self._submit(fresh)

    def add_copied(self, channels: Sequence[str], lines: Sequence[Buffer]) -> None:
        """Queue alerts rendered by the store (:mod:`tracker.store.outbox`) as
        lines of COPY text: each the outbox's columns after the id, its key not queued
        before (the rendering looked) and its own (no other rule makes it). They are
        written on as they are, their ids put in front: no row is decoded here."""
        to = tuple(channels)
        for start in range(0, len(lines), CHUNK):
            batch = lines[start : start + CHUNK]
            self._batches.append(self._writer.submit(self._insert_copied, to, batch))

    def _submit(self, fresh: list[Row]) -> None:
        rows = iter(fresh)
        while batch := list(islice(rows, CHUNK)):
            self._batches.append(self._writer.submit(self._insert, batch))

    def take_turn(self) -> None:
        """Wait for this evaluation's turn (the lock :meth:`_prepared` takes), for a
        caller that reads what it evaluates after it: then every alert an evaluation
        before it queued is committed, and its reads see them. Raises
        :class:`~tracker.store.engine.DatabaseError`."""
        with database_errors("cannot queue alerts"):
            self._writer.submit(self._prepared).result()

    def finish(self, state: Mapping[tuple[str, str], str | None]) -> list[int]:
        """Wait for the inserts, save ``state`` and commit: the ids queued, ascending.
        Raises :class:`~tracker.store.engine.DatabaseError` (nothing stored)."""
        try:
            with database_errors("cannot queue alerts"):
                queued = [alert_id for batch in self._batches for alert_id in batch.result()]
                conn = self._prepared()
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

    def _prepared(self) -> Connection:
        """On the writer thread: the transaction's connection, this evaluation's turn taken."""
        if self._conn is None:
            conn = self._conn = self._engine.connect()
            # Another evaluation's alerts are committed (and seen by the look-ups) before
            # this one's first batch is written.
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%(k)s)", {"k": _TURN})
        return self._conn

    def _insert(self, batch: list[Row]) -> list[int]:
        """On the writer thread: the batch's alerts not queued before and their
        deliveries, COPYed; the new ids."""
        raw = self._prepared().connection.driver_connection
        assert raw is not None
        now = self._now
        with raw.cursor() as cur:
            # keys as one JSON text: psycopg adapts a list of 5,000 strings in Python
            keys = self._dumps([r[0] for r in batch])
            queued = {key for (key,) in cur.execute(_EXISTING, {"keys": keys})}
            fresh = [r for r in batch if r[0] not in queued] if queued else batch
            if not fresh:
                return []
            ids = self._ids(cur, len(fresh))
            with cur.copy(_ALERTS) as copy:
                for alert_id, (key, rule, kind, subject, title, details, _) in zip(
                    ids, fresh, strict=True
                ):
                    copy.write_row((alert_id, key, rule, kind, subject, title, details, now))
            self._copy_deliveries(cur, zip(ids, (row[6] for row in fresh), strict=True))
        return ids

    def _insert_copied(self, channels: tuple[str, ...], lines: Sequence[Buffer]) -> list[int]:
        """On the writer thread: :meth:`add_copied`'s lines with their ids drawn, and
        their deliveries; the new ids."""
        raw = self._prepared().connection.driver_connection
        assert raw is not None
        with raw.cursor() as cur:
            ids = self._ids(cur, len(lines))
            heads = [b"%d\t" % i for i in ids]
            with cur.copy(_ALERTS) as copy:
                copy.write(b"".join(chain.from_iterable(zip(heads, lines, strict=True))))
            self._copy_deliveries(cur, ((i, channels) for i in ids))
        return ids

    def _copy_deliveries(
        self, cur: Cursor[Any], alerts: Iterable[tuple[int, tuple[str, ...]]]
    ) -> None:
        """A pending delivery per (alert id, channel), COPYed as text built here: each
        row is the id before the channel's fixed part (``write_row`` per delivery cost
        ~6× the Python time: 0.24 against 0.04 s for 85,742)."""
        tail = b"\t%s\t0\t%s\n" % (PENDING.encode(), self._now.isoformat().encode())
        batch = list(alerts)
        names = {c for _, channels in batch for c in channels}
        rest = {c: b"\t" + _copy_text(c) + tail for c in names}
        with cur.copy(_DELIVERIES) as copy:
            copy.write(b"".join(b"%d%s" % (i, rest[c]) for i, channels in batch for c in channels))

    @staticmethod
    def _ids(cur: Cursor[Any], n: int) -> list[int]:
        """``n`` new alert ids, ascending."""
        return [int(i) for (i,) in cur.execute(_IDS, {"n": n})]


def _copy_text(value: str) -> bytes:
    """``value`` as a field of COPY's text format (its escapes: backslash, tab, newline,
    carriage return)."""
    escaped = value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return escaped.replace("\r", "\\r").encode()
