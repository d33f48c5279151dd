"""The cheapest-price rollup: kept exact by every run, rebuilt on demand.

For each (GPU model, pricing, provider, region, currency) the rollup holds the step
function of the cheapest price per GPU-hour in that currency (``rollup_groups``,
``price_rollups``; see :class:`tracker.store.schema.PriceRollup`). Per-GPU history
reads a few hundred of its intervals instead of probing every offer's intervals at
every step (:mod:`tracker.store.reads`).

A run updates it in its own transaction, for the *keys* (GPU model, pricing, provider,
region; every currency of one) it touched, from the earliest time it changed one:

- a forward run (every change at one time, after the key's stored intervals) takes
  the cheaper of the stored cheapest and the run's new prices, set-wise in SQL; a key
  whose cheapest offer got dearer or went away is repriced from all its open prices
  (:mod:`tracker.store.rollup`, Postgres);
- anything else (dated observations such as AWS spot history, a GPU model or count
  that changed, SQLite) recomputes the touched keys from their earliest change: the
  intervals in force from then on, swept in Python (:mod:`tracker.store.rollup`),
  replace the stored ones from then on, merged with the one ending there if equal.

:func:`rebuild` recomputes everything (the migration's back-fill, ``gpu-tracker db
rebuild-rollups``); it is idempotent.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import (
    Connection,
    String,
    Table,
    and_,
    bindparam,
    column,
    delete,
    func,
    insert,
    select,
    text,
)

from tracker.store.locks import lock_key
from tracker.store.rollup._forward import forward
from tracker.store.rollup._keys import BATCH, KEYS, PROBE_LIMIT, SEGMENTS, Key, key_match
from tracker.store.rollup._sweep import Member, Segment, sweep
from tracker.store.schema import (
    ROLLUP_DIRTY,
    ROLLUP_KEY,
    PricePoint,
    PriceRollup,
    RollupGroup,
    Series,
)
from tracker.store.staging import temp_table
from tracker.store.types import UTCDateTime

__all__ = [
    "Key",
    "RebuildStats",
    "dirty_keys",
    "hold_upkeep",
    "last_point_id",
    "maintain_keys",
    "maintain_run",
    "rebuild",
    "touched_keys",
]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RebuildStats:
    keys: int = 0
    groups: int = 0
    intervals: int = 0
    source_intervals: int = 0


def _member_columns() -> list[Any]:
    s, p = Series.__table__.c, PricePoint.__table__.c
    return [
        *(s[c] for c in ROLLUP_KEY),
        p.currency,
        s.id,
        p.price,
        s.gpu_count,
        s.instance_type,
        s.zone,
        s.payment_option,
        p.first_seen,
        p.ended_at,
    ]


def _members(rows: Iterable[Any]) -> Iterator[tuple[Key, list[Member]]]:
    """Rows of :func:`_member_columns` ordered by key, as each key's members."""
    for key, group in groupby(rows, key=lambda r: (r[0], r[1], r[2], r[3])):
        yield (
            key,
            [Member(r[4], int(r[5]), r[6], r[7], (r[8], r[9], r[10]), r[11], r[12]) for r in group],
        )


def rebuild(conn: Connection) -> RebuildStats:
    """Recompute the whole rollup from the raw intervals, in the caller's transaction:
    what was stored is replaced by the same answer (idempotent)."""
    stats = RebuildStats()
    conn.execute(delete(PriceRollup))
    conn.execute(delete(RollupGroup))
    conn.execute(ROLLUP_DIRTY.delete())
    s, p = Series.__table__, PricePoint.__table__
    stmt = (
        select(*_member_columns())
        .select_from(s.join(p, p.c.series_id == s.c.id))
        .order_by(*(s.c[c] for c in ROLLUP_KEY))
    )
    pending: list[tuple[Key, Segment]] = []
    result = conn.execute(stmt, execution_options={"stream_results": True, "yield_per": BATCH})
    for key, members in _members(result):
        stats.keys += 1
        stats.source_intervals += len(members)
        pending.extend((key, seg) for seg in sweep(members))
        if len(pending) >= BATCH:
            _write_all(conn, pending, stats)
            pending = []
    _write_all(conn, pending, stats)
    log.info(
        "rollup rebuilt: %d keys, %d groups, %d intervals from %d price intervals",
        stats.keys,
        stats.groups,
        stats.intervals,
        stats.source_intervals,
    )
    return stats


