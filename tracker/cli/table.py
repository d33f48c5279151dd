"""Tables for reading, laid out to fit the terminal: the one table helper of every command.

A table never wraps: a cell is one line, an identifier (instance type, region, GPU name,
a number, a time) is never split or shortened. When the columns do not fit the width,
they give way in order of their ``priority`` (the highest number first; among equals the
rightmost first): a free-text column (``shrink``, e.g. an error or a description) is
first shortened with ``…`` down to its ``min_width``, and a column is dropped only if
the table still does not fit. Priority 0 columns are never dropped. CSV and JSON keep
every column and the exact values, so nothing is lost for scripts.

The width is ``$COLUMNS`` when set, else the terminal's, else 100 (output piped to a
file or another program).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from rich.cells import cell_len

from tracker.encode import jsonable
from tracker.format import printable

__all__ = ["GAP", "TABLE_WIDTH", "Column", "auto_columns", "render", "table_width", "time_cell"]

TABLE_WIDTH = 100
"""Columns a table takes when its output is not a terminal and ``$COLUMNS`` is unset."""
GAP = 2
"""Spaces between two columns."""
ELLIPSIS = "…"


def time_cell(value: Any) -> str:
    """A time as people read prices: ``2026-12-01 13:06 UTC`` (blank when missing)."""
    from tracker.format import when

    return "" if value is None else when(value)


def _plain(value: Any) -> str:
    """A value as table text: a time for reading, yes/no, else its exact JSON form."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return time_cell(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    v = jsonable(value)
    return json.dumps(v) if isinstance(v, dict | list) else str(v)


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table display: the row key it shows, under which header, how,
    and how it gives way when the table is too wide (see the module docstring)."""

    key: str
    header: str
    show: Callable[[Any], str] = _plain
    """Value to text (the whole row when ``key`` is empty: a column combining several)."""
    justify: Literal["left", "right"] = "left"
    priority: int = 0
    """0: always shown; higher numbers give way first when the table is too wide."""
    shrink: bool = False
    """Free text that may be shortened with ``…`` (never for identifiers or numbers)."""
    min_width: int = 12
    """The narrowest a shrinking column gets before it is dropped instead."""
    wrap: bool = False
    """Prose (a note): narrowed like ``shrink``, but wrapped over lines between words
    instead of cut (a word longer than the column, e.g. a URL, stays whole)."""

    def text(self, row: Mapping[str, Any]) -> str:
        value = self.show(row.get(self.key) if self.key else row)
        # A cell is one line: a multi-line error reads as one; what control characters
        # are left are shown escaped (tracker.format.printable), never sent raw.
        return printable(" ".join(value.split()) if "\n" in value or "\r" in value else value)


def table_width() -> int:
    """``$COLUMNS``, else the terminal's width, else :data:`TABLE_WIDTH`."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((TABLE_WIDTH, 24)).columns
    return TABLE_WIDTH


def auto_columns(keys: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[Column]:
    """Columns for a listing that declares none: headers are the keys, the first column
    stays, later ones give way first; text with spaces may shorten, numbers align right."""
    columns = []
    for i, key in enumerate(keys):
        values = [r.get(key) for r in rows if r.get(key) is not None]
        numeric = bool(values) and all(
            isinstance(v, int | float | Decimal) and not isinstance(v, bool) for v in values
        )
        wordy = any(isinstance(v, str) and " " in v.strip() for v in values)
        columns.append(
            Column(
                key,
                key.replace("_", " "),
                justify="right" if numeric else "left",
                priority=i,
                shrink=wordy,
            )
        )
    return columns


def _cut(text: str, width: int) -> str:
    """``text`` shortened to ``width`` cells with an ellipsis, after a whole word (so a
    name inside free text is not cut) unless that would keep less than half the room."""
    if cell_len(text) <= width:
        return text
    out = ""
    for ch in text:
        if cell_len(out + ch) > width - 1:
            break
        out += ch
    whole = out if text[len(out)].isspace() else out.rpartition(" ")[0]
    if cell_len(whole.rstrip()) * 2 >= width:
        out = whole
    return out.rstrip() + ELLIPSIS


def _pad(text: str, width: int, justify: str) -> str:
    space = " " * (width - cell_len(text))
    return space + text if justify == "right" else text + space


def layout(columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int) -> dict[int, int]:
    """Which columns are shown, and how wide: column index → width (in display order)."""
    natural = {
        i: max([cell_len(c.header)] + [cell_len(line[i]) for line in cells])
        for i, c in enumerate(columns)
    }
    shown = {i: w for i, w in natural.items() if any(line[i] for line in cells)} or natural

    def total() -> int:
        return sum(shown.values()) + GAP * (len(shown) - 1)

    order = sorted(shown, key=lambda i: (-columns[i].priority, -i))
    for i in order:
        if total() <= width:
            break
        c = columns[i]
        if c.shrink or c.wrap:
            narrowest = max(min(c.min_width, shown[i]), cell_len(c.header))
            shown[i] = max(narrowest, shown[i] - (total() - width))
        if total() > width and c.priority > 0 and len(shown) > 1:
            del shown[i]
    return dict(sorted(shown.items()))


def render(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[Column],
    title: str | None = None,
    width: int | None = None,
    *,
    bold: bool = False,
) -> list[str]:
    """The table's lines (title, header, rule, rows), none wider than ``width`` unless
    one identifier alone is wider; ``bold`` sets the header in bold (a terminal)."""
    width = table_width() if width is None else width
    cells = [[c.text(r) for c in columns] for r in rows]
    widths = layout(columns, cells, width)
    lines: list[str] = []
    if title:
        lines += textwrap.wrap(
            printable(title), width, break_long_words=False, break_on_hyphens=False
        )
    if not widths:
        return lines

    def join(parts: Sequence[str]) -> str:
        return (" " * GAP).join(parts).rstrip()

    header = join([_pad(columns[i].header, w, columns[i].justify) for i, w in widths.items()])
    lines.append(f"\x1b[1m{header}\x1b[0m" if bold else header)
    lines.append("─" * (sum(widths.values()) + GAP * (len(widths) - 1)))
    for line in cells:
        parts = [_fitted(columns[i], line[i], w) for i, w in widths.items()]
        for k in range(max(len(p) for p in parts)):
            lines.append(
                join(
                    [
                        _pad(p[k] if k < len(p) else "", w, columns[i].justify)
                        for p, (i, w) in zip(parts, widths.items(), strict=True)
                    ]
                )
            )
    return lines


def _fitted(column: Column, text: str, width: int) -> list[str]:
    """A cell's physical lines: one (cut with … only if the column may shrink), or a
    prose cell wrapped between words."""
    if column.wrap:
        return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]
    return [_cut(text, width) if column.shrink else text]
