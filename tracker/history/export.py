"""``export``: stored price intervals joined with their offers, as CSV or Parquet.

For analysts (pandas, DuckDB, spreadsheets). Rows arrive in batches from a server-side
cursor and each batch is written before the next is read, so memory stays at one batch
whatever the size of the history. The file is written beside its destination and moved
into place when complete: a failed export leaves no half-written file under its name.

Money is exact: a decimal string in CSV, ``decimal128(20, 10)`` in Parquet (as stored);
times are UTC (ISO-8601 with ``Z`` in CSV, ``timestamp[us, UTC]`` in Parquet). A USD (or
view-currency) figure is empty/null where no exchange rate was in force: the interval
itself is stored data and stays in the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tracker.csv_cells import csv_writer
from tracker.encode import jsonable
from tracker.history.files import ExportFormat
from tracker.store.reads import EXPORT_COLUMNS

__all__ = ["DISPLAY_COLUMNS", "NET_COLUMNS", "SCHEMA", "schema_of", "write_export"]

_MONEY = pa.decimal128(20, 10)
_COUNT = {"gpu_count", "gpu_memory_gib", "vcpus", "memory_gib"}
_NET = {"net_price_per_hour", "net_price_per_hour_usd"}
_MONEY_COLUMNS = {
    "price_per_hour",
    "price_per_hour_usd",
    "display_price_per_hour",
    *_NET,
    *_COUNT,
}
_TIMES = {"first_seen", "last_seen", "ended_at"}
_NULLABLE = {
    *_TIMES,
    *_COUNT,
    "price_per_hour_usd",
    "display_price_per_hour",
    "net_price_per_hour_usd",
    "discount",
}

DISPLAY_COLUMNS = ("display_currency", "display_price_per_hour")
"""With ``--currency C`` (not USD): C, and the price in C at the rate in force when the
interval began (the provider's own figure when it is in C already; empty without a rate)."""


NET_COLUMNS = ("net_price_per_hour", "net_price_per_hour_usd", "discount")
"""With discounts configured: each interval's net price (own currency, USD) under the
rule in force when it began, and that rule's name (empty: list price)."""


def schema_of(columns: Sequence[str]) -> pa.Schema:
    """The Parquet schema of ``columns``: money exact, times UTC, the rest text."""
    return pa.schema(
        [
            pa.field(
                name,
                _MONEY
                if name in _MONEY_COLUMNS
                else pa.timestamp("us", tz="UTC")
                if name in _TIMES
                else pa.string(),
                nullable=name in _NULLABLE,
            )
            for name in columns
        ]
    )


SCHEMA = schema_of(EXPORT_COLUMNS)
"""The Parquet schema: fixed up front, so every batch (even an empty export) has it."""


def _text(value: Any) -> str:
    """A CSV cell: exact decimals without the storage scale's trailing zeros, UTC
    times with ``Z``, empty for a missing value (as the CLI's own CSV writes them)."""
    return "" if value is None else str(jsonable(value))


def write_export(
    path: Path,
    fmt: ExportFormat,
    batches: Iterable[Sequence[tuple[Any, ...]]],
    columns: Sequence[str] = EXPORT_COLUMNS,
) -> int:
    """Write every batch (rows in ``columns`` order) to ``path`` in ``fmt``; returns the
    number of rows."""
    partial = path.with_name(path.name + ".partial")
    rows = 0
    try:
        if fmt is ExportFormat.csv:
            with partial.open("w", newline="", encoding="utf-8") as out:
                writer = csv_writer(out)  # formula-safe cells (tracker.csv_cells)
                writer.writerow(columns)
                for batch in batches:
                    writer.writerows([_text(v) for v in row] for row in batch)
                    rows += len(batch)
        else:
            schema = schema_of(columns)
            with pq.ParquetWriter(partial, schema) as writer:
                for batch in batches:
                    arrays = list(zip(*batch, strict=True)) if batch else []
                    if not arrays:
                        continue
                    writer.write_table(pa.Table.from_arrays(list(arrays), schema=schema))
                    rows += len(batch)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return rows
