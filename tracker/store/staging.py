"""A run's offers as the rows of its staging table (``gt_incoming``, tracker.store.ingest).

One call per offer of every run, so each is a C-level attribute fetch plus only the
conversions the driver cannot do itself. Also the SQL the ingest, the compact staging
(tracker.store.ingest), availability and delisting share over the run's staged rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from decimal import Decimal
from operator import attrgetter
from typing import Any

from sqlalchemy import Connection

from tracker.models import STORED_OFFER_COLUMNS as OFFER_COLUMNS
from tracker.models import ColumnKind, Offer
from tracker.store.identity import identity_hash
from tracker.store.schema import HARDWARE_COLUMNS, IDENTITY_COLUMNS
from tracker.store.types import quantize_money

__all__ = [
    "COPY_TYPE",
    "attributes_json",
    "copy_rows",
    "hardware_differs",
    "hardware_values",
    "latest_per_identity",
    "money_text",
    "new_series_insert",
    "offer_hash",
    "open_intervals",
    "store_row",
    "temp_table",
]


def money_text(value: Decimal | None) -> str | None:
    """SQLite's storage form of a decimal (see tracker.store.types.Money)."""
    return None if value is None else format(quantize_money(value), "f")


def attributes_json(attributes: Mapping[str, Any]) -> str | None:
    if not attributes:
        return None
    return json.dumps(dict(attributes), sort_keys=True, default=str, separators=(",", ":"))


_choice_value = attrgetter("value")


def _converters(sqlite: bool) -> tuple[tuple[int, Callable[[Any], Any]], ...]:
    """Per offer column needing one, (position, conversion to the staging table's form)."""
    convert: dict[ColumnKind, Callable[[Any], Any]] = {
        ColumnKind.CHOICE: _choice_value,
        ColumnKind.MAPPING: attributes_json,
    }
    if sqlite:
        convert[ColumnKind.NUMBER] = money_text
    return tuple((i, convert[c.kind]) for i, c in enumerate(OFFER_COLUMNS) if c.kind in convert)


_VALUES = attrgetter(*(c.name for c in OFFER_COLUMNS))
_CONVERTERS = {sqlite: _converters(sqlite) for sqlite in (False, True)}


_ATTRIBUTES = next(i for i, c in enumerate(OFFER_COLUMNS) if c.kind is ColumnKind.MAPPING)
_KEY = attrgetter(*IDENTITY_COLUMNS)


def store_row(offer: Offer, *, sqlite: bool = False) -> list[Any]:
    """The offer's OFFER_COLUMNS values as the staging table takes them (one call per
    offer of every run: one C-level attribute fetch, then only the columns that convert).
    On Postgres only the attributes convert: psycopg writes a StrEnum as its value."""
    values = list(_VALUES(offer))
    if sqlite:
        for i, convert in _CONVERTERS[True]:
            values[i] = convert(values[i])
    else:
        values[_ATTRIBUTES] = attributes_json(values[_ATTRIBUTES])
    return values


def offer_hash(offer: Offer) -> int:
    """:func:`~tracker.store.identity.identity_hash` of ``offer.key()`` (a StrEnum joins as
    its value, so the C-level attribute fetch serves as the key)."""
    return identity_hash(_KEY(offer))


COPY_TYPE = {
    **{
        c.column: {ColumnKind.FLAG: "bool", ColumnKind.NUMBER: "numeric"}.get(c.kind, "text")
        for c in OFFER_COLUMNS
    },
    "seq": "int8",
    "observed_at": "timestamptz",
    "identity_hash": "int8",
    "hw_id": "int4",
}
"""Postgres type of each staging column (the offer's, then the run's bookkeeping),
declared to COPY so psycopg picks each column's dumper once instead of per value."""


def hardware_values(staged: str, sqlite: bool) -> list[str]:
    """SQL: the HARDWARE_COLUMNS of the staging table aliased ``staged``, as ``series``
    takes them (the attributes' text as JSON on Postgres)."""
    attrs = f"{staged}.attributes" if sqlite else f"CAST({staged}.attributes AS JSON)"
    return [attrs if c == "attributes" else f"{staged}.{c}" for c in HARDWARE_COLUMNS]


def hardware_differs(series: str, staged: str) -> str:
    """SQL: the stored hardware of ``series`` differs from the staged facts of ``staged``.
    The attributes compare as text, unparsed: a JSON column keeps the text it was given."""
    return " OR ".join(
        (
            f"CAST({series}.{c} AS TEXT) IS DISTINCT FROM {staged}.{c}"
            if c == "attributes"
            else f"{series}.{c} IS DISTINCT FROM {staged}.{c}"
        )
        for c in HARDWARE_COLUMNS
    )


