"""The rollup's forward step: a run whose every change happened at one time, after
everything its keys' rollup holds (the usual run: every price observed at the run's
time), updated set-wise in SQL from the run's own changes only.

For each group (key and currency) the new cheapest at that time is the cheapest of
the run's new prices in it and the stored cheapest, unless the stored cheapest's own
series changed: if it got dearer (or went away) some untouched series may now be the
cheapest, so for those keys every open price of their offers competes (one pass over
``series`` for them). A key whose stored intervals reach that time (a dated
observation of an earlier run ahead of it) is handed back to
:func:`tracker.store.rollup.maintain_keys`. Cost: the run's changes are read once,
already aggregated per group (:func:`tracker.store.rollup._stage_changes`); every
statement here works on the touched groups (hundreds, whatever the number of changes):
one probe of the stored cheapest per group and of its offer's open interval, plus,
for a key whose cheapest got dearer or went away, one probe per offer of that key.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Connection, text

from tracker.store.rollup._keys import key_list, key_match
from tracker.store.staging import temp_table

__all__ = ["forward"]

log = logging.getLogger(__name__)

_RANK = "instance_type, zone, payment_option"


_PER_GPU = "{p}.price / {p}.gpu_count"
_KEYS = key_list()
_RANK_COLS = _RANK.split(", ")
Keys = set[tuple[str, str, str, str]]


def forward(
    conn: Connection, *, at: datetime, since_id: int, source: str, delisted: bool
) -> tuple[Keys, int]:
    """Apply the run's changes at ``at`` (Postgres) from ``gt_roll_new`` (each group the
    run opened intervals in, with the cheapest of them: see
    :func:`tracker.store.rollup._stage_changes`) and, with ``delisted``,
    ``gt_roll_gone`` (the series it delisted then); the run's own intervals are those
    of ``source`` above ``since_id``. Returns the keys that need recomputing from
    ``at`` and the rollup intervals written."""
    params = {"at": at, "since": since_id, "source": source}

    def x(sql: str) -> int:
        return conn.execute(text(sql), params).rowcount

    x(
        f"INSERT INTO rollup_groups ({_KEYS}, currency) SELECT {_KEYS}, currency "
        "FROM gt_roll_new n WHERE NOT EXISTS (SELECT 1 FROM rollup_groups g WHERE "
        f"{key_match('g', 'n')} AND g.currency = n.currency)"
    )
    x(_stage_current(delisted))
    late, dearer_keys = _late_and_dearer(conn)
    x(_stage_best())
    written = _write(x)
    x("DROP TABLE IF EXISTS gt_roll_cur, gt_roll_best")
    log.debug("rollup forward: %d keys whose cheapest got dearer or went away", dearer_keys)
    return late, written


def _current(delisted: bool) -> str:
    """SQL: each touched group with its latest stored interval (if any), that offer's
    ranking columns, its new price in the group's currency (if the run changed it), and
    whether the run's cheapest new price in the group beats it."""
    touched_keys = f"SELECT {_KEYS} FROM gt_roll_new"
    if delisted:
        touched_keys += f" UNION SELECT {key_list('s')} FROM gt_roll_gone d "
        touched_keys += "JOIN series s ON s.id = d.series_id"
    # The run's new interval of a series, if it opened one (one probe of the open
    # intervals' index per touched group: the run's own are above since_id).
    opened = (
        "SELECT {what} FROM price_points o WHERE o.series_id = r.series_id "
        "AND o.ended_at IS NULL AND o.id > :since AND s.source = :source"
    )

    def ranked(price: str, offer: str) -> str:
        """SQL: the ranking of an offer's price, as a row (compared in order)."""
        rank = ", ".join(f"{offer}.{c}" for c in _RANK_COLS)
        return f"{price}.price / {offer}.gpu_count, {rank}, {price}.series_id"

    gone = " OR EXISTS (SELECT 1 FROM gt_roll_gone d WHERE d.series_id = r.series_id)"
    return (
        f"SELECT g.id AS group_id, {key_list('g')}, g.currency, "
        "r.id AS rollup_id, r.series_id, r.price, r.first_seen, r.ended_at, s.gpu_count, "
        f"{', '.join('s.' + c for c in _RANK_COLS)}, "
        f"CASE WHEN EXISTS ({opened.format(what='1')}){gone if delisted else ''} "
        "THEN 1 END AS changed, "
        f"({opened.format(what='o.price')} AND o.currency = g.currency) AS new_price, "
        f"({ranked('n', 'n')}) < ({ranked('r', 's')}) AS beaten "
        f"FROM (SELECT DISTINCT {_KEYS} FROM ({touched_keys}) tk) k "
        f"JOIN rollup_groups g ON {key_match('g', 'k')} "
        "LEFT JOIN price_rollups r ON r.id = (SELECT q.id FROM price_rollups q "
        "WHERE q.group_id = g.id ORDER BY q.first_seen DESC LIMIT 1) "
        "LEFT JOIN series s ON s.id = r.series_id "
        f"LEFT JOIN gt_roll_new n ON {key_match('n', 'g')} AND n.currency = g.currency"
    )


