"""Rendering of listings as a Rich table, CSV or JSON.

JSON is the stable interface for scripts and dashboards: decimals are strings
(exact money), times are ISO-8601 UTC with a ``Z``, and keys never disappear
(missing values are ``null``).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["FormatOption", "OutputFormat", "emit", "err", "jsonable"]


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


def _cell(value: Any) -> str:
    if value is None:
        return ""
    v = jsonable(value)
    return json.dumps(v) if isinstance(v, dict | list) else str(v)


def emit(
    rows: Sequence[Mapping[str, Any]],
    fmt: OutputFormat,
    *,
    columns: Sequence[str] | None = None,
    title: str | None = None,
) -> None:
    """Print ``rows``; ``columns`` picks and orders the table/CSV columns (JSON keeps all)."""
    if fmt is OutputFormat.json:
        sys.stdout.write(json.dumps([jsonable(dict(r)) for r in rows], indent=2) + "\n")
        return
    cols = list(columns) if columns else (list(rows[0].keys()) if rows else [])
    if fmt is OutputFormat.csv:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow([_cell(r.get(c)) for c in cols])
        sys.stdout.write(buf.getvalue())
        return
    table = Table(title=title, show_lines=False, header_style="bold")
    for c in cols:
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(*(_cell(r.get(c)) for c in cols))
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console = Console(soft_wrap=False, width=max(console.width, 200))
    console.print(table)


def err(message: str) -> None:
    """One line on stderr (the CLI's error and warning channel)."""
    sys.stderr.write(message.rstrip() + "\n")
