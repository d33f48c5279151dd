"""The write path: one collection run's offers into series and price intervals.

Offers stream into temporary tables (COPY on Postgres, batched inserts on
SQLite), then a handful of set-wise statements do the change detection, so the
cost is a few scans per run instead of a SELECT per offer. An offer of a series its
source already lists travels compact (tracker.store.ingest): a chunk at a time, joined
and its plain price changes applied while the next chunk is staged, joining the run's
observations only if it changes something else; every other offer is staged in full
in ``gt_incoming``. Everything happens on the caller's connection inside the caller's
transaction: the runner commits the whole run or nothing.

Observations of one series are applied in time order in *rounds* (round k holds
each series' k-th observation), which is how dated history such as AWS spot
prices or a back-filled price sheet lands at its own timestamps. A normal run
has exactly one round.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy import Connection, text

from tracker.models import STORED_OFFER_COLUMNS as OFFER_COLUMNS
from tracker.models import ColumnKind, Offer
from tracker.store import last_seen as seen
from tracker.store import series
from tracker.store.ingest._confirm import Outside, any_since, confirmable, record
from tracker.store.ingest._confirm import outside as outside_of
from tracker.store.ingest._delist import apply as delist_offers
from tracker.store.ingest._delist import offers_in
from tracker.store.ingest._known import FLUSH_ROWS, KNOWN_TABLES, KnownSeries
from tracker.store.ingest._stats import DelistScope, IdentityCollision, IngestStats
from tracker.store.schema import HARDWARE_COLUMNS, IDENTITY_COLUMNS
from tracker.store.staging import (
    COPY_TYPE,
    copy_rows,
    hardware_differs,
    hardware_values,
    latest_per_identity,
    new_series_insert,
    offer_hash,
    open_intervals,
    store_row,
    temp_table,
)

__all__ = [
    "INCOMING_COLUMNS",
    "DelistScope",
    "IdentityCollision",
    "Ingest",
    "IngestStats",
    "offer_hash",
    "store_row",
]

INCOMING_COLUMNS = ("seq", *(c.column for c in OFFER_COLUMNS), "observed_at", "identity_hash")
"""The run's staging table: a sequence number, every offer column, when it was seen, and
the identity's 64-bit hash (:mod:`tracker.store.identity`)."""

_SQLITE_TIME = "%Y-%m-%d %H:%M:%S.%f"  # SQLAlchemy's own SQLite DateTime format
_TEMP_TABLES = ("gt_seen_all", "gt_seen_ids", "gt_obs", "gt_latest", "gt_incoming", *KNOWN_TABLES)
"""The run's temporary tables, dropped before the run starts and after it finishes."""


_STAGING_TYPE = {
    ColumnKind.TEXT: "TEXT",
    ColumnKind.CHOICE: "TEXT",
    ColumnKind.FLAG: "BOOLEAN",
    ColumnKind.MAPPING: "TEXT",
}

_COPY_TYPES = [COPY_TYPE[c] for c in INCOMING_COLUMNS]