def _stage_current(delisted: bool) -> str:
    """SQL: ``gt_roll_cur``, the touched groups (:func:`_current`) flagged by key: late
    (its stored intervals reach ``at``: recomputed instead) or dearer (some group's
    cheapest got dearer or went away: repriced from every open price of the key's
    offers). Not dearer when the run's cheapest new price in the group beats the stored
    cheapest: every offer the run left alone ranked after that one, so after the new
    one too."""
    dearer = (
        "c.changed IS NOT NULL AND c.ended_at IS NULL AND (c.new_price IS NULL OR "
        + _PER_GPU.format(p="c").replace("c.price", "c.new_price")
        + " > "
        + _PER_GPU.format(p="c")
        + ") AND c.beaten IS NOT TRUE"
    )
    is_late = "c.first_seen >= :at OR c.ended_at >= :at"
    return (
        temp_table("gt_roll_cur", sqlite=False)  # Postgres only: SQLite divides in floats
        + f"SELECT c.*, bool_or(({is_late}) IS TRUE) OVER k AS late, "
        f"bool_or(({dearer}) IS TRUE) OVER k AS dearer FROM ({_current(delisted)}) c "
        f"WINDOW k AS (PARTITION BY {_KEYS})"
    )


def _late_and_dearer(conn: Connection) -> tuple[Keys, int]:
    """The late keys (handed back for recomputing), and how many keys are dearer."""
    late: Keys = set()
    dearer_keys = 0
    for r in conn.execute(
        text(f"SELECT DISTINCT {_KEYS}, late FROM gt_roll_cur WHERE late OR dearer")
    ):
        if r[4]:
            late.add((str(r[0]), str(r[1]), str(r[2]), str(r[3])))
        else:
            dearer_keys += 1
    return late, dearer_keys


def _stage_best() -> str:
    """SQL: ``gt_roll_best``, each group's winner. The candidates: each group's cheapest
    new price and its stored cheapest where its series did not change; for a dearer
    key, every open price of its offers. The lowest price per GPU-hour wins (a hashed
    MIN), ties to the first identity."""
    plain = "NOT c.late AND NOT c.dearer"
    return (
        temp_table("gt_roll_best", sqlite=False)
        + "WITH pool AS MATERIALIZED (SELECT c.group_id, n.series_id, n.price, "
        f"{_PER_GPU.format(p='n')} AS pg, {', '.join('n.' + c for c in _RANK_COLS)} "
        f"FROM gt_roll_cur c JOIN gt_roll_new n ON {key_match('n', 'c')} "
        f"AND n.currency = c.currency WHERE {plain} "
        f"UNION ALL SELECT c.group_id, c.series_id, c.price, {_PER_GPU.format(p='c')}, "
        f"{', '.join('c.' + c for c in _RANK_COLS)} FROM gt_roll_cur c "
        f"WHERE c.ended_at IS NULL AND c.rollup_id IS NOT NULL AND c.changed IS NULL AND {plain} "
        "UNION ALL SELECT g.id, p.series_id, p.price, p.price / s.gpu_count, "
        f"{', '.join('s.' + c for c in _RANK_COLS)} FROM (SELECT DISTINCT {_KEYS} "
        "FROM gt_roll_cur WHERE dearer AND NOT late) e "
        f"JOIN series s ON {key_match('s', 'e')} "
        "JOIN price_points p ON p.series_id = s.id AND p.ended_at IS NULL "
        f"JOIN rollup_groups g ON {key_match('g', 's')} AND g.currency = p.currency), "
        "m AS (SELECT group_id, MIN(pg) AS pg FROM pool GROUP BY group_id) "
        "SELECT DISTINCT ON (pool.group_id) pool.group_id, pool.series_id, pool.price "
        "FROM pool JOIN m ON m.group_id = pool.group_id AND m.pg = pool.pg "
        f"ORDER BY pool.group_id, {', '.join('pool.' + c for c in _RANK_COLS)}, pool.series_id"
    )


def _write(x: Callable[[str], int]) -> int:
    """Close the stored cheapest where another won or nothing is left; open the
    winners. Returns the rollup intervals written."""
    x(
        "UPDATE price_rollups SET ended_at = :at WHERE id IN (SELECT c.rollup_id "
        "FROM gt_roll_cur c LEFT JOIN gt_roll_best b ON b.group_id = c.group_id "
        "WHERE c.ended_at IS NULL AND c.rollup_id IS NOT NULL AND NOT c.late "
        "AND (b.group_id IS NULL OR c.series_id <> b.series_id OR c.price <> b.price))"
    )
    return x(
        "INSERT INTO price_rollups (group_id, series_id, price, first_seen, ended_at) "
        "SELECT b.group_id, b.series_id, b.price, :at, NULL FROM gt_roll_best b "
        "LEFT JOIN gt_roll_cur c ON c.group_id = b.group_id AND c.ended_at IS NULL "
        "AND c.rollup_id IS NOT NULL "
        "WHERE c.rollup_id IS NULL OR c.series_id <> b.series_id OR c.price <> b.price"
    )
