"""Rendering of listings as a Rich table, CSV or JSON.

JSON is the stable interface for scripts and dashboards: decimals are strings
(exact money), times are ISO-8601 UTC with a ``Z``, and keys never disappear
(missing values are ``null``). CSV carries the same exact values under the same keys.

A table is for reading: a listing that describes its table with :class:`Column` objects
gets short headers, money rounded for display, no column that is empty in every row,
and a width that fits the terminal (or ``$COLUMNS``, or 100 when piped).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from tracker.format import amount, when
from tracker.views.encode import jsonable

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

TABLE_WIDTH = 100
"""Columns a table takes when its output is not a terminal and ``$COLUMNS`` is unset."""


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


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table display: the row key it shows, under which header, how."""

    key: str
    header: str
    show: Callable[[Any], str] = cell
    """Value to text (the whole row when ``key`` is empty: a column combining several)."""
    justify: Literal["left", "right"] = "left"

    def text(self, row: Mapping[str, Any]) -> str:
        return self.show(row.get(self.key) if self.key else row)


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
    if table is not None:
        _print_compact(rows, table, title)
        return
    grid = Table(title=title, show_lines=False, header_style="bold")
    for c in cols:
        grid.add_column(c, overflow="fold")
    for r in rows:
        grid.add_row(*(cell(r.get(c)) for c in cols))
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console = Console(soft_wrap=False, width=max(console.width, 200))
    console.print(grid)


def _print_compact(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], title: str | None
) -> None:
    cells = [[c.text(r) for c in columns] for r in rows]
    shown = [i for i in range(len(columns)) if any(line[i] for line in cells)] or list(
        range(len(columns))
    )
    grid = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
        header_style="bold",
        title_justify="left",
    )
    for i in shown:
        grid.add_column(columns[i].header, justify=columns[i].justify, overflow="fold")
    for line in cells:
        grid.add_row(*(line[i] for i in shown))
    console = Console(soft_wrap=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(soft_wrap=False, width=TABLE_WIDTH)
    console.print(grid)


def err(message: str) -> None:
    """One line on stderr (the CLI's error and warning channel)."""
    sys.stderr.write(message.rstrip() + "\n")