def _write_all(
    conn: Connection, pending: Sequence[tuple[Key, Segment]], stats: RebuildStats
) -> None:
    """Insert segments of a rebuild (no stored rows to merge with)."""
    if not pending:
        return
    groups = _group_ids(conn, {(*key, seg.currency) for key, seg in pending})
    stats.groups = len(groups)
    rows = [
        {
            "group_id": groups[(*key, seg.currency)],
            "series_id": seg.series_id,
            "price": seg.price,
            "first_seen": seg.first_seen,
            "ended_at": seg.ended_at,
        }
        for key, seg in pending
    ]
    conn.execute(insert(PriceRollup), rows)
    stats.intervals += len(rows)


def _group_ids(conn: Connection, wanted: set[tuple[str, ...]]) -> dict[tuple[str, ...], int]:
    """Every group's id by (key..., currency), the wanted ones created where missing
    (the table holds one row per key and currency: thousands, read whole)."""
    g = RollupGroup.__table__
    cols = [*ROLLUP_KEY, "currency"]
    add = insert(RollupGroup)
    found = {tuple(r[1:]): int(r[0]) for r in conn.execute(select(g.c.id, *(g.c[c] for c in cols)))}
    missing = sorted(k for k in wanted if k not in found)
    if missing:
        conn.execute(add, [dict(zip(cols, k, strict=True)) for k in missing])
        return _group_ids(conn, set())
    return found


def _stage_changes(
    conn: Connection, *, since_id: int, source: str, delisted_at: datetime | None
) -> None:
    """``gt_roll_new``: per group (key, currency) the run of ``source`` opened intervals
    in (ids above ``since_id``), their first and last start, how many are closed, and on
    Postgres their cheapest (a hashed MIN per GPU-hour, then identity among ties): the
    upkeep after it works on groups, never on the run's changes again. With
    ``delisted_at``, ``gt_roll_gone``: the series it delisted then."""
    sqlite = conn.dialect.name == "sqlite"
    _drop(conn, "gt_roll_new", "gt_roll_gone")
    # Postgres, fewer new intervals than PROBE_LIMIT: a probe of series' primary key each
    # (OFFSET 0 keeps the lateral apart); joined, every series of the source is hashed,
    # which pays only when most changed (a first collection). SQLite probes anyway.
    series = (
        "JOIN series s ON s.id = p.series_id AND s.source = :source"
        if sqlite or last_point_id(conn) - since_id > PROBE_LIMIT
        else f"CROSS JOIN LATERAL (SELECT {', '.join(ROLLUP_KEY)}, gpu_count FROM series "
        "WHERE id = p.series_id AND source = :source OFFSET 0) s"
    )
    group = ", ".join((*ROLLUP_KEY, "currency"))
    spans = "MIN(first_seen) AS lo, MAX(first_seen) AS hi, COUNT(ended_at) AS closed"
    # Narrow (no ranking columns): only the few rows at a group's minimum need them,
    # fetched by primary key below; 200,000 wide rows cost ~15 % more to materialise.
    new = (
        f"SELECT {', '.join('s.' + c for c in ROLLUP_KEY)}, p.currency, p.series_id, "
        "p.price, p.first_seen, "
        f"p.ended_at{'' if sqlite else ', p.price / s.gpu_count AS pg'} "
        f"FROM price_points p {series} WHERE p.id > :since"
    )
    if sqlite:  # recomputed from the raw intervals whatever the run did: keys and times
        select_sql = f"SELECT {group}, {spans} FROM ({new}) n GROUP BY {group}"
    else:
        on = " AND ".join(f"n.{c} = m.{c}" for c in (*ROLLUP_KEY, "currency", "pg"))
        select_sql = (
            f"WITH n AS MATERIALIZED ({new}), m AS (SELECT {group}, MIN(pg) AS pg, {spans} "
            f"FROM n GROUP BY {group}) SELECT DISTINCT ON ({group}) "
            f"{', '.join('m.' + c for c in (*ROLLUP_KEY, 'currency'))}, m.lo, m.hi, "
            "m.closed, n.series_id, n.price, w.gpu_count, w.instance_type, w.zone, "
            f"w.payment_option FROM m JOIN n ON {on} JOIN series w ON w.id = n.series_id "
            f"ORDER BY {', '.join('m.' + c for c in (*ROLLUP_KEY, 'currency'))}, "
            "w.instance_type, w.zone, w.payment_option, n.series_id"
        )
    conn.execute(
        text(temp_table("gt_roll_new", sqlite=sqlite) + select_sql),
        {"since": since_id, "source": source},
    )
    if not sqlite:  # else planned as one row: nested loops over the touched groups
        conn.execute(text("ANALYZE gt_roll_new"))
    if delisted_at is not None:
        s = Series.__table__
        conn.execute(
            text(
                temp_table("gt_roll_gone", sqlite=sqlite)
                + "SELECT id AS series_id, delisted_at FROM series WHERE source = :source "
                "AND delisted_at = :at"
            ).bindparams(bindparam("at", delisted_at, s.c.delisted_at.type)),
            {"source": source},
        )


