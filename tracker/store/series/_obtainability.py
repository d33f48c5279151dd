"""Obtainability: how much of a recent window an offer was reported rentable.

Read from the availability series (``availability_points``) in one statement: every
series' shares from the running totals its intervals carry (``_window_totals``), a
page of listed series' by summing their intervals in the window; no interval is
brought into Python. The rules, the same on both engines:

* An interval states its availability from ``first_seen`` until the observation that
  ended it (``ended_at``: a different state, a state-less sighting or a delisting);
  the open interval until its latest observation (``last_seen``). Nothing is assumed
  past ``last_seen`` of the open interval.
* Time no interval covers is **unknown** (before the first report, after a state-less
  sighting, while delisted, after the last observation) and is left out of the
  denominator: ``obtainability = rentable seconds ÷ known seconds`` within the window.
* ``available`` and ``low`` both count as rentable (``low`` is the provider's "few
  left": still rentable, as ``offers --available`` has it); ``unavailable`` does not.
* No known second in the window (a provider that never reports availability): None.

A group (provider, GPU model, region) pools its offers: the sum of their rentable
seconds ÷ the sum of their known seconds, so an offer reported for longer weighs more.

The time until an offer came back: a *spell* starts at the first report of
``unavailable`` after a rentable one (or the first report in the window) and ends at
the next report of a rentable state; spells still running are not counted. Only
spells that came back within the 30-day window are counted, measured in wall time
(unknown gaps inside a spell included). The median is taken in SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, Float, Integer, String, bindparam, text
from sqlalchemy.sql.elements import BindParameter

from tracker.models import OFFER_KEY_FIELDS, Availability, OfferKey
from tracker.store.series._window_totals import REACH, sql_parts, window_totals
from tracker.store.sql import Bind, execute
from tracker.store.types import UTCDateTime

__all__ = [
    "GROUPINGS",
    "WINDOWS",
    "GroupObtainability",
    "Obtainability",
    "group_obtainability",
    "keyed_obtainability",
    "obtainability",
]

WINDOWS = (timedelta(days=7), timedelta(days=30))
"""The two windows every reader shows (``obtainability_7d``, ``obtainability_30d``)."""

_RENTABLE = tuple(a.value for a in Availability if a.rentable)
_IDS_INLINE = 1000
"""Above this many asked-for series, every series is computed and the rest dropped:
a long IN list costs the planner more than the aggregate saves."""


@dataclass(frozen=True, slots=True)
class Obtainability:
    """One offer's (or one group's) shares of its windows and its recoveries."""

    share_7d: float | None
    share_30d: float | None
    known_30d_seconds: float
    """Seconds of the 30-day window with a reported state (the denominator)."""
    median_back_seconds: float | None = None
    """Median time from an ``unavailable`` report to the next rentable one (30 days)."""
    spells: int = 0
    """Unavailable spells that came back within the 30-day window."""


@dataclass(frozen=True, slots=True)
class GroupObtainability:
    provider: str
    gpu_model: str
    region: str
    offers: int
    """Offers of the group with a reported state in the 30-day window."""
    figures: Obtainability


def _dialect(bind: Bind) -> str:
    engine = bind if isinstance(bind, Engine) else bind.engine
    return engine.dialect.name


_IDS = " AND series_id IN :ids"
"""The series clause of a read of listed series (a page of offers)."""


def _overlapping(columns: str, series_clause: str) -> str:
    """The intervals that overlap the 30-day window. Of every series: two branches each
    with an index of its own, those that ended inside the window
    (``ix_availability_points_ended_at``, a range of the newest entries) and the open
    ones (the open-interval partial index); with one ``ended_at IS NULL OR ended_at >
    …`` condition the planner chose a parallel scan of the whole table over 45 days of
    bench history. Of listed series (:data:`_IDS`): one branch through the
    ``(series_id, first_seen)`` index, since ANDing the window's bitmap to it costs more
    than filtering a page of series' intervals."""
    if series_clause == _IDS:
        return (
            f"SELECT {columns} FROM availability_points WHERE (ended_at IS NULL "
            f"OR ended_at > :w30) AND first_seen < :at{series_clause}"
        )
    branch = f"SELECT {columns} FROM availability_points WHERE {{}} AND first_seen < :at"
    return (
        branch.format("ended_at > :w30")
        + series_clause
        + " UNION ALL "
        + branch.format("ended_at IS NULL")
        + series_clause
    )


