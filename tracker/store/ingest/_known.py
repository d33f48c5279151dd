"""Compact staging for the offers of series a run's source already lists.

Almost every offer of a re-collection belongs to a series its source already lists,
at an unchanged price. Staging each as a full row (eight identity texts, nine hardware
facts) and joining it back to ``series`` costs as much as a raw COPY of the run. So
the ingest loads, once per run, the identity hashes of the source's listed series,
and stages an offer whose hash is among them as a compact row of ``gt_known``: its
identity hash, a per-run number for its hardware facts (each distinct set of facts
is staged once, in ``gt_hardware``), its price and currency, and its own time if it
has one. Every other offer (new, another source's, delisted, reporting availability)
is staged in full in ``gt_incoming`` as before.

Matching on the hash alone is sound here because the hash comes from a stored
series: the offer's identity was verified against the full identity when that series
was created, so a compact row is a new identity only if that identity's 64-bit hash
equals one of the listed series' hashes, about ``listed / 2**64`` per never-seen
identity (5e-14 at a million series). A first sighting is staged in full and checked.

The compact rows are joined to their series and open interval in SQL, where the ones
that need nothing (same price, same hardware, same source, still listed) stay out of
the run's observation table (``gt_obs``). A run that needs every observation there
(an identity reported twice, a possibly stale observation) gets them all
(:meth:`KnownSeries.to_incoming`, or no filter).

The join runs per chunk of :data:`CHUNK_ROWS` rows, as each chunk is written, and
the chunk's plain price changes (:data:`_PLAIN`: a new price and nothing else) are
applied there and then: the open interval closes, the new price opens. The rest of
what the join found goes to ``gt_changed``, for the end of the run. On Postgres all of
it is sent in a psycopg pipeline and runs on the server while Python stages the next
chunk (a run is one Python thread, so this is how it gets the second core); only the
last chunk is waited for. Each chunk sees its series as they were when the run began:
its series are its own (a run stops staging compact at the first identity it meets
twice, and then takes the chunks' changes back, :meth:`KnownSeries.undo`, to apply
every observation in time order), and the run's other writes come after the last chunk.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager, suppress
from decimal import Decimal
from operator import attrgetter
from typing import Any

from sqlalchemy import Connection, text

from tracker.models import STORED_OFFER_COLUMNS as OFFER_COLUMNS
from tracker.models import Availability, ColumnGroup, ColumnKind, Offer
from tracker.store import last_seen as seen
from tracker.store.ingest._confirm import Outside
from tracker.store.schema import HARDWARE_COLUMNS
from tracker.store.staging import (
    COPY_TYPE,
    attributes_json,
    hardware_differs,
    hardware_values,
    money_text,
    open_intervals,
    store_row,
    temp_table,
)

__all__ = [
    "CHUNK_ROWS",
    "FLUSH_ROWS",
    "KNOWN_TABLES",
    "MAX_CHUNKS",
    "Copy",
    "KnownSeries",
    "chunk_rows",
]

FLUSH_ROWS = 10_000
"""Full rows buffered before they are written to a staging table."""

CHUNK_ROWS = 50_000
"""Compact rows per chunk, about: each chunk is written, then joined and applied while
the run stages the next one. Long enough for that to finish first and for each chunk's
scans of ``series`` and ``price_points`` to pay off (:func:`chunk_rows` sizes a run's)."""


MAX_CHUNKS = 8
"""Full chunks per run at most: each chunk's join scans ``series`` and the open intervals
once, so with a fixed chunk size a larger source would cost the database its size times
its chunk count (at 1,000,000 offers, 20 chunks of 50,000 left Python waiting)."""


def chunk_rows(listed: int) -> int:
    """Rows per chunk for a run whose source lists ``listed`` series (a re-collection sees
    about as many compact rows): about :data:`CHUNK_ROWS`, at most :data:`MAX_CHUNKS` of
    them, sized so that the last chunk, the one the run waits for, is half the others. At
    200,000 that wait went from 0.26 to 0.17 s, plus 0.03 s for the chunk before it.
    Halving every chunk towards the end measured no faster: small chunks probe both tables
    row by row, so each costs more than it saves."""
    if listed <= 0:
        return CHUNK_ROWS
    chunks = min(MAX_CHUNKS, max(1, round(listed / CHUNK_ROWS)))
    return math.ceil(listed / (chunks + 0.5))


Copy = Callable[[str, tuple[str, ...], list[tuple[Any, ...]], list[str]], None]
"""Writes rows into a staging table: (table, columns, rows, Postgres COPY types)."""

KNOWN_TABLES = (
    "gt_known",
    "gt_chunk",
    "gt_chunk_obs",
    "gt_changed",
    "gt_applied",
    "gt_hardware",
)

_UNKNOWN = Availability.UNKNOWN
_HEAD_KINDS = (ColumnKind.TEXT, ColumnKind.CHOICE, ColumnKind.FLAG)
_HARDWARE = [c for c in OFFER_COLUMNS if c.group is ColumnGroup.HARDWARE]
_HARDWARE_POSITIONS = tuple(OFFER_COLUMNS.index(c) for c in _HARDWARE)
_HARDWARE_HEAD = attrgetter("instance_type", *(c.name for c in _HARDWARE if c.kind in _HEAD_KINDS))
_HARDWARE_NUMBERS = attrgetter(*(c.name for c in _HARDWARE if c.kind is ColumnKind.NUMBER))
"""An offer's hardware facts, looked up in two steps (one call per offer of every run):
by the instance type and the texts, which hash cheaply, then by the numbers, compared
(a Decimal's hash is computed anew on every call; equality is a few comparisons)."""


class KnownSeries:
    """One run's compact staging (see the module docstring), on the run's connection."""

    def __init__(
        self,
        conn: Connection,
        *,
        source: str,
        run_time: Any,
        sqlite: bool,
        columns: dict[str, str],
        copy: Copy,
    ) -> None:
        """``columns``: the staging tables' column definitions, by name (gt_incoming's);
        ``run_time`` in the form the ingest binds times."""
        self.conn = conn
        self.sqlite = sqlite
        self._copy = copy
        self._params = {"source": source, "run_time": run_time}
        self._pipeline: AbstractContextManager[Any] | None = None
        """The entered psycopg pipeline a chunk's join was sent in (Postgres), or None."""
        self.hashes = self._listed(source)
        """Identity hashes of the source's listed series: an offer among them is staged
        compact. Empty when the source keeps availability (those runs stage in full)."""
        self.count = 0
        """Compact rows written (:meth:`flush` first)."""
        self._chunk = chunk_rows(len(self.hashes))
        self._rows: list[tuple[Any, ...]] = []
        self._hardware_rows: list[tuple[Any, ...]] = []
        self._hardware: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], int]]] = {}
        self._hardware_ids: dict[tuple[Any, ...], int] = {}
        known = ", ".join(columns[c] for c in _KNOWN_COLUMNS)
        hardware = ", ".join(columns[c] for c in _HARDWARE_COLUMNS)
        for table in ("gt_known", "gt_chunk"):
            conn.exec_driver_sql(temp_table(table, sqlite=sqlite, columns=known))
        conn.exec_driver_sql(temp_table("gt_hardware", sqlite=sqlite, columns=hardware))
        joined = self._joined("gt_chunk", seen_last=True)
        for table, cols in (("gt_chunk_obs", _CHUNK_OBS), ("gt_changed", _OBS)):
            sql = f"SELECT {cols} FROM ({joined}) o WHERE 1 = 0"
            conn.execute(text(temp_table(table, sqlite=sqlite) + sql), self._params)
        conn.exec_driver_sql(
            temp_table("gt_applied", sqlite=sqlite)
            + "SELECT series_id, point_id, stored_last_seen FROM gt_changed WHERE 1 = 0"
        )

    def _listed(self, source: str) -> set[int]:
        # A source with an open availability interval stages in full: the availability
        # write (tracker.store.series) reads the full staging table.
        keeps_availability = self.conn.execute(
            text(
                "SELECT 1 FROM availability_points a JOIN series s ON s.id = a.series_id "
                "WHERE a.ended_at IS NULL AND s.source = :source LIMIT 1"
            ),
            {"source": source},
        ).first()
        if keeps_availability:
            return set()
        if self.sqlite:
            listed = (
                "SELECT identity_hash FROM series WHERE source = :source AND delisted_at IS NULL"
            )
            return set(self.conn.execute(text(listed), {"source": source}).scalars())
        # One array, not a row per series (200,000 rows through a result cost ~0.2 s),
        # in binary: 0.037 s against 0.058 s as text at 200,000.
        raw = self.conn.connection.driver_connection
        assert raw is not None
        with raw.cursor(binary=True) as cur:
            row = cur.execute(
                "SELECT array_agg(identity_hash) FROM series "
                "WHERE source = %(source)s AND delisted_at IS NULL",
                {"source": source},
            ).fetchone()
        return set(row[0] or ()) if row else set()

    def stage(self, seq: int, key: int, offer: Offer, observed: Any) -> bool:
        """Stage ``offer`` (identity hash ``key``; ``observed``: its own time in staging
        form, or None) compact if it can be; returns whether it was."""
        if key not in self.hashes or offer.availability is not _UNKNOWN:
            return False
        hw = self._hardware_id(offer)
        price: Decimal | str | None = offer.price_per_hour
        if self.sqlite:
            price = money_text(offer.price_per_hour)
        rows = self._rows
        rows.append((seq, key, hw, price, offer.currency, observed))
        if len(rows) >= self._chunk:
            self.flush()
        return True

    def _hardware_id(self, offer: Offer) -> int:
        """The run's number for ``offer``'s hardware facts (staged once per number)."""
        attributes = offer.attributes
        # The attributes as the store writes them: equal values of another type
        # (1 and True, 1 and 1.0) are different facts.
        head = (_HARDWARE_HEAD(offer), attributes_json(attributes) if attributes else None)
        numbers = _HARDWARE_NUMBERS(offer)
        seen = self._hardware.get(head)
        if seen is None:
            seen = self._hardware[head] = []
        for known, hw in seen:  # one entry, unless an instance type's facts vary
            if known == numbers:
                return hw
        facts = (head[0][1:], head[1], numbers)  # the same facts under another type
        hw = self._hardware_ids.get(facts, 0)
        if not hw:
            hw = self._hardware_ids[facts] = len(self._hardware_ids) + 1
            row = store_row(offer, sqlite=self.sqlite)
            self._hardware_rows.append((hw, *(row[i] for i in _HARDWARE_POSITIONS)))
        seen.append((numbers, hw))
        return hw

    def flush(self, *, apply: bool = True) -> None:
        """Write the buffered rows as one chunk (through the ingest's COPY/insert helper).
        With ``apply`` (a run that has reported each identity once so far), join the chunk
        to its series and apply its plain price changes (:data:`_PLAIN`); on Postgres this
        runs while the run stages the next chunk."""
        if not self._rows and not self._hardware_rows:
            return
        self.settle()
        if self._hardware_rows:
            rows, self._hardware_rows = self._hardware_rows, []
            self._copy("gt_hardware", _HARDWARE_COLUMNS, rows, _HARDWARE_TYPES)
        if not self._rows:
            return
        rows, self._rows = self._rows, []
        self.count += len(rows)
        if not apply:  # the run needs every observation: joined at the end (to_incoming)
            self._copy("gt_known", _KNOWN_COLUMNS, rows, _KNOWN_TYPES)
            return
        self._copy("gt_chunk", _KNOWN_COLUMNS, rows, _KNOWN_TYPES)
        empty = "DELETE FROM" if self.sqlite else "TRUNCATE"
        self._send(
            f"INSERT INTO gt_chunk_obs ({_CHUNK_OBS}) SELECT {_CHUNK_OBS} "
            f"FROM ({self._joined('gt_chunk', seen_last=True)}) o WHERE {' OR '.join(_CHANGES)}"
        )
        self._send("INSERT INTO gt_known SELECT * FROM gt_chunk")
        self._send(f"{empty} gt_chunk")
        # Plain price changes: the interval closes at its last sighting (as readers answer
        # it, which is what tracker.store.ingest writes when it closes one), the new opens.
        self._send(
            "UPDATE price_points AS p SET ended_at = o.observed_at, last_seen = o.seen_last "
            f"FROM gt_chunk_obs AS o WHERE p.id = o.point_id AND {_PLAIN}"
        )
        self._send(open_intervals("gt_chunk_obs", _PLAIN))
        self._send(
            "INSERT INTO gt_applied (series_id, point_id, stored_last_seen) "
            f"SELECT o.series_id, o.point_id, o.stored_last_seen FROM gt_chunk_obs AS o "
            f"WHERE {_PLAIN}"
        )
        self._send(
            f"INSERT INTO gt_changed ({_OBS}) SELECT {_OBS} FROM gt_chunk_obs AS o "
            f"WHERE NOT ({_PLAIN})"
        )
        self._send(f"{empty} gt_chunk_obs")

    def _send(self, sql: str) -> None:
        """Run ``sql`` (with the run's parameters); on Postgres, sent in a pipeline that
        :meth:`settle` waits for, so the server works while Python goes on."""
        if self.sqlite:
            self.conn.execute(text(sql), self._params)
            return
        raw = self.conn.connection.driver_connection
        assert raw is not None
        if self._pipeline is None:
            self._pipeline = raw.pipeline()
            self._pipeline.__enter__()
        compiled = text(sql).compile(dialect=self.conn.dialect)
        raw.execute(str(compiled), compiled.construct_params(self._params))

    def settle(self) -> None:
        """Wait for the statements :meth:`_send` sent (raising their error, if any): before
        anything else uses the connection."""
        if self._pipeline is not None:
            pipeline, self._pipeline = self._pipeline, None
            pipeline.__exit__(None, None, None)

    def abandon(self) -> None:
        """Leave pipeline mode without raising (the run is failing for another reason)."""
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is not None:
            with suppress(Exception):
                pipeline.__exit__(None, None, None)

    def release(self) -> None:
        """Drop the run's in-memory staging (the listed hashes: 20,000 ints at 20,000
        series); the temporary tables go with the transaction."""
        self.hashes = set()
        self._rows = []
        self._hardware_rows = []
        self._hardware = {}
        self._hardware_ids = {}

    # -- SQL over the staged rows ------------------------------------------------------

    def _joined(self, table: str, *, seen_last: bool = False) -> str:
        """FROM/SELECT of every compact row of ``table`` with its series, hardware and open
        interval, as the columns ``gt_obs`` holds (plus ``delisted_at``), named as there;
        with ``seen_last``, also the open interval's last sighting as readers answer it
        (tracker.store.last_seen)."""
        last = conf = ""
        if seen_last:
            last = f", {seen.joined_last_seen_sql('p')} AS seen_last"
            conf = f" {seen.confirmation_join_sql('s')}"
        return (
            "SELECT s.id AS series_id, COALESCE(k.observed_at, :run_time) AS observed_at, "
            "k.price, k.currency, s.region, s.pricing, 1 AS rn, "
            f"({hardware_differs('s', 'h')}) AS hw_changed, "
            "(s.source <> :source) AS took_over, FALSE AS collides, s.source, "
            "p.id AS point_id, p.last_seen AS stored_last_seen, "
            f"(p.price = k.price AND p.currency = k.currency) AS same_price, s.delisted_at{last} "
            f"FROM {table} k JOIN series s ON s.identity_hash = k.identity_hash "
            "JOIN gt_hardware h ON h.hw_id = k.hw_id LEFT JOIN price_points p "
            f"ON p.series_id = s.id AND p.ended_at IS NULL{conf}"
        )

    def observe(self, *, outside: Outside, all_rows: bool) -> int:
        """Add to ``gt_obs`` the compact rows that change something, but for the price
        changes the chunks applied: a new price or hardware, a series taken over or
        relisted, a sighting to write (``outside`` the confirmed scopes) or no newer than
        the stored one; every row if ``all_rows``. Returns how many."""
        if outside is None and not all_rows:  # what the chunks' joins kept
            sql = f"INSERT INTO gt_obs ({_OBS}) SELECT {_OBS} FROM gt_changed"
            return self.conn.execute(text(sql)).rowcount
        wanted = list(_CHANGES)
        params = dict(self._params)
        if outside is not None:
            wanted.append(outside[0])
            params.update(outside[1])
        where = "" if all_rows else f" AND ({' OR '.join(wanted)})"
        if self.count_applied():  # done by chunk: not observed twice
            where += " AND o.series_id NOT IN (SELECT series_id FROM gt_applied)"
        sql = (
            f"INSERT INTO gt_obs ({_OBS}) SELECT {_OBS} FROM ({self._joined('gt_known')}) o "
            f"WHERE TRUE{where}"
        )
        return self.conn.execute(text(sql), params).rowcount

    def count_applied(self) -> int:
        """Settle, then the number of price changes the chunks applied."""
        self.settle()
        return int(self.conn.execute(text("SELECT COUNT(*) FROM gt_applied")).scalar() or 0)

    def undo(self) -> None:
        """Take back the chunks' price changes, for a run that reported an identity twice
        (its observations of a series are then applied together, in time order): the
        opened intervals go, the closed ones reopen with their stored ``last_seen``."""
        if not self.count_applied():
            return
        applied = "SELECT series_id FROM gt_applied"
        self.conn.exec_driver_sql(
            f"DELETE FROM price_points WHERE ended_at IS NULL AND series_id IN ({applied})"
        )
        self.conn.exec_driver_sql(
            "UPDATE price_points SET ended_at = NULL, last_seen = (SELECT a.stored_last_seen "
            "FROM gt_applied a WHERE a.point_id = price_points.id) "
            "WHERE id IN (SELECT point_id FROM gt_applied)"
        )
        self.conn.exec_driver_sql("DELETE FROM gt_applied")

    def to_incoming(self, run_time: Any) -> int:
        """Move the compact rows into ``gt_incoming`` as full rows (their identity from
        the series, their hardware from ``gt_hardware``): for a run that needs them all."""
        if not self.count:
            return 0
        values = []
        for c in OFFER_COLUMNS:
            if c.group is ColumnGroup.IDENTITY:
                values.append(f"s.{c.column}")
            elif c.group is ColumnGroup.HARDWARE:
                values.append(f"h.{c.column}")
            elif c.group is ColumnGroup.AVAILABILITY:
                values.append(f"'{_UNKNOWN.value}'")
            else:
                values.append(f"k.{c.column}")
        names = ", ".join(c.column for c in OFFER_COLUMNS)
        moved = self.conn.execute(
            text(
                f"INSERT INTO gt_incoming (seq, {names}, observed_at, identity_hash) "
                f"SELECT k.seq, {', '.join(values)}, COALESCE(k.observed_at, :run_time), "
                "k.identity_hash FROM gt_known k JOIN series s "
                "ON s.identity_hash = k.identity_hash JOIN gt_hardware h ON h.hw_id = k.hw_id"
            ),
            {"run_time": run_time},
        ).rowcount
        self.conn.exec_driver_sql("DELETE FROM gt_known")
        self.count = 0
        return moved

    def update_hardware(self, source: str) -> None:
        """Bring the hardware facts (and source) of the compact rows' series that
        ``gt_obs`` marks changed or taken over up to date."""
        values = hardware_values("h", self.sqlite)
        sets = ", ".join(f"{c} = {v}" for c, v in zip(HARDWARE_COLUMNS, values, strict=True))
        self.conn.execute(
            text(
                f"UPDATE series AS s SET {sets}, source = :source FROM gt_known k "
                "JOIN gt_hardware h ON h.hw_id = k.hw_id WHERE s.identity_hash = k.identity_hash "
                "AND s.id IN (SELECT series_id FROM gt_obs WHERE hw_changed OR took_over)"
            ),
            {"source": source},
        )

    def seen_ids(self) -> str:
        """SELECT of the series ids of every compact row."""
        return "SELECT s.id FROM gt_known k JOIN series s ON s.identity_hash = k.identity_hash"