class Ingest:
    """Accumulates one run's offers, then applies them with :meth:`finish`.

    ``run_id`` (the ``collection_runs`` row) lets a complete run record the scopes it
    confirmed (:mod:`tracker.store.ingest`) instead of rewriting ``last_seen`` of
    every unchanged interval; without it every sighting is written, as before.
    """

    def __init__(
        self, conn: Connection, *, source: str, run_time: datetime, run_id: int | None = None
    ) -> None:
        if run_time.tzinfo is None:
            raise ValueError("run_time must be timezone-aware")
        self.conn = conn
        self.source = source
        self.run_id = run_id
        self.run_time = run_time.astimezone(UTC)
        self.sqlite = conn.dialect.name == "sqlite"
        self._buffer: list[tuple[Any, ...]] = []
        self._seq = 0
        # Identity hashes seen so far (8-byte ints, not the identities): a run that
        # reports each identity once (the usual case) skips the window functions that
        # ordering several observations needs. A hash collision only takes that path.
        self._keys: set[int] = set()
        self._repeats = False
        self._dated: set[tuple[str, str]] = set()
        """(region, pricing) scopes holding an offer stamped with its own time."""
        self._scopes: dict[tuple[str, str], int] = {}
        """Offers per (region, pricing) scope: which scopes the run may confirm, and
        whether it saw every listed series of its delist scope."""
        self._oldest = self.run_time
        """The oldest observation (an offer's own time, else the run's)."""
        self._staged_run_time = self._time(self.run_time)
        # A partial, not a method: the compact staging holds it, and a bound method
        # would make a cycle that keeps each run's hashes and buffers until a full
        # garbage collection (MiB per run at 20,000 offers).
        self._copy = partial(copy_rows, conn, sqlite=self.sqlite)
        columns = self._create_temp_tables()
        self._known = KnownSeries(
            conn,
            source=source,
            run_time=self._staged_run_time,
            sqlite=self.sqlite,
            columns=columns,
            copy=self._copy,
        )

    # -- loading -----------------------------------------------------------------

    def _create_temp_tables(self) -> dict[str, str]:
        """Create ``gt_incoming``; returns every staging column's definition by name (the
        compact staging's tables hold theirs in the same types)."""
        types = {**_STAGING_TYPE, ColumnKind.NUMBER: "TEXT" if self.sqlite else "NUMERIC(20,10)"}
        ts = "TEXT" if self.sqlite else "TIMESTAMPTZ"
        defs = {c.column: f"{c.column} {types[c.kind]}" for c in OFFER_COLUMNS}
        defs |= {"seq": "seq BIGINT", "observed_at": f"observed_at {ts}"}
        defs |= {"identity_hash": "identity_hash BIGINT", "hw_id": "hw_id INTEGER"}
        cols = [defs[c] for c in INCOMING_COLUMNS]
        if not self.sqlite:
            # The run's joins and anti-joins hash a few hundred thousand ids: room for
            # that in memory, for this transaction only. No JIT: its compilation is
            # paid per statement, and a misestimated one (a run's new series are not
            # yet analysed) crosses the optimising thresholds (~0.2 s for one UPDATE).
            self.conn.exec_driver_sql("SET LOCAL work_mem = '64MB'")
            self.conn.exec_driver_sql("SET LOCAL jit = off")
        for table in _TEMP_TABLES:
            self.conn.exec_driver_sql(f"DROP TABLE IF EXISTS {table}")
        self.conn.exec_driver_sql(
            temp_table("gt_incoming", sqlite=self.sqlite, columns=", ".join(cols))
        )
        return defs

    def _time(self, value: datetime) -> Any:
        return value.astimezone(UTC).strftime(_SQLITE_TIME) if self.sqlite else value

    def add(self, offer: Offer) -> None:
        # The hot loop of every run (one call per offer).
        self._seq += 1
        key = offer_hash(offer)
        if not self._repeats:
            if key in self._keys:
                self._repeats = True
                self._keys.clear()
            else:
                self._keys.add(key)
        scope = (offer.region, offer.pricing)
        self._scopes[scope] = self._scopes.get(scope, 0) + 1
        # NUMERIC(20,10) and timestamptz columns take Decimal and datetime as they are.
        observed: Any = offer.observed_at
        if observed is not None:
            self._dated.add((offer.region, offer.pricing.value))
            self._oldest = min(self._oldest, observed)
            if self.sqlite:
                observed = observed.astimezone(UTC).strftime(_SQLITE_TIME)
        if not self._repeats and self._known.stage(self._seq, key, offer, observed):
            return  # compact (an observed of None: the run's time)
        when = self._staged_run_time if observed is None else observed
        self._buffer.append((self._seq, *store_row(offer, sqlite=self.sqlite), when, key))
        if len(self._buffer) >= FLUSH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self._known.settle()  # no COPY while a chunk's join is in flight
            rows, self._buffer = self._buffer, []
            self._copy("gt_incoming", INCOMING_COLUMNS, rows, _COPY_TYPES)

    @property
    def count(self) -> int:
        return self._seq

    def abandon(self) -> None:
        """The run is failing: leave no statement in flight on the connection."""
        self._known.abandon()
        self._release()

    def _release(self) -> None:
        """Drop what the run staged in memory: a finished run keeps only its counts."""
        self._buffer, self._keys, self._dated = [], set(), set()
        self._known.release()

    # -- applying ----------------------------------------------------------------

    def finish(self, delist: DelistScope | None) -> IngestStats:
        """Apply everything added; delist what ``delist`` covers and was not seen."""
        self._flush()
        self._known.flush(apply=not self._repeats)
        self._known.settle()
        self._keys.clear()
        stats = IngestStats(offers_seen=self._seq)
        x = self._x
        run_time = self._staged_run_time
        confirmed: set[tuple[str, str]] = set()
        everything = False
        if delist is not None and self.run_id is not None and delist.source == self.source:
            confirmed, everything = confirmable(
                self._scopes,
                pricing={p.value for p in delist.pricing},
                exclude_regions=delist.exclude_regions,
                dated=self._dated,
            )
        outside = outside_of(confirmed, everything)
        # A confirmation at or after the oldest observation: some observation may be
        # stale (checked below against every one), so every compact row joins gt_obs
        # (but for the chunks' price changes, each newer than its derived sighting).
        confirmed_since = self._seq > 0 and any_since(self.conn, self._time(self._oldest))
        if self._repeats:  # several observations of a series: every row in full,
            self._known.undo()  # the chunks' price changes taken back (tracker.store.ingest)
            self._known.to_incoming(run_time)
        stats.price_changes = self._known.count_applied()
        compact = self._known.count
        joined_compact = self._join_series(stats, outside=outside, all_rows=confirmed_since)
        self._check_and_update_series()
        # Anything not newer than the last sighting is already known (an incremental
        # fetch re-sends its boundary point; a sheet may be imported twice).
        # Probed first with the stored times only (the usual forward run has nothing stale).
        maybe_stale = confirmed_since or self._maybe_stale()
        self._stage_seen(maybe_stale)
        stats.relisted = x(
            "UPDATE series SET delisted_at = NULL WHERE delisted_at IS NOT NULL "
            "AND id IN (SELECT series_id FROM gt_seen)"
        )
        eff = seen.effective_last_seen_sql("p", "s")
        if maybe_stale:
            stats.stale = x(
                "DELETE FROM gt_obs WHERE EXISTS (SELECT 1 FROM price_points p "
                "JOIN series s ON s.id = p.series_id WHERE p.series_id = gt_obs.series_id "
                f"AND p.ended_at IS NULL AND {eff} >= gt_obs.observed_at)"
            )
        per_round: dict[int, int] = {
            int(r): int(n)
            for r, n in self.conn.execute(text("SELECT rn, COUNT(*) FROM gt_obs GROUP BY rn"))
        }
        stats.rounds = max(per_round, default=1 if compact else 0)
        if self._repeats:
            for r in range(1, stats.rounds + 1):
                self._apply_round(r, per_round.get(r, 0), outside, stats)
        elif stats.rounds:
            # The compact rows left out of gt_obs were seen unchanged, but for the
            # price changes applied by chunk (counted already).
            observed = per_round.get(1, 0) + compact - joined_compact - stats.price_changes
            self._apply_single(observed, outside, stats)
        stats.availability_changes = series.apply_run(
            self.conn, sqlite=self.sqlite, repeats=self._repeats
        )

        self._delist_and_confirm(delist, stats, confirmed)
        x("DROP VIEW gt_seen")
        for table in _TEMP_TABLES:
            x(f"DROP TABLE IF EXISTS {table}")
        self._release()
        return stats

    def _delist_and_confirm(
        self, delist: DelistScope | None, stats: IngestStats, confirmed: set[tuple[str, str]]
    ) -> None:
        """Delist what ``delist`` covers and the run did not see; record the scopes the
        run ``confirmed`` complete."""
        run_time = self._staged_run_time
        if delist is not None:
            delist_offers(
                self.conn,
                delist,
                stats,
                run_time=run_time,
                sqlite=self.sqlite,
                # Each offer its own series, all now the scope's: counted, not compared.
                seen=None
                if self._repeats or delist.source != self.source
                else offers_in(delist, self._scopes),
                compact_ids=self._known.seen_ids() if self._known.count else None,
            )
        if confirmed and self.run_id is not None:
            record(self.conn, confirmed, source=self.source, run_id=self.run_id, run_time=run_time)

    def _stage_latest(self) -> str:
        """The run's latest row per identity, as SQL to select from (with several rows
        per identity the table ``gt_latest``, :func:`latest_per_identity`)."""
        if not self._repeats:
            return "(SELECT *, observed_at AS first_obs FROM gt_incoming)"
        self._x(latest_per_identity(sqlite=self.sqlite))
        return "gt_latest"

    def _stage_seen(self, maybe_stale: bool) -> None:
        """``gt_seen``: the series this run saw, and ``gt_obs`` indexed and analysed."""
        x = self._x
        # Indexed whatever the plan: with the run's new series not yet analysed, the
        # planner may probe gt_obs once per listed series (delisting's anti-join).
        x("CREATE INDEX gt_obs_series ON gt_obs (series_id, rn)")
        if self._repeats or maybe_stale:
            x(
                temp_table("gt_seen_ids", sqlite=self.sqlite)
                + "SELECT DISTINCT series_id FROM gt_obs"
            )
            x("CREATE UNIQUE INDEX gt_seen_id ON gt_seen_ids (series_id)")
            x("CREATE TEMPORARY VIEW gt_seen AS SELECT series_id FROM gt_seen_ids")
        else:  # one row per series, none will be dropped: gt_obs lists what was seen
            x("CREATE TEMPORARY VIEW gt_seen AS SELECT series_id FROM gt_obs")
        if not self.sqlite:
            x("ANALYZE gt_obs")
            if self._repeats or maybe_stale:
                x("ANALYZE gt_seen_ids")

    def _join_series(self, stats: IngestStats, *, outside: Outside, all_rows: bool) -> int:
        """``gt_obs``: the run's observations joined to their series, the series not
        stored yet created (``stats.new_series``); returns how many compact rows joined
        it too (:meth:`tracker.store.ingest.KnownSeries.observe`)."""
        x = self._x
        compact = self._known.count
        by_hash = "s.identity_hash = i.identity_hash"
        latest = self._stage_latest()
        new_series = new_series_insert(latest, sqlite=self.sqlite, repeats=self._repeats)
        # Postgres, one observation per series: created after gt_obs joins the known ones.
        insert_later = not (self.sqlite or self._repeats)
        if not insert_later:
            stats.new_series = x(new_series, source=self.source)
        differs = hardware_differs("s", "i")
        same_identity = " AND ".join(f"s.{c} = i.{c}" for c in IDENTITY_COLUMNS)
        # Observations joined to their series on the hash, ranked per series in time
        # order; several offers of one series at one instant keep the last one reported.
        # ``collides``: the hash matched another identity (checked below, never merged).
        if self._repeats:
            x(
                temp_table("gt_obs", sqlite=self.sqlite)
                + "SELECT series_id, observed_at, price, currency, "
                "region, pricing, hw_changed, took_over, collides, "
                "ROW_NUMBER() OVER (PARTITION BY series_id ORDER BY observed_at) AS rn "
                "FROM (SELECT s.id AS series_id, i.observed_at, i.price, i.currency, "
                f"i.region, i.pricing, ({differs}) AS hw_changed, "
                f"(s.source <> :source) AS took_over, NOT ({same_identity}) AS collides, "
                "ROW_NUMBER() OVER (PARTITION BY s.id, i.observed_at "
                "ORDER BY i.seq DESC) AS dup "
                f"FROM gt_incoming i JOIN series s ON {by_hash}) d WHERE d.dup = 1",
                source=self.source,
            )
        else:
            # One observation per series: its open interval comes along (one join), so
            # the round below touches only the intervals that change.
            joined = x(
                temp_table("gt_obs", sqlite=self.sqlite)
                + "SELECT s.id AS series_id, i.observed_at, i.price, i.currency, "
                f"i.region, i.pricing, 1 AS rn, ({differs}) AS hw_changed, "
                f"(s.source <> :source) AS took_over, NOT ({same_identity}) AS collides, "
                "s.source, p.id AS point_id, p.last_seen AS stored_last_seen, "
                "(p.price = i.price AND p.currency = i.currency) AS same_price, "
                "i.identity_hash "
                f"FROM gt_incoming i JOIN series s ON {by_hash} LEFT JOIN price_points p "
                "ON p.series_id = s.id AND p.ended_at IS NULL",
                source=self.source,
            )
            if insert_later and joined < self._seq - compact:
                # New series' observations come from the insert's RETURNING (no second
                # join); a run meeting only known series skips the anti-join entirely.
                stats.new_series = x(
                    f"WITH new AS ({new_series} RETURNING id, identity_hash) "
                    "INSERT INTO gt_obs (series_id, observed_at, price, currency, region, "
                    "pricing, rn, hw_changed, took_over, collides, source) "
                    "SELECT new.id, i.observed_at, i.price, i.currency, i.region, i.pricing, "
                    "1, FALSE, FALSE, FALSE, :source FROM new JOIN gt_incoming i "
                    "ON i.identity_hash = new.identity_hash ORDER BY new.id",
                    source=self.source,
                )
            if compact:
                return self._known.observe(outside=outside, all_rows=all_rows)
        return 0

    def _check_and_update_series(self) -> None:
        """Refuse a hash collision; bring taken-over series' ``last_seen`` into the
        interval (it was derived from the previous source's runs); then update the
        hardware facts and source that changed (all in one scan of ``gt_obs``)."""
        x = self._x
        flags = self.conn.execute(
            text(
                "SELECT MAX(CASE WHEN collides THEN 1 ELSE 0 END), "
                "MAX(CASE WHEN hw_changed OR took_over THEN 1 ELSE 0 END), "
                "MAX(CASE WHEN took_over THEN 1 ELSE 0 END) FROM gt_obs"
            )
        ).one()
        if flags[0]:
            raise IdentityCollision(self._collision())
        if flags[2]:
            eff = seen.effective_last_seen_sql("price_points", "s")
            x(
                f"UPDATE price_points SET last_seen = (SELECT {eff} FROM series s "
                "WHERE s.id = price_points.series_id) WHERE ended_at IS NULL AND series_id "
                "IN (SELECT series_id FROM gt_obs WHERE took_over)"
            )
        if flags[1]:
            values = hardware_values("i", self.sqlite)
            sets = ", ".join(f"{c} = {v}" for c, v in zip(HARDWARE_COLUMNS, values, strict=True))
            latest = "gt_latest" if self._repeats else "gt_incoming"
            x(
                f"UPDATE series AS s SET {sets}, source = :source FROM {latest} AS i "
                "WHERE s.identity_hash = i.identity_hash AND s.id IN "
                "(SELECT series_id FROM gt_obs WHERE hw_changed OR took_over)",
                source=self.source,
            )
            if self._known.count:
                self._known.update_hardware(self.source)

    def _collision(self) -> str:
        cols = ", ".join(f"s.{c}, i.{c}" for c in IDENTITY_COLUMNS)
        row = self.conn.execute(
            text(
                f"SELECT {cols} FROM gt_incoming i JOIN series s "
                "ON s.identity_hash = i.identity_hash WHERE NOT ("
                + " AND ".join(f"s.{c} = i.{c}" for c in IDENTITY_COLUMNS)
                + ") LIMIT 1"
            )
        ).one()
        stored, incoming = row[0::2], row[1::2]
        return f"identity hash collision: {'/'.join(incoming)} matches stored {'/'.join(stored)}"

    def _x(self, sql: str, **params: Any) -> int:
        return self.conn.execute(text(sql), params).rowcount

    def _maybe_stale(self) -> bool:
        """Whether some observation in gt_obs is no newer than its interval's stored
        ``last_seen`` (the compact rows where that holds are in gt_obs)."""
        stored = (
            "SELECT 1 FROM gt_obs o JOIN price_points p ON p.series_id = o.series_id "
            "AND p.ended_at IS NULL AND p.last_seen >= o.observed_at"
            if self._repeats
            else "SELECT 1 FROM gt_obs o WHERE o.stored_last_seen >= o.observed_at"
        )
        return self.conn.execute(text(f"{stored} LIMIT 1")).first() is not None

    def _apply_single(self, observed: int, outside: Outside, stats: IngestStats) -> None:
        """The one round of a run that saw each series once (``observed`` of them):
        gt_obs carries each one's open interval, so only the intervals that change are
        touched: closed at their last sighting, then the new prices opened."""
        x = self._x
        # gt_obs carries the series' scope, so closing joins the confirmations once and no
        # series row. A taken-over series keeps its interval's last_seen (brought in above).
        stats.price_changes += x(
            "UPDATE price_points AS p SET ended_at = o.observed_at, last_seen = "
            f"CASE WHEN o.took_over THEN p.last_seen ELSE {seen.joined_last_seen_sql('p')} END "
            f"FROM gt_obs AS o {seen.confirmation_join_sql('o')} "
            "WHERE p.id = o.point_id AND NOT o.same_price"
        )
        if outside is not None:
            x(
                "UPDATE price_points AS p SET last_seen = o.observed_at FROM gt_obs AS o "
                f"WHERE p.id = o.point_id AND o.same_price AND {outside[0]}",
                **outside[1],
            )
        opened = x(open_intervals("gt_obs", "o.point_id IS NULL OR NOT o.same_price"))
        stats.unchanged += observed - opened

    def _apply_round(self, r: int, observed: int, outside: Outside, stats: IngestStats) -> None:
        """Round ``r`` (``observed`` observations) of a run with several observations
        of a series: close changed prices at their last sighting, open new ones, write
        ``last_seen`` of unchanged prices where :func:`tracker.store.ingest._confirm.outside` says."""
        x = self._x
        same = "p.price = o.price AND p.currency = o.currency"
        eff = seen.effective_last_seen_sql("p", "s")
        stats.price_changes += x(
            "UPDATE price_points AS p SET ended_at = o.observed_at, last_seen = "
            f"CASE WHEN o.took_over THEN p.last_seen ELSE {eff} END "
            "FROM gt_obs AS o, series AS s WHERE o.rn = :r AND p.series_id = o.series_id "
            f"AND s.id = p.series_id AND p.ended_at IS NULL AND NOT ({same})",
            r=r,
        )
        if outside is not None:
            x(
                "UPDATE price_points AS p SET last_seen = o.observed_at "
                f"FROM gt_obs AS o WHERE o.rn = :r AND p.series_id = o.series_id "
                f"AND p.ended_at IS NULL AND {same} AND {outside[0]}",
                r=r,
                **outside[1],
            )
        opened = x(
            open_intervals(
                "gt_obs",
                "o.rn = :r AND NOT EXISTS (SELECT 1 FROM price_points p "
                "WHERE p.series_id = o.series_id AND p.ended_at IS NULL)",
            ),
            r=r,
        )
        stats.unchanged += observed - opened