def open_intervals(observations: str, where: str) -> str:
    """SQL: open a price interval, first and last seen at its observation, for each row
    of ``observations`` (a table of the run's observations, aliased ``o``) that ``where``
    selects: the ingest's rounds and a compact chunk's plain price changes."""
    return (
        "INSERT INTO price_points (series_id, price, currency, first_seen, last_seen) "
        "SELECT o.series_id, o.price, o.currency, o.observed_at, o.observed_at "
        f"FROM {observations} AS o WHERE {where}"
    )


def temp_table(name: str, *, sqlite: bool, columns: str | None = None) -> str:
    """SQL: create the run's temporary table ``name``. With ``columns`` (their definitions)
    the whole statement; without, the head of a ``CREATE … AS`` for a SELECT to follow.
    Postgres drops it at commit; the ingest drops SQLite's (which outlive a transaction)."""
    drop = "" if sqlite else " ON COMMIT DROP"
    if columns is not None:
        return f"CREATE TEMPORARY TABLE {name} ({columns}){drop}"
    return f"CREATE TEMPORARY TABLE {name}{drop} AS "


def copy_rows(
    conn: Connection,
    table: str,
    columns: tuple[str, ...],
    rows: list[tuple[Any, ...]],
    types: list[str],
    *,
    sqlite: bool,
) -> None:
    """Write ``rows`` into the staging ``table``: COPY on Postgres (``types`` declared,
    so psycopg picks each column's dumper once), batched inserts on SQLite."""
    names = ", ".join(columns)
    raw = conn.connection.driver_connection
    assert raw is not None
    if sqlite:
        marks = ", ".join("?" for _ in columns)
        raw.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
        return
    with raw.cursor() as cur, cur.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


def new_series_insert(latest: str, *, sqlite: bool, repeats: bool) -> str:
    """SQL: insert a series for each row of ``latest`` (the run's latest row per
    identity, aliased ``i``) whose identity hash is not stored yet.

    An anti-join on the hash, not ON CONFLICT: a plain insert is much cheaper than 200k
    speculative ones; two collectors racing to create the same identity hit the unique
    index and fail one run, which the next cadence repeats. What is stored is found
    before, by a statement of its own: ``gt_latest``'s ``stored`` flag (several
    observations per series), or on Postgres ``gt_obs`` (the run's join to ``series``).
    A statement that inserts into ``series`` while its anti-join scans it visits every
    row it has inserted so far, once per incoming row, when the planner takes ``series``
    for small (statistics from when it was): a first collection of 200,000 offers into a
    store analysed while empty took 872 s. SQLite probes the hash's unique index
    whatever its statistics."""
    if repeats:
        unstored = "NOT i.stored"
    else:
        table = "series" if sqlite else "gt_obs"
        unstored = f"NOT EXISTS (SELECT 1 FROM {table} s WHERE s.identity_hash = i.identity_hash)"
    return (
        f"INSERT INTO series (identity_hash, {', '.join(IDENTITY_COLUMNS)}, "
        f"{', '.join(HARDWARE_COLUMNS)}, source, first_seen) SELECT i.identity_hash, "
        f"{', '.join('i.' + c for c in IDENTITY_COLUMNS)}, "
        f"{', '.join(hardware_values('i', sqlite))}, :source, i.first_obs FROM {latest} i "
        f"WHERE {unstored}"
    )


def latest_per_identity(*, sqlite: bool) -> str:
    """SQL: ``gt_latest``, the run's latest row of each identity of ``gt_incoming`` (it
    carries the identity's hardware facts and attributes) with its first observation
    (``first_obs``) and whether its series is ``stored`` already (for
    :func:`new_series_insert`: a join, which the planner may hash, the hash being
    unique in ``series``). Materialised so the planner joins a table of known size
    instead of a window subquery it misestimates."""
    identity = ", ".join(IDENTITY_COLUMNS)
    return (
        temp_table("gt_latest", sqlite=sqlite) + "SELECT w.*, s.id IS NOT NULL AS stored "
        f"FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {identity} "
        "ORDER BY observed_at DESC, seq DESC) AS rn, "
        f"MIN(observed_at) OVER (PARTITION BY {identity}) AS first_obs "
        "FROM gt_incoming) w LEFT JOIN series s ON s.identity_hash = w.identity_hash "
        "WHERE w.rn = 1"
    )