def _window_sums(dialect: str, series_clause: str) -> str:
    """Per series: rentable and known seconds of each window. Of every series (or a
    subquery's): from the intervals' running totals at the windows' ends
    (:func:`~tracker.store.series._window_totals.window_totals`). Of listed series (a
    page): one aggregate over their intervals that overlap the 30-day window, through
    the ``(series_id, first_seen)`` index; each interval's start and end become epoch
    seconds once, the windows' starts are bound as epoch seconds."""
    if series_clause != _IDS:
        return window_totals(dialect, series_clause)
    f = sql_parts(dialect)
    end = f["min"].format(a="COALESCE(ended_at, last_seen)", b=":at")
    sums = []
    for name in ("7", "30"):
        lo = f["max"].format(a="s", b=f":e{name}")
        known = f["max"].format(a=f"e - {lo}", b="0.0")
        sums.append(f"SUM({known}) AS known_{name}")
        sums.append(f"SUM(CASE WHEN up = 1 THEN {known} ELSE 0.0 END) AS up_{name}")
    columns = (
        "series_id, CASE WHEN availability IN :up THEN 1 ELSE 0 END AS up, "
        f"{f['epoch'].format(a='first_seen')} AS s, {f['epoch'].format(a=end)} AS e"
    )
    return (
        f"SELECT series_id, {', '.join(sums)} FROM ({_overlapping(columns, series_clause)}) iv "
        "GROUP BY series_id"
    )


def _spells(dialect: str, series_clause: str) -> str:
    """Per series, each unavailable spell that came back: its length in seconds. A run
    of non-rentable intervals after the k-th rentable one (``grp`` = k) starts at its
    first report and ends at the (k+1)-th rentable interval's first report."""
    f = sql_parts(dialect)
    return (
        "WITH iv AS ("
        + _overlapping(
            "series_id, first_seen, CASE WHEN availability IN :up THEN 1 ELSE 0 END AS up",
            series_clause,
        )
        + "), "
        "marked AS (SELECT series_id, first_seen, up, SUM(up) OVER (PARTITION BY series_id "
        "ORDER BY first_seen ROWS UNBOUNDED PRECEDING) AS grp FROM iv), "
        "down AS (SELECT series_id, grp, MIN(first_seen) AS down_at FROM marked "
        "WHERE up = 0 GROUP BY series_id, grp), "
        "back AS (SELECT series_id, grp, first_seen AS back_at FROM marked WHERE up = 1) "
        f"SELECT d.series_id, {f['secs'].format(a='d.down_at', b='b.back_at')} AS secs "
        "FROM down d JOIN back b ON b.series_id = d.series_id AND b.grp = d.grp + 1 "
        "WHERE b.back_at > :w30"
    )


def _median(values_sql: str, key: str) -> str:
    """The median of ``secs`` per ``key`` over the rows of ``values_sql``, in portable
    SQL (SQLite has no percentile): the middle row, or the mean of the middle two."""
    return (
        f"SELECT {key}, AVG(secs) AS median, MAX(n) AS n FROM (SELECT {key}, secs, "
        f"ROW_NUMBER() OVER (PARTITION BY {key} ORDER BY secs) AS rn, "
        f"COUNT(*) OVER (PARTITION BY {key}) AS n FROM ({values_sql}) v) r "
        f"WHERE rn IN ((n + 1) / 2, (n + 2) / 2) GROUP BY {key}"
    )


def _params(stmt: Any, at: datetime, ids: Sequence[int] | None) -> Any:
    params: list[BindParameter[Any]] = [
        bindparam("at", at, UTCDateTime()),
        bindparam("w7", at - WINDOWS[0], UTCDateTime()),
        bindparam("w30", at - WINDOWS[1], UTCDateTime()),
        bindparam("up", list(_RENTABLE), String(), expanding=True),
        bindparam("e7", (at - WINDOWS[0]).timestamp(), Float()),
        bindparam("e30", (at - WINDOWS[1]).timestamp(), Float()),
        bindparam("eat", at.timestamp(), Float()),
        bindparam("r7", at - WINDOWS[0] + REACH, UTCDateTime()),
        bindparam("r30", at - WINDOWS[1] + REACH, UTCDateTime()),
    ]
    if ids is not None:
        params.append(bindparam("ids", list(ids), Integer(), expanding=True))
    sql = stmt.text
    return stmt.bindparams(*(p for p in params if f":{p.key}" in sql))


def _share(up: Any, known: Any) -> float | None:
    known_f = float(known or 0)
    return float(up or 0) / known_f if known_f > 0 else None


def obtainability(
    bind: Bind,
    at: datetime,
    series_ids: Sequence[int] | None = None,
    *,
    recoveries: bool = True,
) -> dict[int, Obtainability]:
    """Obtainability of each series with a reported state in the 30 days up to ``at``
    (all series, or ``series_ids``'): series without one are absent, which readers show
    as None. ``recoveries`` False skips the spells' median (one statement fewer).
    Raises :class:`~tracker.store.DatabaseError`."""
    dialect = _dialect(bind)
    inline = series_ids is not None and len(series_ids) <= _IDS_INLINE
    ids = list(series_ids) if inline and series_ids is not None else None
    clause = _IDS if ids is not None else ""
    if ids == []:
        return {}
    sums = _params(text(_window_sums(dialect, clause)), at, ids).columns(
        series_id=Integer(), known_7=Float(), up_7=Float(), known_30=Float(), up_30=Float()
    )
    rows = execute(bind, sums, "cannot read the availability history")
    backs: dict[int, tuple[float, int]] = {}
    if recoveries:
        median = text(_median(_spells(dialect, clause), "series_id"))
        stmt = _params(median, at, ids).columns(series_id=Integer(), median=Float(), n=Integer())
        for r in execute(bind, stmt, "cannot read the availability history"):
            backs[int(r.series_id)] = (float(r.median), int(r.n))
    wanted = None if series_ids is None else set(series_ids)
    result = {}
    # Unpacked by position: a Row's attribute lookups by name, ten a row, took 0.25 s
    # for 100,000 series, more than half the statement's time (bench/obtainability.py).
    for series_id, known_7, up_7, known_30, up_30 in rows:
        sid = int(series_id)
        if (wanted is not None and sid not in wanted) or not float(known_30 or 0) > 0:
            continue
        back, spells = backs.get(sid, (None, 0))
        result[sid] = Obtainability(
            _share(up_7, known_7), _share(up_30, known_30), float(known_30), back, spells
        )
    return result


