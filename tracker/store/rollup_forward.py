"""The rollup's forward step: a run whose every change happened at one time, after
everything its keys' rollup holds (the usual run: every price observed at the run's
time), updated set-wise in SQL from the run's own changes only.

For each group (key and currency) the new cheapest at that time is the cheapest of
the run's new prices in it and the stored cheapest, unless the stored cheapest's own
series changed: if it got dearer (or went away) some untouched series may now be the
cheapest, so for those keys every open price of their offers competes (one pass over
``series`` for them). A key whose stored intervals reach that time (a dated
observation of an earlier run ahead of it) is handed back to
:func:`tracker.store.rollup.maintain_keys`. Cost: a few statements over the run's
changes and one probe per touched group.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import Connection, text

from tracker.store.staging import temp_table

__all__ = ["forward"]

log = logging.getLogger(__name__)

_KEY = ("gpu_model", "pricing", "provider", "region")
_RANK = "instance_type, zone, payment_option"


def _match(a: str, b: str) -> str:
    return " AND ".join(f"{a}.{c} = {b}.{c}" for c in _KEY)


def forward(
    conn: Connection, *, at: datetime, delisted: bool
) -> tuple[set[tuple[str, str, str, str]], int]:
    """Apply the run's changes at ``at`` (Postgres) from ``gt_roll_new`` (the run's new
    intervals with their series' key,
    GPU count and rank columns) and, with ``delisted``, ``gt_roll_gone`` (the series it
    delisted then). Returns the keys that need recomputing from ``at`` and the rollup
    intervals written."""
    sqlite = False  # Postgres only: SQLite's division is binary floating point

    def x(sql: str) -> int:
        return conn.execute(text(sql), {"at": at}).rowcount

    per_gpu = "{p}.price / {p}.gpu_count"
    keys = ", ".join(_KEY)
    gone = "UNION SELECT series_id FROM gt_roll_gone" if delisted else ""
    x(temp_table("gt_roll_ts", sqlite=sqlite) + f"SELECT series_id FROM gt_roll_new {gone}")
    x("CREATE UNIQUE INDEX gt_roll_ts_id ON gt_roll_ts (series_id)")
    x(
        f"INSERT INTO rollup_groups ({keys}, currency) SELECT DISTINCT {keys}, currency "
        "FROM gt_roll_new n WHERE NOT EXISTS (SELECT 1 FROM rollup_groups g WHERE "
        f"{_match('g', 'n')} AND g.currency = n.currency)"
    )
    touched_keys = f"SELECT {keys} FROM gt_roll_new"
    if delisted:
        touched_keys += f" UNION SELECT {', '.join('s.' + c for c in _KEY)} FROM gt_roll_gone d "
        touched_keys += "JOIN series s ON s.id = d.series_id"
    # Each touched group with its latest stored interval (if any) and that offer's
    # ranking columns and new price in the group's currency (if the run changed it).
    x(
        temp_table("gt_roll_cur", sqlite=sqlite)
        + f"SELECT g.id AS group_id, {', '.join('g.' + c for c in _KEY)}, g.currency, "
        "r.id AS rollup_id, r.series_id, r.price, r.first_seen, r.ended_at, s.gpu_count, "
        f"{', '.join('s.' + c for c in _RANK.split(', '))}, "
        "(SELECT 1 FROM gt_roll_ts t WHERE t.series_id = r.series_id) AS changed, "
        "(SELECT n.price FROM gt_roll_new n WHERE n.series_id = r.series_id "
        "AND n.currency = g.currency) AS new_price "
        f"FROM (SELECT DISTINCT {keys} FROM ({touched_keys}) tk) k "
        f"JOIN rollup_groups g ON {_match('g', 'k')} "
        "LEFT JOIN price_rollups r ON r.id = (SELECT q.id FROM price_rollups q "
        "WHERE q.group_id = g.id ORDER BY q.first_seen DESC LIMIT 1) "
        "LEFT JOIN series s ON s.id = r.series_id"
    )
    dearer = (
        "c.changed IS NOT NULL AND c.ended_at IS NULL AND (c.new_price IS NULL OR "
        + per_gpu.format(p="c").replace("c.price", "c.new_price")
        + " > "
        + per_gpu.format(p="c")
        + ")"
    )
    late_sql = (
        f"SELECT DISTINCT {keys} FROM gt_roll_cur c WHERE c.first_seen >= :at OR c.ended_at >= :at"
    )
    late = {
        (str(r[0]), str(r[1]), str(r[2]), str(r[3]))
        for r in conn.execute(text(late_sql), {"at": at})
    }
    x(temp_table("gt_roll_late", sqlite=sqlite) + late_sql)
    not_late = f"NOT EXISTS (SELECT 1 FROM gt_roll_late d WHERE {_match('d', '{a}')})"
    dearer_keys = x(
        temp_table("gt_roll_dearer", sqlite=sqlite)
        + f"SELECT DISTINCT {keys} FROM gt_roll_cur c WHERE ({dearer}) AND "
        + not_late.format(a="c")
    )
    for table in ("gt_roll_cur", "gt_roll_late", "gt_roll_dearer"):
        x(f"ANALYZE {table}")  # else planned as one row each: nested loops over the changes
    # The groups of those keys, by id: a hashed NOT IN, not an anti-join on four texts.
    x(
        temp_table("gt_roll_skip", sqlite=sqlite)
        + f"SELECT g.id AS group_id FROM rollup_groups g JOIN (SELECT {keys} FROM gt_roll_late "
        f"UNION SELECT {keys} FROM gt_roll_dearer) k ON {_match('g', 'k')}"
    )
    plain = "{a} NOT IN (SELECT group_id FROM gt_roll_skip)"
    rank_cols = _RANK.split(", ")
    # The candidates: the run's new prices and the stored cheapest where its series did
    # not change; for a key whose cheapest got dearer or went away, every open price of
    # its offers. The first by price per GPU-hour, then identity, wins.
    x(
        temp_table("gt_roll_best", sqlite=sqlite)
        + "SELECT group_id, series_id, price FROM (SELECT group_id, series_id, price, "
        f"ROW_NUMBER() OVER (PARTITION BY group_id ORDER BY pg, {_RANK}, series_id) AS rn "
        f"FROM (SELECT g.id AS group_id, n.series_id, n.price, {per_gpu.format(p='n')} AS pg, "
        f"{', '.join('n.' + c for c in rank_cols)} FROM gt_roll_new n "
        f"JOIN rollup_groups g ON {_match('g', 'n')} AND g.currency = n.currency "
        f"WHERE {plain.format(a='g.id')} "
        f"UNION ALL SELECT c.group_id, c.series_id, c.price, {per_gpu.format(p='c')}, "
        f"{', '.join('c.' + c for c in rank_cols)} FROM gt_roll_cur c "
        "WHERE c.ended_at IS NULL AND c.rollup_id IS NOT NULL AND c.changed IS NULL "
        f"AND {plain.format(a='c.group_id')} "
        "UNION ALL SELECT g.id, p.series_id, p.price, p.price / s.gpu_count, "
        f"{', '.join('s.' + c for c in rank_cols)} FROM gt_roll_dearer e "
        f"JOIN series s ON {_match('s', 'e')} "
        "JOIN price_points p ON p.series_id = s.id AND p.ended_at IS NULL "
        f"JOIN rollup_groups g ON {_match('g', 's')} AND g.currency = p.currency"
        ") pool) ranked WHERE rn = 1"
    )
    # Close the stored cheapest where another won or nothing is left; open the winners.
    x(
        "UPDATE price_rollups SET ended_at = :at WHERE id IN (SELECT c.rollup_id "
        "FROM gt_roll_cur c LEFT JOIN gt_roll_best b ON b.group_id = c.group_id "
        "WHERE c.ended_at IS NULL AND c.rollup_id IS NOT NULL AND "
        f"{not_late.format(a='c')} AND (b.group_id IS NULL OR c.series_id <> b.series_id "
        "OR c.price <> b.price))"
    )
    written = x(
        "INSERT INTO price_rollups (group_id, series_id, price, first_seen, ended_at) "
        "SELECT b.group_id, b.series_id, b.price, :at, NULL FROM gt_roll_best b "
        "LEFT JOIN gt_roll_cur c ON c.group_id = b.group_id AND c.ended_at IS NULL "
        "AND c.rollup_id IS NOT NULL "
        "WHERE c.rollup_id IS NULL OR c.series_id <> b.series_id OR c.price <> b.price"
    )
    temps = ("gt_roll_ts", "gt_roll_cur", "gt_roll_best", "gt_roll_late", "gt_roll_dearer")
    for table in (*temps, "gt_roll_skip"):
        x(f"DROP TABLE IF EXISTS {table}")
    log.debug("rollup forward: %d keys whose cheapest got dearer or went away", dearer_keys)
    return late, written
