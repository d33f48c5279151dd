"""Rendering of listings as a Rich table, CSV or JSON.

JSON is the stable interface for scripts and dashboards: decimals are strings
(exact money), times are ISO-8601 UTC with a ``Z``, and keys never disappear
(missing values are ``null``). CSV carries the same exact values under the same keys.

A table is for reading: short headers, money rounded for display, no column that is
empty in every row, and a width that fits the terminal (or ``$COLUMNS``, or 100 when
piped) without wrapping (:mod:`tracker.cli.table` lays it out; a listing that declares
no :class:`Column` objects gets columns named after its keys).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

import typer

from tracker.cli.table import Column, auto_columns, render

__all__ = ["Column", "FormatOption", "OutputFormat", "cell", "emit", "err", "jsonable", "money"]


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]
"""The ``--format`` option every listing command takes."""


def jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        # Exact, without the storage scale's trailing zeros or an exponent.
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, Mapping):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def cell(value: Any) -> str:
    """A value as CSV or table text: its exact JSON form, blank for a missing value."""
    if value is None:
        return ""
    v = jsonable(value)
    return json.dumps(v) if isinstance(v, dict | list) else str(v)


def money(value: Any) -> str:
    """A price for reading (:func:`tracker.format.amount`: cents from 1 up, a tenth of a
    cent below, half-even, thousands separators); JSON and CSV keep the exact figure."""
    if value is None:
        return ""
    from tracker.format import amount

    return amount(value)


def emit(
    rows: Sequence[Mapping[str, Any]],
    fmt: OutputFormat,
    *,
    columns: Sequence[str] | None = None,
    table: Sequence[Column] | None = None,
    title: str | None = None,
) -> None:
    """Print ``rows``; ``columns`` picks and orders the table/CSV columns (JSON keeps all).

    ``table`` describes the table display instead (headers, rounding; columns empty in
    every row are left out); without it a table shows ``columns`` under their keys.
    """
    if fmt is OutputFormat.json:
        sys.stdout.write(json.dumps([jsonable(dict(r)) for r in rows], indent=2) + "\n")
        return
    cols = list(columns) if columns else (list(rows[0].keys()) if rows else [])
    if fmt is OutputFormat.csv:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow([cell(r.get(c)) for c in cols])
        sys.stdout.write(buf.getvalue())
        return
    bold = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    lines = render(rows, table or auto_columns(cols, rows), title, bold=bold)
    sys.stdout.write("".join(line + "\n" for line in lines))


def err(message: str) -> None:
    """One line on stderr (the CLI's error and warning channel)."""
    sys.stderr.write(message.rstrip() + "\n")
