"""The rollup's forward step: a run whose every change happened at one time, after
everything its keys' rollup holds (the usual run: every price observed at the run's
time), updated set-wise in SQL from the run's own changes only.

For each group (key and currency) the new cheapest at that time is the cheapest of
the run's new prices in it and the stored cheapest, unless the stored cheapest's own
series changed: if it got dearer (or went away) some untouched series may now be the
cheapest, and only a recomputation of the key from that time can tell, so those keys
are handed back to :func:`tracker.store.rollup.maintain_keys`. So is every key whose
stored intervals reach that time (a dated observation of an earlier run ahead of it).
Cost: a few statements over the run's changes and one probe per touched group.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, text

from tracker.store.staging import temp_table

__all__ = ["forward"]

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
    redo = {
        (str(r[0]), str(r[1]), str(r[2]), str(r[3]))
        for r in conn.execute(
            text(
                f"SELECT DISTINCT {keys} FROM gt_roll_cur c WHERE c.first_seen >= :at "
                f"OR c.ended_at >= :at OR ({dearer})"
            ),
            {"at": at},
        )
    }
    if redo:
        x(
            temp_table("gt_roll_redo", sqlite=sqlite)
            + f"SELECT DISTINCT {keys} FROM gt_roll_cur c WHERE c.first_seen >= :at "
            f"OR c.ended_at >= :at OR ({dearer})"
        )
        skip = f"AND NOT EXISTS (SELECT 1 FROM gt_roll_redo d WHERE {_match('d', '{a}')})"
    else:
        skip = ""
    # The candidates: the run's new prices, and the stored cheapest where its series
    # did not change; the first by price per GPU-hour, then identity, wins.
    rank = f"ORDER BY pg, {_RANK}, series_id"
    x(
        temp_table("gt_roll_best", sqlite=sqlite)
        + "SELECT group_id, series_id, price FROM (SELECT group_id, series_id, price, "
        f"ROW_NUMBER() OVER (PARTITION BY group_id {rank}) AS rn FROM ("
        f"SELECT g.id AS group_id, n.series_id, n.price, {per_gpu.format(p='n')} AS pg, "
        f"{', '.join('n.' + c for c in _RANK.split(', '))} FROM gt_roll_new n "
        f"JOIN rollup_groups g ON {_match('g', 'n')} AND g.currency = n.currency "
        f"WHERE 1 = 1 {skip.format(a='n')} "
        f"UNION ALL SELECT c.group_id, c.series_id, c.price, {per_gpu.format(p='c')}, "
        f"{', '.join('c.' + c for c in _RANK.split(', '))} FROM gt_roll_cur c "
        "WHERE c.ended_at IS NULL AND c.rollup_id IS NOT NULL AND c.changed IS NULL "
        f"{skip.format(a='c')}) pool) ranked WHERE rn = 1"
    )
    changed = (
        "FROM gt_roll_best b LEFT JOIN gt_roll_cur c ON c.group_id = b.group_id "
        "AND c.ended_at IS NULL AND c.rollup_id IS NOT NULL "
        "WHERE c.rollup_id IS NULL OR c.series_id <> b.series_id OR c.price <> b.price"
    )
    x(
        "UPDATE price_rollups SET ended_at = :at WHERE id IN (SELECT c.rollup_id "
        "FROM gt_roll_best b JOIN gt_roll_cur c ON c.group_id = b.group_id "
        "AND c.ended_at IS NULL AND c.rollup_id IS NOT NULL "
        "WHERE c.series_id <> b.series_id OR c.price <> b.price)"
    )
    written = x(
        "INSERT INTO price_rollups (group_id, series_id, price, first_seen, ended_at) "
        f"SELECT b.group_id, b.series_id, b.price, :at, NULL {changed}"
    )
    for table in ("gt_roll_ts", "gt_roll_cur", "gt_roll_best", "gt_roll_redo"):
        x(f"DROP TABLE IF EXISTS {table}")
    return redo, written