GROUPINGS = ("provider", "gpu_model", "region")
"""What a group may be keyed by (any of them, in this order)."""


def group_obtainability(
    bind: Bind,
    at: datetime,
    gpu_models: Sequence[str] | None = None,
    *,
    per: Sequence[str] = GROUPINGS,
) -> list[GroupObtainability]:
    """Obtainability per (provider, GPU model, region), or per the ``per`` subset of
    them (the others read ""), pooled over its offers' seconds, with the median time
    back over every spell of its offers (all groups, or those of ``gpu_models``);
    groups without a reported state in 30 days are absent. Ordered by the key.
    Raises :class:`~tracker.store.DatabaseError`."""
    columns = [c for c in GROUPINGS if c in per]
    if not columns or len(columns) != len(set(per)):
        raise ValueError(f"group by a subset of {', '.join(GROUPINGS)}, not {list(per)}")
    dialect = _dialect(bind)
    models = None if gpu_models is None else list(gpu_models)
    if models == []:
        return []
    clause = (
        " AND series_id IN (SELECT id FROM series WHERE gpu_model IN :models)"
        if models is not None
        else ""
    )
    key = ", ".join(f"s.{c}" for c in columns)
    sums = (
        f"SELECT {key}, COUNT(*) AS offers, SUM(w.known_7) AS known_7, SUM(w.up_7) AS up_7, "
        "SUM(w.known_30) AS known_30, SUM(w.up_30) AS up_30 "
        f"FROM ({_window_sums(dialect, clause)}) w JOIN series s ON s.id = w.series_id "
        f"WHERE w.known_30 > 0 GROUP BY {key}"
    )
    spells = (
        f"SELECT {key}, sp.secs FROM ({_spells(dialect, clause)}) sp "
        "JOIN series s ON s.id = sp.series_id"
    )
    on = " AND ".join(f"m.{c} = a.{c}" for c in columns)
    picked = ", ".join(f"a.{c}" if c in columns else f"'' AS {c}" for c in GROUPINGS)
    stmt = text(
        f"SELECT {picked}, a.offers, a.known_7, a.up_7, a.known_30, a.up_30, m.median, m.n "
        f"FROM ({sums}) a LEFT JOIN ({_median(spells, ', '.join(columns))}) m ON {on} "
        f"ORDER BY {', '.join(f'a.{c}' for c in columns)}"
    )
    stmt = _params(stmt, at, None)
    if models is not None:
        stmt = stmt.bindparams(bindparam("models", models, String(), expanding=True))
    stmt = stmt.columns(
        provider=String(),
        gpu_model=String(),
        region=String(),
        offers=Integer(),
        known_7=Float(),
        up_7=Float(),
        known_30=Float(),
        up_30=Float(),
        median=Float(),
        n=Integer(),
    )
    rows = execute(bind, stmt, "cannot read the availability history")
    return [
        GroupObtainability(
            r.provider,
            r.gpu_model,
            r.region,
            int(r.offers),
            Obtainability(
                _share(r.up_7, r.known_7),
                _share(r.up_30, r.known_30),
                float(r.known_30),
                None if r.median is None else float(r.median),
                int(r.n or 0),
            ),
        )
        for r in rows
    ]


def keyed_obtainability(bind: Bind, at: datetime) -> dict[OfferKey, Obtainability]:
    """The shares of every series with a reported state in the 30 days up to ``at``, by
    its identity key (what the recommender's offer rows carry instead of a series id);
    no recoveries. Raises :class:`~tracker.store.DatabaseError`."""
    keys = ", ".join(f"s.{c}" for c in OFFER_KEY_FIELDS)
    sql = (
        f"SELECT {keys}, w.known_7, w.up_7, w.known_30, w.up_30 FROM "
        f"({_window_sums(_dialect(bind), '')}) w JOIN series s ON s.id = w.series_id "
        "WHERE w.known_30 > 0"
    )
    rows = execute(bind, _params(text(sql), at, None), "cannot read the availability history")
    width = len(OFFER_KEY_FIELDS)
    return {
        tuple(r[:width]): Obtainability(
            _share(r[width + 1], r[width]), _share(r[width + 3], r[width + 2]), float(r[width + 2])
        )
        for r in rows
    }