def _drop(conn: Connection, *tables: str) -> None:
    """Drop the temporary ``tables``: one round trip on Postgres, one each on SQLite."""
    names = list(tables) if conn.dialect.name == "sqlite" else [", ".join(tables)]
    for name in names:
        conn.execute(text(f"DROP TABLE IF EXISTS {name}"))


def touched_keys(conn: Connection, *, delisted: bool) -> dict[Key, datetime]:
    """The keys of the staged changes (:func:`_stage_changes`), each with the earliest
    time the run changed one."""
    cols = ", ".join(ROLLUP_KEY)
    sql = f"SELECT {cols}, MIN(lo) FROM gt_roll_new GROUP BY {cols}"
    if delisted:
        sql += (
            f" UNION ALL SELECT {', '.join('s.' + c for c in ROLLUP_KEY)}, MIN(d.delisted_at) "
            "FROM gt_roll_gone d JOIN series s ON s.id = d.series_id GROUP BY "
            + ", ".join("s." + c for c in ROLLUP_KEY)
        )
    stmt = text(sql).columns(*(column(c, String()) for c in ROLLUP_KEY), column("t", UTCDateTime()))
    found: dict[Key, datetime] = {}
    for row in conn.execute(stmt):
        key = (row[0], row[1], row[2], row[3])
        found[key] = min(found.get(key, row[4]), row[4])
    return found


def _single_time(conn: Connection, delisted_at: datetime | None) -> datetime | None:
    """The one time every staged change happened at, if there is one and no interval
    the run opened is already closed (a run in several rounds)."""
    row = conn.execute(
        text("SELECT MIN(lo), MAX(hi), SUM(closed) FROM gt_roll_new").columns(
            column("lo", UTCDateTime()), column("hi", UTCDateTime()), column("n")
        )
    ).one()
    lo, hi, closed = row
    if closed:
        return None
    if lo is None:
        return delisted_at
    if lo != hi or (delisted_at is not None and delisted_at != lo):
        return None
    return lo  # type: ignore[no-any-return]