_OBS = (
    "series_id, observed_at, price, currency, region, pricing, rn, hw_changed, "
    "took_over, collides, source, point_id, stored_last_seen, same_price"
)
"""The columns of ``gt_obs`` a compact row fills."""
_CHANGES = (
    "o.same_price IS NOT TRUE",
    "o.hw_changed",
    "o.took_over",
    "o.delisted_at IS NOT NULL",
    "o.stored_last_seen >= o.observed_at",
)
"""A compact row changes something whatever the run's scopes: a new price or hardware,
a series taken over or relisted, a sighting no newer than the stored one."""
_PLAIN = (
    "o.point_id IS NOT NULL AND NOT o.same_price AND NOT o.hw_changed AND NOT o.took_over "
    "AND o.delisted_at IS NULL AND o.seen_last < o.observed_at"
)
"""A plain price change over ``gt_chunk_obs o``: the series' open interval ends and a new
price opens, nothing else about the series changes, and the sighting is newer than the
last one, stored or derived (so no stale check at the end can undo it). Applied as each
chunk is joined (:meth:`KnownSeries.flush`)."""
_CHUNK_OBS = f"{_OBS}, delisted_at, seen_last"
_KNOWN_COLUMNS = ("seq", "identity_hash", "hw_id", "price", "currency", "observed_at")
_HARDWARE_COLUMNS = ("hw_id", *HARDWARE_COLUMNS)
_KNOWN_TYPES = [COPY_TYPE[c] for c in _KNOWN_COLUMNS]
_HARDWARE_TYPES = [COPY_TYPE[c] for c in _HARDWARE_COLUMNS]
