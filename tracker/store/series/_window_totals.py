"""A window's known and rentable seconds per series from the running totals, in SQL.

Every availability interval carries its series' totals before it started
(``known_before``, ``rentable_before``) and when the series' previous interval ended
(``previous_end``, None for the first): migration 0014, kept by the write path. A
series' intervals never overlap (observations older than what is stored are dropped),
so the seconds a series was reported up to a time ``T`` are

    K(T) = known_before(F) + max(0, min(end(F), T) - first_seen(F))

with ``F`` the interval for which ``previous_end <= T < end`` (the first that ended
after ``T``), or the series' last interval if it has ``previous_end <= T`` (everything
before it ended by ``T``). A window's known seconds are ``K(at) - K(start)``; the
rentable ones the same with ``rentable_before`` and only a rentable ``F``'s length.
Instead of summing every interval of the 30-day window (about 14 a series), a series
needs one interval at each of three times:

* its **last** interval (the open one, or the ``last_closed`` one; both through
  partial indexes), for ``at`` and for any window start after its ``previous_end``;
* at each window start, the interval that ended within :data:`REACH` after it with
  ``previous_end`` before it (a short range of ``ix_availability_points_ended_at``,
  at most one a series);
* neither (an interval, or a gap and an interval, longer than :data:`REACH`; a time
  ``at`` before the last interval's ``previous_end``): a lookup of the series' latest
  interval started before ``T`` through ``(series_id, first_seen)``. So the figures
  hold for intervals of any length; only the speed depends on :data:`REACH`.

The series read are those whose last interval reaches into the 30-day window; a
series without a known second in it comes out with zero known seconds.
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["REACH", "sql_parts", "window_totals"]

REACH = timedelta(days=4)
"""How far past a window's start the intervals ending there are read. Availability
flips every few hours to days; a longer interval or gap costs its series a lookup."""


def sql_parts(dialect: str) -> dict[str, str]:
    """The few spellings the engines differ in: a time as epoch seconds (a double on
    Postgres: ``EXTRACT`` gives a numeric, several times slower to sum), seconds
    between two times, the larger and the smaller of two values."""
    if dialect == "postgresql":
        return {
            "epoch": "date_part('epoch', {a})",
            "secs": "date_part('epoch', {b} - {a})",
            "max": "GREATEST({a}, {b})",
            "min": "LEAST({a}, {b})",
        }
    return {
        "epoch": "((julianday({a}) - 2440587.5) * 86400.0)",
        "secs": "((julianday({b}) - julianday({a})) * 86400.0)",
        "max": "MAX({a}, {b})",
        "min": "MIN({a}, {b})",
    }


def _row(f: dict[str, str], alias: str = "") -> str:
    """An interval's columns: totals, start and end (epoch), rentable (1.0 or 0.0), and
    the previous interval's end."""
    a = f"{alias}." if alias else ""
    return (
        f"{a}series_id AS series_id, {a}known_before AS kb, {a}rentable_before AS rb, "
        f"{a}previous_end AS pe, {f['epoch'].format(a=f'{a}first_seen')} AS s, "
        f"{f['epoch'].format(a=f'COALESCE({a}ended_at, {a}last_seen)')} AS e, "
        f"CASE WHEN {a}availability IN :up THEN 1.0 ELSE 0.0 END AS up"
    )


def _upto(f: dict[str, str], t: str, x: str) -> tuple[str, str]:
    """K(t) and the rentable seconds up to ``t`` (an epoch bind) from the interval
    ``F`` whose columns are prefixed ``x``."""
    clipped = f["max"].format(a=f["min"].format(a=f"{x}e", b=t) + f" - {x}s", b="0.0")
    return f"{x}kb + {clipped}", f"{x}rb + {x}up * {clipped}"


def _lookup(f: dict[str, str], t: str, before: str) -> tuple[str, str]:
    """K(t) and rentable seconds up to ``t`` for the series of ``l``, through its latest
    interval that started before ``before`` (0 without one)."""
    known, rentable = _upto(f, t, "p.")
    pick = (
        f"FROM (SELECT {_row(f, 'q')} FROM availability_points q "
        f"WHERE q.series_id = l.series_id AND q.first_seen < {before} "
        "ORDER BY q.first_seen DESC, q.id DESC LIMIT 1) p"
    )
    return f"COALESCE((SELECT {known} {pick}), 0.0)", f"COALESCE((SELECT {rentable} {pick}), 0.0)"


def _at_start(f: dict[str, str], w: str, series_clause: str) -> str:
    """Per series, the interval that ended within REACH after the window start ``w``
    with its predecessor ended by then: K and the rentable seconds up to ``w``."""
    known, rentable = _upto(f, f":e{w}", "")
    return (
        f"SELECT series_id, {known} AS k, {rentable} AS r FROM (SELECT {_row(f)} "
        f"FROM availability_points WHERE ended_at > :w{w} AND ended_at <= :r{w} "
        f"AND (previous_end IS NULL OR previous_end <= :w{w}){series_clause}) c"
    )


_POINTS = {"at": (":eat", ":at"), "7": (":e7", ":w7"), "30": (":e30", ":w30")}
"""The three times K is needed at, each as (epoch bind, time bind): ``at`` and the two
windows' starts."""


def window_totals(dialect: str, series_clause: str) -> str:
    """SQL: per series whose last interval reaches into the 30-day window before
    ``:at``, its known and rentable seconds of both windows (``known_7``, ``up_7``,
    ``known_30``, ``up_30``). Binds: ``:at``, ``:w7``/``:w30`` (the starts),
    ``:r7``/``:r30`` (starts + REACH), ``:eat``/``:e7``/``:e30`` (epoch seconds),
    ``:up`` (the rentable states); ``series_clause`` narrows every read. The planner
    prices the lookups as if every row took them: the store's reads run without JIT
    (tracker.store.sql.reading), or it would compile the statement (seconds)."""
    f = sql_parts(dialect)
    row = _row(f)
    last = (
        f"SELECT {row} FROM availability_points WHERE ended_at IS NULL "
        f"AND last_seen > :w30{series_clause} UNION ALL SELECT {row} FROM "
        f"availability_points WHERE last_closed AND ended_at > :w30{series_clause}"
    )
    picks = []
    for point, (t, when) in _POINTS.items():
        # the last interval if everything before it ended by then, else the interval
        # found at a window's start, else a lookup of the series' own
        own, look = _upto(f, t, "l."), _lookup(f, t, when)
        for i, col in enumerate("kr"):
            near = f"WHEN n{point}.series_id IS NOT NULL THEN n{point}.{col} "
            picks.append(
                f"CASE WHEN l.pe IS NULL OR l.pe <= {when} THEN {own[i]} "
                f"{near if point != 'at' else ''}ELSE {look[i]} END AS {col}_{point}"
            )
    return (
        "SELECT series_id, k_at - k_7 AS known_7, r_at - r_7 AS up_7, "
        "k_at - k_30 AS known_30, r_at - r_30 AS up_30 FROM ("
        f"SELECT l.series_id, {', '.join(picks)} FROM ({last}) l "
        f"LEFT JOIN ({_at_start(f, '7', series_clause)}) n7 ON n7.series_id = l.series_id "
        f"LEFT JOIN ({_at_start(f, '30', series_clause)}) n30 ON n30.series_id = l.series_id"
        ") t"
    )