def maintain_keys(conn: Connection, keys: dict[Key, datetime | None]) -> int:
    """Recompute ``keys`` from their times on (None: the whole history): the stored
    intervals from then on are replaced, the one in force then is cut there and merged
    with the recomputed one starting there if it is the same. Returns the intervals
    written."""
    if not keys:
        return 0
    _recreate(conn, KEYS)
    _recreate(conn, SEGMENTS)
    conn.execute(
        insert(KEYS),
        [dict(zip((*ROLLUP_KEY, "t0"), (*k, t0), strict=True)) for k, t0 in keys.items()],
    )
    segments: list[dict[str, Any]] = []
    for key, members in _members(conn.execute(_members_from(conn))):
        t0 = keys[key]
        for seg in sweep(members, t0):
            row: dict[str, Any] = dict(zip(ROLLUP_KEY, key, strict=True))
            row.update(seg._asdict())
            row["t0"] = t0
            segments.append(row)
    if segments:
        conn.execute(insert(SEGMENTS), segments)
    _apply_segments(conn)
    conn.execute(text("DROP TABLE gt_roll_seg"))
    conn.execute(text("DROP TABLE gt_roll_keys"))
    return len(segments)


def _recreate(conn: Connection, table: Table) -> None:
    conn.execute(text(f"DROP TABLE IF EXISTS {table.name}"))
    table.create(conn)


def _members_from(conn: Connection) -> Any:
    """Every interval of the keys' series in force at some time from the key's t0 on:
    the one in force at t0 (the latest started by then) and those started after."""
    s, p, k = Series.__table__, PricePoint.__table__, KEYS
    on_key = and_(*(s.c[c] == k.c[c] for c in ROLLUP_KEY))
    base = s.join(k, on_key).join(p, p.c.series_id == s.c.id)
    after = (
        select(*_member_columns())
        .select_from(base)
        .where((k.c.t0.is_(None)) | (p.c.first_seen > k.c.t0))
    )
    q = PricePoint.__table__.alias("q")
    latest = (
        select(q.c.id)
        .where(q.c.series_id == s.c.id, q.c.first_seen <= k.c.t0)
        .order_by(q.c.first_seen.desc())
        .limit(1)
        .scalar_subquery()
    )
    probes = (
        select(s.c.id.label("sid"), k.c.t0, latest.label("pid"))
        .select_from(s.join(k, on_key))
        .where(k.c.t0.is_not(None))
        .subquery("probes")
    )
    at_t0 = (
        select(*_member_columns())
        .select_from(probes.join(p, p.c.id == probes.c.pid).join(s, s.c.id == probes.c.sid))
        .where((p.c.ended_at.is_(None)) | (p.c.ended_at > probes.c.t0))
    )
    both = after.union_all(at_t0).subquery("m")
    return select(*both.c).order_by(*(both.c[c] for c in ROLLUP_KEY))


