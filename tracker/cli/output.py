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

import io
import json
import os
import sys
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Any

import typer

from tracker.cli.table import Column, auto_columns, render
from tracker.csv_cells import csv_writer
from tracker.encode import jsonable
from tracker.format import amount, printable, when

__all__ = [
    "Column",
    "FormatOption",
    "OutputFormat",
    "cell",
    "emit",
    "err",
    "jsonable",
    "moment",
    "money",
]


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]
"""The ``--format`` option every listing command takes."""


def cell(value: Any) -> str:
    """A value as CSV or table text: its exact JSON form, blank for a missing value."""
    if value is None:
        return ""
    v = jsonable(value)
    return json.dumps(v) if isinstance(v, dict | list) else str(v)


def money(value: Any) -> str:
    """A price for reading (:func:`tracker.format.amount`: cents from 1 up, a tenth of a
    cent below, half-even, thousands separated); JSON and CSV keep the exact figure."""
    return "" if value is None else amount(value)


def moment(value: Any) -> str:
    """A time for reading (:func:`tracker.format.when`: ``2026-03-01 10:30 UTC``)."""
    return "" if value is None else when(value)


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
        writer = csv_writer(buf)  # formula-safe cells (tracker.csv_cells)
        writer.writerow(cols)
        for r in rows:
            writer.writerow([cell(r.get(c)) for c in cols])
        sys.stdout.write(buf.getvalue())
        return
    bold = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    lines = render(rows, table or auto_columns(cols, rows), title, bold=bold)
    sys.stdout.write("".join(line + "\n" for line in lines))


def err(message: str) -> None:
    """One line on stderr (the CLI's error and warning channel); control characters
    in it (a name quoted from a sheet) are shown escaped (tracker.format.printable)."""
    lines = message.rstrip().split("\n")
    sys.stderr.write("\n".join(printable(line) for line in lines) + "\n")