def _apply_segments(conn: Connection) -> None:
    """Replace the stored intervals of gt_roll_keys from each key's t0 by gt_roll_seg."""

    def x(sql: str) -> int:
        return conn.execute(text(sql)).rowcount

    cols = ", ".join(ROLLUP_KEY)
    x(
        f"INSERT INTO rollup_groups ({cols}, currency) SELECT DISTINCT {cols}, currency "
        "FROM gt_roll_seg n WHERE NOT EXISTS (SELECT 1 FROM rollup_groups g WHERE "
        f"{key_match('g', 'n')} AND g.currency = n.currency)"
    )
    x(
        "UPDATE gt_roll_seg SET group_id = (SELECT g.id FROM rollup_groups g WHERE "
        f"{key_match('g', 'gt_roll_seg')} AND g.currency = gt_roll_seg.currency)"
    )
    in_keys = (
        "SELECT g.id AS group_id, k.t0 FROM rollup_groups g JOIN gt_roll_keys k "
        f"ON {key_match('g', 'k')}"
    )
    x(
        "DELETE FROM price_rollups WHERE id IN (SELECT r.id FROM price_rollups r "
        f"JOIN ({in_keys}) gk ON gk.group_id = r.group_id "
        "WHERE gk.t0 IS NULL OR r.first_seen >= gk.t0)"
    )
    x(
        f"UPDATE price_rollups SET ended_at = gk.t0 FROM ({in_keys}) gk "
        "WHERE gk.group_id = price_rollups.group_id AND gk.t0 IS NOT NULL "
        "AND price_rollups.first_seen < gk.t0 "
        "AND (price_rollups.ended_at IS NULL OR price_rollups.ended_at > gk.t0)"
    )
    # The recomputed interval starting at t0 continues the stored one ending there.
    same = (
        "r.group_id = n.group_id AND r.ended_at = n.first_seen AND n.first_seen = n.t0 "
        "AND r.series_id = n.series_id AND r.price = n.price"
    )
    x(
        "UPDATE price_rollups SET ended_at = (SELECT n.ended_at FROM gt_roll_seg n, "
        f"price_rollups r WHERE r.id = price_rollups.id AND {same}) WHERE id IN "
        f"(SELECT r.id FROM price_rollups r JOIN gt_roll_seg n ON {same})"
    )
    x(
        "DELETE FROM gt_roll_seg WHERE first_seen = t0 AND EXISTS (SELECT 1 FROM "
        "price_rollups r WHERE r.group_id = gt_roll_seg.group_id "
        "AND r.first_seen < gt_roll_seg.first_seen AND r.series_id = gt_roll_seg.series_id "
        "AND r.price = gt_roll_seg.price AND (r.ended_at = gt_roll_seg.ended_at "
        "OR (r.ended_at IS NULL AND gt_roll_seg.ended_at IS NULL)))"
    )
    x(
        "INSERT INTO price_rollups (group_id, series_id, price, first_seen, ended_at) "
        "SELECT group_id, series_id, price, first_seen, ended_at FROM gt_roll_seg"
    )


def maintain_run(
    conn: Connection,
    *,
    since_id: int,
    source: str,
    delisted_at: datetime | None,
) -> int:
    """Bring the rollup up to date with a run of ``source`` that opened the intervals
    above ``since_id`` and delisted at ``delisted_at`` (None: nothing); the keys a
    changed GPU model or count moved are recomputed whole. Returns the rollup
    intervals written."""
    hold_upkeep(conn)
    _stage_changes(conn, since_id=since_id, source=source, delisted_at=delisted_at)
    dirty = dirty_keys(conn)
    written = 0
    at = None if dirty or conn.dialect.name != "postgresql" else _single_time(conn, delisted_at)
    if at is not None:
        redo, written = forward(
            conn, at=at, since_id=since_id, source=source, delisted=delisted_at is not None
        )
        keys: dict[Key, datetime | None] = dict.fromkeys(redo, at)
        path = "forward"
    else:
        keys = dict(touched_keys(conn, delisted=delisted_at is not None))
        keys.update(dict.fromkeys(dirty))
        path = "recomputed"
    written += maintain_keys(conn, keys)
    _drop(conn, "gt_roll_new", "gt_roll_gone")
    log.debug(
        "rollup of %s: %s, %d keys recomputed, %d intervals written",
        source,
        path,
        len(keys),
        written,
    )
    return written


def hold_upkeep(conn: Connection) -> None:
    """Postgres: keep the rollup alone until the transaction ends. Two sources writing
    one provider (an import beside its collector) would otherwise both close and open
    the same groups' intervals; a run's upkeep is its last step, so waits are short.
    SQLite has one writer at a time anyway."""
    if conn.dialect.name == "postgresql":
        conn.execute(
            text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock_key("store: rollup upkeep")}
        )


def last_point_id(conn: Connection) -> int:
    """The newest interval's id: a run's own intervals are those above it."""
    return int(conn.execute(select(func.coalesce(func.max(PricePoint.id), 0))).scalar_one())


def dirty_keys(conn: Connection) -> set[Key]:
    """The keys the ``series`` trigger noted (GPU model or count changed), emptied."""
    d = ROLLUP_DIRTY
    found = {(r[0], r[1], r[2], r[3]) for r in conn.execute(select(*d.c).distinct())}
    if found:
        conn.execute(d.delete())
    return found
